// How the endpoint layer waits: the wait policy of every wait of the layer,
// public so that code waiting beside it (the benchmarks' funneled mode, say)
// can wait the same way.
//
// Two modes, chosen per process like OMP_WAIT_POLICY (WaitPolicy below;
// EndpointOptions::wait_policy or EP_WAIT_POLICY, resolved by
// create_endpoints):
//
//   spin  for threads that have cores of their own: a waiter spins with a
//         pause instruction and never sleeps, so it sees its partner's write
//         within a cache-line transfer; it yields once every 256 polls, which
//         costs nothing on a dedicated core and lets a stray runnable thread
//         on the same core make progress.
//   park  for shared or oversubscribed cores (4 processes on 2 cores is
//         normal on small machines; there pure busy polling made an Open MPI
//         barrier 300x slower): a waiter spins a few polls, yields its core
//         on every poll for a while, then parks on a futex. Another thread of
//         the process that publishes what a waiter may wait for calls
//         notify_waiters(), which wakes parked threads at once; a parked
//         waiter also wakes after kParkMicros on its own, to poll what no
//         thread of its process can announce (MPI messages from other
//         processes). A missed notification therefore costs latency, never
//         progress.
//
//   ep::Backoff backoff;
//   while (!ready()) backoff.pause();
//
// Thread safety: one Backoff per waiting thread (it counts that thread's
// polls); notify_waiters() and wait_mode() from any thread.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>

namespace ep {

/// How this process's waits wait (see the file comment).
enum class WaitPolicy {
  kAuto,  ///< spin when the node's endpoints fit its cores, park otherwise
  kSpin,
  kPark,
};

/// "auto", "spin", "park".
const char* wait_policy_name(WaitPolicy policy) noexcept;

/// The mode this process's waits use now: kSpin or kPark (kPark until the
/// first create_endpoints). Thread-safe.
WaitPolicy wait_mode() noexcept;

namespace detail {

/// The process's mode as an int (0 spin, 1 park): read inline by Backoff and
/// notify_waiters.
extern std::atomic<int> g_wait_mode;
/// Park mode: a fence, then wakes the parked threads if there are any.
void wake_parked() noexcept;
/// Sets the process's mode (kSpin or kPark). Thread-safe.
void set_wait_mode(WaitPolicy mode) noexcept;
/// Park-mode internals (wait_policy.cpp): register as about to park and
/// return the wake-up epoch seen; sleep until that epoch moves or
/// `timeout_us` passes; unregister.
std::uint32_t register_parked() noexcept;
void park(std::uint32_t epoch, int timeout_us) noexcept;
void unregister_parked() noexcept;

}  // namespace detail

/// Wakes the threads of this process parked in a Backoff, if any. Call after
/// publishing a change another thread of the process may be waiting for.
/// In spin mode it is one relaxed load; in park mode a fence and a load
/// while nobody is parked. Thread-safe.
inline void notify_waiters() noexcept {
  if (detail::g_wait_mode.load(std::memory_order_relaxed) != 0) detail::wake_parked();
}

class Backoff {
 public:
  Backoff() noexcept : spin_(detail::g_wait_mode.load(std::memory_order_relaxed) == 0) {}
  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;
  ~Backoff() {
    if (registered_) detail::unregister_parked();
  }

  /// One poll's pause. Spin mode: a pause instruction, a yield every 256
  /// polls. Park mode: spin (64 polls), yield (20000), then park: one poll
  /// registers as parked (the caller checks its condition once more), the
  /// next sleeps until notified or kParkMicros pass.
  void pause() {
    ++polls_;
    if (polls_ <= kSpinPolls || (spin_ && polls_ % kSpinYieldInterval != 0)) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (spin_ || polls_ <= kSpinPolls + kYieldPolls) {
      sched_yield();
    } else if (!registered_) {
      epoch_ = detail::register_parked();
      registered_ = true;
    } else {
      detail::park(epoch_, kParkMicros);
      detail::unregister_parked();
      registered_ = false;
    }
  }
  /// Starts over with spinning (after progress was made).
  void reset() {
    polls_ = 0;
    if (registered_) {
      detail::unregister_parked();
      registered_ = false;
    }
  }
  [[nodiscard]] long polls() const { return polls_; }

  static constexpr long kSpinPolls = 64;
  static constexpr long kSpinYieldInterval = 256;
  static constexpr long kYieldPolls = 20000;
  static constexpr int kParkMicros = 20;

 private:
  bool spin_;
  bool registered_ = false;
  std::uint32_t epoch_ = 0;
  long polls_ = 0;
};

}  // namespace ep
