// The rest of the nonblocking set: ialltoall, ialltoallw, igather(v),
// iscatter(v), iallgather(v), ireduce, iscan, iexscan, ireduce_scatter and
// ireduce_scatter_block. Each against its blocking form value by value (bit
// for bit for floating-point sums, on the default and the layout-independent
// path) and against closed forms, completed by wait and by a test loop, in
// every layout of coll_helpers.hpp (one endpoint per process, uneven
// endpoint counts, ranks out of process order); several outstanding on one
// communicator completed in different orders; argument errors naming the call.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "coll_helpers.hpp"
#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "request_completion.hpp"

namespace {

using coll_test::for_each_layout;
using coll_test::fraction;
using coll_test::kHole;
using coll_test::Mat;
using coll_test::value;
using coll_test::varied_count;
using ep_test::complete;
using ep_test::Completion;

constexpr int kCount = 5;

// `start(blocking, recv)` sets up `recv` (the buffer the call writes; its
// inputs live in the test), runs the blocking form or starts the
// nonblocking one and returns its request. The nonblocking form must leave
// the same values as the blocking one under either completion.
template <typename T, typename Start>
void expect_same_as_blocking(Start&& start, const std::string& what) {
  std::vector<T> reference;
  ep::Request none = start(true, reference);
  EXPECT_TRUE(none.is_null());
  for (const Completion how : {Completion::kWait, Completion::kTestLoop}) {
    std::vector<T> got;
    ep::Request request = start(false, got);
    complete(request, how);
    EXPECT_EQ(got, reference) << what << " (" << name_of(how) << ")";
  }
}

std::vector<int> values_of(int rank, int n, int salt = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(rank, i, salt);
  return v;
}

// ---- block movers ---------------------------------------------------------

// Counts and displacements of the v forms: rank r's block holds
// varied_count(r, salt) elements; the blocks start at `first` and follow one
// another in rank order (or backwards), `gap` elements of hole after each;
// `end` is one past the last hole.
struct VariedBlocks {
  std::vector<int> counts, displs;
  int end;
  VariedBlocks(int n, int salt, int first, int gap, bool backwards)
      : counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n)), end(first) {
    for (int i = 0; i < n; ++i) {
      const auto r = static_cast<std::size_t>(backwards ? n - 1 - i : i);
      counts[r] = varied_count(static_cast<int>(r), salt);
      displs[r] = end;
      end += counts[r] + gap;
    }
  }
};

// The closed form of a gather of every EP rank's values_of(rank, kCount):
// the blocks in rank order.
void expect_blocks_in_rank_order(const std::vector<int>& gathered, const std::string& what) {
  coll_test::expect_each(
      gathered,
      [](std::size_t k) {
        return value(static_cast<int>(k) / kCount, static_cast<int>(k) % kCount);
      },
      what);
}

TEST(NonblockingMovers, Alltoall) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const std::vector<int> data = values_of(c.rank(), n * kCount);
    for (const bool in_place : {false, true}) {
      expect_same_as_blocking<int>(
          [&](bool blocking, std::vector<int>& recv) {
            recv = in_place ? data : std::vector<int>(data.size(), kHole);
            const void* send = in_place ? MPI_IN_PLACE : data.data();
            if (blocking) {
              ep::alltoall(c, send, kCount, MPI_INT, recv.data(), kCount, MPI_INT);
              return ep::Request();
            }
            return ep::ialltoall(c, send, kCount, MPI_INT, recv.data(), kCount, MPI_INT);
          },
          in_place ? "ialltoall in place" : "ialltoall");
      std::vector<int> recv = in_place ? data : std::vector<int>(data.size(), kHole);
      ep::Request request = ep::ialltoall(c, in_place ? MPI_IN_PLACE : data.data(), kCount, MPI_INT,
                                          recv.data(), kCount, MPI_INT);
      ep::wait(request);
      coll_test::expect_each(
          recv,
          [&](std::size_t k) {
            const int from = static_cast<int>(k) / kCount;
            return value(from, c.rank() * kCount + static_cast<int>(k) % kCount);
          },
          "ialltoall closed form");
    }
  });
}

