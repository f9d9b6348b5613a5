#include "p2p/intra_process.hpp"

#include <sched.h>

#include <atomic>
#include <mutex>

#include "ep/backoff.hpp"
#include "p2p/p2p_state.hpp"
#include "spin_lock.hpp"

namespace ep::detail {

namespace {

// A ring that is full while its receiver is reading it frees up within a
// message or two: the sender waits that long for room (spinning threads
// only; a parked receiver may not run for a while) before it turns to the
// overflow, which costs an envelope per message until the receiver has
// emptied it.
constexpr int kRoomPolls = 64;

std::byte* wait_for_room(LocalRing& ring, std::size_t bytes) {
  if (wait_mode() != WaitPolicy::kSpin) return nullptr;
  for (int i = 0; i < kRoomPolls; ++i) {
    cpu_relax();
    if (std::byte* room = ring.try_reserve_inline(bytes)) return room;
  }
  return nullptr;
}

// Gives back the reservation of an eager copy that was never sent (its
// packing failed). Rare, so it takes the lock that every writer of the
// released count holds (add_released).
void release_unsent(Mailbox& box, std::size_t bytes) noexcept {
  std::lock_guard lock(box.mutex);
  add_released(box, bytes);
}

// Hands `message` to the receiver: a line of the ring, else the overflow.
void publish_envelope(Mailbox& box, LocalRing& ring, std::shared_ptr<Envelope> message) {
  const int tag = message->tag;
  if (!ring.overflowing()) {
    Envelope* raw = message.get();
    raw->pinned = std::move(message);  // the ring's ownership, until it is read
    if (ring.try_write_envelope(raw, tag)) return;
    message = std::move(raw->pinned);
  }
  std::lock_guard lock(box.mutex);
  ring.set_overflowing();
  ring.overflow.push_back(std::move(message));
}

}  // namespace

std::shared_ptr<RequestState> send_intra(const std::shared_ptr<CommState>& comm,
                                         const IntraSend& send, const TypedBuffer& data) {
  Mailbox& box = comm->p2p().mailbox(send.dest_thread);
  LocalRing& ring = box.ring_for_sender(send.source_thread, send.source_rank);
  const std::size_t bytes = data.bytes();
  const std::size_t cap = comm->settings().eager_cap;
  const bool eager = bytes <= comm->eager_threshold();

  // Inline: packed into the ring, complete at once. Eager only while the
  // receiver's queue stays under its cap; past it the message waits in the
  // sender's buffer (rendezvous) instead of growing the queue without bound.
  bool tried = false;
  bool reserved = false;
  if (eager && !send.synchronous && bytes <= ring.max_inline_bytes() && !ring.overflowing()) {
    tried = true;
    reserved = reserve_eager(box, ring, bytes, cap);
    if (reserved) {
      std::byte* room = ring.try_reserve_inline(bytes);
      if (room == nullptr) room = wait_for_room(ring, bytes);
      if (room != nullptr) {
        try {
          pack_into(data, room);
        } catch (...) {
          release_unsent(box, bytes);
          throw;
        }
        ring.commit_inline(send.tag, bytes);
        notify_waiters();  // the receiver may be parked waiting for a message
        return nullptr;
      }
      // The ring is full: an eager envelope into the overflow, reservation and all.
    }
  }

  if (eager && !tried) reserved = reserve_eager(box, ring, bytes, cap);
  std::shared_ptr<Envelope> message;
  try {
    message = make_envelope();
    if (reserved) pack_into(data, message->payload.resize(bytes));
  } catch (...) {
    if (reserved) release_unsent(box, bytes);
    throw;
  }
  message->source = send.source_rank;
  message->tag = send.tag;
  message->bytes = bytes;
  if (reserved) {
    message->kind = Envelope::Kind::kEager;
  } else {
    message->kind = Envelope::Kind::kRendezvous;
    message->send_buffer = data;
  }

  std::shared_ptr<RequestState> pending;
  if (send.synchronous || message->kind == Envelope::Kind::kRendezvous) {
    pending = std::make_shared<RequestState>(RequestState::Kind::kSend, comm, send.source_thread,
                                             send.source_rank);
    pending->call = send.call;
    pending->settles_thread = send.dest_thread;
    if (message->kind == Envelope::Kind::kRendezvous && data.layout.contiguous &&
        bytes >= SharedCopy::kMinBytes) {
      pending->shared_copy = std::make_unique<SharedCopy>();
    }
    message->sender = pending;
  }
  publish_envelope(box, ring, std::move(message));
  notify_waiters();
  return pending;
}

}  // namespace ep::detail
