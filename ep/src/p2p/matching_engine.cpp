#include "p2p/matching_engine.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "checks.hpp"
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

void SharedCopy::copy_chunks() noexcept {
  for (std::size_t chunk = next.fetch_add(1, std::memory_order_relaxed); chunk < chunks;
       chunk = next.fetch_add(1, std::memory_order_relaxed)) {
    const std::size_t first = chunk * kChunkBytes;
    std::memcpy(to + first, from + first, std::min(kChunkBytes, bytes - first));
    // Release: the matcher reads the count before it completes the receive.
    // The last chunk wakes the matcher, parked in its wait for the count,
    // when another thread copied it.
    if (done.fetch_add(1, std::memory_order_release) + 1 == chunks) notify_waiters();
  }
}

namespace {

// The copy of a large contiguous rendezvous, shared with its sender
// (SharedCopy): false when the message does not qualify (the caller copies
// alone). Returns once every chunk is copied, by either side.
bool copy_shared(const Envelope& message, const RequestState& request, std::size_t fits) {
  SharedCopy* shared = message.sender ? message.sender->shared_copy.get() : nullptr;
  const TypedBuffer& from = message.send_buffer;
  const TypedBuffer& to = request.recv_buffer;
  if (shared == nullptr || fits < SharedCopy::kMinBytes || !from.layout.contiguous ||
      !to.layout.contiguous) {
    return false;
  }
  shared->from = static_cast<const std::byte*>(from.buf) + from.layout.true_lb;
  shared->to = static_cast<std::byte*>(const_cast<void*>(to.buf)) + to.layout.true_lb;
  shared->bytes = fits;
  shared->chunks = (fits + SharedCopy::kChunkBytes - 1) / SharedCopy::kChunkBytes;
  shared->open.store(true, std::memory_order_release);
  notify_waiters();  // the sender may be parked in its wait
  shared->copy_chunks();
  // The sender may still be copying its last chunk.
  Backoff backoff;
  while (shared->done.load(std::memory_order_acquire) < shared->chunks) backoff.pause();
  return true;
}

}  // namespace

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
        if (!copy_shared(message, request, fits)) {
          copy_typed(message.send_buffer, request.recv_buffer, fits);
        }
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

bool reserve_eager(Mailbox& box, LocalRing& ring, std::size_t bytes, std::size_t cap) {
  const std::size_t credit = ring.eager_credit();
  if (bytes <= credit) {
    ring.set_eager_credit(credit - bytes);
    return true;
  }
  // The credit one reservation takes beyond the message: all senders'
  // chunks together stay within a quarter of the cap, and chunks are taken
  // only while the mailbox is below half of it.
  const std::size_t chunk = std::min(
      kEagerCreditChunk, cap / (4 * static_cast<std::size_t>(std::max(1, box.local_size()))));
  std::size_t reserved = box.eager_reserved.load(std::memory_order_relaxed);
  // A stale (smaller) released count overstates what is held, so the cap
  // holds whatever the owner releases meanwhile. The senders' own copy is
  // read first; the owner's line only when that copy leaves no room.
  std::size_t released = box.eager_released_seen.load(std::memory_order_relaxed);
  bool fresh = false;
  while (true) {
    const std::size_t exact = reserved - released + bytes;
    if (exact > cap) {
      if (fresh) return false;
      released = box.eager_released.load(std::memory_order_acquire);
      box.eager_released_seen.store(released, std::memory_order_relaxed);
      fresh = true;
      continue;
    }
    const std::size_t extra = exact + chunk <= cap / 2 ? chunk : 0;
    if (box.eager_reserved.compare_exchange_weak(reserved, reserved + bytes + extra,
                                                 std::memory_order_relaxed)) {
      ring.set_eager_credit(credit + extra);
      raise_high_water(box, exact + extra);
      return true;
    }
  }
}

std::size_t Mailbox::eager_credit() const noexcept {
  std::size_t credit = 0;
  for (int i = 0; i < ring_count(); ++i) credit += ring_at(i).eager_credit();
  return credit;
}

