#include "team/local_team.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "backoff.hpp"

namespace ep::detail {

LocalTeam::LocalTeam(int size)
    : size_(size),
      slots_(new Slot[static_cast<std::size_t>(size)]),
      broadcast_staging_(
          size > 1 ? std::make_unique_for_overwrite<std::byte[]>(2 * kStagedBroadcastBytes)
                   : nullptr) {}

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

void LocalTeam::await_others(int thread, std::atomic<std::uint64_t> Slot::*counter,
                             std::uint64_t number, bool route) {
  Backoff backoff;
  for (int t = 0; t < size_; ++t) {
    if (t == thread) continue;
    while ((slots_[t].*counter).load(std::memory_order_acquire) < number) {
      if (route) idle(backoff);
      backoff.pause();
    }
  }
}

void LocalTeam::await_arrivals(int thread) {
  await_others(thread, &Slot::arrived_round, slots_[thread].rounds);
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

// One-way broadcasts. Broadcast b uses half b % 2 of broadcast_of_ and of
// the staging; its root writes them only once every thread has finished
// broadcast b - 2, which used them last (a thread finishes a broadcast after
// its last read of it: release on broadcasts_done, acquire here). A thread
// waiting for broadcast b may find broadcast_ at b + 1 already, never
// further: the root of b + 2 waits for it.
std::byte* LocalTeam::broadcast_staging(int thread) {
  const std::uint64_t number = slots_[thread].broadcasts + 1;
  if (number > 2) await_others(thread, &Slot::broadcasts_done, number - 2);
  return broadcast_staging_.get() + (number % 2) * kStagedBroadcastBytes;
}

void LocalTeam::broadcast_publish(int thread, const Broadcast& broadcast) {
  Slot& slot = slots_[thread];
  const std::uint64_t number = ++slot.broadcasts;
  if (!broadcast.staged && number > 2) await_others(thread, &Slot::broadcasts_done, number - 2);
  broadcast_of_[number % 2] = broadcast;
  broadcast_.store(number, std::memory_order_release);
  slot.broadcasts_done.store(number, std::memory_order_release);
  notify_waiters();  // the others may be parked in broadcast_wait
}

void LocalTeam::broadcast_await_readers(int thread) {
  await_others(thread, &Slot::broadcasts_done, slots_[thread].broadcasts);
}

LocalTeam::Broadcast LocalTeam::broadcast_wait(int thread) {
  const std::uint64_t number = ++slots_[thread].broadcasts;
  Backoff backoff;
  while (broadcast_.load(std::memory_order_acquire) < number) {
    idle(backoff);
    backoff.pause();
  }
  return broadcast_of_[number % 2];
}

void LocalTeam::broadcast_done(int thread) {
  Slot& slot = slots_[thread];
  slot.broadcasts_done.store(slot.broadcasts, std::memory_order_release);
  notify_waiters();  // a root may be parked waiting for its readers
}

}  // namespace ep::detail

namespace ep::detail {

// Exchange rounds: see the header for why two halves and a wait for every
// thread are enough. The staging pointer is written before the thread's
// first publication (release), so a reader that has seen that publication
// (acquire) sees the pointer too.
std::byte* LocalTeam::exchange_staging(int thread) {
  Slot& slot = slots_[thread];
  if (!slot.exchange_staging) {
    slot.exchange_staging = std::make_unique_for_overwrite<std::byte[]>(2 * kExchangeBytes);
  }
  return slot.exchange_staging.get() + ((slot.exchanges + 1) % 2) * kExchangeBytes;
}

void LocalTeam::exchange_publish(int thread) {
  Slot& slot = slots_[thread];
  slot.exchanges_published.store(++slot.exchanges, std::memory_order_release);
  notify_waiters();  // others may be parked waiting for this round
}

void LocalTeam::exchange_await_all(int thread) {
  await_others(thread, &Slot::exchanges_published, slots_[thread].exchanges, thread == 0);
}

// A reader marks the round after its last read of the owners' buffers
// (release); an owner that sees every mark (acquire) may change its buffer.
// Counters only grow, and a thread marks round r only after publishing it,
// so a mark never stands for a round the owner has not reached.
void LocalTeam::exchange_read_done(int thread) {
  Slot& slot = slots_[thread];
  slot.exchanges_read.store(slot.exchanges, std::memory_order_release);
  notify_waiters();  // an owner may be parked waiting for its readers
}

void LocalTeam::exchange_await_readers(int thread) {
  await_others(thread, &Slot::exchanges_read, slots_[thread].exchanges, thread == 0);
}

}  // namespace ep::detail
