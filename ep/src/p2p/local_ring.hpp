// The ring of one (sender, receiver) pair of endpoints of one process: the
// intra-process path's queue, written by the sender alone and read by
// whoever holds the receiver's mailbox lock.
//
// A message is one or more 64-byte lines. Its first line starts with a
// 16-byte header (a stamp, the tag, the kind and size) and carries the
// first 48 bytes of an inline message's data, the rest following in the
// next lines; so a message of up to 48 bytes is one line, written by the
// sender and read by the receiver, and crosses the cores as one cache line.
// Whatever does not travel inline (a rendezvous, a synchronous send, data
// too large for the ring) takes one line holding a pointer to its envelope.
//
// Publication: the sender writes the data, then the stamp (release);
// the receiver reads the stamp (acquire), then the data. The stamp is the
// message's position plus one, in lines since the ring was made (64 bits:
// it never wraps), so a line left from an earlier lap never looks new. A
// message never wraps around the end of the ring: when it does not fit
// before the end the sender writes a skip line there and starts it at the
// beginning, so its data is one contiguous run for memcpy, MPI_Pack and
// MPI_Unpack. The receiver clears the first 8 bytes of every line of a
// message past its first once it has read it, so that data never poses as
// the stamp of a message that starts on that line in a later lap. The
// receiver publishes how far it has read (head); the sender keeps its own
// copy and reads the receiver's only when the ring looks full.
//
// A full ring: a message that finds no room (the receiver is not reading)
// goes to `overflow`, a queue under the receiver's mailbox lock, as an
// envelope; from then on every message of the pair goes there until the
// receiver has emptied it (`overflowing`, set by the sender and cleared by
// the receiver, both under the lock). The receiver reads the ring before
// the overflow, so the pair's order holds (MPI's non-overtaking rule).
//
// Thread safety: the producer side (try_reserve_inline, commit_inline,
// try_write_envelope, overflowing) belongs to the sender's thread; the
// consumer side (front, pop_inline, pop_envelope, overflow) to the holder of
// the receiver's mailbox lock; ready() is a hint any thread may ask for.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

namespace ep::detail {

struct Envelope;

class LocalRing {
 public:
  static constexpr std::size_t kLineBytes = 64;
  static constexpr std::size_t kHeaderBytes = 16;
  /// Data bytes that travel in a message's first line.
  static constexpr std::size_t kFirstLineBytes = kLineBytes - kHeaderBytes;

  /// `lines` (a power of two, at least 16) for messages from the endpoint
  /// with EP rank `source_rank` (its local thread `source_thread`).
  LocalRing(std::size_t lines, int source_rank, int source_thread);
  LocalRing(const LocalRing&) = delete;
  LocalRing& operator=(const LocalRing&) = delete;
  /// Drops the envelopes still in the ring or the overflow (each owns itself).
  ~LocalRing();

  [[nodiscard]] int source_rank() const noexcept { return source_rank_; }
  [[nodiscard]] int source_thread() const noexcept { return source_thread_; }
  /// The most data bytes one inline message may carry: a quarter of the
  /// ring, so that a stream of the largest ones still keeps several in flight.
  [[nodiscard]] std::size_t max_inline_bytes() const noexcept { return max_inline_; }

  // ---- the sender ---------------------------------------------------------

  /// Room for an inline message of `bytes` (at most max_inline_bytes()):
  /// where its data goes, or null when the ring is full. Then write the data
  /// and call commit_inline, or nothing (the room is left unused).
  [[nodiscard]] std::byte* try_reserve_inline(std::size_t bytes) {
    const std::size_t count = lines_for(bytes);
    if (count <= lines_count_ - static_cast<std::size_t>(tail_ & mask_) &&
        tail_ + count - head_seen_ <= lines_count_) {
      reserved_at_ = tail_;  // room before the end, by the sender's last reading of head
      return data_at(reserved_at_);
    }
    return reserve_slowly(count);
  }
  /// Publishes the message reserved last.
  void commit_inline(int tag, std::size_t bytes) {
    write_header(reserved_at_, tag, kInlineKind, static_cast<std::uint32_t>(bytes));
    tail_ = reserved_at_ + lines_for(bytes);
  }
  /// Publishes a line that refers to `envelope` (which the ring owns until
  /// it is read: Envelope::pinned); false, with nothing written, when full.
  [[nodiscard]] bool try_write_envelope(Envelope* envelope, int tag);
  /// Eager bytes this sender has reserved against the receiver's cap and not
  /// used yet (reserve_eager in p2p/matching_engine.cpp): its messages spend
  /// them without touching the mailbox's shared count. Written by the
  /// sender only; any thread may read it (clear_mailbox, the test hooks).
  [[nodiscard]] std::size_t eager_credit() const noexcept {
    return eager_credit_.load(std::memory_order_relaxed);
  }
  void set_eager_credit(std::size_t bytes) noexcept {
    eager_credit_.store(bytes, std::memory_order_relaxed);
  }
  /// True while messages of the pair must go to the overflow. The sender's
  /// read; set and cleared under the receiver's mailbox lock.
  [[nodiscard]] bool overflowing() const noexcept {
    return overflowing_.load(std::memory_order_acquire);
  }

  // ---- the receiver (the mailbox lock held) -------------------------------

