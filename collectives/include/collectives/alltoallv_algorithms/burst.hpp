// Burst alltoallv: every receive and every send posted at once, one wait.
//
//   stage 1: rank i: irecv from all j != i, isend to i+1, i+2, ..., i-1 (mod n)
//
// One stage, n-1 messages in flight per rank: the lowest latency term, and
// the most pressure on the network and on the receiver's matching queues at
// scale (seed 000). Zero-sized blocks send no message (both sides know them).
#pragma once

#include "collectives/alltoallv_algorithms/exchange.hpp"
#include "collectives/detail/tags.hpp"
#include "ep/typed.hpp"

namespace collectives::alltoallv_algorithms {

/// Collective over `comm`; arguments already agreed (alltoallv.hpp).
template <Communicator C, ep::HasDatatype T>
void burst(const C& comm, const Exchange<T>& x, Scratch<T, typename C::Request>& scratch) {
  const int n = comm.size();
  const int me = comm.rank();
  auto& requests = scratch.requests;
  requests.clear();
  for (int s = 1; s < n; ++s) {
    post_recv(comm, x, (me - s + n) % n, requests);
  }
  for (int s = 1; s < n; ++s) {
    post_send(comm, x, (me + s) % n, requests);
  }
  copy_self(comm, x, scratch);
  comm.wait_all(requests);
  requests.clear();
}

}  // namespace collectives::alltoallv_algorithms
