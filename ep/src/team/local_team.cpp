#include "team/local_team.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backoff.hpp"

namespace ep::detail {

namespace {

// The nodes of each level of an arrival tree over `threads` threads: one
// per kArrivalFanIn nodes (or threads) of the level below.
int groups_of(int members, int fan_in) { return (members + fan_in - 1) / fan_in; }

}  // namespace

LocalTeam::LocalTeam(int size)
    : size_(size),
      slots_(new Slot[static_cast<std::size_t>(size)]),
      arrival_leaf_(new int[static_cast<std::size_t>(size)]),
      broadcast_buffers_(size > 1 ? std::make_unique<BroadcastBuffer[]>(kBroadcastBuffers)
                                  : nullptr),
      line_halves_(std::make_unique<LineHalf[]>(2 * static_cast<std::size_t>(size))) {
  // A flat team: one node, the root, counting every thread. A tree: levels
  // of groups of kArrivalFanIn, numbered from the root down (the root is
  // node 0, so that a flat team and a tree release through the same node).
  std::vector<int> level_sizes;  // nodes per level, leaves first
  if (size <= kFlatArrivals) {
    level_sizes.push_back(1);
  } else {
    for (int members = size; members > 1;) {
      members = groups_of(members, kArrivalFanIn);
      level_sizes.push_back(members);
    }
  }
  arrival_levels_ = static_cast<int>(level_sizes.size());
  std::vector<int> first_of_level(level_sizes.size());  // leaves first
  int nodes = 0;
  for (std::size_t level = level_sizes.size(); level-- > 0;) {
    first_of_level[level] = nodes;
    nodes += level_sizes[level];
  }
  arrival_nodes_ = std::make_unique<ArrivalNode[]>(static_cast<std::size_t>(nodes));
  const int fan_in = size <= kFlatArrivals ? std::max(size, 1) : kArrivalFanIn;
  // Members of level `level`'s node i: threads (level 0) or nodes of the
  // level below, fan_in of them per node, the last node taking the rest.
  int members = size;
  for (std::size_t level = 0; level < level_sizes.size(); ++level) {
    for (int i = 0; i < level_sizes[level]; ++i) {
      const int index = first_of_level[level] + i;
      ArrivalNode& node = arrival_nodes_[static_cast<std::size_t>(index)];
      node.fan_in = static_cast<std::uint64_t>(std::min(fan_in, members - i * fan_in));
      node.parent = level + 1 < level_sizes.size() ? first_of_level[level + 1] + i / fan_in : -1;
    }
    members = level_sizes[level];
  }
  for (int t = 0; t < size; ++t) arrival_leaf_[t] = first_of_level[0] + t / fan_in;
}

void LocalTeam::slot_type_mismatch(const std::type_info* held, const std::type_info& wanted) {
  // A library bug, not a user error: no thread may go on with a wrong object.
  std::fprintf(stderr, "ep: internal error: a team slot holding %s was read as %s\n",
               held != nullptr ? held->name() : "raw data", wanted.name());
  std::abort();
}

// Arrivals climb the tree: a thread's increment that completes its node's
// count for the round makes it that node's last arriver, which goes on to
// the parent. The acq_rel increments chain every arrival's writes (published
// slots, buffers) to the last arriver at the root, and its release store to
// every thread that waits for the release.
bool LocalTeam::arrive_in_round(int thread, std::uint64_t round) {
  int index = arrival_leaf_[thread];
  while (true) {
    ArrivalNode& node = arrival_nodes_[static_cast<std::size_t>(index)];
    const std::uint64_t count = node.count.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (count != round * node.fan_in) return false;
    if (node.parent < 0) return true;
    index = node.parent;
  }
}

void LocalTeam::release_round(std::uint64_t round, bool failed, const void* payload) {
  ArrivalNode& root = arrival_nodes_[0];
  root.payload.store(payload, std::memory_order_relaxed);
  root.released.store(round * 2 + (failed ? 1 : 0), std::memory_order_release);
  notify_waiters();  // the others may be parked waiting for the release
}

LocalTeam::Release LocalTeam::await_release(std::uint64_t round, bool route) {
  const ArrivalNode& root = arrival_nodes_[0];
  Backoff backoff;
  std::uint64_t word = root.released.load(std::memory_order_acquire);
  while (word / 2 < round) {
    if (route) idle(backoff);
    backoff.pause();
    word = root.released.load(std::memory_order_acquire);
  }
  return {(word & 1) != 0, root.payload.load(std::memory_order_relaxed)};
}

// The round a thread enters: every thread enters round r only after it has
// seen round r - 1 released, and round r is released only after every thread
// has arrived in it, so the root's release word names r - 1 until then.
std::uint64_t LocalTeam::next_round() const {
  return arrival_nodes_[0].released.load(std::memory_order_acquire) / 2 + 1;
}

// A barrier does not name its thread. In a flat team that does not matter
// (one counter); in a tree a thread takes a ticket for a leaf position: the
// size() tickets of one barrier are consecutive (nobody takes one for the
// next barrier before this one is released), so they name every position
// once.
bool LocalTeam::arrive_anywhere(std::uint64_t round) {
  if (arrival_levels_ == 1) return arrive_in_round(0, round);
  const std::uint64_t ticket = tickets_.fetch_add(1, std::memory_order_relaxed);
  return arrive_in_round(static_cast<int>(ticket % static_cast<std::uint64_t>(size_)), round);
}

void LocalTeam::barrier() {
  if (size_ == 1) return;
  const std::uint64_t round = next_round();
  if (arrive_anywhere(round)) {
    release_round(round, false, nullptr);
    return;
  }
  static_cast<void>(await_release(round, true));
}

// Gather-release rounds (owner mode): the owner counts as an arrival too
// (open_round), waits until the root's count is complete and releases.
// release() waits for the arrivals itself when its owner has not (work that
// failed before it needed them): released early, round r + 1 could start
// and overwrite round r's release word before a slow thread had read it.
void LocalTeam::arrive(int thread) {
  Slot& slot = slots_[thread];
  slot.rounds = next_round();
  static_cast<void>(arrive_in_round(thread, slot.rounds));
  notify_waiters();  // the round's owner may be parked in await_arrivals
}

void LocalTeam::open_round(int thread) {
  Slot& slot = slots_[thread];
  slot.rounds = next_round();
  static_cast<void>(arrive_in_round(thread, slot.rounds));
}

void LocalTeam::await_arrivals(int thread) {
  const ArrivalNode& root = arrival_nodes_[0];
  const std::uint64_t complete = slots_[thread].rounds * root.fan_in;
  Backoff backoff;
  while (root.count.load(std::memory_order_acquire) < complete) {
    idle(backoff);
    backoff.pause();
  }
}

void LocalTeam::release(int thread, bool failed, const void* payload) {
  await_arrivals(thread);
  release_round(slots_[thread].rounds, failed, payload);
}

LocalTeam::Release LocalTeam::wait_release(int thread) {
  // No idle() here: see the header. The owner keeps the process's traffic
  // moving while the round is open.
  return await_release(slots_[thread].rounds, false);
}

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

LocalTeam::Release LocalTeam::delegated_round(int thread, RoundWork* work) {
  const std::uint64_t round = next_round();
  ArrivalNode& root = arrival_nodes_[0];
  // Before the arrival, whose increment carries it to the last arriver.
  if (work != nullptr) root.work.store(work, std::memory_order_relaxed);
  // Only the last arriver acts on the count, and it never waits for it: a
  // plain arrival has nobody to wake.
  if (!arrive_in_round(thread, round)) return await_release(round, false);
  RoundWork* owners = root.work.load(std::memory_order_relaxed);
  bool failed = false;
  try {
    owners->run(owners->context, *this, thread);
  } catch (...) {
    owners->error = std::current_exception();
    failed = true;
  }
  release_round(round, failed, nullptr);
  return {failed, nullptr};
}

// One-way broadcasts. Broadcast b uses buffer b % N (N = kBroadcastBuffers);
// its root writes it only once every thread has finished broadcast b - N,
// which used it last (a thread finishes a broadcast after its last read of
// it: release on broadcasts_done, acquire here). A thread waiting for
// broadcast b finds its buffer's number at b - N until the root publishes
// b, never further: the root of b + N waits for it.
std::byte* LocalTeam::broadcast_staging(int thread) {
  const std::uint64_t number = slots_[thread].broadcasts + 1;
  if (number > kBroadcastBuffers) {
    await_others(thread, &Slot::broadcasts_done, number - kBroadcastBuffers);
  }
  return broadcast_buffers_[number % kBroadcastBuffers].staging;
}

void LocalTeam::broadcast_publish(int thread, const Broadcast& broadcast) {
  Slot& slot = slots_[thread];
  const std::uint64_t number = ++slot.broadcasts;
  if (!broadcast.staged && number > kBroadcastBuffers) {
    await_others(thread, &Slot::broadcasts_done, number - kBroadcastBuffers);
  }
  BroadcastBuffer& buffer = broadcast_buffers_[number % kBroadcastBuffers];
  buffer.broadcast = broadcast;
  buffer.published.store(number, std::memory_order_release);
  slot.broadcasts_done.store(number, std::memory_order_release);
  notify_waiters();  // the others may be parked in broadcast_wait
}

void LocalTeam::broadcast_await_readers(int thread) {
  await_others(thread, &Slot::broadcasts_done, slots_[thread].broadcasts);
}

LocalTeam::Broadcast LocalTeam::broadcast_wait(int thread) {
  const std::uint64_t number = ++slots_[thread].broadcasts;
  const BroadcastBuffer& buffer = broadcast_buffers_[number % kBroadcastBuffers];
  Backoff backoff;
  while (buffer.published.load(std::memory_order_acquire) < number) {
    idle(backoff);
    backoff.pause();
  }
  return buffer.broadcast;
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

// Line exchanges: the header says why two halves and a wait for every
// thread are enough. The data is written before the release store of the
// round's number on its own line, and read only after an acquire load of it.
std::byte* LocalTeam::line_staging(int thread) {
  return line_halves_[half_index(thread, slots_[thread].line_rounds + 1)].data;
}

void LocalTeam::line_publish(int thread) {
  Slot& slot = slots_[thread];
  const std::uint64_t round = ++slot.line_rounds;
  line_halves_[half_index(thread, round)].round.store(round, std::memory_order_release);
  notify_waiters();  // others may be parked waiting for this round
}

void LocalTeam::line_await_all(int thread) {
  const std::uint64_t round = slots_[thread].line_rounds;
  Backoff backoff;
  for (int t = 0; t < size_; ++t) {
    if (t == thread) continue;
    const std::atomic<std::uint64_t>& published = line_halves_[half_index(t, round)].round;
    while (published.load(std::memory_order_acquire) < round) {
      if (thread == 0) idle(backoff);
      backoff.pause();
    }
  }
}

}  // namespace ep::detail
