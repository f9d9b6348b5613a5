#include "p2p/inter_process.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "checks.hpp"
#include "comm_state.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"
#include "p2p/p2p_state.hpp"
#include "p2p/test_hooks.hpp"

namespace ep::detail {

namespace {

// What the source-header layout (ep/tag_encoding.hpp) puts in front of a
// message, whose wire address names only the destination thread. A message
// of at most kHeaderInlineBytes travels as one MPI message, header and
// packed data; a larger one, and every synchronous one, sends the header
// alone and the data apart, on the communicator's bulk_comm() under the tag
// the header names, so that the data moves once, straight into the receive
// buffer, once a receive has matched the header (which a synchronous send
// needs: its data is received only after the match).
struct SourceHeader {
  std::int32_t source_thread;
  std::int32_t bulk_tag;  // kDataFollows: the packed data follows the header
  std::uint64_t bytes;    // of data
};
constexpr std::int32_t kDataFollows = -1;
// Header and data in one message up to this size: within the eager limits
// of Open MPI's shared-memory and TCP transports, so the drainer receives
// it at once, and small enough that the copy through the queue is cheap.
constexpr std::size_t kHeaderInlineBytes = 4096;

void send_with_header(RequestState& request, P2pState& state, const IntraSend& send,
                      const TypedBuffer& data, Location to, WireAddress wire) {
  const std::size_t bytes = data.bytes();
  SourceHeader header{request.owner_thread, kDataFollows, bytes};
  MPI_Comm channel = state.p2p_comm(wire.channel);
  if (!send.synchronous && sizeof header + bytes <= kHeaderInlineBytes) {
    request.wire.resize(sizeof header + bytes);
    std::memcpy(request.wire.data(), &header, sizeof header);
    pack_into(data, request.wire.data() + sizeof header);
    check_mpi(MPI_Isend(request.wire.data(), static_cast<int>(request.wire.size()), MPI_BYTE,
                        to.process, wire.tag, channel, &request.mpi_request),
              send.call, request.owner_rank);
    return;
  }
  header.bulk_tag = state.next_bulk_tag();
  request.wire.resize(sizeof header);
  std::memcpy(request.wire.data(), &header, sizeof header);
  MPI_Request* mpi = &request.mpi_request;
  MPI_Comm bulk = state.bulk_comm();
  const int rc =
      send.synchronous
          ? MPI_Issend(data.buf, data.count, data.type, to.process, header.bulk_tag, bulk, mpi)
          : MPI_Isend(data.buf, data.count, data.type, to.process, header.bulk_tag, bulk, mpi);
  check_mpi(rc, send.call, request.owner_rank);
  check_mpi(MPI_Isend(request.wire.data(), sizeof header, MPI_BYTE, to.process, wire.tag, channel,
                      &request.header_request),
            send.call, request.owner_rank);
}

}  // namespace

std::shared_ptr<RequestState> send_inter(const Communicator& self, const IntraSend& send,
                                         const TypedBuffer& data, Location to) {
  auto request = std::make_shared<RequestState>(RequestState::Kind::kSend, self.state(),
                                                self.local_thread(), self.rank());
  request->call = send.call;
  P2pState& state = self.state()->p2p();
  const WireAddress wire = encode(state.tag_layout(), {send.tag, self.local_thread(), to.thread});
  // Always nonblocking underneath: a blocking MPI_Send of a large message
  // could wait for a peer process whose threads need this one to drain.
  if (state.tag_layout().source_in_header) {
    send_with_header(*request, state, send, data, to, wire);
  } else {
    MPI_Request* mpi = &request->mpi_request;
    MPI_Comm comm = state.p2p_comm(wire.channel);
    const int rc =
        send.synchronous
            ? MPI_Issend(data.buf, data.count, data.type, to.process, wire.tag, comm, mpi)
            : MPI_Isend(data.buf, data.count, data.type, to.process, wire.tag, comm, mpi);
    check_mpi(rc, send.call, self.rank());
  }
  request->phase.store(Phase::kMpiPending, std::memory_order_relaxed);
  return request;
}

namespace {

// "MPI error 15 (MPI_ERR_OTHER: known error not in list)" for an error detail.
std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  return "MPI error " + std::to_string(rc) + " (" + std::string(text, length) + ")";
}

// Receives a matched message into scratch and drops it, so that MPI no longer
// holds it (a message that names no endpoint, or an injected failure).
// Returns MPI's code. The data of a kRemoteBulk message has been sent when
// its header arrives, so its receive completes.
int discard(Envelope& message) {
  if (message.kind != Envelope::Kind::kRemote && message.kind != Envelope::Kind::kRemoteBulk) {
    return MPI_SUCCESS;  // received already
  }
  std::vector<std::byte> scratch(std::max<std::size_t>(message.bytes, 1));
  const int count = static_cast<int>(message.bytes);
  if (message.kind == Envelope::Kind::kRemoteBulk) {
    return MPI_Recv(scratch.data(), count, MPI_BYTE, message.bulk_process, message.bulk_tag,
                    message.bulk_comm, MPI_STATUS_IGNORE);
  }
  return MPI_Mrecv(scratch.data(), count, MPI_BYTE, &message.mpi_message, MPI_STATUS_IGNORE);
}

}  // namespace