  /// The oldest message: in the ring, else in the overflow.
  struct Entry {
    enum class Kind { kNone, kInline, kEnvelope };
    Kind kind = Kind::kNone;
    int tag = 0;
    std::size_t bytes = 0;            // kInline: data bytes
    const std::byte* data = nullptr;  // kInline: in the ring, valid until pop()
    Envelope* envelope = nullptr;     // kEnvelope: owned through its `pinned`
    bool from_overflow = false;
  };
  /// The oldest unread message (kind kNone when there is none).
  [[nodiscard]] Entry front() {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const Line& first = line(head);
    if (load_stamp(first.stamp, std::memory_order_acquire) == head + 1 &&
        first.word >> kKindShift == kInlineKind) {
      Entry entry;
      entry.kind = Entry::Kind::kInline;
      entry.tag = first.tag;
      entry.bytes = first.word & kBytesMask;
      entry.data = data_at(head);
      return entry;
    }
    return front_slowly();
  }
  /// Frees the lines of the inline message front() returned (its data has
  /// been read).
  void pop_inline(const Entry& entry) {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::size_t count = lines_for(entry.bytes);
    // The data of this message must not pose as a stamp in a later lap.
    for (std::size_t i = 1; i < count; ++i) {
      store_stamp(line(head + i).stamp, 0, std::memory_order_relaxed);
    }
    head_.store(head + count, std::memory_order_release);
  }
  /// Takes the envelope front() returned out of the ring or the overflow,
  /// with its ownership.
  std::shared_ptr<Envelope> pop_envelope(const Entry& entry);
  /// Whether a message may be waiting: a hint, without the lock.
  [[nodiscard]] bool ready() const noexcept {
    if (overflowing_.load(std::memory_order_relaxed)) return true;
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    return load_stamp(line(head).stamp, std::memory_order_relaxed) == head + 1;
  }

  /// Messages that found the ring full, oldest first (the receiver's
  /// mailbox lock held by whoever touches it).
  std::deque<std::shared_ptr<Envelope>> overflow;
  /// Sets the overflow flag (the sender, under the lock, when it queues).
  void set_overflowing() noexcept { overflowing_.store(true, std::memory_order_release); }

 private:
  // A line as the header sees it; the data of an inline message runs on
  // over the following lines, stamps and all (written as bytes).
  struct alignas(kLineBytes) Line {
    std::uint64_t stamp;  // through std::atomic_ref: position + 1, or 0
    std::int32_t tag;
    std::uint32_t word;  // kind << kKindShift | data bytes
    std::byte data[kFirstLineBytes];
  };
  static_assert(sizeof(Line) == kLineBytes);
  enum : std::uint32_t { kInlineKind = 0, kEnvelopeKind = 1, kSkipKind = 2 };
  static constexpr std::uint32_t kKindShift = 28;
  static constexpr std::uint32_t kBytesMask = (1u << kKindShift) - 1;

  [[nodiscard]] static std::size_t lines_for(std::size_t bytes) noexcept {
    return bytes <= kFirstLineBytes ? 1
                                    : 1 + (bytes - kFirstLineBytes + kLineBytes - 1) / kLineBytes;
  }
  [[nodiscard]] Line& line(std::uint64_t position) noexcept { return lines_[position & mask_]; }
  [[nodiscard]] const Line& line(std::uint64_t position) const noexcept {
    return lines_[position & mask_];
  }
  // The data of the message whose first line is at `position` (contiguous:
  // messages never wrap).
  [[nodiscard]] std::byte* data_at(std::uint64_t position) noexcept {
    return reinterpret_cast<std::byte*>(&line(position)) + kHeaderBytes;
  }
  static std::uint64_t load_stamp(const std::uint64_t& stamp, std::memory_order order) {
    // atomic_ref needs a mutable object; the load does not write it.
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(stamp)).load(order);
  }
  static void store_stamp(std::uint64_t& stamp, std::uint64_t value, std::memory_order order) {
    std::atomic_ref<std::uint64_t>(stamp).store(value, order);
  }
  // try_reserve_inline past its fast path (a wrap, or the ring looked full).
  [[nodiscard]] std::byte* reserve_slowly(std::size_t count);
  // front() past its fast path: a skip line, an envelope, the overflow.
  [[nodiscard]] Entry front_slowly();
  void write_header(std::uint64_t position, int tag, std::uint32_t kind, std::uint32_t bytes) {
    Line& first = line(position);
    first.tag = tag;
    first.word = kind << kKindShift | bytes;
    // Release: the data and the header before the stamp that publishes them.
    store_stamp(first.stamp, position + 1, std::memory_order_release);
  }
  // Room for `count` lines from tail_ on, reading the receiver's head again
  // when the sender's copy leaves too little.
  [[nodiscard]] bool room_for(std::uint64_t count);
  // Where a message of `count` lines starts (after a skip line when it would
  // wrap), or false when there is no room; publishes the skip line.
  [[nodiscard]] bool place(std::size_t count);

  const std::size_t lines_count_;
  const std::uint64_t mask_;
  const std::size_t max_inline_;
  const int source_rank_;
  const int source_thread_;
  std::unique_ptr<Line[]> lines_;

  // The sender's line: where the next message goes, what it last read of
  // head, where the reserved message starts, its unused eager credit.
  alignas(kLineBytes) std::uint64_t tail_ = 0;
  std::uint64_t head_seen_ = 0;
  std::uint64_t reserved_at_ = 0;
  std::atomic<std::size_t> eager_credit_{0};
  // On a line of its own: read by both sides on every message, written
  // only when the overflow starts and ends.
  alignas(kLineBytes) std::atomic<bool> overflowing_{false};
  // The receiver's line: lines before it are read and free.
  alignas(kLineBytes) std::atomic<std::uint64_t> head_{0};
};

}  // namespace ep::detail
