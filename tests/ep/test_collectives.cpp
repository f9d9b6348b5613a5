// Data-movement collectives on endpoint communicators: barrier, bcast,
// gather(v), scatter(v), allgather(v) and the argument errors of every
// collective, in every layout of coll_helpers.hpp (the shape's own, one
// endpoint per process, different endpoint counts, EP ranks not
// process-major). Values are checked against closed forms: block r of
// anything holds value(r, i); holes between blocks must stay untouched.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "coll_helpers.hpp"
#include "ep/ep.hpp"

namespace {

using coll_test::for_each_layout;
using coll_test::kHole;
using coll_test::value;
using coll_test::varied_count;

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<int> pattern(int rank, int count, int salt = 0) {
  std::vector<int> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = value(rank, i, salt);
  return v;
}

// Block counts and displacements for v-collectives: blocks in reverse rank
// order with a one-element hole before each (so nothing lies in rank or
// slot order), or back to back in rank order (`in_order`).
struct Layout {
  std::vector<int> counts;
  std::vector<int> displs;
  int extent = 0;  // elements spanned
};

Layout v_layout(int size, int salt, bool in_order) {
  Layout l;
  l.counts.resize(static_cast<std::size_t>(size));
  l.displs.resize(static_cast<std::size_t>(size));
  int next = 0;
  for (int k = 0; k < size; ++k) {
    const int r = in_order ? k : size - 1 - k;
    if (!in_order) ++next;  // a hole
    l.counts[static_cast<std::size_t>(r)] = varied_count(r, salt);
    l.displs[static_cast<std::size_t>(r)] = next;
    next += l.counts[static_cast<std::size_t>(r)];
  }
  l.extent = next + 1;
  return l;
}

// Checks `buf` laid out as `l`: block r holds value(r, i, salt), the rest kHole.
void expect_blocks(const std::vector<int>& buf, const Layout& l, int salt,
                   const std::string& what) {
  std::vector<int> expected(buf.size(), kHole);
  for (std::size_t r = 0; r < l.counts.size(); ++r) {
    for (int i = 0; i < l.counts[r]; ++i) {
      expected[static_cast<std::size_t>(l.displs[r]) + static_cast<std::size_t>(i)] =
          value(static_cast<int>(r), i, salt);
    }
  }
  coll_test::expect_each(
      buf, [&](std::size_t k) { return expected[k]; }, what);
}

// Uniform layout: block r of `count` elements at r * count.
Layout uniform_layout(int size, int count) {
  Layout l;
  for (int r = 0; r < size; ++r) {
    l.counts.push_back(count);
    l.displs.push_back(r * count);
  }
  l.extent = size * count;
  return l;
}

// The counts of the tests: empty, single, odd, and (for a few roots) large
// enough that the threads share the copies (see kParallelCopyBytes).
std::vector<int> counts_for(int root, int size) {
  if (root == 0 || root == size - 1) return {0, 1, 7, 6000};
  return {1, 7};
}

TEST(Collectives, BarrierWaitsForTheLastEndpoint) {
  for_each_layout([](ep::Communicator& c) {
    const int last = c.size() - 1;
    for (int round = 0; round < 2; ++round) {
      long long entered = 0;
      if (c.rank() == last) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        entered = now_ns();
      }
      ep::barrier(c);
      const long long left = now_ns();
      ep::bcast(c, &entered, 1, MPI_LONG_LONG, last);
      EXPECT_GE(left, entered) << "round " << round << " left the barrier early";
    }
  });
}

TEST(Collectives, BcastEveryRoot) {
  for_each_layout([](ep::Communicator& c) {
    for (int root = 0; root < c.size(); ++root) {
      for (int count : counts_for(root, c.size())) {
        std::vector<int> buf =
            c.rank() == root ? pattern(root, count, 1) : std::vector<int>(count, kHole);
        ep::bcast(c, buf.data(), count, MPI_INT, root);
        const std::vector<int> expected = pattern(root, count, 1);
        coll_test::expect_each(
            buf, [&](std::size_t k) { return expected[k]; }, "bcast root " + std::to_string(root));
      }
    }
  });
}

TEST(Collectives, BcastDerivedType) {
  for_each_layout([](ep::Communicator& c) {
    const MPI_Datatype strided = coll_test::strided_type();
    constexpr int kCount = 5;
    const int ints = 2 * coll_test::kStrided * kCount;
    for (int root = 0; root < c.size(); ++root) {
      std::vector<int> buf(static_cast<std::size_t>(ints), kHole);
      if (c.rank() == root) {
        for (int k = 0; k < ints; k += 2) buf[static_cast<std::size_t>(k)] = value(root, k);
      }
      ep::bcast(c, buf.data(), kCount, strided, root);
      coll_test::expect_each(
          buf, [&](std::size_t k) { return k % 2 == 0 ? value(root, static_cast<int>(k)) : kHole; },
          "strided bcast root " + std::to_string(root));
    }
  });
}