void P2pState::drain(int ep_rank) noexcept {
  std::unique_lock lock(drain_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is draining and will route our messages
  if (drain_failed()) return;     // the receives that needed it have been failed
  // The drain runs in whichever thread waits (an owner's wait, a probe, a
  // team barrier's idle hook): a failure here belongs to the receives that
  // needed the drain, never to this thread.
  try {
    route_incoming(ep_rank);
  } catch (const Error& e) {
    record_drain_fault(e.kind(), e.what(), e.mpi_code());
  } catch (const std::exception& e) {
    record_drain_fault(kind_of(e, ErrorKind::kMpi), e.what(), MPI_SUCCESS);
  } catch (...) {
    record_drain_fault(ErrorKind::kMpi, "ep::drain: an exception of unknown type", MPI_SUCCESS);
  }
}

void P2pState::route_incoming(int ep_rank) {
  // Channels are drained in turn until none has a message or the budget is
  // spent: order within a channel is MPI's, and one sender-receiver pair
  // never spans two channels, so stopping anywhere keeps every pair's order.
  const int channels = tag_layout_.channels;
  int routed = 0;
  for (int idle = 0, channel = 0; idle < channels && routed < kDrainBudget;
       channel = (channel + 1) % channels) {
    int flag = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    const int probed =
        testing::take_injection(testing::Fault::kDrainProbe)
            ? MPI_ERR_OTHER
            : MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, p2p_comm(channel), &flag, &message, &status);
    check_mpi(probed, "ep::drain (MPI_Improbe)", ep_rank);
    if (flag == 0) {
      ++idle;
      continue;
    }
    idle = 0;
    auto envelope = make_envelope();
    envelope->kind = Envelope::Kind::kRemote;
    envelope->mpi_message = message;
    int bytes = 0;
    const int counted = MPI_Get_count(&status, MPI_BYTE, &bytes);
    envelope->bytes = static_cast<std::size_t>(bytes);
    if (counted != MPI_SUCCESS) {
      // The message is taken but its size is unknown: it cannot even be
      // discarded. The receives of this communicator fail with this error.
      check_mpi(counted, "ep::drain (MPI_Get_count)", ep_rank);
    }
    const WireTag wire = decode(tag_layout_, channel, status.MPI_TAG);
    const int source_thread = tag_layout_.source_in_header
                                  ? open_header(*envelope, status.MPI_SOURCE, ep_rank)
                                  : wire.source_thread;
    if (wire.dest_thread >= local_size_ || source_thread < 0 ||
        source_thread >= map_.endpoints_of(status.MPI_SOURCE) ||
        testing::take_injection(testing::Fault::kWireTag)) {
      // Taken out of MPI already: receive it, or MPI would hold it forever.
      const int discarded = discard(*envelope);
      throw Error(ErrorKind::kTag, "ep::drain", ep_rank,
                  "wire tag " + std::to_string(status.MPI_TAG) + " on channel " +
                      std::to_string(channel) + " from process " +
                      std::to_string(status.MPI_SOURCE) + " names no endpoint; its " +
                      std::to_string(bytes) + " bytes were " +
                      (discarded == MPI_SUCCESS ? "received and discarded"
                                                : "lost (" + mpi_error_text(discarded) + ")"),
                  discarded);
    }
    envelope->source = map_.ep_rank(status.MPI_SOURCE, source_thread);
    envelope->tag = wire.user_tag;
    deliver(mailboxes_[wire.dest_thread], std::move(envelope));
    ++routed;
  }
  testing::note_drain_routed(routed);
}

