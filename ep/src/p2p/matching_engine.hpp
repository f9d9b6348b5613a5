// The matching engine: per-endpoint queues of unexpected messages and posted
// receives, fed by the rings of the local senders (p2p/local_ring.hpp) and
// by the drainer of the MPI queue.
//
// Intra-process senders never take the receiver's lock on their way: each
// writes its messages into the ring of its (sender, receiver) pair, and the
// queues read them in the next time anyone holds the lock with an eye on
// them (a MailboxSection): the owner posting, probing or polling a receive,
// or a sender that waits for its message to be matched (rendezvous,
// synchronous) and helps. A ring is read lazily, in order, only as far as a
// receive needs: a message that meets a receive (posted, or the one being
// made) is copied out of the ring straight into it, and only one that meets
// none is taken into `unexpected` as an envelope.
//
// Ordering: MPI's non-overtaking rule holds per (sender, receiver,
// communicator). One sender's messages to one receiver are in one ring (and
// its overflow, read after the ring), read in order; inter-process messages
// come in order from MPI through one drainer at a time. `unexpected` holds
// only messages read before anything still in a ring, and both queues are
// searched front to back, so the first matching message meets the first
// matching receive.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "datatype.hpp"
#include "p2p/local_ring.hpp"
#include "p2p/message_pool.hpp"
#include "p2p/request_state.hpp"
#include "spin_lock.hpp"

namespace ep::detail {

class P2pState;

/// The packed data of an eager copy. Up to kInlineBytes it lives in the
/// envelope itself: a small message is then one pool block and the receiver
/// reads its data from the envelope's own lines, instead of a second block
/// from the sender's pool. Larger data goes to the maker's message pool.
class Payload {
 public:
  // Keeps the envelope with its shared_ptr control block (16 bytes) within
  // the pool's 256-byte class (static_assert below Envelope).
  static constexpr std::size_t kInlineBytes = 56;

  /// Makes room for `bytes` (the old contents are not kept) and returns it.
  std::byte* resize(std::size_t bytes) {
    if (bytes > kInlineBytes) {
      heap_.resize(bytes);
    } else {
      heap_.clear();
    }
    size_ = bytes;
    return data();
  }
  /// Drops the first `bytes` (an unpacked header), keeping the rest.
  void drop_front(std::size_t bytes) {
    const std::size_t rest = size_ - bytes;
    if (size_ > kInlineBytes && rest <= kInlineBytes) {
      std::memcpy(inline_, heap_.data() + bytes, rest);
      heap_.clear();
    } else {
      std::memmove(data(), data() + bytes, rest);
      if (size_ > kInlineBytes) heap_.resize(rest);
    }
    size_ = rest;
  }
  [[nodiscard]] std::byte* data() noexcept { return size_ > kInlineBytes ? heap_.data() : inline_; }
  [[nodiscard]] const std::byte* data() const noexcept {
    return size_ > kInlineBytes ? heap_.data() : inline_;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::size_t size_ = 0;
  std::byte inline_[kInlineBytes]{};
  std::vector<std::byte, PoolAllocator<std::byte>> heap_;
};

/// One incoming message waiting in a mailbox. Made by make_envelope.
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
  Payload payload;                             // kEager, kRemoteEager: in packed form
  TypedBuffer send_buffer;                     // kRendezvous
  // Completed once the message is matched (synchronous send) or copied
  // (rendezvous); null for a plain eager or remote message.
  std::shared_ptr<RequestState> sender;

  // In a ring only: the envelope's ownership, which the ring holds while the
  // envelope is in it (a ring line holds a plain pointer).
  std::shared_ptr<Envelope> pinned;
};

static_assert(sizeof(Envelope) + 16 <= 256,
              "an envelope and its control block fit the message pool's 256-byte class");

/// A new envelope in the calling thread's message pool (p2p/message_pool.hpp):
/// it is usually dropped by another thread, the receiver.
[[nodiscard]] inline std::shared_ptr<Envelope> make_envelope() {
  return std::allocate_shared<Envelope>(PoolAllocator<Envelope>{});
}

[[nodiscard]] inline bool matches(int want_source, int want_tag, const Envelope& e) {
  return (want_source == MPI_ANY_SOURCE || want_source == e.source) &&
         (want_tag == MPI_ANY_TAG || want_tag == e.tag);
}

/// The queues of one endpoint. `unexpected`, `posted`, `held_messages` and
/// the rings' consumer side are read and written under `mutex`; data of a
/// rendezvous is moved after the lock is released (the matched entries are
/// already out of the queues, so nobody else can touch them), inline data
/// of a ring before (it is small, and its lines are freed after the copy).
/// The eager counters are atomics that intra-process senders update
/// without the lock.
struct alignas(64) Mailbox {
  SpinLock mutex;                                    // short sections only: see spin_lock.hpp
  std::deque<std::shared_ptr<Envelope>> unexpected;  // arrival order
  std::deque<std::shared_ptr<RequestState>> posted;  // posting order
  // Messages taken out of `unexpected` by a probe (an ep::Message) and not
  // yet received: a dropped one comes back, so while any is out no receive
  // may go straight to MPI past it (P2pState::try_post_direct).
  int held_messages = 0;
  // Where a wildcard read of the rings starts (turns, so that no sender
  // waits behind another's stream). Under `mutex`.
  int next_ring = 0;