TEST(Collectives, GatherEveryRoot) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (int root = 0; root < n; ++root) {
      for (int count : counts_for(root, n)) {
        const std::vector<int> mine = pattern(c.rank(), count);
        std::vector<int> recv(c.rank() == root ? static_cast<std::size_t>(n * count) : 0, kHole);
        ep::gather(c, mine.data(), count, MPI_INT, recv.data(), count, MPI_INT, root);
        if (c.rank() == root) {
          expect_blocks(recv, uniform_layout(n, count), 0,
                        "gather root " + std::to_string(root) + " count " + std::to_string(count));
        }
      }
    }
  });
}

TEST(Collectives, GatherInPlaceAndOtherReceiveType) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    constexpr int kCount = 4;
    MPI_Datatype row = MPI_DATATYPE_NULL;  // kCount ints as one element at the root
    MPI_Type_contiguous(kCount, MPI_INT, &row);
    MPI_Type_commit(&row);
    for (int root = 0; root < n; ++root) {
      const bool is_root = c.rank() == root;
      std::vector<int> recv(is_root ? static_cast<std::size_t>(n * kCount) : 0, kHole);
      const std::vector<int> mine = pattern(c.rank(), kCount);
      if (is_root)
        std::copy(mine.begin(), mine.end(), recv.begin() + std::ptrdiff_t{root} * kCount);
      ep::gather(c, is_root ? MPI_IN_PLACE : mine.data(), kCount, MPI_INT, recv.data(), 1, row,
                 root);
      if (is_root) expect_blocks(recv, uniform_layout(n, kCount), 0, "in-place gather");
    }
    MPI_Type_free(&row);
  });
}

TEST(Collectives, GathervEveryRootAnyDisplacements) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (bool in_order : {false, true}) {
      for (int root = 0; root < n; ++root) {
        for (bool in_place : {false, true}) {
          const bool is_root = c.rank() == root;
          const Layout l = v_layout(n, root, in_order);
          const int mine_count = l.counts[static_cast<std::size_t>(c.rank())];
          const std::vector<int> mine = pattern(c.rank(), mine_count, 3);
          std::vector<int> recv(is_root ? static_cast<std::size_t>(l.extent) : 0, kHole);
          const bool use_in_place = in_place && is_root;
          if (use_in_place) {
            std::copy(mine.begin(), mine.end(),
                      recv.begin() + l.displs[static_cast<std::size_t>(root)]);
          }
          ep::gatherv(
              c, use_in_place ? MPI_IN_PLACE : mine.data(), mine_count, MPI_INT, recv.data(),
              is_root ? std::span<const int>(l.counts) : std::span<const int>(),
              is_root ? std::span<const int>(l.displs) : std::span<const int>(), MPI_INT, root);
          if (is_root) {
            expect_blocks(recv, l, 3,
                          "gatherv root " + std::to_string(root) +
                              (in_order ? " in order" : " reversed") +
                              (in_place ? " in place" : ""));
          }
        }
      }
    }
  });
}

TEST(Collectives, ScatterEveryRoot) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (int root = 0; root < n; ++root) {
      for (int count : counts_for(root, n)) {
        for (bool in_place : {false, true}) {
          const bool is_root = c.rank() == root;
          std::vector<int> send;
          if (is_root) {
            for (int r = 0; r < n; ++r) {
              const std::vector<int> block = pattern(r, count, 5);
              send.insert(send.end(), block.begin(), block.end());
            }
          }
          std::vector<int> recv(static_cast<std::size_t>(count), kHole);
          const bool use_in_place = in_place && is_root;
          ep::scatter(c, send.data(), count, MPI_INT, use_in_place ? MPI_IN_PLACE : recv.data(),
                      count, MPI_INT, root);
          const std::vector<int> expected =
              use_in_place ? std::vector<int>(recv.size(), kHole) : pattern(c.rank(), count, 5);
          coll_test::expect_each(
              recv, [&](std::size_t k) { return expected[k]; },
              "scatter root " + std::to_string(root) + " count " + std::to_string(count));
        }
      }
    }
  });
}

