#include "p2p/intra_process.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>

#include "checks.hpp"

namespace ep::detail {

std::shared_ptr<RequestState> send_intra(const std::shared_ptr<CommState>& comm,
                                         const IntraSend& send, const TypedBuffer& data) {
  Mailbox& box = comm->mailbox(send.dest_thread);
  const std::size_t bytes = data.bytes();
  Envelope header;  // what the receiver's match and size check look at
  header.source = send.source_rank;
  header.tag = send.tag;
  header.bytes = bytes;

  std::shared_ptr<RequestState> receiver;
  {
    std::lock_guard lock(box.mutex);
    while (true) {
      auto it = std::find_if(box.posted.begin(), box.posted.end(), [&](const auto& r) {
        return matches(r->want_source, r->want_tag, header);
      });
      if (it == box.posted.end()) break;
      receiver = *it;
      box.posted.erase(it);
      if (!reject_if_truncated(*receiver, header)) break;
      receiver.reset();  // that receive failed; try the next matching one
    }

    if (!receiver) {
      auto message = std::make_shared<Envelope>(std::move(header));
      std::shared_ptr<RequestState> pending;
      // Eager only while the receiver's queue stays under its cap; past it
      // the message waits in the sender's buffer (rendezvous) instead of
      // growing the queue without bound.
      if (bytes <= comm->eager_threshold() &&
          box.eager_bytes + bytes <= comm->settings().eager_cap) {
        message->kind = Envelope::Kind::kEager;
        message->payload.resize(bytes);
        pack_into(data, message->payload.data());
      } else {
        message->kind = Envelope::Kind::kRendezvous;
        message->send_buffer = data;
      }
      if (send.synchronous || message->kind == Envelope::Kind::kRendezvous) {
        pending = std::make_shared<RequestState>(RequestState::Kind::kSend, comm,
                                                 send.source_thread, send.source_rank);
        pending->call = send.call;
        message->sender = pending;
      }
      hold_eager(box, *message);
      box.unexpected.push_back(std::move(message));
      return pending;
    }
  }

  // The receive was posted first: one copy, from our buffer into theirs,
  // outside the lock (the receive is out of the queue, nobody else sees it).
  receiver->status = status_of(header);
  try {
    copy_typed(data, receiver->recv_buffer, bytes);
  } catch (const std::exception& e) {
    // The receive has left its queue: it must learn the failure too, or its
    // owner waits forever. The sender throws it from this call.
    receiver->fail(kind_of(e, ErrorKind::kMpi), std::string("copying the message from ep rank ") +
                                                    std::to_string(send.source_rank) +
                                                    " failed: " + e.what());
    throw;
  }
  receiver->complete();
  return nullptr;
}

}  // namespace ep::detail
