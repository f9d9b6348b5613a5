// The meeting point of a plan's endpoints within one process, for the
// zero-copy path of the plans (HaloPlan::bind, TransposePlan::bind): threads
// of one process share their address space, so a rank copies a peer's cells
// straight out of the peer's array instead of receiving a packed message.
//
// Each local endpoint of the plan owns one slot: the addresses of its bound
// arrays and two counters, both only ever raised by the slot's owner:
//   arrived   "my arrays hold this call's data (stage s) and may be read":
//             raised before the owner waits for anything, so that no rank
//             waits on another that waits on it;
//   departed  "I have finished reading every peer's arrays for this call":
//             the owner of an array waits for the departed count of every
//             local peer before it returns, so its caller may overwrite the
//             array at once (the next step's computation).
// A call is then one arrive/depart round: a reader reads an owner's cells
// only after the owner's arrival (release/acquire), and the owner writes
// them again only after every reader's departure. The counters count calls
// (and stages) of one plan, which every rank makes in the same order, so a
// counter at or past a value means that call is ready; no reset is needed.
//
// Thread safety: a slot's addresses are written by its owner only while no
// peer reads them (between a call's departure round and the next arrival);
// the counters are atomics. How a wait waits is the backend's (BoardWaits):
// the endpoint backend's park on oversubscribed cores like every wait of the
// endpoint layer (collectives/ep_comm.hpp), so this file needs no backend.
//
// Which ranks share a process is the backend's too: ProcessSharing<C> says
// it. Its primary template is the one-rank-per-process backends' (MpiComm,
// FunneledComm: no board); ep_comm.hpp specialises it for EpComm.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "collectives/communicator.hpp"

namespace collectives::detail {

/// How the board's waits wait, given by the backend that makes the board.
struct BoardWaits {
  /// Called after a counter is raised (wakes parked waiters).
  void (*notify)() = nullptr;
  /// Returns once `counter` is at `value` or past it (acquire).
  void (*wait_until)(const std::atomic<std::uint64_t>& counter, std::uint64_t value) = nullptr;
};

class ProcessBoard {
 public:
  /// One slot per local endpoint (`threads` of them).
  ProcessBoard(int threads, BoardWaits waits)
      : slots_(static_cast<std::size_t>(threads)), waits_(waits) {}

  /// Addresses of the owner's bound arrays; see the file comment for when
  /// they may be written and read.
  [[nodiscard]] std::vector<std::byte*>& addresses(int thread) {
    return slots_[static_cast<std::size_t>(thread)].addresses;
  }

  /// Where the owner stages the narrow rows it packs for its local readers:
  /// one buffer per stage, and in it the start of each reader's block (by
  /// the reader's thread). Held by the board, so that they outlive the
  /// owner's plan while a reader may still copy out of them. Resized and
  /// re-tabled under the rule of the addresses; filled by the owner only
  /// once every reader has departed from the previous call.
  [[nodiscard]] std::vector<std::vector<std::byte>>& staging(int thread) {
    return slots_[static_cast<std::size_t>(thread)].staging;
  }
  [[nodiscard]] std::vector<std::vector<std::size_t>>& staging_blocks(int thread) {
    return slots_[static_cast<std::size_t>(thread)].staging_blocks;
  }
  [[nodiscard]] int threads() const noexcept { return static_cast<int>(slots_.size()); }

  /// Publishes `value` as `thread`'s arrival (a release: everything the
  /// thread wrote before is visible to whoever sees the value).
  void arrive(int thread, std::uint64_t value) { raise(slots_[index(thread)].arrived, value); }
  void depart(int thread, std::uint64_t value) { raise(slots_[index(thread)].departed, value); }
  /// Waits until `thread` has arrived (departed) at `value` or later.
  void wait_arrived(int thread, std::uint64_t value) {
    wait_for(slots_[index(thread)].arrived, value);
  }
  void wait_departed(int thread, std::uint64_t value) {
    wait_for(slots_[index(thread)].departed, value);
  }

 private:
  // One cache line per counter: arrivals and departures of different
  // threads never share a line.
  struct alignas(64) Counter {
    std::atomic<std::uint64_t> value{0};
  };
  struct Slot {
    Counter arrived;
    Counter departed;
    std::vector<std::byte*> addresses;
    std::vector<std::vector<std::byte>> staging;
    std::vector<std::vector<std::size_t>> staging_blocks;
  };

  static std::size_t index(int thread) { return static_cast<std::size_t>(thread); }
  void raise(Counter& counter, std::uint64_t value) const {
    counter.value.store(value, std::memory_order_release);
    waits_.notify();  // a peer parked on an oversubscribed core
  }
  void wait_for(const Counter& counter, std::uint64_t value) const {
    if (counter.value.load(std::memory_order_acquire) >= value) return;
    waits_.wait_until(counter.value, value);
  }

  std::vector<Slot> slots_;
  BoardWaits waits_;
};

/// Which ranks of a communicator share the calling process, for a backend
/// with one rank per process (MpiComm, FunneledComm): only the caller, and
/// no board. A backend with several ranks per process specialises it
/// (EpComm, collectives/ep_comm.hpp) with the same three functions.
template <class C>
struct ProcessSharing {
  /// For every rank of `comm`: its thread index in the calling process when
  /// it lives there (the calling rank included), -1 otherwise. Local.
  static std::vector<int> local_threads(const C& comm) {
    std::vector<int> threads(static_cast<std::size_t>(comm.size()), -1);
    threads[static_cast<std::size_t>(comm.rank())] = 0;
    return threads;
  }
  /// This rank's thread index among the local ranks of `comm`. Local.
  static int local_thread(const C& /*comm*/) { return 0; }
  /// The board of `comm`'s ranks in this process: collective over those
  /// ranks (no message); null when a process holds one rank.
  static std::shared_ptr<ProcessBoard> board(const C& /*comm*/) { return nullptr; }
};

/// ProcessSharing<C>::local_threads, local_thread and board, by argument type.
template <Communicator C>
std::vector<int> local_threads_of(const C& comm) {
  return ProcessSharing<C>::local_threads(comm);
}
template <Communicator C>
int local_thread_of(const C& comm) {
  return ProcessSharing<C>::local_thread(comm);
}
template <Communicator C>
std::shared_ptr<ProcessBoard> make_process_board(const C& comm) {
  return ProcessSharing<C>::board(comm);
}

}  // namespace collectives::detail