TEST(Collectives, ScattervEveryRootAnyDisplacements) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    MPI_Datatype pair = MPI_DATATYPE_NULL;  // the receive side takes whole pairs where it can
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (bool in_order : {false, true}) {
      for (int root = 0; root < n; ++root) {
        const bool is_root = c.rank() == root;
        const Layout l = v_layout(n, root + 1, in_order);
        std::vector<int> send;
        if (is_root) {
          send.assign(static_cast<std::size_t>(l.extent), kHole);
          for (int r = 0; r < n; ++r) {
            for (int i = 0; i < l.counts[static_cast<std::size_t>(r)]; ++i) {
              send[static_cast<std::size_t>(l.displs[static_cast<std::size_t>(r)]) +
                   static_cast<std::size_t>(i)] = value(r, i, 9);
            }
          }
        }
        const int mine_count = l.counts[static_cast<std::size_t>(c.rank())];
        std::vector<int> recv(static_cast<std::size_t>(mine_count), kHole);
        const bool pairs = mine_count % 2 == 0;
        ep::scatterv(
            c, send.data(), is_root ? std::span<const int>(l.counts) : std::span<const int>(),
            is_root ? std::span<const int>(l.displs) : std::span<const int>(), MPI_INT, recv.data(),
            pairs ? mine_count / 2 : mine_count, pairs ? pair : MPI_INT, root);
        EXPECT_EQ(recv, pattern(c.rank(), mine_count, 9))
            << "scatterv root " << root << (in_order ? " in order" : " reversed");
      }
    }
    MPI_Type_free(&pair);
  });
}

TEST(Collectives, AllgatherPlainAndInPlace) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (int count : {0, 1, 7, 6000}) {
      for (bool in_place : {false, true}) {
        const std::vector<int> mine = pattern(c.rank(), count, 2);
        std::vector<int> recv(static_cast<std::size_t>(n * count), kHole);
        if (in_place)
          std::copy(mine.begin(), mine.end(), recv.begin() + std::ptrdiff_t{c.rank()} * count);
        ep::allgather(c, in_place ? MPI_IN_PLACE : mine.data(), count, MPI_INT, recv.data(), count,
                      MPI_INT);
        expect_blocks(recv, uniform_layout(n, count), 2,
                      "allgather count " + std::to_string(count) + (in_place ? " in place" : ""));
      }
    }
  });
}

TEST(Collectives, AllgatherDerivedTypes) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const MPI_Datatype strided = coll_test::strided_type();
    constexpr int kElements = 2;  // strided elements per rank
    constexpr int kInts = kElements * coll_test::kStrided;
    // Dense ints in, strided elements out.
    {
      const std::vector<int> mine = pattern(c.rank(), kInts);
      std::vector<int> recv(static_cast<std::size_t>(2 * n * kInts), kHole);
      ep::allgather(c, mine.data(), kInts, MPI_INT, recv.data(), kElements, strided);
      coll_test::expect_each(
          recv,
          [&](std::size_t k) {
            const auto data = static_cast<int>(k / 2);  // the data int of rank data / kInts
            return k % 2 == 0 ? value(data / kInts, data % kInts) : kHole;
          },
          "allgather into strided");
    }
    // Strided elements in, dense ints out.
    {
      std::vector<int> mine(static_cast<std::size_t>(2 * kInts), kHole);
      for (int i = 0; i < kInts; ++i) mine[2 * static_cast<std::size_t>(i)] = value(c.rank(), i);
      std::vector<int> recv(static_cast<std::size_t>(n * kInts), kHole);
      ep::allgather(c, mine.data(), kElements, strided, recv.data(), kInts, MPI_INT);
      expect_blocks(recv, uniform_layout(n, kInts), 0, "allgather from strided");
    }
  });
}

TEST(Collectives, AllgathervAnyDisplacements) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (bool in_order : {false, true}) {
      for (bool in_place : {false, true}) {
        for (int salt : {0, 1, 2}) {
          const Layout l = v_layout(n, salt, in_order);
          const int mine_count = l.counts[static_cast<std::size_t>(c.rank())];
          const std::vector<int> mine = pattern(c.rank(), mine_count, 4);
          std::vector<int> recv(static_cast<std::size_t>(l.extent), kHole);
          if (in_place) {
            std::copy(mine.begin(), mine.end(),
                      recv.begin() + l.displs[static_cast<std::size_t>(c.rank())]);
          }
          ep::allgatherv(c, in_place ? MPI_IN_PLACE : mine.data(), mine_count, MPI_INT, recv.data(),
                         l.counts, l.displs, MPI_INT);
          expect_blocks(recv, l, 4,
                        std::string("allgatherv") + (in_order ? " in order" : " reversed") +
                            (in_place ? " in place" : "") + " salt " + std::to_string(salt));
        }
      }
    }
  });
}

