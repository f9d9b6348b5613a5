// The matching engine: per-endpoint queues of unexpected messages and posted
// receives, fed by intra-process senders and by the drainer of the MPI queue.
//
// Intra-process senders do not take the receiver's lock: they push their
// message onto the mailbox's arrival stack (one compare-and-swap), and the
// queues take it in the next time anyone holds the lock with an eye on them
// (absorb_arrivals): the owner posting, probing or polling a receive, or a
// sender that waits for its message to be matched (rendezvous, synchronous)
// and helps. A sender and its receiver posting at the same time thus no
// longer take turns on one lock line per message; the receiver's side of the
// match becomes part of its own poll, as in MPI's shared-memory transports.
//
// Ordering: MPI's non-overtaking rule holds per (sender, receiver,
// communicator). Each sender endpoint pushes onto the receiver's arrival
// stack in send order and the stack is taken whole and reversed, so one
// sender's messages enter `unexpected` (or meet a posted receive) in send
// order; inter-process messages come in order from MPI through one drainer
// at a time. Both queues are searched front to back, so the first matching
// message meets the first matching receive.
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
#include "p2p/message_pool.hpp"
#include "p2p/request_state.hpp"
#include "spin_lock.hpp"

namespace ep::detail {

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

  // On the arrival stack only: the next (older) arrival, and the envelope's
  // own ownership, which the stack holds while the envelope is on it.
  Envelope* next_arrival = nullptr;
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

/// The queues of one endpoint. `unexpected`, `posted` and `held_messages`
/// are read and written under `mutex`; data is moved after the lock is
/// released (the matched entries are already out of the queues, so nobody
/// else can touch them). `arrivals` and `eager_bytes` are atomics that
/// intra-process senders update without the lock.
struct alignas(64) Mailbox {
  SpinLock mutex;                                    // short sections only: see spin_lock.hpp
  std::deque<std::shared_ptr<Envelope>> unexpected;  // arrival order
  std::deque<std::shared_ptr<RequestState>> posted;  // posting order
  // Messages taken out of `unexpected` by a probe (an ep::Message) and not
  // yet received: a dropped one comes back, so while any is out no receive
  // may go straight to MPI past it (CommState::try_post_direct).
  int held_messages = 0;

  // Intra-process messages pushed by their senders and not yet taken in by
  // absorb_arrivals: a stack, newest first, linked by Envelope::next_arrival.
  // On a line of its own: senders write it, the lock holder empties it.
  alignas(64) std::atomic<Envelope*> arrivals{nullptr};
  // Payload bytes of the kEager envelopes on the arrival stack or in
  // `unexpected` (eager_bytes()), kept at most the communicator's eager cap
  // by the senders (reserve_eager): the bytes reserved by senders, on their
  // line, less the bytes released by the queues' side, on the owner's
  // line, so that neither side writes the other's line per message. And
  // the most it has held (for the tests).
  alignas(64) std::atomic<std::size_t> eager_reserved{0};
  std::atomic<std::size_t> eager_high_water{0};
  // The senders' last reading of eager_released (never ahead of it): while
  // it leaves room under the cap, a sender need not read the owner's line.
  std::atomic<std::size_t> eager_released_seen{0};
  alignas(64) std::atomic<std::size_t> eager_released{0};

  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;
  // Drops what is still on the arrival stack (each envelope there owns itself).
  ~Mailbox();

  [[nodiscard]] std::size_t eager_bytes() const noexcept {
    // Released first: it never runs ahead of what was reserved.
    const std::size_t released = eager_released.load(std::memory_order_acquire);
    return eager_reserved.load(std::memory_order_acquire) - released;
  }
};

/// Pushes an intra-process `message` onto `box`'s arrival stack; any thread,
/// no lock. The message is matched later, by the next ArrivalsTakenIn.
void push_arrival(Mailbox& box, std::shared_ptr<Envelope> message);

/// A section under `box`'s lock that starts by taking the whole arrival
/// stack into the queues, oldest first: each message goes to the first
/// matching posted receive or to the end of `unexpected`. The matched data
/// moves when the section ends, after the lock is released (the mailbox
/// rule: no copy under the lock). Every path that looks at the queues opens
/// one, so a pushed message is never overtaken by a later post or probe.
/// Sections do not nest within a thread (the matches wait in a per-thread
/// list, which the steady state reuses without allocating).
class ArrivalsTakenIn {
 public:
  /// Takes the lock, waiting for it.
  explicit ArrivalsTakenIn(Mailbox& box);
  /// `box.mutex` is already held by the caller (a try_lock that succeeded).
  ArrivalsTakenIn(Mailbox& box, std::adopt_lock_t /*held*/);
  ArrivalsTakenIn(const ArrivalsTakenIn&) = delete;
  ArrivalsTakenIn& operator=(const ArrivalsTakenIn&) = delete;
  /// Releases the lock, then moves what the arrivals matched. Never throws
  /// (receive_matched fails the requests instead).
  ~ArrivalsTakenIn();

 private:
  void take_in();
  void leave() noexcept;  // unlocks, then moves the matches
  Mailbox& box_;
};

/// Takes in `box`'s arrivals when there are any and nobody else holds the
/// lock (a holder's section takes them itself, or a later call does). Any
/// thread: the owner's polls, and a sender that waits for its message to be
/// matched (p2p/wait.cpp) so that it never depends on the receiver
/// polling. Never throws.
void settle_arrivals(Mailbox& box) noexcept;

/// Drops every queued message and receive (the communicator is being freed).
void clear_mailbox(Mailbox& box);

/// Takes the first posted receive that matches `message` out of `box`, null
/// when none does; one too small for it still takes it (receive_matched
/// then truncates, as MPI does). box.mutex held.
std::shared_ptr<RequestState> take_posted(Mailbox& box, const Envelope& message);

/// Counts a message taken by a probe in or out of `box` (+1 when taken, -1
/// when received or returned). Takes box.mutex.
void count_held(Mailbox& box, int change);

/// Reserves room for an eager copy of `bytes` under `cap`: false when the
/// mailbox already holds too much (the sender then goes rendezvous). Any
/// thread, no lock; released by release_eager when the message is matched,
/// taken by a probe or dropped.
bool reserve_eager(Mailbox& box, std::size_t bytes, std::size_t cap);

/// Counts `message`'s payload against `box` when it is an eager copy coming
/// back to `unexpected` (a Message dropped unreceived), even past the cap:
/// it was counted before a probe took it, and it must go back.
void hold_eager(Mailbox& box, const Envelope& message);

/// The reverse, whenever an eager envelope leaves the queues (matched,
/// taken by a probe, dropped).
inline void release_eager(Mailbox& box, const Envelope& message) {
  if (message.kind == Envelope::Kind::kEager) {
    box.eager_released.fetch_add(message.bytes, std::memory_order_release);
  }
}

enum class Arrival {
  kNew,       // a message arriving now: it queues behind everything unexpected
  kReturned,  // a message taken out by mprobe and handed back: it was first in line
};

/// Hands `message` to `box`: to the first matching posted receive (moving the
/// data now, in the calling thread) or to the unexpected queue (at the end,
/// or at the front for a returned message). Called by the drainer and by a
/// Message dropped unreceived; intra-process senders push_arrival instead.
void deliver(Mailbox& box, std::shared_ptr<Envelope> message, Arrival arrival = Arrival::kNew);

/// Posts `request` in `box`: takes in the arrivals, then takes the first
/// matching unexpected message (moving the data in the calling thread, the
/// receiver) or queues the request.
void post_receive(Mailbox& box, const std::shared_ptr<RequestState>& request);

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