int P2pState::open_header(Envelope& message, int process, int ep_rank) {
  // Small by construction: a header, with the data only when that is small.
  Payload& raw = message.payload;
  raw.resize(message.bytes);
  check_mpi(MPI_Mrecv(raw.data(), static_cast<int>(raw.size()), MPI_BYTE, &message.mpi_message,
                      MPI_STATUS_IGNORE),
            "ep::drain (MPI_Mrecv of a message header)", ep_rank);
  message.kind = Envelope::Kind::kRemoteEager;  // received: nothing is left in MPI
  SourceHeader header{};
  if (raw.size() < sizeof header) return -1;
  std::memcpy(&header, raw.data(), sizeof header);
  if (header.bulk_tag == kDataFollows) {
    if (header.bytes != raw.size() - sizeof header) return -1;
    raw.drop_front(sizeof header);
    message.bytes = raw.size();
  } else {
    if (raw.size() != sizeof header || header.bulk_tag < 0) return -1;
    raw.resize(0);
    message.kind = Envelope::Kind::kRemoteBulk;
    message.bulk_comm = bulk_comm_;
    message.bulk_process = process;
    message.bulk_tag = header.bulk_tag;
    message.bytes = header.bytes;
  }
  return header.source_thread;
}

void P2pState::record_drain_fault(ErrorKind kind, const std::string& what, int mpi_code) {
  {
    std::lock_guard lock(fault_mutex_);
    if (drain_failed_.load(std::memory_order_relaxed)) return;  // the first failure is the cause
    drain_fault_ = DrainFault{kind,
                              "the drain of incoming messages failed on process " +
                                  std::to_string(process_rank_) + ": " + what,
                              mpi_code};
    drain_failed_.store(true, std::memory_order_release);
  }
  // Every receive waiting in a mailbox may have needed the drain: fail them
  // now; receives posted later fail when their owner polls (fail_if_posted).
  for (int t = 0; t < local_size_; ++t) {
    std::deque<std::shared_ptr<RequestState>> waiting;
    {
      std::lock_guard lock(mailboxes_[t].mutex);
      waiting.swap(mailboxes_[t].posted);
    }
    for (const auto& request : waiting) fail_with_drain_fault(*request);
  }
}

void P2pState::fail_with_drain_fault(RequestState& request) const {
  request.status.error = drain_fault_.mpi_code;
  request.fail(drain_fault_.kind, drain_fault_.detail);
}

bool P2pState::fail_if_posted(RequestState& request) {
  if (!drain_failed()) return false;
  Mailbox& box = mailboxes_[request.owner_thread];
  {
    std::lock_guard lock(box.mutex);
    auto it = std::find_if(box.posted.begin(), box.posted.end(),
                           [&](const auto& r) { return r.get() == &request; });
    if (it == box.posted.end()) return false;  // matched meanwhile: it completes normally
    box.posted.erase(it);
  }
  fail_with_drain_fault(request);
  return true;
}

namespace {

// Whether `earlier`, a receive still posted in the mailbox, could take a
// message that `later` (a specific source and tag) would match.
bool could_take_the_same(const RequestState& earlier, const RequestState& later) {
  return (earlier.want_source == MPI_ANY_SOURCE || earlier.want_source == later.want_source) &&
         (earlier.want_tag == MPI_ANY_TAG || earlier.want_tag == later.want_tag);
}

}  // namespace