void hold_eager(Mailbox& box, const Envelope& message) {
  if (message.kind != Envelope::Kind::kEager) return;
  const std::size_t reserved =
      box.eager_reserved.fetch_add(message.bytes, std::memory_order_relaxed) + message.bytes;
  raise_high_water(box, reserved - box.eager_released.load(std::memory_order_acquire));
}

void receive_inline(RequestState& request, int source, int tag, const std::byte* data,
                    std::size_t bytes) noexcept {
  request.status.source = source;
  request.status.tag = tag;
  request.status.bytes = bytes;
  try {
    // A message longer than the buffer: the part that fits (finish_receive).
    unpack_from(data, std::min(bytes, request.recv_buffer.bytes()), request.recv_buffer);
  } catch (const std::exception& e) {
    const auto* ep_error = dynamic_cast<const Error*>(&e);
    request.status.error = ep_error != nullptr ? ep_error->mpi_code() : MPI_SUCCESS;
    request.fail(kind_of(e, ErrorKind::kMpi),
                 std::string("copying the message failed: ") + e.what());
    return;
  }
  finish_receive(request);
}

namespace {

// Lines of each ring of a team of `local_size` endpoints: 32 KiB per pair
// for small teams, less for large ones, so that one receiver's rings stay
// near 1 MiB when every local endpoint sends to it (at least 4 KiB each).
std::size_t ring_lines(int local_size) {
  constexpr std::size_t kMostLines = 512;
  constexpr std::size_t kFewestLines = 64;
  constexpr std::size_t kLinesPerReceiver = (std::size_t{1} << 20) / LocalRing::kLineBytes;
  std::size_t lines = kMostLines;
  while (lines > kFewestLines && lines * static_cast<std::size_t>(local_size) > kLinesPerReceiver) {
    lines /= 2;
  }
  return lines;
}

}  // namespace

void Mailbox::init_rings(int local_size) {
  const auto n = static_cast<std::size_t>(local_size);
  local_size_ = local_size;
  ring_lines_ = ring_lines(local_size);
  rings_ = std::make_unique<std::atomic<LocalRing*>[]>(n);
  owned_ = std::make_unique<std::unique_ptr<LocalRing>[]>(n);
  active_ = std::make_unique<LocalRing*[]>(n);
}

LocalRing& Mailbox::make_ring(int thread, int rank) {
  std::lock_guard lock(mutex);
  auto& owned = owned_[thread];
  owned = std::make_unique<LocalRing>(ring_lines_, rank, thread);
  const int count = ring_count_.load(std::memory_order_relaxed);
  active_[count] = owned.get();
  ring_count_.store(count + 1, std::memory_order_release);
  rings_[thread].store(owned.get(), std::memory_order_release);
  return *owned;
}

namespace {

// A matched receive and its message, moved once the mailbox lock is
// released. `keep` owns a posted request; a receive that was never posted
// (a blocking receive's own) is owned by its caller, who waits for the
// section to end.
struct Match {
  RequestState* request;
  std::shared_ptr<RequestState> keep;
  std::shared_ptr<Envelope> message;
};

// The matches of this thread's open section (sections do not nest).
std::vector<Match>& section_matches() {
  thread_local std::vector<Match> matched;
  return matched;
}

// The entry of `ring` as the queues' matching sees it.
bool entry_matches(int want_source, int want_tag, int source, int tag) {
  return (want_source == MPI_ANY_SOURCE || want_source == source) &&
         (want_tag == MPI_ANY_TAG || want_tag == tag);
}

}  // namespace

MailboxSection::MailboxSection(Mailbox& box) : box_(box) { box_.mutex.lock(); }

MailboxSection::MailboxSection(Mailbox& box, std::adopt_lock_t /*held*/) : box_(box) {}

MailboxSection::~MailboxSection() { leave(); }

void MailboxSection::leave() noexcept {
  if (released_ != 0) add_released(box_, released_);  // still under the lock
  box_.mutex.unlock();
  // The owner may wait, parked, without a posted receive (wait_unposted).
  if (queued_) notify_waiters();
  std::vector<Match>& matched = section_matches();
  for (Match& m : matched) receive_matched(*m.request, *m.message);
  matched.clear();
}