TEST(Collectives, AllgathervLargeBlocks) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    Layout l;
    for (int r = 0; r < n; ++r) {
      l.counts.push_back(3000 + 1000 * (r % 3));
      l.displs.push_back(l.extent);
      l.extent += l.counts.back();
    }
    // Reverse the placement: blocks no longer in rank order.
    int next = 0;
    for (int r = n - 1; r >= 0; --r) {
      l.displs[static_cast<std::size_t>(r)] = next;
      next += l.counts[static_cast<std::size_t>(r)];
    }
    const int mine_count = l.counts[static_cast<std::size_t>(c.rank())];
    const std::vector<int> mine = pattern(c.rank(), mine_count, 6);
    std::vector<int> recv(static_cast<std::size_t>(l.extent), kHole);
    ep::allgatherv(c, mine.data(), mine_count, MPI_INT, recv.data(), l.counts, l.displs, MPI_INT);
    expect_blocks(recv, l, 6, "large allgatherv");
  });
}

// ---- errors: every endpoint passes the same bad value, so all of them throw ----

TEST(Collectives, BadRootIsAnErrorEverywhere) {
  for_each_layout([](ep::Communicator& c) {
    using ep::ErrorKind;
    const int n = c.size();
    int x[1] = {0};
    std::vector<int> big(static_cast<std::size_t>(n), 0);
    const std::vector<int> ones(static_cast<std::size_t>(n), 1);
    std::vector<int> displs(static_cast<std::size_t>(n));
    std::iota(displs.begin(), displs.end(), 0);
    for (int bad : {n, -1, 1000}) {
      const std::string v = "root " + std::to_string(bad);
      coll_test::expect_error([&] { ep::bcast(c, x, 1, MPI_INT, bad); }, ErrorKind::kRank, c, v,
                              "bcast");
      coll_test::expect_error([&] { ep::reduce(c, x, big.data(), 1, MPI_INT, MPI_SUM, bad); },
                              ErrorKind::kRank, c, v, "reduce");
      coll_test::expect_error([&] { ep::gather(c, x, 1, MPI_INT, big.data(), 1, MPI_INT, bad); },
                              ErrorKind::kRank, c, v, "gather");
      coll_test::expect_error(
          [&] { ep::gatherv(c, x, 1, MPI_INT, big.data(), ones, displs, MPI_INT, bad); },
          ErrorKind::kRank, c, v, "gatherv");
      coll_test::expect_error([&] { ep::scatter(c, big.data(), 1, MPI_INT, x, 1, MPI_INT, bad); },
                              ErrorKind::kRank, c, v, "scatter");
      coll_test::expect_error(
          [&] { ep::scatterv(c, big.data(), ones, displs, MPI_INT, x, 1, MPI_INT, bad); },
          ErrorKind::kRank, c, v, "scatterv");
    }
    // Still usable.
    int sum = 0;
    const int one = 1;
    ep::allreduce(c, &one, &sum, 1, MPI_INT, MPI_SUM);
    EXPECT_EQ(sum, n);
  });
}

