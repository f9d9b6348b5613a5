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

/// The partners of rank `me` of `n` at stage s (1 .. n-1): the rank it
/// sends to and the rank it receives from (the same one when n is a power
/// of two).
struct PairwisePartners {
  int to;
  int from;
};
[[nodiscard]] constexpr PairwisePartners pairwise_partners(int n, int me, int s) noexcept {
  if ((n & (n - 1)) == 0) return {me ^ s, me ^ s};
  return {(me + s) % n, (me - s + n) % n};
}

/// Collective over `comm`; arguments checked (alltoallv.hpp). A mismatch
/// found by a verified exchange is left in scratch.mismatch.
template <Communicator C, common::HasDatatype T>
void pairwise(const C& comm, const Exchange<T>& x, Scratch<T, typename C::Request>& scratch) {
  copy_self(comm, x, scratch);
  for (int s = 1; s < comm.size(); ++s) {
    const PairwisePartners p = pairwise_partners(comm.size(), comm.rank(), s);
    exchange_stage(comm, x, std::span<const int>(&p.from, 1), std::span<const int>(&p.to, 1),
                   scratch, false);
  }
}

}  // namespace collectives::alltoallv_algorithms
