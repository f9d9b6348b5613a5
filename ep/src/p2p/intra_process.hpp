// The intra-process path: messages between threads of one process never
// touch MPI, and a sender never takes its receiver's lock on its way.
//
// Every message goes into the ring of its (sender, receiver) pair
// (p2p/local_ring.hpp), in send order:
//
// - Small (up to the ring's inline size and the eager threshold) and the
//   receiver's queue under its eager cap: the data is packed into the ring
//   itself and the send is complete. Up to 48 bytes that is one cache line,
//   which the receiver reads and copies out when a receive meets it.
// - Larger eager data, and every synchronous send: an envelope with the
//   packed copy; the ring carries a pointer to it.
// - Large or past the cap: a reference to the sender's buffer (rendezvous),
//   and the sender waits; whoever matches it copies once, and both sides
//   share a large copy (p2p/matching_engine.hpp, receive_matched).
// A synchronous send also waits until its message is matched.
//
// A full ring (the receiver is not reading) sends the message, as an
// envelope, to the ring's overflow, which the receiver reads after the ring.
#pragma once

#include <memory>

#include "comm_state.hpp"
#include "datatype.hpp"
#include "p2p/request_state.hpp"

namespace ep::detail {

struct IntraSend {
  const char* call;
  int source_thread;
  int source_rank;
  int dest_thread;
  int tag;
  bool synchronous;
};

/// Starts an intra-process send of `data`. Returns the sender's pending
/// request, or nullptr when the send is already complete.
std::shared_ptr<RequestState> send_intra(const std::shared_ptr<CommState>& comm,
                                         const IntraSend& send, const TypedBuffer& data);

}  // namespace ep::detail