TEST(Collectives, NegativeCountsAreErrors) {
  for_each_layout([](ep::Communicator& c) {
    using ep::ErrorKind;
    const int n = c.size();
    std::vector<int> buf(static_cast<std::size_t>(4 * n + 4), 0);
    std::vector<int> counts(static_cast<std::size_t>(n), 1);
    std::vector<int> displs(static_cast<std::size_t>(n));
    std::iota(displs.begin(), displs.end(), 0);
    std::vector<int> negative = counts;
    negative[static_cast<std::size_t>(n - 1)] = -2;
    const int* b = buf.data();
    int* out = buf.data() + 2 * static_cast<std::ptrdiff_t>(n);
    const std::string minus = "-2";
    coll_test::expect_error([&] { ep::bcast(c, out, -2, MPI_INT, 0); }, ErrorKind::kCount, c, minus,
                            "bcast");
    coll_test::expect_error([&] { ep::allreduce(c, b, out, -2, MPI_INT, MPI_SUM); },
                            ErrorKind::kCount, c, minus, "allreduce");
    coll_test::expect_error([&] { ep::reduce(c, b, out, -2, MPI_INT, MPI_SUM, 0); },
                            ErrorKind::kCount, c, minus, "reduce");
    coll_test::expect_error([&] { ep::gather(c, b, -2, MPI_INT, out, 1, MPI_INT, 0); },
                            ErrorKind::kCount, c, minus, "gather");
    coll_test::expect_error(
        [&] { ep::gatherv(c, b, -2, MPI_INT, out, counts, displs, MPI_INT, 0); }, ErrorKind::kCount,
        c, minus, "gatherv");
    coll_test::expect_error([&] { ep::scatter(c, b, 1, MPI_INT, out, -2, MPI_INT, 0); },
                            ErrorKind::kCount, c, minus, "scatter");
    coll_test::expect_error(
        [&] { ep::scatterv(c, b, counts, displs, MPI_INT, out, -2, MPI_INT, 0); },
        ErrorKind::kCount, c, minus, "scatterv");
    coll_test::expect_error([&] { ep::allgather(c, b, 1, MPI_INT, out, -2, MPI_INT); },
                            ErrorKind::kCount, c, minus, "allgather recvcount");
    coll_test::expect_error([&] { ep::allgather(c, b, -2, MPI_INT, out, 1, MPI_INT); },
                            ErrorKind::kCount, c, minus, "allgather sendcount");
    coll_test::expect_error(
        [&] { ep::allgatherv(c, b, 1, MPI_INT, out, negative, displs, MPI_INT); },
        ErrorKind::kCount, c, "recvcounts[" + std::to_string(n - 1) + "] = -2", "allgatherv");
    coll_test::expect_error([&] { ep::reduce_scatter(c, b, out, negative, MPI_INT, MPI_SUM); },
                            ErrorKind::kCount, c, "recvcounts[" + std::to_string(n - 1) + "] = -2",
                            "reduce_scatter");
    coll_test::expect_error([&] { ep::reduce_scatter_block(c, b, out, -2, MPI_INT, MPI_SUM); },
                            ErrorKind::kCount, c, minus, "reduce_scatter_block");
    coll_test::expect_error([&] { ep::scan(c, b, out, -2, MPI_INT, MPI_SUM); }, ErrorKind::kCount,
                            c, minus, "scan");
    coll_test::expect_error([&] { ep::exscan(c, b, out, -2, MPI_INT, MPI_SUM); }, ErrorKind::kCount,
                            c, minus, "exscan");
    // Spans shorter than the communicator.
    const std::vector<int> short_counts(static_cast<std::size_t>(n - 1), 1);
    coll_test::expect_error(
        [&] { ep::allgatherv(c, b, 1, MPI_INT, out, short_counts, displs, MPI_INT); },
        ErrorKind::kArgument, c, "recvcounts has " + std::to_string(n - 1) + " entries",
        "allgatherv short counts");
    coll_test::expect_error([&] { ep::reduce_scatter(c, b, out, short_counts, MPI_INT, MPI_SUM); },
                            ErrorKind::kArgument, c,
                            "recvcounts has " + std::to_string(n - 1) + " entries",
                            "reduce_scatter short counts");
    // Still usable.
    std::vector<int> all(static_cast<std::size_t>(n), kHole);
    const int mine = c.rank();
    ep::allgather(c, &mine, 1, MPI_INT, all.data(), 1, MPI_INT);
    for (int r = 0; r < n; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], r);
  });
}

// Within a process the endpoints see each other's counts, so a mismatch
// there is an error (raised after the collective completes, by every
// endpoint that copied a mismatched block) instead of a silent overrun.
// On a communicator within one process the root of a broadcast leaves
// without waiting for the others (a small one through one of four staging
// buffers, a large one once every thread has read it): roots that change
// every call, sizes on both sides of the staging limit and one thread that
// falls behind now and then, so that the roots run ahead of it by as much
// as the staging allows; every endpoint checks every broadcast.
TEST(Collectives, BcastWithinAProcessKeepsEveryBroadcastApart) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    int bad = 0;
    for (int round = 0; round < 300; ++round) {
      const int root = round % n;
      const int count = round % 3 == 0 ? 3 : (round % 3 == 1 ? 1000 : 3000);  // 12 B, 4 KB, 12 KB
      if (c.rank() == n - 1 && round % 50 == 7) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      std::vector<int> buf =
          c.rank() == root ? pattern(root, count, round) : std::vector<int>(count, kHole);
      ep::bcast(c, buf.data(), count, MPI_INT, root);
      if (buf != pattern(root, count, round) && bad++ == 0) {
        ADD_FAILURE() << "broadcast " << round << " from " << root << " of " << count
                      << " ints arrived wrong at " << c.rank();
      }
    }
    EXPECT_EQ(bad, 0);
  });
}

