// The intra-process fast path: messages between threads of one process never
// touch MPI, and a sender never takes its receiver's lock.
//
// - Small (<= eager threshold) and the receiver's queue under its eager cap:
//   the sender packs a copy onto the receiver's arrival stack and is done;
//   the receiver's next post, probe or poll matches it and copies it out.
// - Large or past the cap: the sender pushes a reference to its own buffer
//   and waits; whoever matches it (the receiver, or the sender's own wait,
//   which takes in the receiver's arrivals) copies once (rendezvous).
// A synchronous send also waits until its message is matched.
//
// A send whose receive is already posted can skip the stack: the sender
// matches it under the receiver's lock and copies straight into it (a
// ping-pong, a halo whose receives were posted first). A thread sending
// message after message to one endpoint does not: there the receiver is
// busy posting, and the lock and its posted queue would change cores on
// every message; the stack batches those. `note_receive` ends such a run.
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

/// The calling thread starts a receive or a probe: its next intra-process
/// send may match a posted receive directly again, whatever it sent before.
void note_receive() noexcept;

}  // namespace ep::detail
