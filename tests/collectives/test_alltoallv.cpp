// Alltoallv: every algorithm (library, burst, pairwise, bruck, ring-k for
// every k from 1 to n, auto) on every backend and at every check level gives
// the serial reference's result for random uneven counts with zeros; auto
// measures once per size class, can be reset and forced. Checks: under
// kAgreed bad arguments throw on every rank; under kArrivals (the default) a
// count mismatch throws on its receiver alone and a bad local argument on
// its own rank, nobody hangs, and the next call on the communicator works.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends.hpp"
#include "collectives/alltoallv.hpp"
#include "common/error.hpp"
#include "reference.hpp"

namespace {

using collectives::AlltoallvAlgorithm;
using collectives::AlltoallvCheck;
using collectives::AlltoallvChoice;
using collectives::AlltoallvOptions;
using collectives_test::gather_all;
using collectives_test::mix;
using collectives_test::run_on_backends;

/// The exchange of one rank: counts from a seeded hash of (sender,
/// receiver) in [0, max_count], zeros included; data random.
struct Case {
  std::vector<long> send;
  std::vector<int> sendcounts, sdispls, recvcounts, rdispls;
  std::vector<long> recv;
};

int count_of(unsigned seed, int from, int to, int max_count) {
  const auto h = mix(seed * 1000003ULL + static_cast<unsigned long long>(from) * 7919ULL +
                     static_cast<unsigned long long>(to));
  // About a quarter of the blocks are empty.
  return h % 4 == 0 ? 0 : static_cast<int>(h / 4 % static_cast<unsigned long long>(max_count + 1));
}

Case make_case(int n, int me, unsigned seed, int max_count) {
  Case c;
  int total = 0;
  for (int j = 0; j < n; ++j) {
    c.sendcounts.push_back(count_of(seed, me, j, max_count));
    c.sdispls.push_back(total + 1);  // a gap before each block
    total += c.sendcounts.back() + 1;
  }
  c.send.resize(static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < c.send.size(); ++i) {
    c.send[i] = static_cast<long>(mix(seed + static_cast<unsigned long long>(me) * 100003ULL + i) %
                                  1000000007ULL);
  }
  total = 0;
  for (int j = 0; j < n; ++j) {
    c.recvcounts.push_back(count_of(seed, j, me, max_count));
    c.rdispls.push_back(total);
    total += c.recvcounts.back() + 2;
  }
  c.recv.assign(static_cast<std::size_t>(total), -1);
  return c;
}

/// What rank `me` must receive, from every rank's gathered send buffer.
template <class C>
std::vector<long> reference(const C& comm, const Case& c, unsigned seed, int max_count) {
  const int n = comm.size();
  const int me = comm.rank();
  const auto all = gather_all(comm, std::span<const long>(c.send));
  std::vector<long> expected(c.recv.size(), -1);
  for (int j = 0; j < n; ++j) {
    // Rank j's block for me sits where make_case(n, j, ...) put it.
    const Case theirs = make_case(n, j, seed, max_count);
    const auto uj = static_cast<std::size_t>(j);
    const auto um = static_cast<std::size_t>(me);
    for (int i = 0; i < theirs.sendcounts[um]; ++i) {
      expected[static_cast<std::size_t>(c.rdispls[uj] + i)] =
          all[uj][static_cast<std::size_t>(theirs.sdispls[um] + i)];
    }
  }
  return expected;
}

std::vector<AlltoallvOptions> every_algorithm(int n, collectives::AlltoallvTuner* tuner) {
  std::vector<AlltoallvOptions> list = {{.algorithm = AlltoallvAlgorithm::kLibrary},
                                        {.algorithm = AlltoallvAlgorithm::kBurst},
                                        {.algorithm = AlltoallvAlgorithm::kPairwise},
                                        {.algorithm = AlltoallvAlgorithm::kBruck}};
  for (int k = 1; k <= n; ++k) list.push_back({.algorithm = AlltoallvAlgorithm::kRingK, .k = k});
  list.push_back({.algorithm = AlltoallvAlgorithm::kAuto, .tuner = tuner});
  return list;
}

template <class C>
void check_every_algorithm(const C& comm, unsigned seed, int max_count, AlltoallvCheck checked) {
  Case c = make_case(comm.size(), comm.rank(), seed, max_count);
  const std::vector<long> expected = reference(comm, c, seed, max_count);
  collectives::AlltoallvTuner tuner;
  for (AlltoallvOptions options : every_algorithm(comm.size(), &tuner)) {
    options.check = checked;
    std::fill(c.recv.begin(), c.recv.end(), -1);
    collectives::alltoallv(comm, std::span<const long>(c.send), c.sendcounts, c.sdispls,
                           std::span<long>(c.recv), c.recvcounts, c.rdispls, options);
    EXPECT_EQ(c.recv, expected) << comm.backend() << " "
                                << collectives::alltoallv_name({options.algorithm, options.k})
                                << " on " << comm.size() << " ranks";
  }
}

TEST(Alltoallv, EveryAlgorithmAndEveryKMatchesTheReference) {
  run_on_backends([](const auto& comm) {
    check_every_algorithm(comm, 1, 5, AlltoallvCheck::kArrivals);
    check_every_algorithm(comm, 2, 3, AlltoallvCheck::kNone);
    check_every_algorithm(comm, 4, 4, AlltoallvCheck::kAgreed);
  });
}

TEST(Alltoallv, LargeUnevenBlocks) {
  run_on_backends([](const auto& comm) {
    check_every_algorithm(comm, 3, 40000, AlltoallvCheck::kNone);
    check_every_algorithm(comm, 5, 20000, AlltoallvCheck::kArrivals);
  });
}

TEST(Alltoallv, AutoMeasuresOncePerSizeClassThenRemembers) {
  run_on_backends([](const auto& comm) {
    collectives::AlltoallvTuner tuner;
    const AlltoallvOptions options{.algorithm = AlltoallvAlgorithm::kAuto, .tuner = &tuner};
    const int n = comm.size();
    auto call = [&](int block) {
      std::vector<double> send(static_cast<std::size_t>(n * block), comm.rank());
      std::vector<double> recv(send.size(), -1.0);
      std::vector<int> counts(static_cast<std::size_t>(n), block), displs;
      for (int j = 0; j < n; ++j) displs.push_back(j * block);
      collectives::alltoallv(comm, std::span<const double>(send), counts, displs,
                             std::span<double>(recv), counts, displs, options);
      for (int j = 0; j < n; ++j) EXPECT_EQ(recv[static_cast<std::size_t>(j * block)], j);
    };
    call(4);
    call(4);
    EXPECT_EQ(tuner.measurements(), 1);
    call(4000);
    EXPECT_EQ(tuner.measurements(), 2);
    EXPECT_TRUE(tuner.chosen(collectives::alltoallv_size_class(4 * sizeof(double))).has_value());
    tuner.reset();
    call(4);
    EXPECT_EQ(tuner.measurements(), 1);
    tuner.reset();
    tuner.force({AlltoallvAlgorithm::kRingK, 2});
    call(4);
    EXPECT_EQ(tuner.measurements(), 0);
  });
}

TEST(Alltoallv, AutoIsForcedByTheEnvironment) {
  ::setenv("COLLECTIVES_ALLTOALLV", "ring3", 1);
  run_on_backends([](const auto&) {
    collectives::AlltoallvTuner tuner;
    ASSERT_TRUE(tuner.forced().has_value());  // local: no collective follows
    EXPECT_EQ(collectives::alltoallv_name(*tuner.forced()), "ring3");
  });
  ::setenv("COLLECTIVES_ALLTOALLV", "ring0", 1);
  EXPECT_THROW(collectives::AlltoallvTuner{}, common::Error);
  ::unsetenv("COLLECTIVES_ALLTOALLV");
  EXPECT_FALSE(collectives::AlltoallvTuner{}.forced().has_value());
}

TEST(Alltoallv, NamesRoundTrip) {
  for (const char* name : {"library", "burst", "pairwise", "bruck", "ring1", "ring16", "auto"}) {
    EXPECT_EQ(collectives::alltoallv_name(collectives::parse_alltoallv_choice(name)), name);
  }
  for (const char* bad : {"ring", "ring0", "ring-2", "ring4x", "fast"}) {
    EXPECT_THROW((void)collectives::parse_alltoallv_choice(bad), common::Error) << bad;
  }
}

/// Runs one alltoallv under kAgreed with arguments spoilt by `spoil` and
/// expects every rank to throw an common::Error whose message contains `words`.
template <class C, class Spoil>
void expect_error_everywhere(const C& comm, const Spoil& spoil,
                             const std::vector<std::string>& words) {
  Case c = make_case(comm.size(), comm.rank(), 9, 3);
  AlltoallvOptions options{
      .algorithm = AlltoallvAlgorithm::kRingK, .k = 2, .check = AlltoallvCheck::kAgreed};
  spoil(c, options);
  // The call (on these few ranks the check takes one round), then the check
  // alone the way it goes on many ranks (verdicts, counts, verdicts).
  for (const bool one_round : {true, false}) {
    try {
      if (one_round) {
        collectives::alltoallv(comm, std::span<const long>(c.send), c.sendcounts, c.sdispls,
                               std::span<long>(c.recv), c.recvcounts, c.rdispls, options);
      } else {
        const collectives::alltoallv_algorithms::Exchange<long> x{c.send, c.sendcounts, c.sdispls,
                                                                  c.recv, c.recvcounts, c.rdispls};
        (void)collectives::detail::check_alltoallv(comm, x, options, 0);
      }
      ADD_FAILURE() << comm.backend() << " rank " << comm.rank() << ": no error for "
                    << words.front() << (one_round ? "" : " (checked in three rounds)");
    } catch (const common::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("collectives::alltoallv"), std::string::npos) << what;
      for (const std::string& w : words) EXPECT_NE(what.find(w), std::string::npos) << what;
    }
  }
}

