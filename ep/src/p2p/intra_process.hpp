// The intra-process fast path: messages between threads of one process never
// touch MPI.
//
// - Receive already posted: the sender copies once, straight from its buffer
//   into the receiver's, and both complete at once.
// - Not posted, small (<= eager threshold) and the receiver's queue under its
//   eager cap: the sender packs a copy into the receiver's unexpected queue
//   and is done.
// - Not posted, large or past the cap: the sender queues a reference to its own buffer and
//   waits; the receiver copies once when it matches (rendezvous).
// A synchronous send also waits until its message is matched.
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