void MailboxSection::read(LocalRing& ring, Goal& goal) {
  const int source = ring.source_rank();
  while (true) {
    const LocalRing::Entry entry = ring.front();
    if (entry.kind == LocalRing::Entry::Kind::kNone) return;
    // The receive it meets: the first posted one it matches, else the one
    // being made (it comes after every posted one).
    RequestState* receiver = nullptr;
    std::shared_ptr<RequestState> keep;
    auto it = std::find_if(box_.posted.begin(), box_.posted.end(), [&](const auto& r) {
      return entry_matches(r->want_source, r->want_tag, source, entry.tag);
    });
    if (it != box_.posted.end()) {
      keep = std::move(*it);
      if (it == box_.posted.begin()) {
        box_.posted.pop_front();  // the usual case, and much cheaper than erase
      } else {
        box_.posted.erase(it);
      }
      receiver = keep.get();
      if (receiver == goal.watched) goal.reached = true;
    } else if (goal.unposted != nullptr && !goal.reached &&
               entry_matches(goal.unposted->want_source, goal.unposted->want_tag, source,
                             entry.tag)) {
      receiver = goal.unposted;
      goal.reached = true;
    } else if (goal.reached && !goal.all) {
      return;  // left in the ring for a later receive: no envelope made for it
    }
    if (entry.kind == LocalRing::Entry::Kind::kInline) {
      if (receiver != nullptr) {
        receive_inline(*receiver, source, entry.tag, entry.data, entry.bytes);
        released_ += entry.bytes;
      } else {
        // Unexpected: copied out of the ring into an eager envelope, which
        // keeps the bytes reserved (they are released when it is received).
        auto message = make_envelope();
        message->kind = Envelope::Kind::kEager;
        message->source = source;
        message->tag = entry.tag;
        message->bytes = entry.bytes;
        std::memcpy(message->payload.resize(entry.bytes), entry.data, entry.bytes);
        box_.unexpected.push_back(std::move(message));
        box_.unexpected_appends.fetch_add(1, std::memory_order_release);
        queued_ = true;
      }
      ring.pop_inline(entry);
    } else {
      std::shared_ptr<Envelope> message = ring.pop_envelope(entry);
      if (receiver != nullptr) {
        if (message->kind == Envelope::Kind::kEager) released_ += message->bytes;
        section_matches().push_back({receiver, std::move(keep), std::move(message)});
      } else {
        box_.unexpected.push_back(std::move(message));
        box_.unexpected_appends.fetch_add(1, std::memory_order_release);
        queued_ = true;
      }
    }
    if (receiver == nullptr && goal.probe &&
        entry_matches(goal.probe_source, goal.probe_tag, source, entry.tag)) {
      goal.reached = true;
      return;
    }
  }
}

void MailboxSection::read_rings(RingChoice rings, Goal& goal) {
  if (rings.thread >= 0) {
    if (LocalRing* ring = box_.ring_from(rings.thread)) read(*ring, goal);
    return;
  }
  if (rings.thread != RingChoice::kAll) return;
  // A wildcard: each ring in turn, from where the last wildcard read left off.
  const int count = box_.ring_count();
  for (int i = 0; i < count && !(goal.reached && !goal.all); ++i) {
    const int index = (box_.next_ring + i) % count;
    read(box_.ring_at(index), goal);
    if (goal.reached) box_.next_ring = (index + 1) % count;
  }
}