TEST(NonblockingMovers, Alltoallw) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    // Block i -> j: 3 * (1 + (i + j) % 2) ints, received from odd ranks as
    // strided elements (3 ints at every other int), at byte displacements.
    const auto ints = [](int i, int j) { return 3 * (1 + (i + j) % 2); };
    constexpr int kSlot = 12;  // ints of room per peer
    std::vector<int> scounts(n), sdispls(n), rcounts(n), rdispls(n);
    std::vector<MPI_Datatype> stypes(n, MPI_INT), rtypes(n, MPI_INT);
    const std::vector<int> out = values_of(me, n * kSlot);
    for (int j = 0; j < n; ++j) {
      const auto ji = static_cast<std::size_t>(j);
      scounts[ji] = ints(me, j);
      sdispls[ji] = j * kSlot * static_cast<int>(sizeof(int));
      const bool strided = j % 2 == 1;
      rtypes[ji] = strided ? coll_test::strided_type() : MPI_INT;
      rcounts[ji] = strided ? ints(j, me) / coll_test::kStrided : ints(j, me);
      rdispls[ji] = sdispls[ji];
    }
    expect_same_as_blocking<int>(
        [&](bool blocking, std::vector<int>& recv) {
          recv.assign(out.size(), kHole);
          if (blocking) {
            ep::alltoallw(c, out.data(), scounts, sdispls, stypes, recv.data(), rcounts, rdispls,
                          rtypes);
            return ep::Request();
          }
          return ep::ialltoallw(c, out.data(), scounts, sdispls, stypes, recv.data(), rcounts,
                                rdispls, rtypes);
        },
        "ialltoallw");
  });
}

TEST(NonblockingMovers, GatherAndScatter) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    const std::vector<int> mine = values_of(me, kCount);
    // v forms: rank r's block holds varied_count(r) elements, placed back to
    // front with a hole of one element after each.
    const VariedBlocks blocks(n, /*salt=*/0, /*first=*/0, /*gap=*/1, /*backwards=*/true);
    const std::vector<int>& counts = blocks.counts;
    const std::vector<int>& displs = blocks.displs;
    const int at = blocks.end;
    const std::size_t v_length = static_cast<std::size_t>(at) + 1;
    for (const int root : {0, n - 1}) {
      const bool is_root = me == root;
      const std::string where = " root " + std::to_string(root);
      for (const bool in_place : {false, true}) {
        const bool here = in_place && is_root;
        expect_same_as_blocking<int>(
            [&](bool blocking, std::vector<int>& recv) {
              recv.assign(static_cast<std::size_t>(n * kCount), kHole);
              if (here) std::copy(mine.begin(), mine.end(), recv.begin() + me * kCount);
              const void* send = here ? MPI_IN_PLACE : mine.data();
              if (blocking) {
                ep::gather(c, send, kCount, MPI_INT, recv.data(), kCount, MPI_INT, root);
                return ep::Request();
              }
              return ep::igather(c, send, kCount, MPI_INT, recv.data(), kCount, MPI_INT, root);
            },
            "igather" + where + (in_place ? " in place" : ""));
        expect_same_as_blocking<int>(
            [&](bool blocking, std::vector<int>& recv) {
              recv.assign(v_length, kHole);
              const auto my = static_cast<std::size_t>(me);
              if (here) std::copy_n(mine.begin(), counts[my], recv.begin() + displs[my]);
              const void* send = here ? MPI_IN_PLACE : mine.data();
              if (blocking) {
                ep::gatherv(c, send, varied_count(me), MPI_INT, recv.data(), counts, displs,
                            MPI_INT, root);
                return ep::Request();
              }
              return ep::igatherv(c, send, varied_count(me), MPI_INT, recv.data(), counts, displs,
                                  MPI_INT, root);
            },
            "igatherv" + where + (in_place ? " in place" : ""));
        // Scatter from the root's table of every rank's values.
        std::vector<int> table(v_length + static_cast<std::size_t>(n * kCount));
        for (std::size_t k = 0; k < table.size(); ++k) table[k] = value(root, static_cast<int>(k));
        expect_same_as_blocking<int>(
            [&](bool blocking, std::vector<int>& recv) {
              recv.assign(kCount, kHole);
              void* target = here ? MPI_IN_PLACE : recv.data();
              if (blocking) {
                ep::scatter(c, table.data(), kCount, MPI_INT, target, kCount, MPI_INT, root);
                return ep::Request();
              }
              return ep::iscatter(c, table.data(), kCount, MPI_INT, target, kCount, MPI_INT, root);
            },
            "iscatter" + where + (in_place ? " in place" : ""));
        expect_same_as_blocking<int>(
            [&](bool blocking, std::vector<int>& recv) {
              recv.assign(kCount, kHole);
              void* target = here ? MPI_IN_PLACE : recv.data();
              if (blocking) {
                ep::scatterv(c, table.data(), counts, displs, MPI_INT, target, varied_count(me),
                             MPI_INT, root);
                return ep::Request();
              }
              return ep::iscatterv(c, table.data(), counts, displs, MPI_INT, target,
                                   varied_count(me), MPI_INT, root);
            },
            "iscatterv" + where + (in_place ? " in place" : ""));
      }
      // Closed form of igather at the root.
      std::vector<int> gathered(static_cast<std::size_t>(n * kCount), kHole);
      ep::Request request =
          ep::igather(c, mine.data(), kCount, MPI_INT, gathered.data(), kCount, MPI_INT, root);
      complete(request, Completion::kTestLoop);
      if (is_root) {
        expect_blocks_in_rank_order(gathered, "igather closed form");
      }
    }
  });
}