TEST(Alltoallv, AgreedChecksThrowOnEveryRank) {
  run_on_backends([](const auto& comm) {
    const int last = comm.size() - 1;
    expect_error_everywhere(comm, [](Case&, AlltoallvOptions& o) { o.k = 0; }, {"k = 0"});
    expect_error_everywhere(comm,
                            [&](Case& c, AlltoallvOptions&) {
                              if (comm.rank() == last) c.sendcounts[0] = -1;
                            },
                            {"rank " + std::to_string(last), "sendcounts[0] = -1"});
    expect_error_everywhere(comm,
                            [&](Case& c, AlltoallvOptions&) {
                              if (comm.rank() == 0)
                                c.recvcounts[static_cast<std::size_t>(last)] += 1;
                            },
                            {"rank 0", "recvcounts[" + std::to_string(last) + "]"});
    expect_error_everywhere(comm,
                            [&](Case& c, AlltoallvOptions&) {
                              if (comm.rank() == last) {
                                c.sdispls[0] =
                                    static_cast<int>(c.send.size()) - c.sendcounts[0] + 1;
                              }
                            },
                            {"outside its buffer"});
    expect_error_everywhere(comm,
                            [](Case&, AlltoallvOptions& o) {
                              o.algorithm = AlltoallvAlgorithm::kAuto;
                              o.tuner = nullptr;
                            },
                            {"tuner"});
    // A sender's count that its receiver does not expect (the sender's
    // buffer has room for it): the receiver is named, with both counts.
    const int middle = comm.size() / 2;
    const int expected = count_of(9, middle, last, 3);  // expect_error_everywhere's case
    const int sent = expected > 0 ? 0 : 1;
    expect_error_everywhere(comm,
                            [&](Case& c, AlltoallvOptions&) {
                              if (comm.rank() == middle) {
                                c.sendcounts[static_cast<std::size_t>(last)] = sent;
                                c.sdispls[static_cast<std::size_t>(last)] = 0;
                              }
                            },
                            {"rank " + std::to_string(last) + " passed recvcounts[" +
                                 std::to_string(middle) + "] = " + std::to_string(expected),
                             "rank " + std::to_string(middle) + " sends " + std::to_string(sent)});
    if (comm.size() > 1) {
      expect_error_everywhere(comm,
                              [&](Case&, AlltoallvOptions& o) {
                                if (comm.rank() == last) o.k = 3;
                              },
                              {"k = 3", "rank 0 passed 2"});
    }
  });
}

