// The matching engine: per-endpoint queues of unexpected messages and posted
// receives, fed by intra-process senders and by the drainer of the MPI queue.
//
// Ordering: MPI's non-overtaking rule holds per (sender, receiver,
// communicator). Each sender endpoint appends to the receiver's mailbox in
// send order (intra-process: directly; inter-process: MPI delivers one
// sender's messages in order and a single drainer at a time appends them),
// and both queues are searched front to back, so the first matching message
// meets the first matching receive.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "datatype.hpp"
#include "p2p/request_state.hpp"
#include "spin_lock.hpp"

namespace ep::detail {

/// One incoming message waiting in a mailbox.
struct Envelope {
  enum class Kind {
    kRemote,       // from another process: a matched MPI_Message to MPI_Mrecv
    kRemoteBulk,   // from another process, source-header layout: the data waits
                   // in MPI on bulk_comm under bulk_tag, apart from its header
    kRemoteEager,  // from another process, source-header layout: a small message
                   // received whole at arrival, payload packed; like the MPI
                   // messages of the other layouts, not counted against the
                   // eager cap (MPI's own eager buffering holds those)
    kEager,        // intra-process, payload copied (packed) by the sender
    kRendezvous,   // intra-process, still in the sender's buffer
  };

  Kind kind = Kind::kEager;
  int source = MPI_PROC_NULL;  // EP rank of the sender
  int tag = 0;                 // user tag
  std::size_t bytes = 0;

  MPI_Message mpi_message = MPI_MESSAGE_NULL;  // kRemote
  MPI_Comm bulk_comm = MPI_COMM_NULL;          // kRemoteBulk: where the data waits,
  int bulk_process = MPI_PROC_NULL;            // from which process of it,
  int bulk_tag = 0;                            // under which tag
  std::vector<std::byte> payload;              // kEager, kRemoteEager: in packed form
  TypedBuffer send_buffer;                     // kRendezvous
  // Completed once the message is matched (synchronous send) or copied
  // (rendezvous); null for a plain eager or remote message.
  std::shared_ptr<RequestState> sender;
};

[[nodiscard]] inline bool matches(int want_source, int want_tag, const Envelope& e) {
  return (want_source == MPI_ANY_SOURCE || want_source == e.source) &&
         (want_tag == MPI_ANY_TAG || want_tag == e.tag);
}

/// The two queues of one endpoint. Every access holds `mutex`; data is moved
/// after the lock is released (the matched entries are already out of the
/// queues, so nobody else can touch them).
struct alignas(64) Mailbox {
  SpinLock mutex;                                    // short sections only: see spin_lock.hpp
  std::deque<std::shared_ptr<Envelope>> unexpected;  // arrival order
  std::deque<std::shared_ptr<RequestState>> posted;  // posting order
  // Payload bytes of the kEager envelopes in `unexpected`, kept at most the
  // communicator's eager cap by the senders (intra_process.cpp), and the
  // most it has held (for the tests).
  std::size_t eager_bytes = 0;
  std::size_t eager_high_water = 0;
  // Messages taken out of `unexpected` by a probe (an ep::Message) and not
  // yet received: a dropped one comes back, so while any is out no receive
  // may go straight to MPI past it (CommState::try_post_direct).
  int held_messages = 0;
};

/// Counts a message taken by a probe in or out of `box` (+1 when taken, -1
/// when received or returned). Takes box.mutex.
void count_held(Mailbox& box, int change);

/// Counts `message`'s payload against `box` when it is an eager copy; call
/// with box.mutex held whenever an envelope enters `unexpected`.
inline void hold_eager(Mailbox& box, const Envelope& message) {
  if (message.kind != Envelope::Kind::kEager) return;
  box.eager_bytes += message.bytes;
  if (box.eager_bytes > box.eager_high_water) box.eager_high_water = box.eager_bytes;
}

/// The reverse, whenever an envelope leaves `unexpected` (matched, taken by
/// a probe, dropped); box.mutex held.
inline void release_eager(Mailbox& box, const Envelope& message) {
  if (message.kind == Envelope::Kind::kEager) box.eager_bytes -= message.bytes;
}

enum class Arrival {
  kNew,       // a message arriving now: it queues behind everything unexpected
  kReturned,  // a message taken out by mprobe and handed back: it was first in line
};

/// Hands `message` to `box`: to the first matching posted receive (moving the
/// data now, in the calling thread) or to the unexpected queue (at the end,
/// or at the front for a returned message). Called by intra-process senders,
/// by the drainer and by a Message dropped unreceived.
void deliver(Mailbox& box, std::shared_ptr<Envelope> message, Arrival arrival = Arrival::kNew);

/// Posts `request` in `box`: takes the first matching unexpected message
/// (moving the data in the calling thread, the receiver) or queues the request.
void post_receive(Mailbox& box, const std::shared_ptr<RequestState>& request);

/// Moves a matched message into its receive. Remote messages go to
/// receive_remote (p2p/inter_process.hpp); intra-process ones are copied now.
/// Completes the sender of a rendezvous or synchronous message. Any thread
/// may run it for the owner, so it never throws: a failure (MPI_Mrecv, a
/// copy) fails the request (and the intra-process sender waiting on it),
/// whose owner throws it from its wait.
void receive_matched(RequestState& request, Envelope& message) noexcept;

/// True when `message` does not fit the receive; fails the request with a
/// truncation error naming both sizes (the message itself is kept).
bool reject_if_truncated(RequestState& request, const Envelope& message);

/// Status of a received or probed message.
[[nodiscard]] Status status_of(const Envelope& message);

}  // namespace ep::detail
