#include "p2p/local_ring.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cstring>

#include "p2p/matching_engine.hpp"

namespace ep::detail {

namespace {

// An envelope's address as a ring line carries it.
using PointerBytes = std::array<std::byte, sizeof(void*)>;

}  // namespace

LocalRing::LocalRing(std::size_t lines, int source_rank, int source_thread)
    : lines_count_(lines),
      mask_(lines - 1),
      max_inline_(kFirstLineBytes + (lines / 4 - 1) * kLineBytes),
      source_rank_(source_rank),
      source_thread_(source_thread),
      lines_(new Line[lines]()) {}

LocalRing::~LocalRing() {
  // Nobody else uses the ring any more: drop what was never read.
  for (Entry entry = front(); entry.kind != Entry::Kind::kNone; entry = front()) {
    if (entry.kind == Entry::Kind::kInline) {
      pop_inline(entry);
    } else {
      pop_envelope(entry);
    }
  }
}

bool LocalRing::room_for(std::uint64_t count) {
  if (tail_ + count - head_seen_ <= lines_count_) return true;
  // Acquire: the receiver has read the lines it freed before we reuse them.
  head_seen_ = head_.load(std::memory_order_acquire);
  return tail_ + count - head_seen_ <= lines_count_;
}

bool LocalRing::place(std::size_t count) {
  const std::size_t to_end = lines_count_ - static_cast<std::size_t>(tail_ & mask_);
  if (count <= to_end) {
    if (!room_for(count)) return false;
    reserved_at_ = tail_;
    return true;
  }
  // It would wrap: a skip line over the rest of the ring, then the message
  // from the ring's first line on.
  if (!room_for(to_end + count)) return false;
  write_header(tail_, 0, kSkipKind, static_cast<std::uint32_t>(to_end));
  tail_ += to_end;
  reserved_at_ = tail_;
  return true;
}

std::byte* LocalRing::reserve_slowly(std::size_t count) {
  if (!place(count)) return nullptr;
  return data_at(reserved_at_);
}

bool LocalRing::try_write_envelope(Envelope* envelope, int tag) {
  if (!place(1)) return false;
  const auto address = std::bit_cast<PointerBytes>(envelope);
  std::memcpy(line(reserved_at_).data, address.data(), address.size());
  write_header(reserved_at_, tag, kEnvelopeKind, 0);
  tail_ = reserved_at_ + 1;
  return true;
}

LocalRing::Entry LocalRing::front_slowly() {
  std::uint64_t head = head_.load(std::memory_order_relaxed);
  while (true) {
    Line& first = line(head);
    if (load_stamp(first.stamp, std::memory_order_acquire) != head + 1) break;
    const std::uint32_t kind = first.word >> kKindShift;
    const std::uint32_t size = first.word & kBytesMask;
    if (kind == kSkipKind) {
      head += size;
      head_.store(head, std::memory_order_release);
      continue;
    }
    Entry entry;
    entry.tag = first.tag;
    if (kind == kInlineKind) {
      entry.kind = Entry::Kind::kInline;
      entry.bytes = size;
      entry.data = data_at(head);
    } else {
      entry.kind = Entry::Kind::kEnvelope;
      PointerBytes address{};
      std::memcpy(address.data(), first.data, address.size());
      entry.envelope = std::bit_cast<Envelope*>(address);
    }
    return entry;
  }
  if (!overflow.empty()) {
    Entry entry;
    entry.kind = Entry::Kind::kEnvelope;
    entry.envelope = overflow.front().get();
    entry.tag = entry.envelope->tag;
    entry.from_overflow = true;
    return entry;
  }
  // Both empty: the sender's next message may use the ring again. It writes
  // the ring only while this flag is clear, so nothing it writes from now on
  // can be older than what the overflow held.
  if (overflowing_.load(std::memory_order_relaxed)) {
    overflowing_.store(false, std::memory_order_release);
  }
  return {};
}

std::shared_ptr<Envelope> LocalRing::pop_envelope(const Entry& entry) {
  if (entry.from_overflow) {
    std::shared_ptr<Envelope> taken = std::move(overflow.front());
    overflow.pop_front();
    return taken;
  }
  std::shared_ptr<Envelope> taken = std::move(entry.envelope->pinned);
  head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  return taken;
}

}  // namespace ep::detail
