// Ring-k alltoallv (seed 000): k partners per stage, ceil((n-1)/k) stages.
//
//   stage s = 1 .. ceil((n-1)/k), rank i:
//     send to      i + (s-1)k + 1, ..., i + sk      (mod n, offsets < n)
//     receive from i - (s-1)k - 1, ..., i - sk      (the mirrored ranks)
//
//   n = 7, k = 2, rank 0:   stage 1: -> 1,2  <- 6,5
//                           stage 2: -> 3,4  <- 4,3
//                           stage 3: -> 5,6  <- 2,1
//
// k = 1 is the shifted ring, k >= n-1 is burst. Between the two, k bounds the
// messages in flight per rank, which is what keeps it ahead of a library's
// alltoallv at 10^4 ranks in seed 000's measurements.
#pragma once

#include <algorithm>

#include "collectives/alltoallv_algorithms/exchange.hpp"
#include "collectives/detail/tags.hpp"
#include "common/datatype.hpp"

namespace collectives::alltoallv_algorithms {

/// Collective over `comm`; k >= 1 and the arguments checked (alltoallv.hpp).
/// A mismatch found by a verified exchange is left in scratch.mismatch.
template <Communicator C, common::HasDatatype T>
void ring_k(const C& comm, const Exchange<T>& x, int k, Scratch<T, typename C::Request>& scratch) {
  const int n = comm.size();
  const int me = comm.rank();
  // One stage (burst): the own block is copied while its messages fly.
  const bool one_stage = k >= n - 1;
  if (!one_stage) copy_self(comm, x, scratch);
  int first = 1;
  do {
    const int last = std::min(first + k - 1, n - 1);
    scratch.peers_from.clear();
    scratch.peers_to.clear();
    for (int o = first; o <= last; ++o) {
      scratch.peers_from.push_back((me - o + n) % n);
      scratch.peers_to.push_back((me + o) % n);
    }
    exchange_stage(comm, x, std::span<const int>(scratch.peers_from),
                   std::span<const int>(scratch.peers_to), scratch, one_stage);
    first += k;
  } while (first < n);
}

}  // namespace collectives::alltoallv_algorithms
