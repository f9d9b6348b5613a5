// The threads of one process that share an endpoint communicator, seen as a
// team for the shared-memory stage of collectives.
//
// Collectives are hierarchical: the local endpoints combine in shared memory,
// one endpoint per process (the leader, local thread 0) talks MPI on the
// communicator's internal duplicate, and the result spreads back. The team
// gives the shared-memory stage two things: a barrier, and one published
// pointer per thread that the others may read between two barriers.
//
// Thread safety: every local endpoint of the communicator takes part in each
// call, in the same order (MPI's rule for collectives, applied to threads).
//
// The slot rule: a collective may write slots before its first barrier, so
// every collective ends with a barrier after its last slot read; otherwise
// the next collective could overwrite a slot that is still being read.
//
// Arrivals: every barrier and gather-release round counts its arrivals on
// one cache line, each thread adding one with an atomic increment; the
// thread whose increment completes the count is the round's last arriver
// and knows at once that everybody is in. A barrier's last arriver releases
// the others with one store on the same line (one arrive-and-depart round:
// the floor of demos/bench/limits, floor.barrier). Past kFlatArrivals
// threads the increments would queue on that one line, so a combining tree
// of kArrivalFanIn-wide counters takes over: the last arriver of each group
// goes on to the group's parent, log T levels, and the last arriver at the
// root releases everybody through the root's line.
//
// Gather-release rounds (gather_arrivals / release / wait_release) are the
// cheaper synchronisation of collectives whose work one thread can do alone:
// the others publish, arrive and wait; the one thread (the round's owner)
// waits for their arrivals, does the work (folding, MPI, copying into the
// others' buffers) and releases them with one store. Work that needs nothing
// from the others (a broadcast's MPI stage) may run before the owner waits
// for them. That is one team
// synchronisation per collective instead of two or three barriers, and no
// thread waits for the last one out. Rounds keep the slot rule: a thread
// writes its slots for round r + 1 only after round r's release, when the
// owner has read them; what the owner hands the others travels in the
// release itself (payload), never in the owner's slot, which it may reuse as
// soon as it returns.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <typeinfo>

#include "backoff.hpp"

namespace ep::detail {

class LocalTeam {
 public:
  explicit LocalTeam(int size);

  [[nodiscard]] int size() const noexcept { return size_; }

  /// Returns when all `size()` threads have arrived. Waits with backoff,
  /// running the idle hook between polls. The last thread to arrive leaves
  /// at once and releases the others (see the file comment).
  void barrier();

  /// Teams of up to this many threads count their arrivals on one line;
  /// larger ones on a tree of kArrivalFanIn-wide counters.
  static constexpr int kFlatArrivals = 4;
  static constexpr int kArrivalFanIn = 4;
  /// Levels of the arrival tree (1: one line).
  [[nodiscard]] int arrival_levels() const noexcept { return arrival_levels_; }

  /// Work for waiting threads: routing incoming point-to-point messages, so
  /// that a receive posted before a collective still lets its sender finish
  /// (MPI requires that progress). Set once, before the team is used.
  void set_idle(std::function<void()> idle) { idle_ = std::move(idle); }
  /// Called by a waiting thread once per poll, with the Backoff it waits
  /// with: runs the idle work on every kIdleInterval-th poll, so a short wait
  /// runs none. Routing on every poll, from the first, made a collective's
  /// MPI wait much slower than MPI's own: ep_collectives, 4 processes x 1
  /// thread on 2 cores, alltoall of 8-256 B took 21-36 us against 12-15 us
  /// for plain MPI in the same runs, and 13-14 us with the routing taken out
  /// (each drain is an MPI_Improbe on the point-to-point communicator, a
  /// second pass through MPI's progress engine per poll). A sender waiting
  /// on a receiver that sits in a collective still gets its progress within
  /// kIdleInterval polls.
  void idle(const Backoff& backoff) const {
    if (idle_ && backoff.polls() % kIdleInterval == kIdleInterval - 1) idle_();
  }
  static constexpr long kIdleInterval = 16;