// A receive buffer that disagrees with the root's within one process: that
// endpoint receives what fits and throws, naming both sizes; the others
// complete, and the next broadcast is whole everywhere.
TEST(Collectives, BcastSizeMismatchWithinAProcess) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    for (const int count : {100, 5000}) {  // staged, read from the root's buffer
      const bool short_buffer = n > 1 && c.rank() == n - 1;
      std::vector<int> buf = c.rank() == 0 ? pattern(0, count) : std::vector<int>(count, kHole);
      try {
        ep::bcast(c, buf.data(), short_buffer ? count - 1 : count, MPI_INT, 0);
        EXPECT_FALSE(short_buffer) << "no error for a short buffer";
      } catch (const ep::Error& e) {
        EXPECT_TRUE(short_buffer) << e.what();
        EXPECT_EQ(e.kind(), ep::ErrorKind::kTruncate) << e.what();
        EXPECT_NE(std::string(e.what()).find("broadcasts " + std::to_string(4 * count) + " bytes"),
                  std::string::npos)
            << e.what();
      }
      std::vector<int> expected = pattern(0, count);
      if (short_buffer) expected.back() = kHole;
      EXPECT_EQ(buf, expected) << "count " << count;
      std::vector<int> next = c.rank() == n / 2 ? pattern(n / 2, 7, 1) : std::vector<int>(7, kHole);
      ep::bcast(c, next.data(), 7, MPI_INT, n / 2);
      EXPECT_EQ(next, pattern(n / 2, 7, 1));
    }
  });
}

TEST(Collectives, AllgatherCountMismatchWithinAProcess) {
  for_each_layout([](ep::Communicator& c) {
    const ep::RankMap& map = c.rank_map();
    if (map.max_endpoints_per_process() == 1 && map.process_major()) return;  // MPI's own call
    const int n = c.size();
    const std::vector<int> mine = pattern(c.rank(), 2);
    std::vector<int> recv(static_cast<std::size_t>(3 * n), kHole);
    coll_test::expect_error(
        [&] { ep::allgather(c, mine.data(), 2, MPI_INT, recv.data(), 3, MPI_INT); },
        ep::ErrorKind::kCount, c, "expected", "allgather 2 sent, 3 expected");
    ep::barrier(c);
  });
}

// allgatherv on a communicator within one process (one exchange round):
// contributions up to 2 KiB are staged, larger ones read where they are
// (their owner waiting for its readers). Sizes straddle that limit and
// differ per thread, empty ones among them; in place and not; one thread
// late now and then; every thread overwrites its contribution as soon as
// the call returns, so a reader still copying from it would see that.
TEST(Collectives, AllgathervWithinAProcess) {
  constexpr int kSizes[] = {0, 1, 255, 511, 512, 513, 1024, 3000};
  constexpr int kKinds = sizeof kSizes / sizeof kSizes[0];
  ep_test::run_within_each_process([&](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    int bad = 0;
    for (int round = 0; round < 6 * kKinds; ++round) {
      const bool in_place = round % 3 == 1;
      std::vector<int> counts(static_cast<std::size_t>(n));
      std::vector<int> displs(static_cast<std::size_t>(n));
      int total = 0;
      for (int j = 0; j < n; ++j) {
        counts[static_cast<std::size_t>(j)] = kSizes[(round + 3 * j) % kKinds];
        displs[static_cast<std::size_t>(j)] = total;
        total += counts[static_cast<std::size_t>(j)] + 1;  // a hole after each block
      }
      std::vector<int> mine = pattern(me, counts[static_cast<std::size_t>(me)], round);
      std::vector<int> recv(static_cast<std::size_t>(total), kHole);
      if (round % 8 == 0 && me == (round / 8) % n) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a late thread
      }
      if (in_place) {
        std::copy(mine.begin(), mine.end(), recv.begin() + displs[static_cast<std::size_t>(me)]);
        ep::allgatherv(c, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv.data(), counts, displs, MPI_INT);
      } else {
        ep::allgatherv(c, mine.data(), static_cast<int>(mine.size()), MPI_INT, recv.data(), counts,
                       displs, MPI_INT);
        std::fill(mine.begin(), mine.end(), -1);  // the caller's again
      }
      std::vector<int> expected(static_cast<std::size_t>(total), kHole);
      for (int j = 0; j < n; ++j) {
        const std::vector<int> block = pattern(j, counts[static_cast<std::size_t>(j)], round);
        std::copy(block.begin(), block.end(),
                  expected.begin() + displs[static_cast<std::size_t>(j)]);
      }
      if (recv != expected && bad++ == 0) {
        ADD_FAILURE() << "round " << round << (in_place ? " in place" : "") << " at " << me;
      }
    }
    EXPECT_EQ(bad, 0);
  });
}