  // Bumped whenever a message is appended to `unexpected`: an owner that
  // waits without a posted receive (a blocking receive) looks again only
  // when it moved, or when a ring has something.
  std::atomic<std::uint32_t> unexpected_appends{0};
  // The value of unexpected_appends when `unexpected` was last seen empty,
  // under `mutex`. While the two are equal the queue is still empty (every
  // append bumps the counter; removals only empty it further), so a
  // blocking receive whose rings hold nothing need not take the lock to
  // learn that nothing matches yet (wait_unposted).
  std::atomic<std::uint32_t> unexpected_empty_at{0};

  // Payload bytes of the eager copies held for this endpoint: inline in the
  // rings, eager envelopes in the overflows, kEager envelopes in `unexpected`
  // (eager_bytes()), kept at most the communicator's eager cap by the
  // senders (reserve_eager): the bytes reserved by senders, on their line,
  // less the bytes released by the queues' side, on the owner's line, so
  // that neither side writes the other's line per message (eager_released
  // is written only under `mutex`: add_released). Reserved bytes include
  // the senders' unused credit (LocalRing::eager_credit). And the most
  // reserved less released at any reservation (for the tests): an upper
  // bound on what it held.
  alignas(64) std::atomic<std::size_t> eager_reserved{0};
  std::atomic<std::size_t> eager_high_water{0};
  // The senders' last reading of eager_released (never ahead of it): while
  // it leaves room under the cap, a sender need not read the owner's line.
  std::atomic<std::size_t> eager_released_seen{0};
  alignas(64) std::atomic<std::size_t> eager_released{0};

  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  /// Makes room for the rings of `local_size` senders (P2pState, before use).
  void init_rings(int local_size);
  /// The ring from local thread `thread`, null before its first message.
  /// Any thread.
  [[nodiscard]] LocalRing* ring_from(int thread) const noexcept {
    return rings_[thread].load(std::memory_order_acquire);
  }
  /// The ring from local thread `thread` (EP rank `rank`), made on its first
  /// message. The sender's thread.
  LocalRing& ring_for_sender(int thread, int rank) {
    if (LocalRing* ring = ring_from(thread)) return *ring;
    return make_ring(thread, rank);
  }
  /// The rings made so far, in the order made. Any thread.
  [[nodiscard]] int ring_count() const noexcept {
    return ring_count_.load(std::memory_order_acquire);
  }
  [[nodiscard]] LocalRing& ring_at(int index) const noexcept { return *active_[index]; }

  /// Eager bytes held: reserved, less released, less the senders' unused
  /// credit. Exact once the senders are quiet (the tests); a snapshot
  /// otherwise.
  [[nodiscard]] std::size_t eager_bytes() const noexcept {
    // Released first: it never runs ahead of what was reserved.
    const std::size_t released = eager_released.load(std::memory_order_acquire);
    return eager_reserved.load(std::memory_order_acquire) - released - eager_credit();
  }
  /// The senders' unused eager credit, all rings together.
  [[nodiscard]] std::size_t eager_credit() const noexcept;
  /// Endpoints of the process, as init_rings was told.
  [[nodiscard]] int local_size() const noexcept { return local_size_; }

 private:
  LocalRing& make_ring(int thread, int rank);