TEST(NonblockingMovers, Allgather) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    const std::vector<int> mine = values_of(me, kCount);
    const VariedBlocks blocks(n, /*salt=*/1, /*first=*/1, /*gap=*/2, /*backwards=*/false);
    const std::vector<int>& counts = blocks.counts;
    const std::vector<int>& displs = blocks.displs;
    const int at = blocks.end;
    for (const bool in_place : {false, true}) {
      const std::string how = in_place ? " in place" : "";
      expect_same_as_blocking<int>(
          [&](bool blocking, std::vector<int>& recv) {
            recv.assign(static_cast<std::size_t>(n * kCount), kHole);
            if (in_place) std::copy(mine.begin(), mine.end(), recv.begin() + me * kCount);
            const void* send = in_place ? MPI_IN_PLACE : mine.data();
            if (blocking) {
              ep::allgather(c, send, kCount, MPI_INT, recv.data(), kCount, MPI_INT);
              return ep::Request();
            }
            return ep::iallgather(c, send, kCount, MPI_INT, recv.data(), kCount, MPI_INT);
          },
          "iallgather" + how);
      expect_same_as_blocking<int>(
          [&](bool blocking, std::vector<int>& recv) {
            recv.assign(static_cast<std::size_t>(at), kHole);
            const auto my = static_cast<std::size_t>(me);
            if (in_place) std::copy_n(mine.begin(), counts[my], recv.begin() + displs[my]);
            const void* send = in_place ? MPI_IN_PLACE : mine.data();
            if (blocking) {
              ep::allgatherv(c, send, counts[my], MPI_INT, recv.data(), counts, displs, MPI_INT);
              return ep::Request();
            }
            return ep::iallgatherv(c, send, counts[my], MPI_INT, recv.data(), counts, displs,
                                   MPI_INT);
          },
          "iallgatherv" + how);
    }
    std::vector<int> all(static_cast<std::size_t>(n * kCount), kHole);
    ep::Request request =
        ep::iallgather(c, mine.data(), kCount, MPI_INT, all.data(), kCount, MPI_INT);
    ep::wait(request);
    expect_blocks_in_rank_order(all, "iallgather closed form");
  });
}

// ---- reductions -----------------------------------------------------------