// The same with one block whose sides disagree: the first endpoint expects
// one int more (kCount) or fewer (kTruncate) from the last than it sends,
// for a staged block (4 ints) and one read in place (1000 ints). Only the
// first endpoint throws, naming the block's rank and both sizes; it got
// what fits, and every other block and endpoint is whole.
TEST(Collectives, AllgathervMismatchWithinAProcess) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    const int last = n - 1;
    for (const int count : {4, 1000}) {
      for (const int change : {-1, 1}) {
        SCOPED_TRACE("count " + std::to_string(count) + ", change " + std::to_string(change));
        std::vector<int> counts(static_cast<std::size_t>(n), count);
        std::vector<int> displs(static_cast<std::size_t>(n));
        for (int j = 0; j < n; ++j) displs[static_cast<std::size_t>(j)] = j * (count + 1);
        if (me == 0) counts[static_cast<std::size_t>(last)] += change;
        const std::vector<int> mine = pattern(me, count, 3);
        std::vector<int> recv(static_cast<std::size_t>(n * (count + 1)), kHole);
        std::optional<ep::Error> error;
        try {
          ep::allgatherv(c, mine.data(), count, MPI_INT, recv.data(), counts, displs, MPI_INT);
        } catch (const ep::Error& e) {
          error = e;
        }
        const bool mismatched = me == 0;
        EXPECT_EQ(error.has_value(), mismatched) << (error ? error->what() : "no error");
        if (error && mismatched) {
          const std::string what = error->what();
          EXPECT_EQ(error->kind(), change < 0 ? ep::ErrorKind::kTruncate : ep::ErrorKind::kCount)
              << what;
          EXPECT_NE(what.find("ep::allgatherv"), std::string::npos) << what;
          EXPECT_NE(what.find(std::to_string(last)), std::string::npos) << what;
          EXPECT_NE(what.find(std::to_string(count * 4)), std::string::npos) << what;
          EXPECT_NE(what.find(std::to_string((count + change) * 4)), std::string::npos) << what;
        }
        for (int j = 0; j < n; ++j) {
          const int whole = mismatched && j == last ? std::min(count, count + change) : count;
          const std::vector<int> block = pattern(j, whole, 3);
          EXPECT_TRUE(std::equal(block.begin(), block.end(),
                                 recv.begin() + displs[static_cast<std::size_t>(j)]))
              << "block from " << j;
        }
        ep::barrier(c);
      }
    }
  });
}

}  // namespace

namespace {

// Gather, gatherv, scatter and scatterv on a communicator within one
// process (the root publishes its buffer, each thread copies its own block):
// roots that change every call, zero, small and large counts, in place and
// not, broadcasts in between (the calls share the team's numbering of
// one-way publications) and one thread that falls behind now and then, so
// that the others run ahead of it as far as the team allows.
TEST(Collectives, RootedCallsWithinAProcess) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    int bad = 0;
    const auto check = [&](bool ok, int round, const char* what) {
      if (!ok && bad++ == 0) ADD_FAILURE() << what << " round " << round << " at " << c.rank();
    };
    for (int round = 0; round < 120; ++round) {
      const int root = (round * 7 + 1) % n;
      const bool is_root = c.rank() == root;
      const int count = round % 4 == 0 ? 0 : (round % 4 == 1 ? 1 : (round % 4 == 2 ? 5 : 3000));
      const bool in_place = round % 3 == 0;
      if (c.rank() == n - 1 && round % 40 == 11) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      // gather
      const std::vector<int> mine = pattern(c.rank(), count, round);
      std::vector<int> all(is_root ? static_cast<std::size_t>(n * count) : 0, kHole);
      if (is_root && in_place) {
        std::copy(mine.begin(), mine.end(), all.begin() + std::ptrdiff_t{root} * count);
      }
      ep::gather(c, is_root && in_place ? MPI_IN_PLACE : mine.data(), count, MPI_INT, all.data(),
                 count, MPI_INT, root);
      if (is_root) {
        bool ok = true;
        for (int r = 0; r < n; ++r) {
          ok = ok && std::equal(all.begin() + std::ptrdiff_t{r} * count,
                                all.begin() + std::ptrdiff_t{r + 1} * count,
                                pattern(r, count, round).begin());
        }
        check(ok, round, "gather");
      }
      // a broadcast in between, staged or not
      std::vector<int> note =
          is_root ? pattern(root, count + 1, round) : std::vector<int>(count + 1);
      ep::bcast(c, note.data(), count + 1, MPI_INT, root);
      check(note == pattern(root, count + 1, round), round, "bcast");
      // scatter back what the root gathered (or its own pattern)
      std::vector<int> back(static_cast<std::size_t>(count), kHole);
      if (is_root && in_place) back = mine;
      ep::scatter(c, all.data(), count, MPI_INT, is_root && in_place ? MPI_IN_PLACE : back.data(),
                  count, MPI_INT, root);
      check(back == mine, round, "scatter");
      // gatherv and scatterv, reversed blocks with holes
      const Layout l = v_layout(n, round, false);
      const int my_count = l.counts[static_cast<std::size_t>(c.rank())];
      const std::vector<int> part = pattern(c.rank(), my_count, round);
      std::vector<int> table(is_root ? static_cast<std::size_t>(l.extent) : 0, kHole);
      ep::gatherv(c, part.data(), my_count, MPI_INT, table.data(),
                  is_root ? std::span<const int>(l.counts) : std::span<const int>(),
                  is_root ? std::span<const int>(l.displs) : std::span<const int>(), MPI_INT, root);
      if (is_root) {
        std::vector<int> expected(table.size(), kHole);
        for (int r = 0; r < n; ++r) {
          const std::vector<int> block = pattern(r, l.counts[static_cast<std::size_t>(r)], round);
          std::copy(block.begin(), block.end(),
                    expected.begin() + l.displs[static_cast<std::size_t>(r)]);
        }
        check(table == expected, round, "gatherv");
      }
      std::vector<int> piece(static_cast<std::size_t>(my_count), kHole);
      ep::scatterv(c, table.data(),
                   is_root ? std::span<const int>(l.counts) : std::span<const int>(),
                   is_root ? std::span<const int>(l.displs) : std::span<const int>(), MPI_INT,
                   piece.data(), my_count, MPI_INT, root);
      check(piece == part, round, "scatterv");
    }
    EXPECT_EQ(bad, 0);
  });
}

