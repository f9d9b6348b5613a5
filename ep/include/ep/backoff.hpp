// Waiting without burning the cores other ranks need: the wait policy of
// every wait of the endpoint layer, public so that code waiting beside it
// (the benchmarks' funneled mode, say) can wait the same way.
//
// More ranks and threads than cores is the normal case on small machines:
// with 4 processes on 2 cores, pure busy polling made an Open MPI barrier
// 300x slower. So a waiter spins a few polls (cheap when the partner runs on
// another core), then yields its core on every poll, and after a long wait
// sleeps in short steps so that idle waiters (an I/O server, say) cost little.
//
//   ep::Backoff backoff;
//   while (!ready()) backoff.pause();
//
// Thread safety: one Backoff per waiting thread (it counts that thread's polls).
#pragma once

#include <sched.h>

#include <chrono>
#include <thread>

namespace ep {

class Backoff {
 public:
  /// One poll's pause: spin (64 polls), then yield (20000), then sleep 20 us.
  void pause() {
    ++polls_;
    if (polls_ <= kSpinPolls) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (polls_ <= kSpinPolls + kYieldPolls) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(kSleepMicros));
    }
  }
  /// Starts over with spinning (after progress was made).
  void reset() { polls_ = 0; }
  [[nodiscard]] long polls() const { return polls_; }

 private:
  static constexpr long kSpinPolls = 64;
  static constexpr long kYieldPolls = 20000;
  static constexpr long kSleepMicros = 20;
  long polls_ = 0;
};

}  // namespace ep
