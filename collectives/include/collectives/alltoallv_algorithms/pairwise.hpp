// Pairwise-exchange alltoallv: n-1 stages, one partner each, send and
// receive at once.
//
//   n a power of two: stage s = 1 .. n-1, rank i exchanges with i XOR s
//                     (each stage pairs ranks off, both directions at once)
//   otherwise:        stage s, rank i sends to i+s and receives from i-s
//
//   n = 4:  stage 1: 0<->1 2<->3   stage 2: 0<->2 1<->3   stage 3: 0<->3 1<->2
//
// The fewest messages in flight (one each way): bandwidth-friendly for large
// blocks, n-1 latencies for small ones.
#pragma once

#include "collectives/alltoallv_algorithms/exchange.hpp"
#include "collectives/detail/tags.hpp"
#include "common/datatype.hpp"

namespace collectives::alltoallv_algorithms {

/// Collective over `comm`; arguments checked (alltoallv.hpp). A mismatch
/// found by a verified exchange is left in scratch.mismatch.
template <Communicator C, common::HasDatatype T>
void pairwise(const C& comm, const Exchange<T>& x, Scratch<T, typename C::Request>& scratch) {
  const int n = comm.size();
  const int me = comm.rank();
  const bool power_of_two = (n & (n - 1)) == 0;
  copy_self(comm, x, scratch);
  for (int s = 1; s < n; ++s) {
    const int to = power_of_two ? (me ^ s) : (me + s) % n;
    const int from = power_of_two ? (me ^ s) : (me - s + n) % n;
    exchange_stage(comm, x, std::span<const int>(&from, 1), std::span<const int>(&to, 1), scratch,
                   false);
  }
}

}  // namespace collectives::alltoallv_algorithms