// Doubles that round differently in every evaluation order, a non-commutative
// matrix product, and both ReduceOptions.
TEST(NonblockingReductions, ReduceScanExscanBitForBit) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    std::vector<double> doubles(kCount);
    std::vector<Mat> mats(kCount);
    for (int i = 0; i < kCount; ++i) {
      doubles[static_cast<std::size_t>(i)] = fraction(me, i);
      mats[static_cast<std::size_t>(i)] = coll_test::mat_of(me, i);
    }
    for (const bool independent : {false, true}) {
      const ep::ReduceOptions options{.layout_independent = independent};
      const std::string opts = independent ? " layout-independent" : "";
      for (const bool in_place : {false, true}) {
        const std::string how = opts + (in_place ? " in place" : "");
        // A reduction of doubles in both forms; `call(blocking, send, recv)`.
        const auto check = [&](const char* what, auto&& call) {
          expect_same_as_blocking<double>(
              [&](bool blocking, std::vector<double>& recv) {
                recv = in_place ? doubles : std::vector<double>(kCount, -1.0);
                return call(blocking, in_place ? MPI_IN_PLACE : doubles.data(), recv.data());
              },
              what + how);
        };
        // (In place only at the root: ReduceInPlaceAtTheRoot.)
        for (const int root : {0, n - 1}) {
          if (in_place) break;
          check("ireduce", [&](bool blocking, const void* s, void* r) {
            if (blocking) {
              ep::reduce(c, s, r, kCount, MPI_DOUBLE, MPI_SUM, root, options);
              return ep::Request();
            }
            return ep::ireduce(c, s, r, kCount, MPI_DOUBLE, MPI_SUM, root, options);
          });
        }
        check("iscan", [&](bool blocking, const void* s, void* r) {
          if (blocking) {
            ep::scan(c, s, r, kCount, MPI_DOUBLE, MPI_SUM, options);
            return ep::Request();
          }
          return ep::iscan(c, s, r, kCount, MPI_DOUBLE, MPI_SUM, options);
        });
        check("iexscan", [&](bool blocking, const void* s, void* r) {
          if (blocking) {
            ep::exscan(c, s, r, kCount, MPI_DOUBLE, MPI_SUM, options);
            return ep::Request();
          }
          return ep::iexscan(c, s, r, kCount, MPI_DOUBLE, MPI_SUM, options);
        });
      }
      // Non-commutative: closed forms in EP rank order.
      const auto [type, op] = coll_test::mat_product();
      std::vector<Mat> reduced(kCount), scanned(kCount), exscanned(kCount, Mat{9, 9, 9, 9});
      std::vector<ep::Request> requests;
      requests.push_back(
          ep::ireduce(c, mats.data(), reduced.data(), kCount, type, op, n - 1, options));
      requests.push_back(ep::iscan(c, mats.data(), scanned.data(), kCount, type, op, options));
      requests.push_back(ep::iexscan(c, mats.data(), exscanned.data(), kCount, type, op, options));
      ep::wait_all(requests);
      for (int i = 0; i < kCount; ++i) {
        const auto ii = static_cast<std::size_t>(i);
        if (me == n - 1) {
          EXPECT_EQ(reduced[ii], coll_test::mat_product(0, n, i)) << "ireduce" << opts;
        }
        EXPECT_EQ(scanned[ii], coll_test::mat_product(0, me + 1, i)) << "iscan" << opts;
        if (me > 0) {
          EXPECT_EQ(exscanned[ii], coll_test::mat_product(0, me, i)) << "iexscan" << opts;
        }
      }
      if (me == 0) {
        EXPECT_EQ(exscanned[0], (Mat{9, 9, 9, 9})) << "iexscan left rank 0 alone";
      }
    }
  });
}

TEST(NonblockingReductions, ReduceInPlaceAtTheRoot) {
  for_each_layout([](ep::Communicator& c) {
    const int root = c.size() / 2;
    std::vector<double> doubles(kCount);
    for (int i = 0; i < kCount; ++i) doubles[static_cast<std::size_t>(i)] = fraction(c.rank(), i);
    expect_same_as_blocking<double>(
        [&](bool blocking, std::vector<double>& recv) {
          recv = doubles;
          const void* send = c.rank() == root ? MPI_IN_PLACE : doubles.data();
          if (blocking) {
            ep::reduce(c, send, recv.data(), kCount, MPI_DOUBLE, MPI_SUM, root);
            return ep::Request();
          }
          return ep::ireduce(c, send, recv.data(), kCount, MPI_DOUBLE, MPI_SUM, root);
        },
        "ireduce in place at the root");
  });
}