  /// Publishes `pointer` for thread `thread`; readable by all after the next
  /// barrier. For raw data (a buffer); an object goes through share().
  void publish(int thread, const void* pointer) {
    slots_[thread].pointer.store(pointer, std::memory_order_relaxed);
    slots_[thread].pointer_type.store(nullptr, std::memory_order_relaxed);
  }
  /// What `thread` published before the last barrier.
  [[nodiscard]] const void* published(int thread) const {
    return slots_[thread].pointer.load(std::memory_order_relaxed);
  }

  /// A second pointer per thread (a scratch buffer, say), same rules as publish().
  void publish_aux(int thread, void* pointer) {
    slots_[thread].aux.store(pointer, std::memory_order_relaxed);
    slots_[thread].aux_type.store(nullptr, std::memory_order_relaxed);
  }
  [[nodiscard]] void* published_aux(int thread) const {
    return slots_[thread].aux.load(std::memory_order_relaxed);
  }

  /// Typed slots: the same two pointers holding an object of a known type.
  /// share() publishes `object` for the others to read (shared<T>), share_aux()
  /// an object (or null) the others may also write (shared_aux<T>). A slot
  /// remembers the type it holds and the readers check it, so that reading
  /// it as another type (a bug of the library) stops the process with both
  /// type names instead of reading a wrong object. Same visibility rules as
  /// publish().
  template <class T>
  void share(int thread, const T& object) {
    slots_[thread].pointer.store(&object, std::memory_order_relaxed);
    slots_[thread].pointer_type.store(&typeid(T), std::memory_order_relaxed);
  }
  template <class T>
  [[nodiscard]] const T& shared(int thread) const {
    check_type(slots_[thread].pointer_type.load(std::memory_order_relaxed), typeid(T));
    return *static_cast<const T*>(published(thread));
  }
  template <class T>
  void share_aux(int thread, T* object) {
    slots_[thread].aux.store(object, std::memory_order_relaxed);
    slots_[thread].aux_type.store(&typeid(T), std::memory_order_relaxed);
  }
  template <class T>
  [[nodiscard]] T* shared_aux(int thread) const {
    check_type(slots_[thread].aux_type.load(std::memory_order_relaxed), typeid(T));
    return static_cast<T*>(published_aux(thread));
  }

  /// How a gather-release round ended, as the waiting threads see it.
  struct Release {
    bool failed = false;            ///< the owner's work threw (it rethrows its own error)
    const void* payload = nullptr;  ///< what the owner handed on
  };

  /// Gather-release round, any thread but the owner: everything this thread
  /// published is visible to the owner once it returns from await_arrivals.
  /// Then call wait_release. Runs no idle work.
  void arrive(int thread);
  /// Gather-release round, the owner: opens its round (no waiting).
  void open_round(int thread);
  /// Gather-release round, the owner, after open_round: returns when every
  /// other thread of the team has arrived in this round, routing (idle)
  /// while it waits.
  void await_arrivals(int thread);
  /// Gather-release round, the owner: ends the round (after waiting for the
  /// arrivals, when await_arrivals was not called), handing `payload` and
  /// the outcome to the waiting threads. Everything the owner wrote before
  /// (into their buffers too) is visible to them when wait_release returns.
  void release(int thread, bool failed, const void* payload = nullptr);
  /// Gather-release round, any thread but the owner, after arrive: waits
  /// for the owner's release. Runs no idle work: the owner drains for the
  /// process while it waits (await_arrivals, wait_mpi), and followers that
  /// drained as well only fought it for the mailbox locks (the 2x2 barrier
  /// took twice as long).
  Release wait_release(int thread);

  /// The work of a delegated round (delegated_round): run(context, team,
  /// thread) on the thread that runs it; an exception it throws is kept in
  /// `error` for the owner.
  struct RoundWork {
    void (*run)(void* context, LocalTeam& team, int thread) = nullptr;
    void* context = nullptr;
    std::exception_ptr error;
  };
  /// A gather-release round whose work may run on any thread (no MPI, no
  /// routing, nothing tied to the owner's thread): every thread arrives,
  /// the owner passing `work` (the others null), and the last arriver runs
  /// the owner's work and releases the others. Nobody waits for a thread
  /// that is already in: one arrive-and-depart round, where the owner
  /// running the work itself is two line hand-offs in a row (the others'
  /// arrival, then its release). Returns the outcome (failed: the work
  /// threw; the owner finds the error in its RoundWork). Runs no idle work.
  Release delegated_round(int thread, RoundWork* work);