// A block whose two sides disagree within one process is the receiver's
// error: the root's in a gather (naming the block), the short endpoint's in
// a scatter; everyone else completes, what fits arrives, and the next call
// is whole everywhere.
TEST(Collectives, RootedCallSizeMismatchWithinAProcess) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    if (n == 1) return;
    const int root = n - 1;
    const int odd = 0;  // the endpoint whose block disagrees
    const bool is_root = c.rank() == root;
    constexpr int kCount = 6;
    // gather: rank `odd` sends one element fewer than the root expects
    const std::vector<int> mine = pattern(c.rank(), kCount);
    std::vector<int> all(is_root ? static_cast<std::size_t>(n * kCount) : 0, kHole);
    try {
      ep::gather(c, mine.data(), c.rank() == odd ? kCount - 1 : kCount, MPI_INT, all.data(), kCount,
                 MPI_INT, root);
      EXPECT_FALSE(is_root) << "gather: no error at the root";
    } catch (const ep::Error& e) {
      EXPECT_TRUE(is_root) << e.what();
      EXPECT_EQ(e.kind(), ep::ErrorKind::kCount) << e.what();
      EXPECT_EQ(e.ep_rank(), root) << e.what();
      EXPECT_NE(std::string(e.what()).find("EP rank " + std::to_string(odd)), std::string::npos)
          << e.what();
    }
    if (is_root) {
      for (int r = 0; r < n; ++r) {
        for (int i = 0; i < kCount; ++i) {
          const int expected = r == odd && i == kCount - 1 ? kHole : value(r, i);
          EXPECT_EQ(all[static_cast<std::size_t>(r * kCount + i)], expected) << r << " " << i;
        }
      }
    }
    // scatter: rank `odd` takes one element fewer than the root sends
    std::vector<int> piece(static_cast<std::size_t>(kCount), kHole);
    try {
      ep::scatter(c, all.data(), kCount, MPI_INT, piece.data(),
                  c.rank() == odd ? kCount - 1 : kCount, MPI_INT, root);
      EXPECT_NE(c.rank(), odd) << "scatter: no error for a short buffer";
    } catch (const ep::Error& e) {
      EXPECT_EQ(c.rank(), odd) << e.what();
      EXPECT_EQ(e.kind(), ep::ErrorKind::kTruncate) << e.what();
      EXPECT_EQ(e.ep_rank(), odd) << e.what();
    }
    std::vector<int> expected_piece = pattern(c.rank(), kCount);
    if (c.rank() == odd) expected_piece[kCount - 1] = kHole;
    EXPECT_EQ(piece, expected_piece);
    // the next gather is whole
    std::vector<int> again(is_root ? static_cast<std::size_t>(n * kCount) : 0, kHole);
    ep::gather(c, mine.data(), kCount, MPI_INT, again.data(), kCount, MPI_INT, root);
    if (is_root) expect_blocks(again, uniform_layout(n, kCount), 0, "gather after a mismatch");
  });
}

}  // namespace