TEST(NonblockingReductions, ReduceScatterBitForBit) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    std::vector<int> counts(n);
    int length = 0;
    for (int r = 0; r < n; ++r) {
      counts[static_cast<std::size_t>(r)] = varied_count(r, 2);
      length += varied_count(r, 2);
    }
    std::vector<double> contribution(static_cast<std::size_t>(std::max(length, n * 2)));
    for (std::size_t i = 0; i < contribution.size(); ++i) {
      contribution[i] = fraction(me, static_cast<int>(i));
    }
    for (const bool independent : {false, true}) {
      const ep::ReduceOptions options{.layout_independent = independent};
      const std::string opts = independent ? " layout-independent" : "";
      for (const bool in_place : {false, true}) {
        const std::string how = opts + (in_place ? " in place" : "");
        expect_same_as_blocking<double>(
            [&](bool blocking, std::vector<double>& recv) {
              recv = in_place ? contribution : std::vector<double>(contribution.size(), -1.0);
              const void* send = in_place ? MPI_IN_PLACE : contribution.data();
              if (blocking) {
                ep::reduce_scatter(c, send, recv.data(), counts, MPI_DOUBLE, MPI_SUM, options);
                return ep::Request();
              }
              return ep::ireduce_scatter(c, send, recv.data(), counts, MPI_DOUBLE, MPI_SUM,
                                         options);
            },
            "ireduce_scatter" + how);
        expect_same_as_blocking<double>(
            [&](bool blocking, std::vector<double>& recv) {
              recv = in_place ? contribution : std::vector<double>(contribution.size(), -1.0);
              const void* send = in_place ? MPI_IN_PLACE : contribution.data();
              if (blocking) {
                ep::reduce_scatter_block(c, send, recv.data(), 2, MPI_DOUBLE, MPI_SUM, options);
                return ep::Request();
              }
              return ep::ireduce_scatter_block(c, send, recv.data(), 2, MPI_DOUBLE, MPI_SUM,
                                               options);
            },
            "ireduce_scatter_block" + how);
      }
    }
    // Closed form with ints: block of rank me = sum over ranks of value(r, offset + k).
    std::vector<int> ints(static_cast<std::size_t>(length));
    for (int i = 0; i < length; ++i) ints[static_cast<std::size_t>(i)] = value(me, i);
    std::vector<int> mine(static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]) + 1,
                          kHole);
    ep::Request request =
        ep::ireduce_scatter(c, ints.data(), mine.data(), counts, MPI_INT, MPI_SUM);
    ep::wait(request);
    int offset = 0;
    for (int r = 0; r < me; ++r) offset += counts[static_cast<std::size_t>(r)];
    for (int k = 0; k < counts[static_cast<std::size_t>(me)]; ++k) {
      int sum = 0;
      for (int r = 0; r < n; ++r) sum += value(r, offset + k);
      EXPECT_EQ(mine[static_cast<std::size_t>(k)], sum) << "element " << k;
    }
    EXPECT_EQ(mine.back(), kHole);
  });
}

// ---- several at once, errors ----------------------------------------------

// Six different collectives outstanding on one communicator, completed
// backwards on even ranks and by test_some polling on odd ones.
TEST(NonblockingSet, SeveralOutstandingAnyOrder) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    const std::vector<int> mine = values_of(me, kCount);
    const std::vector<int> table = values_of(0, n * kCount, 3);
    std::vector<int> gathered(static_cast<std::size_t>(n * kCount), kHole);
    std::vector<int> all(static_cast<std::size_t>(n * kCount), kHole);
    std::vector<int> swapped(static_cast<std::size_t>(n * kCount), kHole);
    std::vector<int> piece(kCount, kHole), total(kCount, kHole), prefix(kCount, kHole);
    std::vector<int> outgoing = values_of(me, n * kCount, 5);
    std::vector<ep::Request> requests;
    requests.push_back(
        ep::igather(c, mine.data(), kCount, MPI_INT, gathered.data(), kCount, MPI_INT, n - 1));
    requests.push_back(ep::ireduce(c, mine.data(), total.data(), kCount, MPI_INT, MPI_SUM, 0));
    requests.push_back(
        ep::iallgather(c, mine.data(), kCount, MPI_INT, all.data(), kCount, MPI_INT));
    requests.push_back(ep::iscan(c, mine.data(), prefix.data(), kCount, MPI_INT, MPI_SUM));
    requests.push_back(
        ep::ialltoall(c, outgoing.data(), kCount, MPI_INT, swapped.data(), kCount, MPI_INT));
    requests.push_back(
        ep::iscatter(c, table.data(), kCount, MPI_INT, piece.data(), kCount, MPI_INT, 0));
    if (me % 2 == 0) {
      for (auto it = requests.rbegin(); it != requests.rend(); ++it) ep::wait(*it);
    } else {
      std::size_t done = 0;
      while (done < requests.size()) {
        done += ep::test_some(requests).size();
        std::this_thread::yield();
      }
    }
    for (int i = 0; i < kCount; ++i) {
      const auto ii = static_cast<std::size_t>(i);
      int sum = 0;
      int running = 0;
      for (int r = 0; r < n; ++r) {
        sum += value(r, i);
        if (r <= me) running += value(r, i);
      }
      if (me == 0) {
        EXPECT_EQ(total[ii], sum) << "ireduce";
      }
      EXPECT_EQ(prefix[ii], running) << "iscan";
      EXPECT_EQ(piece[ii], value(0, me * kCount + i, 3)) << "iscatter";
      for (int r = 0; r < n; ++r) {
        const auto at = static_cast<std::size_t>(r * kCount + i);
        EXPECT_EQ(all[at], value(r, i)) << "iallgather";
        EXPECT_EQ(swapped[at], value(r, me * kCount + i, 5)) << "ialltoall";
        if (me == n - 1) {
          EXPECT_EQ(gathered[at], value(r, i)) << "igather";
        }
      }
    }
  });
}