  /// One-way broadcasts (bcast on a communicator within one process): the
  /// root publishes and leaves, the others copy when they come, as a
  /// broadcast through MPI's shared memory does, where a gather-release
  /// round would make the root wait for every thread to arrive first.
  /// Broadcasts are numbered per thread (every thread takes part in each,
  /// in the same order), and each thread counts the broadcasts it has
  /// finished (broadcast_done). A broadcast of up to kStagedBroadcastBytes
  /// travels through one of kBroadcastBuffers staging buffers of the team
  /// in turn (so the root may leave at once; it waits only when the
  /// broadcast that used the buffer last is still being read); a larger one
  /// is read from the root's own buffer, and the root waits until every
  /// thread has read it. Four buffers, not two: with two, a root of
  /// back-to-back broadcasts waited for the readers of the one before last
  /// on nearly every call (0.42 against 0.24 us per 64-byte bcast at 1 x 2,
  /// 0.30 against 0.18 at 8 bytes; eight measured no faster than four).
  /// Each buffer starts with one line holding the broadcast's number, its
  /// description and the first kBroadcastLineBytes of its staging, so a
  /// small broadcast reaches a reader in one line hand-off.
  static constexpr std::size_t kStagedBroadcastBytes = 8192;
  static constexpr std::size_t kBroadcastLineBytes = 32;
  static constexpr std::uint64_t kBroadcastBuffers = 4;
  struct Broadcast {
    const void* source = nullptr;  // staging bytes, or the root's TypedBuffer
    std::size_t bytes = 0;
    bool staged = false;
    bool failed = false;  // the root could not stage its data
  };
  /// The root: the staging buffer of its next broadcast, once every thread
  /// has finished the broadcast that used it last.
  std::byte* broadcast_staging(int thread);
  /// The root: publishes its next broadcast (a staged one after
  /// broadcast_staging) and counts it finished for itself. A broadcast that
  /// is not staged must then be followed by broadcast_await_readers.
  void broadcast_publish(int thread, const Broadcast& broadcast);
  /// The root of a broadcast that is not staged: returns once every other
  /// thread has finished it (the root's buffer is read until then).
  void broadcast_await_readers(int thread);
  /// Any thread but the root: waits for the root's publication of this
  /// thread's next broadcast. Call broadcast_done once its source is read.
  Broadcast broadcast_wait(int thread);
  void broadcast_done(int thread);

  /// Exchange rounds (small collectives on a communicator within one
  /// process): every thread copies what the others need into a staging
  /// buffer of its own, publishes it with one store and waits until every
  /// other thread has published too; then each reads what it needs from the
  /// others' staging, and nobody waits for the readers. One synchronisation
  /// whose data travels with it, where a gather-release round is two in a
  /// row (the arrivals, then the owner's release) and makes the owner do
  /// the work alone. Rounds are numbered per thread (every thread takes
  /// part in each, in the same order) and alternate between two halves of
  /// each thread's staging: a thread writes half r % 2 for round r only
  /// after every other thread has published round r - 1, which each does
  /// after its last read of round r - 2, the last round that used that half.
  /// So every thread must wait for all the others in every round
  /// (exchange_await_all), even one that reads nothing.
  static constexpr std::size_t kExchangeBytes = std::size_t{16} * 1024;
  /// This thread's staging for its next exchange round (kExchangeBytes,
  /// aligned for any type), allocated on first use.
  std::byte* exchange_staging(int thread);
  /// Publishes this thread's staging for its next round. Work that needs
  /// nothing from the others (a thread's copy to itself) may run between
  /// this and exchange_await_all, while the others publish.
  void exchange_publish(int thread);
  /// Returns once every other thread has published the round this thread
  /// last published. Only local thread 0 routes while it waits: it keeps the
  /// process's traffic moving, and the others draining too would only fight
  /// it for the mailbox locks (see wait_release).
  void exchange_await_all(int thread);
  /// Exchange rounds that leave data in place: a thread whose data stays in
  /// its own buffer (too large to stage) says so in its staging, every
  /// thread that reads such data calls exchange_read_done once it has read
  /// it, and the owner of the buffer calls exchange_await_readers before
  /// its buffer may change (before it returns to its caller). Only the
  /// owners wait, and only for their readers' counters: no barrier, and a
  /// thread whose data was all staged leaves at once.
  void exchange_read_done(int thread);
  /// Returns once every other thread has called exchange_read_done for the
  /// round this thread last waited for.
  void exchange_await_readers(int thread);
  /// What `peer` staged for the round this thread last waited for.
  [[nodiscard]] const std::byte* exchanged(int thread, int peer) const {
    return slots_[peer].exchange_staging.get() + (slots_[thread].exchanges % 2) * kExchangeBytes;
  }