/// The algorithms a kArrivals test runs: every fixed one, ring-k at 1, 2
/// and n, and auto forced to ring2 (auto's verified path).
std::vector<AlltoallvOptions> verified_algorithms(int n, collectives::AlltoallvTuner* tuner) {
  std::vector<AlltoallvOptions> list = {{.algorithm = AlltoallvAlgorithm::kLibrary},
                                        {.algorithm = AlltoallvAlgorithm::kBurst},
                                        {.algorithm = AlltoallvAlgorithm::kPairwise},
                                        {.algorithm = AlltoallvAlgorithm::kBruck},
                                        {.algorithm = AlltoallvAlgorithm::kRingK, .k = 1},
                                        {.algorithm = AlltoallvAlgorithm::kRingK, .k = 2},
                                        {.algorithm = AlltoallvAlgorithm::kRingK, .k = n},
                                        {.algorithm = AlltoallvAlgorithm::kAuto, .tuner = tuner}};
  tuner->force({AlltoallvAlgorithm::kRingK, 2});
  return list;
}

/// Whether a kArrivals problem throws on every rank with these options: the
/// library on MPI keeps kAgreed's round; auto agrees on whether any rank's
/// own arguments are bad (`local`), not on the counts.
template <class C>
bool throws_everywhere(const C& comm, const AlltoallvOptions& o, bool local) {
  return (local && o.algorithm == AlltoallvAlgorithm::kAuto) ||
         (o.algorithm == AlltoallvAlgorithm::kLibrary && comm.backend() != "ep");
}

