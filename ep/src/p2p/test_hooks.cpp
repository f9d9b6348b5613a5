// TEST ONLY hooks (see test_hooks.hpp).
#include "p2p/test_hooks.hpp"

#include <array>
#include <atomic>
#include <mutex>

#include "backoff.hpp"
#include "comm_state.hpp"
#include "ep/communicator.hpp"
#include "p2p/p2p_state.hpp"

namespace ep::detail::testing {

namespace {

// One armed count per Fault (the last enumerator names the size).
constexpr std::size_t kFaults = static_cast<std::size_t>(Fault::kExchangeStaging) + 1;
std::array<std::atomic<int>, kFaults> g_armed{};
std::atomic<int> g_max_drain_routed{0};

std::atomic<int>& armed(Fault fault) { return g_armed[static_cast<std::size_t>(fault)]; }

}  // namespace

void inject(Fault fault, int count) { armed(fault).store(count > 0 ? count : 0); }

int injections_left(Fault fault) { return armed(fault).load(); }

bool take_injection(Fault fault) noexcept {
  std::atomic<int>& left = armed(fault);
  int now = left.load(std::memory_order_relaxed);
  while (now > 0) {
    if (left.compare_exchange_weak(now, now - 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

void note_drain_routed(int messages) noexcept {
  int seen = g_max_drain_routed.load(std::memory_order_relaxed);
  while (messages > seen &&
         !g_max_drain_routed.compare_exchange_weak(seen, messages, std::memory_order_relaxed)) {
  }
}

std::size_t eager_high_water(const Communicator& comm) {
  return comm.state()->p2p().mailbox(comm.local_thread()).eager_high_water.load();
}

std::size_t eager_bytes(const Communicator& comm) {
  return comm.state()->p2p().mailbox(comm.local_thread()).eager_bytes();
}

bool source_in_header(const Communicator& comm) {
  return comm.state()->p2p().tag_layout().source_in_header;
}

void set_park_micros(int micros) {
  g_park_micros_for_tests.store(micros > 0 ? micros : 0, std::memory_order_relaxed);
}

int max_drain_routed() { return g_max_drain_routed.load(); }

void reset_max_drain_routed() { g_max_drain_routed.store(0); }

}  // namespace ep::detail::testing
