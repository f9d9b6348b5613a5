#include "p2p/matching_engine.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "checks.hpp"
#include "comm_state.hpp"
#include "p2p/inter_process.hpp"

namespace ep::detail {

Status status_of(const Envelope& message) {
  Status status;
  status.source = message.source;
  status.tag = message.tag;
  status.bytes = message.bytes;
  return status;
}

bool reject_if_truncated(RequestState& request, const Envelope& message) {
  const std::size_t capacity = request.recv_buffer.bytes();
  if (message.bytes <= capacity) return false;
  request.status = status_of(message);
  request.status.error = MPI_ERR_TRUNCATE;
  request.fail(ErrorKind::kTruncate,
               "message of " + std::to_string(message.bytes) + " bytes from ep rank " +
                   std::to_string(message.source) + " (tag " + std::to_string(message.tag) +
                   ") is longer than the receive buffer of " + std::to_string(capacity) +
                   " bytes; the message stays queued");
  return true;
}

void receive_matched(RequestState& request, Envelope& message) noexcept {
  request.status = status_of(message);
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
        unpack_from(message.payload.data(), message.bytes, request.recv_buffer);
        break;
      case Envelope::Kind::kRendezvous:
        copy_typed(message.send_buffer, request.recv_buffer, message.bytes);
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
  request.complete();
}

void count_held(Mailbox& box, int change) {
  std::lock_guard lock(box.mutex);
  box.held_messages += change;
}

void deliver(Mailbox& box, std::shared_ptr<Envelope> message, Arrival arrival) {
  std::shared_ptr<RequestState> receiver;
  {
    std::lock_guard lock(box.mutex);
    // A matching receive too small for the message fails (truncation) and the
    // message goes on to the next matching receive, or waits as unexpected.
    while (true) {
      auto it = std::find_if(box.posted.begin(), box.posted.end(), [&](const auto& r) {
        return matches(r->want_source, r->want_tag, *message);
      });
      if (it == box.posted.end()) {
        // A returned eager message counts again, even past the cap: it was
        // counted before a probe took it, and it must go back.
        hold_eager(box, *message);
        if (arrival == Arrival::kReturned) {
          box.unexpected.push_front(std::move(message));
        } else {
          box.unexpected.push_back(std::move(message));
        }
        return;
      }
      receiver = *it;
      box.posted.erase(it);
      if (!reject_if_truncated(*receiver, *message)) break;
    }
  }
  receive_matched(*receiver, *message);
}

void post_receive(Mailbox& box, const std::shared_ptr<RequestState>& request) {
  std::shared_ptr<Envelope> message;
  {
    std::lock_guard lock(box.mutex);
    auto it = std::find_if(box.unexpected.begin(), box.unexpected.end(), [&](const auto& m) {
      return matches(request->want_source, request->want_tag, *m);
    });
    if (it == box.unexpected.end()) {
      box.posted.push_back(request);
      return;
    }
    if (reject_if_truncated(*request, **it)) return;
    message = std::move(*it);
    box.unexpected.erase(it);
    release_eager(box, *message);
  }
  receive_matched(*request, *message);
}

}  // namespace ep::detail
