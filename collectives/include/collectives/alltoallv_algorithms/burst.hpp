// Burst alltoallv: every receive and every send posted at once, one wait.
//
//   stage 1: rank i: irecv from all j != i, isend to i+1, i+2, ..., i-1 (mod n)
//
// One stage, n-1 messages in flight per rank: the lowest latency term, and
// the most pressure on the network and on the receiver's matching queues at
// scale (seed 000). Zero-sized blocks send no message when the counts are
// trusted, one empty message when verified (exchange.hpp).
#pragma once

#include <algorithm>

#include "collectives/alltoallv_algorithms/exchange.hpp"
#include "collectives/alltoallv_algorithms/ring_k.hpp"
#include "common/datatype.hpp"

namespace collectives::alltoallv_algorithms {

/// Collective over `comm`; arguments checked (alltoallv.hpp). A mismatch
/// found by a verified exchange is left in scratch.mismatch. Ring-k's one
/// stage: every other rank is a partner of the first.
template <Communicator C, common::HasDatatype T>
void burst(const C& comm, const Exchange<T>& x, Scratch<T, typename C::Request>& scratch) {
  ring_k(comm, x, std::max(1, comm.size() - 1), scratch);
}

}  // namespace collectives::alltoallv_algorithms
