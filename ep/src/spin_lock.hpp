// A lock for the matching engine's short critical sections.
//
// A mailbox is locked for a queue search and an append (or, for an eager
// message, a copy of at most the eager threshold). With std::mutex the
// collision of a sender and the receiver posting its next receive puts one
// of them to sleep in the kernel (a futex wait and wake, microseconds on a
// VM) for a section that lasts well under one. So: test-and-test-and-set,
// spinning briefly, then yielding the core, since the holder may itself be
// waiting for a core when threads outnumber cores.
#pragma once

#include <sched.h>

#include <atomic>

namespace ep::detail {

/// One polite pause of a spinning thread (a hint to the core, nothing more).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class SpinLock {
 public:
  void lock() noexcept {
    int spins = 0;
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < kSpinsBeforeYield) {
          cpu_relax();
        } else {
          sched_yield();
        }
      }
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 128;
  std::atomic<bool> locked_{false};
};

}  // namespace ep::detail