bool P2pState::try_post_direct(RequestState& request, Location from) {
  // Held across the MPI_Irecv: messages reach the mailbox only through the
  // drain (this one's source is in another process), so while it is held
  // the mailbox check below stays true until MPI has the receive. Taken
  // blocking, so that whether a receive goes direct depends on the queues
  // alone; a drainer holds it for at most kDrainBudget messages and never
  // waits for another thread meanwhile.
  // Under the source-header layout the wire address does not name the
  // sender: only the queue can tell which endpoint a message comes from.
  if (tag_layout_.source_in_header) return false;
  std::lock_guard drain_lock(drain_mutex_);
  if (drain_failed()) return false;
  Mailbox& box = mailboxes_[request.owner_thread];
  {
    std::lock_guard lock(box.mutex);
    // A Message taken by a probe and dropped comes back to the mailbox, ahead
    // of what MPI holds: MPI must not take a receive it could meet.
    if (box.held_messages > 0) return false;
    // A message from this source and tag that the drain already routed is
    // older than anything MPI still holds: it must match first.
    for (const auto& message : box.unexpected) {
      if (matches(request.want_source, request.want_tag, *message)) return false;
    }
    // An earlier receive in the mailbox that could take the next message
    // from this source must get it first; MPI would match this one instead.
    for (const auto& earlier : box.posted) {
      if (could_take_the_same(*earlier, request)) return false;
    }
  }
  const WireAddress wire =
      encode(tag_layout_, {request.want_tag, from.thread, request.owner_thread});
  const TypedBuffer& dst = request.recv_buffer;
  check_mpi(MPI_Irecv(const_cast<void*>(dst.buf), dst.count, dst.type, from.process, wire.tag,
                      p2p_comm(wire.channel), &request.mpi_request),
            request.call, request.owner_rank);
  request.direct = true;
  request.phase.store(Phase::kMpiPending, std::memory_order_relaxed);
  return true;
}

namespace {

// The part of a truncated message that fits goes to the receive buffer.
void unpack_overflow(RequestState& request) {
  unpack_from(request.overflow.data(), request.recv_buffer.bytes(), request.recv_buffer);
  request.overflow = {};
}

}  // namespace

Received receive_remote(RequestState& request, Envelope& message) {
  // Any thread may receive for the owner (MPI_THREAD_MULTIPLE). A small
  // message arrived whole with its match (MPI's eager protocol), so
  // MPI_Mrecv returns at once and spares the owner an MPI_Test; a larger
  // one may still be streaming in, so the owner finishes it with MPI_Test
  // and nobody blocks here. A failure fails the owner's request (whoever
  // runs this), never the calling thread: the request has left its queue,
  // and only its owner waits for it.
  // A message longer than the buffer is received whole into `overflow`
  // (MPICH raises a truncated receive completed by MPI_Test on
  // MPI_COMM_WORLD, which aborts) and cut to the buffer afterwards.
  TypedBuffer dst = request.recv_buffer;
  if (message.bytes > dst.bytes()) {
    request.overflow.resize(message.bytes);
    dst = {request.overflow.data(),
           checked_int_count(message.bytes, "bytes of a truncated message", request.call,
                             request.owner_rank),
           MPI_BYTE, TypeLayout{1, 0, true}};
  }
  void* buf = const_cast<void*>(dst.buf);
  const bool bulk = message.kind == Envelope::Kind::kRemoteBulk;
  const bool whole = !bulk && message.bytes <= kMrecvInlineBytes;
  const char* mpi_call = bulk ? "MPI_Irecv" : whole ? "MPI_Mrecv" : "MPI_Imrecv";
  int rc = MPI_SUCCESS;
  if (testing::take_injection(testing::Fault::kRemoteReceive)) {
    const int discarded = discard(message);
    rc = discarded != MPI_SUCCESS ? discarded : MPI_ERR_OTHER;
  } else if (bulk) {
    rc = MPI_Irecv(buf, dst.count, dst.type, message.bulk_process, message.bulk_tag,
                   message.bulk_comm, &request.mpi_request);
  } else if (whole) {
    rc = MPI_Mrecv(buf, dst.count, dst.type, &message.mpi_message, MPI_STATUS_IGNORE);
  } else {
    rc = MPI_Imrecv(buf, dst.count, dst.type, &message.mpi_message, &request.mpi_request);
  }
  if (rc != MPI_SUCCESS) {
    request.status.error = rc;
    request.fail(ErrorKind::kMpi, std::string(mpi_call) + " of the message from ep rank " +
                                      std::to_string(message.source) + " (tag " +
                                      std::to_string(message.tag) + ", " +
                                      std::to_string(message.bytes) +
                                      " bytes) failed: " + mpi_error_text(rc));
    return Received::kFailed;
  }
  if (whole) {
    if (!request.overflow.empty()) unpack_overflow(request);
    return Received::kNow;
  }
  request.phase.store(Phase::kMpiPending, std::memory_order_release);
  return Received::kLater;
}