  /// Line exchanges (small reductions on a communicator within one process):
  /// an exchange round whose data travels on the line that announces it.
  /// Each thread has two 128-byte halves of its own (the pair of lines the
  /// adjacent-line prefetcher moves together, so no other thread's half
  /// shares them); round r uses half r % 2, whose first 16 bytes hold the
  /// number of the last round published in it and whose other
  /// kLineExchangeBytes hold that round's data. A reader waits for that
  /// number and reads the data with the same line transfer: one hand-off
  /// per peer, where exchange rounds (above) move a counter line and the
  /// staging apart. The halves' rule is the exchange rounds' one: a thread
  /// writes half r % 2 for round r only after every other thread has
  /// published round r - 1, which each does after its last read of round
  /// r - 2; so every thread calls line_await_all in every round.
  static constexpr std::size_t kLineExchangeBytes = 112;
  /// This thread's half for its next line round (kLineExchangeBytes,
  /// aligned to 16 bytes).
  [[nodiscard]] std::byte* line_staging(int thread);
  /// Publishes the half line_staging returned (release).
  void line_publish(int thread);
  /// Returns once every other thread has published the round this thread
  /// published last (acquire). Local thread 0 routes while it waits.
  void line_await_all(int thread);
  /// What `peer` published in the round this thread last waited for.
  [[nodiscard]] const std::byte* line_data(int thread, int peer) const {
    return line_halves_[half_index(peer, slots_[thread].line_rounds)].data;
  }
  /// The threads' data of one round lie this far apart: line_data(thread,
  /// peer) is line_data(thread, 0) + peer * kLineDataStride, so a fold can
  /// walk them without a list of pointers.
  static constexpr std::size_t kLineDataStride = 256;

