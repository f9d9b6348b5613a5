#include "team/local_team.hpp"

#include "backoff.hpp"

namespace ep::detail {

LocalTeam::LocalTeam(int size) : size_(size), slots_(new Slot[static_cast<std::size_t>(size)]) {}

void LocalTeam::barrier() {
  if (size_ == 1) return;
  // Generation-counting barrier: the last thread to arrive resets the count
  // and opens the next generation. The acq_rel on arrival and the release on
  // the generation make every write before the barrier (published pointers,
  // buffers) visible to every thread after it.
  const std::uint64_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == size_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.store(generation + 1, std::memory_order_release);
    return;
  }
  Backoff backoff;
  while (generation_.load(std::memory_order_acquire) == generation) {
    idle();
    backoff.pause();
  }
}

}  // namespace ep::detail
