// Burst alltoallv: every receive and every send posted at once, one wait.
//
//   stage 1: rank i: irecv from all j != i, isend to i+1, i+2, ..., i-1 (mod n)
//
// One stage, n-1 messages in flight per rank: the lowest latency term, and
// the most pressure on the network and on the receiver's matching queues at
// scale (seed 000). Zero-sized blocks send no message when the counts are
// trusted, one empty message when verified (exchange.hpp).
#pragma once

#include "collectives/alltoallv_algorithms/exchange.hpp"
#include "collectives/detail/tags.hpp"
#include "common/datatype.hpp"

namespace collectives::alltoallv_algorithms {

/// Collective over `comm`; arguments checked (alltoallv.hpp). A mismatch
/// found by a verified exchange is left in scratch.mismatch.
template <Communicator C, common::HasDatatype T>
void burst(const C& comm, const Exchange<T>& x, Scratch<T, typename C::Request>& scratch) {
  const int n = comm.size();
  const int me = comm.rank();
  scratch.peers_from.clear();
  scratch.peers_to.clear();
  for (int s = 1; s < n; ++s) {
    scratch.peers_from.push_back((me - s + n) % n);
    scratch.peers_to.push_back((me + s) % n);
  }
  exchange_stage(comm, x, std::span<const int>(scratch.peers_from),
                 std::span<const int>(scratch.peers_to), scratch, true);
}

}  // namespace collectives::alltoallv_algorithms