namespace {

// Completes a direct receive from MPI's status: the EP source and tag are
// the ones it asked for (both specific), the size is MPI's count. MPI
// reports truncation as the test's error, after receiving what fits; the
// message is consumed, as on every other path (finish_receive).
void finish_direct(RequestState& request, int rc, const MPI_Status& mpi_status) {
  int flag = 0;
  check_mpi(MPI_Test_cancelled(&mpi_status, &flag), request.call, request.owner_rank);
  request.status.cancelled = flag != 0;
  if (!request.status.cancelled) {
    request.status.source = request.want_source;
    request.status.tag = request.want_tag;
    int bytes = 0;
    if (MPI_Get_count(&mpi_status, MPI_BYTE, &bytes) == MPI_SUCCESS && bytes != MPI_UNDEFINED) {
      request.status.bytes = static_cast<std::size_t>(bytes);
    }
  }
  if (rc == MPI_SUCCESS) {
    request.complete();
    return;
  }
  int error_class = rc;
  if (MPI_Error_class(rc, &error_class) != MPI_SUCCESS) error_class = rc;
  request.status.error = rc;
  if (error_class == MPI_ERR_TRUNCATE) {
    finish_receive(request, true);
    return;
  }
  request.fail(ErrorKind::kMpi,
               "MPI_Irecv of the message from ep rank " + std::to_string(request.want_source) +
                   " (tag " + std::to_string(request.want_tag) + ") failed: " + mpi_error_text(rc));
}

}  // namespace

bool test_mpi(RequestState& request) {
  int done = 0;
  if (request.direct) {
    MPI_Status mpi_status;
    const int rc = MPI_Test(&request.mpi_request, &done, &mpi_status);
    // MPI_Test reports a failed receive as its own error, with the request
    // completed (freed): the truncation of a direct receive, say.
    if (rc != MPI_SUCCESS || done != 0) finish_direct(request, rc, mpi_status);
    return rc != MPI_SUCCESS || done != 0;
  }
  if (request.header_request != MPI_REQUEST_NULL) {  // a send's header, sent apart
    check_mpi(MPI_Test(&request.header_request, &done, MPI_STATUS_IGNORE), request.call,
              request.owner_rank);
    if (done == 0) return false;
  }
  check_mpi(MPI_Test(&request.mpi_request, &done, MPI_STATUS_IGNORE), request.call,
            request.owner_rank);
  if (done == 0) return false;
  if (request.kind == RequestState::Kind::kSend) {
    request.complete();
    return true;
  }
  // A receive matched in the mailbox (receive_remote): the status holds the
  // message's size, the overflow a truncated message.
  if (!request.overflow.empty()) {
    try {
      unpack_overflow(request);
    } catch (const std::exception& e) {
      request.fail(kind_of(e, ErrorKind::kMpi),
                   std::string("copying the message failed: ") + e.what());
      return true;
    }
  }
  finish_receive(request);
  return true;
}

}  // namespace ep::detail
