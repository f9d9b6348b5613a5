#include "team/local_team.hpp"

#include <cstdio>
#include <cstdlib>

#include "backoff.hpp"

namespace ep::detail {

LocalTeam::LocalTeam(int size) : size_(size), slots_(new Slot[static_cast<std::size_t>(size)]) {}

void LocalTeam::slot_type_mismatch(const std::type_info* held, const std::type_info& wanted) {
  // A library bug, not a user error: no thread may go on with a wrong object.
  std::fprintf(stderr, "ep: internal error: a team slot holding %s was read as %s\n",
               held != nullptr ? held->name() : "raw data", wanted.name());
  std::abort();
}

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
    notify_waiters();
    return;
  }
  Backoff backoff;
  while (generation_.load(std::memory_order_acquire) == generation) {
    idle(backoff);
    backoff.pause();
  }
}

// Gather-release rounds are numbered per thread: every thread of the team
// takes part in every round in the same order (the collective rule), so the
// counts agree without shared state. A round's owner can start round r + 1
// only when every other thread has arrived in it, after reading round r's
// release, so released_ and release_payload_ are never overwritten early.
// That is why release() itself waits for the arrivals when its owner has not
// (work that failed before it needed them): released early, round r + 1
// would overwrite round r's word before a slow thread had read it.
void LocalTeam::arrive(int thread) {
  Slot& slot = slots_[thread];
  slot.arrived_round.store(++slot.rounds, std::memory_order_release);
  notify_waiters();  // the round's owner may be parked in await_arrivals
}

void LocalTeam::open_round(int thread) { ++slots_[thread].rounds; }

void LocalTeam::await_arrivals(int thread) {
  const std::uint64_t round = slots_[thread].rounds;
  Backoff backoff;
  for (int t = 0; t < size_; ++t) {
    if (t == thread) continue;
    while (slots_[t].arrived_round.load(std::memory_order_acquire) < round) {
      idle(backoff);
      backoff.pause();
    }
  }
}

void LocalTeam::release(int thread, bool failed, const void* payload) {
  await_arrivals(thread);
  const std::uint64_t round = slots_[thread].rounds;
  release_payload_.store(payload, std::memory_order_relaxed);
  released_.store(round * 2 + (failed ? 1 : 0), std::memory_order_release);
  notify_waiters();
}

LocalTeam::Release LocalTeam::wait_release(int thread) {
  const std::uint64_t round = slots_[thread].rounds;
  Backoff backoff;
  std::uint64_t word = released_.load(std::memory_order_acquire);
  // No idle() here: see the header. The owner keeps the process's traffic
  // moving while the round is open.
  while (word / 2 < round) {
    backoff.pause();
    word = released_.load(std::memory_order_acquire);
  }
  return {(word & 1) != 0, release_payload_.load(std::memory_order_relaxed)};
}

}  // namespace ep::detail
