// reduce_scatter and reduce_scatter_block of large vectors whose process
// shares differ, blocking and nonblocking, in place and not, in every layout
// of coll_helpers.hpp (one endpoint per process among them).
//
// Between processes both reductions end in one MPI_Ireduce_scatter over the
// processes' shares. MPICH 4.0.2's, given MPI_IN_PLACE, aborts the job on
// such vectors ("memcpy argument memory ranges overlap": from 512 KiB it
// leaves a process's share at its place in the vector and copies it to the
// front with memcpy, which overlaps when the share is longer than what comes
// before it), so the library never hands it MPI_IN_PLACE. Registered at
// r2t8 (shares of 8 increasing blocks each) and r4t1, whose uneven layout
// has 1, 2, 3 and 4 endpoints per process (reduce_scatter_block's shares
// then differ too).
#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>
#include <string>
#include <vector>

#include "coll_helpers.hpp"
#include "ep/ep.hpp"

namespace {

using coll_test::for_each_layout;
using coll_test::kHole;
using coll_test::sum_of_values;
using coll_test::values_of;

// Elements of the whole vector: 1.2 MB of ints, well past MPICH's 512 KiB.
constexpr int kVectorElements = 300000;

// Blocks that grow with the EP rank, unevenly, about kVectorElements in all.
std::vector<int> growing_counts(int ranks) {
  std::vector<int> weights(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) weights[static_cast<std::size_t>(r)] = r + 1 + r % 3;
  const int unit = kVectorElements / std::accumulate(weights.begin(), weights.end(), 0);
  for (int& w : weights) w *= unit;
  return weights;
}

// Reduces this rank's vector (`counts` cut it, block r to EP rank r) with
// `reduce(sendbuf, recvbuf)` (blocking) and `start(sendbuf, recvbuf)`
// (nonblocking, returning the request), in place and not, and checks this
// rank's block each time.
template <class Reduce, class Start>
void check_block_sums(const ep::Communicator& c, const std::vector<int>& counts,
                      const std::string& name, Reduce&& reduce, Start&& start) {
  const int length = std::accumulate(counts.begin(), counts.end(), 0);
  const int first = std::accumulate(counts.begin(), counts.begin() + c.rank(), 0);
  const int mine = counts[static_cast<std::size_t>(c.rank())];
  for (const bool in_place : {false, true}) {
    for (const bool nonblocking : {false, true}) {
      std::vector<int> vector = values_of(c.rank(), length);
      std::vector<int> result(static_cast<std::size_t>(mine), kHole);
      const void* send = in_place ? MPI_IN_PLACE : vector.data();
      void* recv = in_place ? vector.data() : result.data();
      if (nonblocking) {
        ep::Request request = start(send, recv);
        ep::wait(request);
      } else {
        reduce(send, recv);
      }
      if (in_place) result.assign(vector.begin(), vector.begin() + mine);
      coll_test::expect_each(
          result,
          [&](std::size_t j) { return sum_of_values(c.size(), first + static_cast<int>(j)); },
          (nonblocking ? "i" : "") + name + (in_place ? " in place" : ""));
    }
  }
}

TEST(ReduceScatterUneven, GrowingBlocks) {
  for_each_layout([](ep::Communicator& c) {
    const std::vector<int> counts = growing_counts(c.size());
    check_block_sums(
        c, counts, "reduce_scatter",
        [&](const void* send, void* recv) {
          ep::reduce_scatter(c, send, recv, counts, MPI_INT, MPI_SUM);
        },
        [&](const void* send, void* recv) {
          return ep::ireduce_scatter(c, send, recv, counts, MPI_INT, MPI_SUM);
        });
  });
}

TEST(ReduceScatterUneven, BlocksOfUnevenProcesses) {
  for_each_layout([](ep::Communicator& c) {
    const int block = kVectorElements / c.size();
    check_block_sums(
        c, std::vector<int>(static_cast<std::size_t>(c.size()), block), "reduce_scatter_block",
        [&](const void* send, void* recv) {
          ep::reduce_scatter_block(c, send, recv, block, MPI_INT, MPI_SUM);
        },
        [&](const void* send, void* recv) {
          return ep::ireduce_scatter_block(c, send, recv, block, MPI_INT, MPI_SUM);
        });
  });
}

}  // namespace
