// The process's wait mode and the parking of waiters (ep/backoff.hpp).
//
// Parking is a Dekker handshake between a waiter and the threads that
// publish what it waits for:
//
//   waiter                               notifier
//   g_parked += 1; fence                 publish (its own atomics); fence
//   epoch = g_epoch                      if g_parked > 0:
//   check the condition once more          g_epoch += 1; futex wake on g_epoch
//   futex wait while g_epoch == epoch
//
// The two fences order each side's write before its read, so either the
// waiter's last check sees the publication or the notifier sees g_parked > 0
// and moves g_epoch, which the futex wait compares before it sleeps: a
// notification between the check and the sleep is not lost. Without any
// notification the sleep ends after its timeout.
#include <limits.h>
#include <time.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "backoff.hpp"
#include "common/enum_names.hpp"
#include "ep/backoff.hpp"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ep {

namespace detail {

std::atomic<int> g_wait_mode{1};  // park until create_endpoints decides
std::atomic<int> g_park_micros_for_tests{0};

namespace {

std::atomic<int> g_parked{0};
std::atomic<std::uint32_t> g_epoch{0};

}  // namespace

void set_wait_mode(WaitPolicy mode) noexcept {
  g_wait_mode.store(mode == WaitPolicy::kSpin ? 0 : 1, std::memory_order_relaxed);
}

std::uint32_t register_parked() noexcept {
  g_parked.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return g_epoch.load(std::memory_order_acquire);
}

void unregister_parked() noexcept { g_parked.fetch_sub(1, std::memory_order_relaxed); }

void park(std::uint32_t epoch, int timeout_us) noexcept {
  if (const int longer = g_park_micros_for_tests.load(std::memory_order_relaxed); longer > 0) {
    timeout_us = longer;
  }
#if defined(__linux__)
  timespec timeout{timeout_us / 1000000, static_cast<long>(timeout_us % 1000000) * 1000L};
  // Returns at once when g_epoch has moved since `epoch` was read (EAGAIN),
  // on a wake, on a signal or after the timeout: every case ends the park.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&g_epoch), FUTEX_WAIT_PRIVATE, epoch,
          &timeout, nullptr, 0);
#else
  if (g_epoch.load(std::memory_order_acquire) == epoch) {
    std::this_thread::sleep_for(std::chrono::microseconds(timeout_us));
  }
#endif
}

void wake_parked() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (g_parked.load(std::memory_order_relaxed) == 0) return;
  g_epoch.fetch_add(1, std::memory_order_release);
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&g_epoch), FUTEX_WAKE_PRIVATE, INT_MAX,
          nullptr, nullptr, 0);
#endif
}

}  // namespace detail

namespace {
constexpr auto kWaitPolicyNames = common::enum_names<WaitPolicy>(
    {{WaitPolicy::kAuto, "auto"}, {WaitPolicy::kSpin, "spin"}, {WaitPolicy::kPark, "park"}});
}  // namespace

const char* wait_policy_name(WaitPolicy policy) noexcept {
  return common::enum_name(kWaitPolicyNames, policy, "?");
}

WaitPolicy wait_mode() noexcept {
  return detail::g_wait_mode.load(std::memory_order_relaxed) == 0 ? WaitPolicy::kSpin
                                                                  : WaitPolicy::kPark;
}

}  // namespace ep

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "the futex word is the atomic's own storage");