/// ep's words for an error another endpoint of the process raised.
std::string seen_by(int rank) { return "(seen by ep rank " + std::to_string(rank) + ")"; }

/// One call with `c`; the error it threw on this rank ("" for none).
template <class C>
std::string call_and_catch(const C& comm, Case& c, const AlltoallvOptions& o,
                           common::ErrorKind* kind) {
  try {
    collectives::alltoallv(comm, std::span<const long>(c.send), c.sendcounts, c.sdispls,
                           std::span<long>(c.recv), c.recvcounts, c.rdispls, o);
  } catch (const common::Error& e) {
    *kind = e.kind();
    return e.what();
  }
  return {};
}

/// A correct call after a failed one on the same communicator gives the
/// reference result: the failed call left no message behind.
template <class C>
void expect_next_call_works(const C& comm, const AlltoallvOptions& o, const std::string& label) {
  Case c = make_case(comm.size(), comm.rank(), 11, 4);
  const std::vector<long> expected = reference(comm, c, 11, 4);
  common::ErrorKind kind{};
  const std::string error = call_and_catch(comm, c, o, &kind);
  EXPECT_EQ(error, "") << label << ": the call after";
  EXPECT_EQ(c.recv, expected) << label << ": the call after, rank " << comm.rank();
}

TEST(Alltoallv, ArrivalsMismatchThrowsOnItsReceiverAlone) {
  run_on_backends([](const auto& comm) {
    const int n = comm.size();
    if (n < 2) return;  // one rank: its own block, below
    const int sender = 0;
    const int receiver = n - 1;
    // {sent, expected}: more, fewer, 0 against non-zero, non-zero against 0,
    // and more and fewer in blocks past the eager sizes (160 and 80 KB).
    const int pairs[6][2] = {{3, 1}, {1, 3}, {0, 2}, {2, 0}, {20000, 10000}, {10000, 20000}};
    collectives::AlltoallvTuner tuner;
    for (const AlltoallvOptions& o : verified_algorithms(n, &tuner)) {
      for (const auto& [sent, expected] : pairs) {
        const std::string label = std::string(comm.backend()) + " " +
                                  collectives::alltoallv_name({o.algorithm, o.k}) + " sent " +
                                  std::to_string(sent) + " expected " + std::to_string(expected);
        Case c = make_case(n, comm.rank(), 9, 3);
        if (comm.rank() == sender) {  // the block goes at the end, room for it
          c.sdispls.back() = static_cast<int>(c.send.size());
          c.sendcounts.back() = sent;
          c.send.resize(c.send.size() + static_cast<std::size_t>(sent), 7);
        }
        if (comm.rank() == receiver) {
          c.rdispls.front() = static_cast<int>(c.recv.size());
          c.recvcounts.front() = expected;
          c.recv.resize(c.recv.size() + static_cast<std::size_t>(expected), -1);
        }
        common::ErrorKind kind{};
        const std::string error = call_and_catch(comm, c, o, &kind);
        const bool everywhere = throws_everywhere(comm, o, false);
        // ep::alltoallv reports on the receiver, and in a process of
        // several endpoints on the others too ("seen by" the receiver).
        const bool ep_library =
            o.algorithm == AlltoallvAlgorithm::kLibrary && comm.backend() == "ep";
        if (comm.rank() == receiver || everywhere) {
          EXPECT_NE(error, "") << label << ": rank " << comm.rank() << " did not throw";
          EXPECT_NE(error.find("alltoallv"), std::string::npos) << label << error;
        } else if (ep_library) {
          EXPECT_TRUE(error.empty() || error.find(seen_by(receiver)) != std::string::npos)
              << label << ": rank " << comm.rank() << " threw " << error;
        } else {
          EXPECT_EQ(error, "") << label << ": rank " << comm.rank() << " threw";
        }
        if (comm.rank() == receiver && !everywhere && !ep_library) {
          EXPECT_EQ(kind,
                    sent > expected ? common::ErrorKind::kTruncate : common::ErrorKind::kCount)
              << label << ": " << error;
          EXPECT_NE(error.find("recvcounts[0] = " + std::to_string(expected) + " but rank 0 sent"),
                    std::string::npos)
              << label << ": " << error;
        }
        if (ep_library && comm.rank() == receiver) {
          EXPECT_TRUE(kind == common::ErrorKind::kTruncate || kind == common::ErrorKind::kCount)
              << label << ": " << error;
        }
        expect_next_call_works(comm, o, label);
      }
    }
  });
}

