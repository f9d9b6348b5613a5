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
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

namespace ep::detail {

class LocalTeam {
 public:
  explicit LocalTeam(int size);

  [[nodiscard]] int size() const noexcept { return size_; }

  /// Returns when all `size()` threads have arrived. Waits with backoff,
  /// running the idle hook between polls.
  void barrier();

  /// Work for waiting threads: routing incoming point-to-point messages, so
  /// that a receive posted before a collective still lets its sender finish
  /// (MPI requires that progress). Set once, before the team is used.
  void set_idle(std::function<void()> idle) { idle_ = std::move(idle); }
  void idle() const {
    if (idle_) idle_();
  }

  /// Publishes `pointer` for thread `thread`; readable by all after the next barrier.
  void publish(int thread, const void* pointer) {
    slots_[thread].pointer.store(pointer, std::memory_order_relaxed);
  }
  /// What `thread` published before the last barrier.
  [[nodiscard]] const void* published(int thread) const {
    return slots_[thread].pointer.load(std::memory_order_relaxed);
  }

  /// A second pointer per thread (a scratch buffer, say), same rules as publish().
  void publish_aux(int thread, void* pointer) {
    slots_[thread].aux.store(pointer, std::memory_order_relaxed);
  }
  [[nodiscard]] void* published_aux(int thread) const {
    return slots_[thread].aux.load(std::memory_order_relaxed);
  }

  /// A value per thread (counts, flags), same visibility rules as publish().
  void set_value(int thread, std::int64_t value) {
    slots_[thread].value.store(value, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t value(int thread) const {
    return slots_[thread].value.load(std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Slot {
    std::atomic<const void*> pointer{nullptr};
    std::atomic<void*> aux{nullptr};
    std::atomic<std::int64_t> value{0};
  };

  int size_;
  std::unique_ptr<Slot[]> slots_;
  std::function<void()> idle_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<std::uint64_t> generation_{0};
};

}  // namespace ep::detail