bool MailboxSection::match_unposted(RequestState& receive, RingChoice rings) {
  // What waits in `unexpected` was read before anything still in a ring.
  auto it = std::find_if(box_.unexpected.begin(), box_.unexpected.end(), [&](const auto& m) {
    return matches(receive.want_source, receive.want_tag, *m);
  });
  if (it != box_.unexpected.end()) {
    std::shared_ptr<Envelope> message = std::move(*it);
    box_.unexpected.erase(it);
    if (message->kind == Envelope::Kind::kEager) released_ += message->bytes;
    section_matches().push_back({&receive, nullptr, std::move(message)});
    return true;
  }
  if (box_.unexpected.empty()) {
    box_.unexpected_empty_at.store(box_.unexpected_appends.load(std::memory_order_relaxed),
                                   std::memory_order_relaxed);
  }
  Goal goal;
  goal.unposted = &receive;
  read_rings(rings, goal);
  return goal.reached;
}

void MailboxSection::read_for(const RequestState& watched, RingChoice rings) {
  Goal goal;
  goal.watched = &watched;
  read_rings(rings, goal);
}

void MailboxSection::read_all(LocalRing& ring) {
  Goal goal;
  goal.all = true;
  read(ring, goal);
}

void MailboxSection::read_for_probe(int source, int tag, RingChoice rings) {
  Goal goal;
  goal.probe = true;
  goal.probe_source = source;
  goal.probe_tag = tag;
  read_rings(rings, goal);
}

bool rings_ready(const Mailbox& box, RingChoice rings) noexcept {
  if (rings.thread >= 0) {
    const LocalRing* ring = box.ring_from(rings.thread);
    return ring != nullptr && ring->ready();
  }
  if (rings.thread != RingChoice::kAll) return false;
  const int count = box.ring_count();
  for (int i = 0; i < count; ++i) {
    if (box.ring_at(i).ready()) return true;
  }
  return false;
}

void settle_receive(Mailbox& box, const RequestState& request, RingChoice rings) noexcept {
  if (!rings_ready(box, rings)) return;
  try {
    MailboxSection section(box);
    section.read_for(request, rings);
  } catch (...) {
    // Only `unexpected` could not grow (an envelope for a message that meets
    // no receive): what was read stays queued, the rest in the ring, and the
    // next poll tries again.
  }
}

void settle_ring(Mailbox& box, LocalRing& ring) noexcept {
  if (!ring.ready()) return;
  if (!box.mutex.try_lock()) return;
  try {
    MailboxSection section(box, std::adopt_lock);
    section.read_all(ring);
  } catch (...) {
    // As in settle_receive: the receiver's next post or poll tries again.
  }
}

void clear_mailbox(Mailbox& box) {
  std::lock_guard lock(box.mutex);
  for (int i = 0; i < box.ring_count(); ++i) {
    LocalRing& ring = box.ring_at(i);
    for (LocalRing::Entry entry = ring.front(); entry.kind != LocalRing::Entry::Kind::kNone;
         entry = ring.front()) {
      if (entry.kind == LocalRing::Entry::Kind::kInline) {
        ring.pop_inline(entry);
      } else {
        ring.pop_envelope(entry);
      }
    }
  }
  box.posted.clear();
  box.unexpected.clear();
  box.unexpected_empty_at.store(box.unexpected_appends.load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
  // Nothing is held any more; what the senders reserved and have not used
  // stays theirs.
  const std::size_t released =
      box.eager_reserved.load(std::memory_order_relaxed) - box.eager_credit();
  box.eager_released.store(released, std::memory_order_relaxed);
  box.eager_released_seen.store(released, std::memory_order_relaxed);
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
      box.unexpected_appends.fetch_add(1, std::memory_order_release);
      return;
    }
  }
  receive_matched(*receiver, *message);
}

void post_receive(Mailbox& box, const std::shared_ptr<RequestState>& request, RingChoice rings,
                  const std::shared_ptr<CommState>& comm) {
  {
    MailboxSection section(box);
    if (!section.match_unposted(*request, rings)) {
      // Other threads may complete it once it is queued: it carries the
      // communicator's reference from then on.
      if (!request->comm) request->comm = comm;
      box.posted.push_back(request);
      return;
    }
  }  // the match's data has moved: nobody but this thread holds the request
  if (!request->comm && request->phase.load(std::memory_order_acquire) != Phase::kComplete) {
    request->comm = comm;  // it finishes through MPI, polled by its owner
  }
}

}  // namespace ep::detail