TEST(Alltoallv, ArrivalsBadLocalArgumentThrowsOnItsRankWithoutHang) {
  run_on_backends([](const auto& comm) {
    const int n = comm.size();
    const int bad = n - 1;
    collectives::AlltoallvTuner tuner;
    for (const AlltoallvOptions& base : verified_algorithms(n, &tuner)) {
      // A negative count, a block outside its buffer, k < 1 for ring-k, and
      // (one rank only) a block to itself of another size than expected.
      for (int problem = 0; problem < 4; ++problem) {
        AlltoallvOptions o = base;
        Case c = make_case(n, comm.rank(), 9, 3);
        std::string words;
        if (problem == 2 && o.algorithm != AlltoallvAlgorithm::kRingK) continue;
        if (comm.rank() == bad) {
          if (problem == 0) {
            c.sendcounts[0] = -1;
            words = "sendcounts[0] = -1";
          } else if (problem == 1) {
            c.rdispls[0] = static_cast<int>(c.recv.size());
            c.recvcounts[0] += 1;
            words = "recv block 0 at displacement";
          } else if (problem == 2) {
            o.k = 0;
            words = "k = 0";
          } else {
            c.recvcounts[static_cast<std::size_t>(bad)] += 1;
            words = "recvcounts[" + std::to_string(bad) + "] = ";
          }
        }
        const std::string label = std::string(comm.backend()) + " " +
                                  collectives::alltoallv_name({base.algorithm, base.k}) +
                                  " problem " + std::to_string(problem);
        common::ErrorKind kind{};
        const std::string error = call_and_catch(comm, c, o, &kind);
        if (comm.rank() == bad) {
          EXPECT_NE(error.find("rank " + std::to_string(bad) + " passed " + words),
                    std::string::npos)
              << label << ": " << error;
        } else if (throws_everywhere(comm, o, true)) {
          EXPECT_NE(error, "") << label << ": rank " << comm.rank() << " did not throw";
        } else {
          // Its receivers that expected data from the bad rank got none.
          const bool expected_data = c.recvcounts[static_cast<std::size_t>(bad)] > 0;
          const bool ep_library =
              o.algorithm == AlltoallvAlgorithm::kLibrary && comm.backend() == "ep";
          if (ep_library && !expected_data && !error.empty()) {
            EXPECT_NE(error.find("seen by"), std::string::npos) << label << ": " << error;
          } else {
            EXPECT_EQ(error != "", expected_data)
                << label << ": rank " << comm.rank() << " " << error;
          }
        }
        expect_next_call_works(comm, base, label);
      }
    }
  });
}

TEST(Alltoallv, ArrivalsOneRankOwnBlockMismatchThrows) {
  run_on_backends([](const auto& comm) {
    if (comm.size() != 1) return;  // several ranks: above
    collectives::AlltoallvTuner tuner;
    for (const AlltoallvOptions& o : verified_algorithms(1, &tuner)) {
      Case c = make_case(1, 0, 9, 3);
      c.recvcounts[0] += 1;
      common::ErrorKind kind{};
      const std::string error = call_and_catch(comm, c, o, &kind);
      EXPECT_EQ(kind, common::ErrorKind::kCount) << error;
      EXPECT_NE(error.find("recvcounts[0] = "), std::string::npos) << error;
      expect_next_call_works(comm, o, "one rank");
    }
  });
}

}  // namespace