  // The ring table, on a line of its own: every intra-process send reads
  // it (ring_for_sender), and on the line of eager_released, which the
  // owner writes on every message it takes, each of those reads missed
  // (false sharing; see docs/profiles.md). Written only when a ring is made.
  alignas(64) std::size_t ring_lines_ = 0;
  int local_size_ = 0;
  std::unique_ptr<std::atomic<LocalRing*>[]> rings_;     // by sender thread
  std::unique_ptr<std::unique_ptr<LocalRing>[]> owned_;  // by sender thread
  std::unique_ptr<LocalRing*[]> active_;                 // in the order made
  std::atomic<int> ring_count_{0};
};

/// Which rings a receive or probe reads: the ring of one local sender, all
/// of them (a wildcard source), or none (a source in another process).
struct RingChoice {
  static constexpr int kAll = -1;
  static constexpr int kNone = -2;
  int thread = kNone;
};

/// A section under `box`'s lock, in which the rings are read into the
/// queues. The matched rendezvous data moves when the section ends, after
/// the lock is released (the mailbox rule: no large copy under the lock).
/// Every path that looks at the queues opens one. Sections do not nest
/// within a thread (the matches wait in a per-thread list, which the steady
/// state reuses without allocating).
class MailboxSection {
 public:
  /// Takes the lock, waiting for it.
  explicit MailboxSection(Mailbox& box);
  /// `box.mutex` is already held by the caller (a try_lock that succeeded).
  MailboxSection(Mailbox& box, std::adopt_lock_t /*held*/);
  MailboxSection(const MailboxSection&) = delete;
  MailboxSection& operator=(const MailboxSection&) = delete;
  /// Releases the lock, then moves what was matched. Never throws
  /// (receive_matched fails the requests instead).
  ~MailboxSection();

  /// `receive`, which is not posted (it is being posted, or is a blocking
  /// receive that waits without ever being posted), takes the first matching
  /// message: from `unexpected`, else from the rings of `rings`, read in
  /// order as far as needed (messages that meet a posted receive go to it,
  /// the others to `unexpected`). True when it matched; its data has then
  /// moved, or moves when the section ends.
  bool match_unposted(RequestState& receive, RingChoice rings);
  /// Reads the rings of `rings` until the posted receive `watched` has
  /// matched, or the rings are empty; then on while the next message meets
  /// a posted receive.
  void read_for(const RequestState& watched, RingChoice rings);
  /// Reads every message of `ring` into the posted receives or `unexpected`
  /// (a sender waiting for its message to be matched).
  void read_all(LocalRing& ring);
  /// Reads the rings of `rings` until a message matching (source, tag) is in
  /// `unexpected` (for a probe), or they are empty.
  void read_for_probe(int source, int tag, RingChoice rings);