  /// A value per thread (counts, flags), same visibility rules as publish().
  void set_value(int thread, std::int64_t value) {
    slots_[thread].value.store(value, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t value(int thread) const {
    return slots_[thread].value.load(std::memory_order_relaxed);
  }

 private:
  // Aborts with both type names unless the slot holds `wanted`.
  static void check_type(const std::type_info* held, const std::type_info& wanted) {
    if (held == &wanted || (held != nullptr && *held == wanted)) return;
    slot_type_mismatch(held, wanted);
  }
  [[noreturn]] static void slot_type_mismatch(const std::type_info* held,
                                              const std::type_info& wanted);

  struct alignas(64) Slot {
    std::atomic<const void*> pointer{nullptr};
    std::atomic<void*> aux{nullptr};
    // The types share()/share_aux() put there (null: raw data).
    std::atomic<const std::type_info*> pointer_type{nullptr};
    std::atomic<const std::type_info*> aux_type{nullptr};
    std::atomic<std::int64_t> value{0};
    /// The gather-release round this thread is in (owner mode: from arrive
    /// or open_round until wait_release or release); only it touches this.
    std::uint64_t rounds = 0;
    /// The broadcasts this thread has finished (written by it, read by the
    /// roots), and those it has started (only this thread touches it).
    std::atomic<std::uint64_t> broadcasts_done{0};
    std::uint64_t broadcasts = 0;
    /// The exchange rounds this thread has published (written by it, read
    /// by the others), those it has taken part in (only this thread touches
    /// it), and its two halves of staging (allocated by this thread before
    /// its first publication).
    std::atomic<std::uint64_t> exchanges_published{0};
    std::uint64_t exchanges = 0;
    /// The last exchange round in which this thread finished reading the
    /// data others left in place (written by it, read by those owners).
    std::atomic<std::uint64_t> exchanges_read{0};
    std::unique_ptr<std::byte[]> exchange_staging;
    /// The line rounds this thread has published (only it touches this;
    /// the others read the number in its halves).
    std::uint64_t line_rounds = 0;
  };
  // A half of a thread's line-exchange staging (see line_staging).
  struct alignas(128) LineHalf {
    std::atomic<std::uint64_t> round{0};  // the last round published here
    alignas(16) std::byte data[kLineExchangeBytes];
  };
  static_assert(sizeof(LineHalf) == 128, "a half is one pair of lines");
  static_assert(kLineDataStride == 2 * sizeof(LineHalf), "a thread's two halves lie side by side");
  [[nodiscard]] static std::size_t half_index(int thread, std::uint64_t round) {
    return static_cast<std::size_t>(thread) * 2 + static_cast<std::size_t>(round % 2);
  }
  // Waits, routing (idle) unless `route` is false, until `counter` of every
  // thread but `thread` reaches `number` (acquire).
  void await_others(int thread, std::atomic<std::uint64_t> Slot::*counter, std::uint64_t number,
                    bool route = true);

  // One counter of the arrival tree. Counts only grow: in round r a node
  // has seen every arrival of the round when its count reaches r * fan_in
  // (every thread takes part in every round, and none starts round r + 1
  // before round r is released). The root (nodes_[0]) also holds the
  // release of the last round, so that in a flat team arrivals and release
  // share its one line.
  struct alignas(64) ArrivalNode {
    std::atomic<std::uint64_t> count{0};
    // Root only: the last released round, times two, plus one when its work
    // failed; the payload of that round and, for a delegated round, the
    // owner's work (written before the owner's arrival).
    std::atomic<std::uint64_t> released{0};
    std::atomic<const void*> payload{nullptr};
    std::atomic<RoundWork*> work{nullptr};
    std::uint64_t fan_in = 0;
    int parent = -1;  // -1: the root
  };
  // Adds `thread`'s arrival in `round`; true when it completed the round
  // (the last arriver of the root).
  bool arrive_in_round(int thread, std::uint64_t round);
  // Releases `round` (its last arriver, or the owner once all are in).
  void release_round(std::uint64_t round, bool failed, const void* payload);
  // Waits until `round` is released; routes (idle) when `route`.
  Release await_release(std::uint64_t round, bool route);
  // The round a thread enters now.
  [[nodiscard]] std::uint64_t next_round() const;
  // barrier()'s arrival, at a leaf position taken by ticket in a tree.
  bool arrive_anywhere(std::uint64_t round);

  int size_;
  std::unique_ptr<Slot[]> slots_;
  std::function<void()> idle_;
  std::unique_ptr<ArrivalNode[]> arrival_nodes_;  // [0] the root
  std::unique_ptr<int[]> arrival_leaf_;           // per thread: its first node
  int arrival_levels_ = 1;
  alignas(64) std::atomic<std::uint64_t> tickets_{0};  // barrier()'s leaf positions in a tree
  // One-way broadcasts: broadcast b uses buffer b % kBroadcastBuffers,
  // whose first line holds
  // the number of the last broadcast published in it, what that broadcast
  // publishes (written before the number) and the first bytes of its
  // staging, which goes on in the lines after it.
  struct alignas(64) BroadcastBuffer {
    std::atomic<std::uint64_t> published{0};
    Broadcast broadcast;
    alignas(16) std::byte staging[kStagedBroadcastBytes];
  };
  static_assert(offsetof(BroadcastBuffer, staging) + kBroadcastLineBytes == 64,
                "a buffer's description and its first staged bytes share one line");
  std::unique_ptr<BroadcastBuffer[]> broadcast_buffers_;  // kBroadcastBuffers, when size() > 1
  std::unique_ptr<LineHalf[]> line_halves_;               // 2 per thread
};

}  // namespace ep::detail