// Bad arguments that every endpoint passes alike throw ep::Error naming the
// call from the call itself (so none is left waiting for the others).
TEST(NonblockingSet, ArgumentErrorsNameTheCall) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    int buf[8] = {};
    const int n = c.size();
    const std::vector<int> short_counts(static_cast<std::size_t>(n - 1 > 0 ? n - 1 : 0), 1);
    coll_test::expect_error([&] { (void)ep::ireduce(c, buf, buf + 4, 1, MPI_INT, MPI_SUM, n); },
                            ep::ErrorKind::kRank, c, "ep::ireduce", "ireduce root");
    coll_test::expect_error([&] { (void)ep::iscan(c, buf, buf + 4, -1, MPI_INT, MPI_SUM); },
                            ep::ErrorKind::kCount, c, "ep::iscan", "iscan count");
    coll_test::expect_error([&] { (void)ep::iexscan(c, buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM); },
                            ep::ErrorKind::kArgument, c, "ep::iexscan", "iexscan recvbuf");
    coll_test::expect_error(
        [&] { (void)ep::ireduce_scatter(c, buf, buf + 4, short_counts, MPI_INT, MPI_SUM); },
        ep::ErrorKind::kArgument, c, "ep::ireduce_scatter", "ireduce_scatter recvcounts");
    coll_test::expect_error(
        [&] { (void)ep::ireduce_scatter_block(c, buf, buf + 4, -2, MPI_INT, MPI_SUM); },
        ep::ErrorKind::kCount, c, "ep::ireduce_scatter_block", "ireduce_scatter_block count");
    coll_test::expect_error([&] { (void)ep::igather(c, buf, 1, MPI_INT, buf + 4, 1, MPI_INT, -1); },
                            ep::ErrorKind::kRank, c, "ep::igather", "igather root");
    coll_test::expect_error(
        [&] { (void)ep::iscatter(c, buf, 1, MPI_INT, buf + 4, -1, MPI_INT, 0); },
        ep::ErrorKind::kCount, c, "ep::iscatter", "iscatter recvcount");
    coll_test::expect_error([&] { (void)ep::iallgather(c, buf, 1, MPI_INT, buf + 4, -1, MPI_INT); },
                            ep::ErrorKind::kCount, c, "ep::iallgather", "iallgather recvcount");
    coll_test::expect_error(
        [&] {
          (void)ep::iallgatherv(c, buf, 1, MPI_INT, buf + 4, short_counts, short_counts, MPI_INT);
        },
        ep::ErrorKind::kArgument, c, "ep::iallgatherv", "iallgatherv recvcounts");
    coll_test::expect_error(
        [&] { (void)ep::ialltoall(c, buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT); },
        ep::ErrorKind::kArgument, c, "ep::ialltoall", "ialltoall recvbuf");
    const std::vector<MPI_Datatype> types(static_cast<std::size_t>(n), MPI_INT);
    coll_test::expect_error(
        [&] {
          (void)ep::ialltoallw(c, buf, short_counts, short_counts, types, buf + 4, short_counts,
                               short_counts, types);
        },
        ep::ErrorKind::kArgument, c, "ep::ialltoallw", "ialltoallw sendcounts");
    // Threads of one process that disagree on the count: every request of
    // the instance reports it (one process only, so that no MPI call sees
    // the processes disagree).
    if (ep_test::world_size() == 1 && c.size() > 1) {
      ep::Request request =
          ep::iallreduce(c, buf, buf + 4, 1 + c.local_thread() % 2, MPI_INT, MPI_SUM);
      coll_test::expect_error([&] { ep::wait(request); }, ep::ErrorKind::kArgument, c,
                              "differ from those of other endpoints", "iallreduce local counts");
    }
  });
}

}  // namespace