 private:
  // What one pass over a ring is after (read()).
  struct Goal {
    RequestState* unposted = nullptr;       // a receive not posted, after every posted one
    const RequestState* watched = nullptr;  // a posted receive
    bool probe = false;                     // a probe of (probe_source, probe_tag)
    int probe_source = 0;
    int probe_tag = 0;
    bool all = false;  // read every message
    bool reached = false;
  };
  void read(LocalRing& ring, Goal& goal);
  void read_rings(RingChoice rings, Goal& goal);
  void enter();
  void leave() noexcept;  // unlocks, then moves the matches
  Mailbox& box_;
  std::size_t released_ = 0;  // eager bytes matched here: released once, at leave()
  bool queued_ = false;       // a message went to `unexpected`: its owner may be waiting
};

/// Whether a message may wait for a receive with `rings` in the rings
/// (without the lock: a hint for the polls).
[[nodiscard]] bool rings_ready(const Mailbox& box, RingChoice rings) noexcept;

/// The owner's poll of its posted, unmatched receive `request`: reads the
/// rings it may match from when they have something. Never throws.
void settle_receive(Mailbox& box, const RequestState& request, RingChoice rings) noexcept;

/// A sender waiting for its message to be matched reads its own `ring` into
/// the receiver's queues when the receiver's lock is free, so that its
/// completion never depends on the receiver polling. Never throws.
void settle_ring(Mailbox& box, LocalRing& ring) noexcept;

/// A receive that is never posted (a blocking receive no other process can
/// satisfy: p2p/point_to_point.cpp) waits for its message: it reads the
/// rings itself whenever they or `unexpected` have something new, so no
/// other thread ever completes it. Returns its status or throws its error
/// (truncation, a failed copy). The owner's thread; defined in p2p/wait.cpp.
Status wait_unposted(P2pState& p2p, RequestState& receive, RingChoice rings);

/// Drops every queued message and receive (the communicator is being freed).
void clear_mailbox(Mailbox& box);

/// Takes the first posted receive that matches `message` out of `box`, null
/// when none does; one too small for it still takes it (receive_matched
/// then truncates, as MPI does). box.mutex held.
std::shared_ptr<RequestState> take_posted(Mailbox& box, const Envelope& message);

/// Counts a message taken by a probe in or out of `box` (+1 when taken, -1
/// when received or returned). Takes box.mutex.
void count_held(Mailbox& box, int change);

/// Reserves room for an eager copy of `bytes` under `cap` for the sender
/// of `ring` (a ring of `box`): false when the mailbox already holds too
/// much (the sender then goes rendezvous). The ring's sender thread, no
/// lock; released by release_eager when the message is matched, taken by a
/// probe or dropped.
///
/// Far below the cap a sender reserves a chunk of credit at a time (at most
/// a quarter of the cap over all senders, so credit left unused by a
/// sender that went quiet never keeps the others from the cap) and spends
/// it message by message without an atomic read-modify-write: the shared
/// count's compare-and-swap, once per message, made the sender wait for
/// its previous message's ring line to leave its store buffer, a
/// cache-line transfer to the reading core. Near the cap it reserves each
/// message exactly, as before, so the cap is reached and never passed.
bool reserve_eager(Mailbox& box, LocalRing& ring, std::size_t bytes, std::size_t cap);

/// The most credit one reservation of reserve_eager takes beyond its
/// message: an 8-byte stream reserves once per 512 messages.
inline constexpr std::size_t kEagerCreditChunk = 4096;

/// Counts `message`'s payload against `box` when it is an eager copy coming
/// back to `unexpected` (a Message dropped unreceived), even past the cap:
/// it was counted before a probe took it, and it must go back.
void hold_eager(Mailbox& box, const Envelope& message);

/// Counts `bytes` of eager copies as gone from `box` (matched, taken by a
/// probe, dropped, or never sent). box.mutex held: every writer of
/// eager_released holds it, so the count moves by a load and a release
/// store instead of a locked read-modify-write, which on the receiving
/// thread waited for its store buffer to drain once per message.
inline void add_released(Mailbox& box, std::size_t bytes) noexcept {
  box.eager_released.store(box.eager_released.load(std::memory_order_relaxed) + bytes,
                           std::memory_order_release);
}

/// The reverse of reserve_eager, whenever an eager envelope leaves the
/// queues (matched, taken by a probe, dropped). box.mutex held.
inline void release_eager(Mailbox& box, const Envelope& message) {
  if (message.kind == Envelope::Kind::kEager) add_released(box, message.bytes);
}

enum class Arrival {
  kNew,       // a message arriving now: it queues behind everything unexpected
  kReturned,  // a message taken out by mprobe and handed back: it was first in line
};

/// Hands `message` to `box`: to the first matching posted receive (moving the
/// data now, in the calling thread) or to the unexpected queue (at the end,
/// or at the front for a returned message). Called by the drainer and by a
/// Message dropped unreceived; intra-process senders write their rings.
void deliver(Mailbox& box, std::shared_ptr<Envelope> message, Arrival arrival = Arrival::kNew);

/// Posts `request` in `box`: it takes the first matching message, from
/// `unexpected` or from the rings of `rings` (moving the data in the calling
/// thread, the receiver), or is queued. A request that does not complete
/// here (queued, or finishing through MPI) gets `comm` as its
/// RequestState::comm when it has none, before any other thread can see
/// it. The owner's thread.
void post_receive(Mailbox& box, const std::shared_ptr<RequestState>& request, RingChoice rings,
                  const std::shared_ptr<CommState>& comm);

/// Moves a matched message into its receive. Remote messages go to
/// receive_remote (p2p/inter_process.hpp); intra-process ones are copied now.
/// Completes the sender of a rendezvous or synchronous message. A message
/// longer than the receive buffer is received as MPI receives it: the part
/// that fits lands in the buffer, the message is consumed and the receive
/// fails with kTruncate (finish_receive); its sender completes normally. Any
/// thread may run it for the owner, so it never throws: a failure
/// (MPI_Mrecv, a copy) fails the request (and the intra-process sender
/// waiting on it), whose owner throws it from its wait.
void receive_matched(RequestState& request, Envelope& message) noexcept;

/// Receives an inline message of a ring (`bytes` of packed data at `data`,
/// from EP rank `source` with `tag`) into `request`, truncating as
/// receive_matched does. Never throws.
void receive_inline(RequestState& request, int source, int tag, const std::byte* data,
                    std::size_t bytes) noexcept;

/// Completes a receive whose data has moved; request.status holds the
/// message's source, tag and size. When the message was longer than the
/// buffer, the receive fails instead with ErrorKind::kTruncate
/// (MPI_ERR_TRUNCATE) naming both sizes and saying that the message is
/// consumed: one rule for every path, the direct one included.
void finish_receive(RequestState& request);
/// The same when the caller knows whether the message was truncated (a
/// direct receive, whose truncation MPI reports).
void finish_receive(RequestState& request, bool truncated);

/// Status of a received or probed message.
[[nodiscard]] Status status_of(const Envelope& message);

}  // namespace ep::detail
