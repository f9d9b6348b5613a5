#include "p2p/intra_process.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>

#include "checks.hpp"

namespace ep::detail {

namespace {

// A receiver holds its lock only to post or take in a few entries; in a
// ping-pong the reply often arrives while the other side is still posting
// its receive. A few dozen polls (well under a microsecond) let the reply
// meet that receive directly instead of making the receiver take it in from
// the stack; a streaming sender that finds the receiver busy posting pushes
// after them rather than waiting for its turn.
bool try_lock_briefly(SpinLock& lock) {
  constexpr int kTries = 64;
  for (int i = 0; i < kTries; ++i) {
    if (lock.try_lock()) return true;
    cpu_relax();
  }
  return false;
}

// The mailbox this thread last sent to with no receive or probe of its own
// since (null after one): a second send to it in a row takes the stack.
// Only compared, never dereferenced, so a freed mailbox does no harm (a new
// one at its address costs at most one send the direct attempt).
thread_local const Mailbox* last_send_box = nullptr;

}  // namespace

void note_receive() noexcept { last_send_box = nullptr; }

std::shared_ptr<RequestState> send_intra(const std::shared_ptr<CommState>& comm,
                                         const IntraSend& send, const TypedBuffer& data) {
  Mailbox& box = comm->mailbox(send.dest_thread);
  const std::size_t bytes = data.bytes();

  // The receiver's queues are free and no earlier message waits on its
  // arrival stack: when its receive is posted (a ping-pong, a receiver
  // already waiting) the data moves once, straight into the receive, with
  // no envelope. Only tried, never waited for: a busy lock means the
  // receiver is at its queues, and it takes the message in from the stack.
  // Not tried by a thread streaming to this endpoint (intra_process.hpp).
  const bool streaming = last_send_box == &box;
  last_send_box = &box;
  if (!streaming && box.arrivals.load(std::memory_order_relaxed) == nullptr &&
      try_lock_briefly(box.mutex)) {
    Envelope header;  // what the receiver's match and size check look at
    header.source = send.source_rank;
    header.tag = send.tag;
    header.bytes = bytes;
    std::shared_ptr<RequestState> receiver;
    {
      // Arrivals pushed since the check above go first.
      const ArrivalsTakenIn section(box, std::adopt_lock);
      receiver = take_posted(box, header);
    }
    if (receiver) {  // matched: a synchronous send has nothing left to wait for either
      receiver->status = status_of(header);
      try {
        // A receive too small takes the part that fits (finish_receive).
        copy_typed(data, receiver->recv_buffer, std::min(bytes, receiver->recv_buffer.bytes()));
      } catch (const std::exception& e) {
        // The receive has left its queue: it must learn the failure too, or
        // its owner waits forever. The sender throws it from this call.
        receiver->fail(kind_of(e, ErrorKind::kMpi),
                       std::string("copying the message from ep rank ") +
                           std::to_string(send.source_rank) + " failed: " + e.what());
        throw;
      }
      finish_receive(*receiver);
      return nullptr;
    }
  }

  auto message = make_envelope();
  message->source = send.source_rank;
  message->tag = send.tag;
  message->bytes = bytes;

  // Eager only while the receiver's queue stays under its cap; past it the
  // message waits in the sender's buffer (rendezvous) instead of growing the
  // queue without bound.
  if (bytes <= comm->eager_threshold() && reserve_eager(box, bytes, comm->settings().eager_cap)) {
    message->kind = Envelope::Kind::kEager;
    try {
      pack_into(data, message->payload.resize(bytes));
    } catch (...) {
      box.eager_released.fetch_add(bytes, std::memory_order_release);  // no message after all
      throw;
    }
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
    message->sender = pending;
  }
  push_arrival(box, std::move(message));
  return pending;
}

}  // namespace ep::detail
