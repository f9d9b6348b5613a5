#include "p2p/matching_engine.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "checks.hpp"
#include "comm_state.hpp"
#include "ep/backoff.hpp"
#include "p2p/inter_process.hpp"

namespace ep::detail {

Status status_of(const Envelope& message) {
  Status status;
  status.source = message.source;
  status.tag = message.tag;
  status.bytes = message.bytes;
  return status;
}

void finish_receive(RequestState& request) {
  finish_receive(request, request.status.bytes > request.recv_buffer.bytes());
}

void finish_receive(RequestState& request, bool truncated) {
  if (!truncated) {
    request.complete();
    return;
  }
  const std::size_t capacity = request.recv_buffer.bytes();
  const Status& status = request.status;
  // A direct receive learns of the truncation from MPI, with MPI's count of
  // the message (Open MPI gives the sent size; a smaller one says nothing).
  const std::string message = status.bytes > capacity
                                  ? "message of " + std::to_string(status.bytes) + " bytes"
                                  : std::string("message");
  request.status.error = MPI_ERR_TRUNCATE;
  request.fail(ErrorKind::kTruncate,
               message + " from ep rank " + std::to_string(status.source) + " (tag " +
                   std::to_string(status.tag) + ") is longer than the receive buffer of " +
                   std::to_string(capacity) + " bytes; as in MPI, its first " +
                   std::to_string(capacity) + " bytes were received and the message is consumed");
}

void receive_matched(RequestState& request, Envelope& message) noexcept {
  request.status = status_of(message);
  // A message longer than the buffer: the part that fits (finish_receive).
  const std::size_t fits = std::min(message.bytes, request.recv_buffer.bytes());
  try {
    switch (message.kind) {
      case Envelope::Kind::kRemote:
      case Envelope::Kind::kRemoteBulk:
        switch (receive_remote(request, message)) {
          case Received::kNow:
            break;
          case Received::kLater:   // finishes through MPI (the owner's test_mpi)
          case Received::kFailed:  // the request carries the error
            return;
        }
        break;
      case Envelope::Kind::kEager:
      case Envelope::Kind::kRemoteEager:
        unpack_from(message.payload.data(), fits, request.recv_buffer);
        break;
      case Envelope::Kind::kRendezvous:
        copy_typed(message.send_buffer, request.recv_buffer, fits);
        break;
    }
  } catch (const std::exception& e) {
    // The copy failed (MPI_Unpack, say). Both sides of an intra-process
    // message learn it; the thread running this (maybe neither) does not.
    const ErrorKind kind = kind_of(e, ErrorKind::kMpi);
    const auto* ep_error = dynamic_cast<const Error*>(&e);
    const int code = ep_error != nullptr ? ep_error->mpi_code() : MPI_SUCCESS;
    request.status.error = code;
    if (message.sender) {
      message.sender->status.error = code;
      message.sender->fail(kind, std::string("the receiver's copy failed: ") + e.what());
    }
    request.fail(kind, std::string("copying the message failed: ") + e.what());
    return;
  }
  if (message.sender) message.sender->complete();
  finish_receive(request);
}

void count_held(Mailbox& box, int change) {
  std::lock_guard lock(box.mutex);
  box.held_messages += change;
}

namespace {

void raise_high_water(Mailbox& box, std::size_t held) {
  std::size_t most = box.eager_high_water.load(std::memory_order_relaxed);
  while (held > most &&
         !box.eager_high_water.compare_exchange_weak(most, held, std::memory_order_relaxed)) {
  }
}

}  // namespace

bool reserve_eager(Mailbox& box, std::size_t bytes, std::size_t cap) {
  std::size_t reserved = box.eager_reserved.load(std::memory_order_relaxed);
  // A stale (smaller) released count overstates what is held, so the cap
  // holds whatever the owner releases meanwhile. The senders' own copy is
  // read first; the owner's line only when that copy leaves no room.
  std::size_t released = box.eager_released_seen.load(std::memory_order_relaxed);
  bool fresh = false;
  while (true) {
    const std::size_t held = reserved - released + bytes;
    if (held > cap) {
      if (fresh) return false;
      released = box.eager_released.load(std::memory_order_acquire);
      box.eager_released_seen.store(released, std::memory_order_relaxed);
      fresh = true;
      continue;
    }
    if (box.eager_reserved.compare_exchange_weak(reserved, reserved + bytes,
                                                 std::memory_order_relaxed)) {
      raise_high_water(box, held);
      return true;
    }
  }
}

void hold_eager(Mailbox& box, const Envelope& message) {
  if (message.kind != Envelope::Kind::kEager) return;
  const std::size_t reserved =
      box.eager_reserved.fetch_add(message.bytes, std::memory_order_relaxed) + message.bytes;
  raise_high_water(box, reserved - box.eager_released.load(std::memory_order_acquire));
}

void push_arrival(Mailbox& box, std::shared_ptr<Envelope> message) {
  Envelope* node = message.get();
  node->pinned = std::move(message);  // the stack's ownership, until absorbed
  node->next_arrival = box.arrivals.load(std::memory_order_relaxed);
  // Release: the taker reads the envelope it finds on the stack.
  while (!box.arrivals.compare_exchange_weak(node->next_arrival, node, std::memory_order_release,
                                             std::memory_order_relaxed)) {
  }
  notify_waiters();  // the receiver may be parked waiting for a message
}

namespace {

// Takes the whole arrival stack and returns it oldest first.
Envelope* take_arrivals(Mailbox& box) {
  // Looked at first: an exchange on an empty stack would still take its line
  // from the senders, who read it on every send.
  if (box.arrivals.load(std::memory_order_relaxed) == nullptr) return nullptr;
  Envelope* newest = box.arrivals.exchange(nullptr, std::memory_order_acquire);
  Envelope* oldest = nullptr;
  while (newest != nullptr) {
    Envelope* next = newest->next_arrival;
    newest->next_arrival = oldest;
    oldest = newest;
    newest = next;
  }
  return oldest;
}

}  // namespace

namespace {

// A matched receive and its message, moved once the mailbox lock is released.
struct Match {
  std::shared_ptr<RequestState> request;
  std::shared_ptr<Envelope> message;
};

// The matches of this thread's open section (sections do not nest).
std::vector<Match>& section_matches() {
  thread_local std::vector<Match> matched;
  return matched;
}

}  // namespace

ArrivalsTakenIn::ArrivalsTakenIn(Mailbox& box) : box_(box) {
  box_.mutex.lock();
  take_in();
}

ArrivalsTakenIn::ArrivalsTakenIn(Mailbox& box, std::adopt_lock_t /*held*/) : box_(box) {
  take_in();
}

ArrivalsTakenIn::~ArrivalsTakenIn() { leave(); }

void ArrivalsTakenIn::leave() noexcept {
  box_.mutex.unlock();
  std::vector<Match>& matched = section_matches();
  for (Match& m : matched) receive_matched(*m.request, *m.message);
  matched.clear();
}

void ArrivalsTakenIn::take_in() {
  std::vector<Match>& matched = section_matches();
  std::size_t released = 0;  // eager bytes matched now: released once for the batch
  try {
    for (Envelope* node = take_arrivals(box_); node != nullptr;) {
      Envelope* next = node->next_arrival;
      node->next_arrival = nullptr;
      std::shared_ptr<Envelope> message = std::move(node->pinned);
      node = next;
      if (std::shared_ptr<RequestState> receiver = take_posted(box_, *message)) {
        if (message->kind == Envelope::Kind::kEager) released += message->bytes;
        matched.push_back({std::move(receiver), std::move(message)});
      } else {
        box_.unexpected.push_back(std::move(message));
      }
    }
  } catch (...) {
    // Only an allocation of the queues can fail here. The constructor does
    // not complete, so the destructor will not run: leave the section here
    // (moving what was matched) before passing the failure on.
    if (released != 0) box_.eager_released.fetch_add(released, std::memory_order_release);
    leave();
    throw;
  }
  if (released != 0) box_.eager_released.fetch_add(released, std::memory_order_release);
}

void settle_arrivals(Mailbox& box) noexcept {
  if (box.arrivals.load(std::memory_order_relaxed) == nullptr) return;
  if (!box.mutex.try_lock()) return;
  try {
    const ArrivalsTakenIn section(box, std::adopt_lock);
  } catch (...) {
    // The queues could not grow; what was taken in stays queued and the
    // owner's next post or poll tries again.
  }
}

namespace {

void drop_arrivals(Mailbox& box) noexcept {
  for (Envelope* node = take_arrivals(box); node != nullptr;) {
    Envelope* next = node->next_arrival;
    node->pinned.reset();  // may free `node`
    node = next;
  }
}

}  // namespace

Mailbox::~Mailbox() { drop_arrivals(*this); }

void clear_mailbox(Mailbox& box) {
  std::lock_guard lock(box.mutex);
  drop_arrivals(box);
  box.posted.clear();
  box.unexpected.clear();
  const std::size_t reserved = box.eager_reserved.load(std::memory_order_relaxed);
  box.eager_released.store(reserved, std::memory_order_relaxed);
  box.eager_released_seen.store(reserved, std::memory_order_relaxed);
}

std::shared_ptr<RequestState> take_posted(Mailbox& box, const Envelope& message) {
  auto it = std::find_if(box.posted.begin(), box.posted.end(), [&](const auto& r) {
    return matches(r->want_source, r->want_tag, message);
  });
  if (it == box.posted.end()) return nullptr;
  std::shared_ptr<RequestState> receiver = std::move(*it);
  box.posted.erase(it);
  return receiver;
}

void deliver(Mailbox& box, std::shared_ptr<Envelope> message, Arrival arrival) {
  std::shared_ptr<RequestState> receiver;
  {
    std::lock_guard lock(box.mutex);
    receiver = take_posted(box, *message);
    if (!receiver) {
      if (arrival == Arrival::kReturned) {
        hold_eager(box, *message);
        box.unexpected.push_front(std::move(message));
      } else {
        box.unexpected.push_back(std::move(message));
      }
      return;
    }
  }
  receive_matched(*receiver, *message);
}

void post_receive(Mailbox& box, const std::shared_ptr<RequestState>& request) {
  std::shared_ptr<Envelope> message;
  {
    // What the senders pushed so far is older than this receive.
    const ArrivalsTakenIn section(box);
    auto it = std::find_if(box.unexpected.begin(), box.unexpected.end(), [&](const auto& m) {
      return matches(request->want_source, request->want_tag, *m);
    });
    if (it == box.unexpected.end()) {
      box.posted.push_back(request);
    } else {
      message = std::move(*it);
      box.unexpected.erase(it);
      release_eager(box, *message);
    }
  }
  if (message) receive_matched(*request, *message);
}

}  // namespace ep::detail
