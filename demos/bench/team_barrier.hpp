// A barrier for the threads of one process, for the funneled mode of
// ep_collectives, whose threads stay in one parallel region and meet here
// between the master's MPI calls. How it waits is chosen per launch:
//
//   kSpin   spin with a pause instruction: what a tuned hybrid code does on
//           cores of its own (an `omp barrier` under OMP_WAIT_POLICY=active)
//   kAsEp   as the endpoint layer waits (ep::Backoff: spin, yield, then short
//           sleeps): on shared or oversubscribed cores a spinner would take
//           the core of the thread it waits for
//
// Thread safety: arrive_and_wait() is called by exactly `threads` threads
// per phase; phases may follow each other without a reset.
#pragma once

#include <atomic>

#include "ep/backoff.hpp"

namespace bench {

class TeamBarrier {
 public:
  enum class Wait { kSpin, kAsEp };

  TeamBarrier(int threads, Wait wait) : threads_(threads), wait_(wait) {}
  TeamBarrier(const TeamBarrier&) = delete;
  TeamBarrier& operator=(const TeamBarrier&) = delete;

  void arrive_and_wait() {
    const unsigned phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);  // releases everyone's writes
      return;
    }
    if (wait_ == Wait::kSpin) {
      while (phase_.load(std::memory_order_acquire) == phase) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      return;
    }
    ep::Backoff backoff;
    while (phase_.load(std::memory_order_acquire) == phase) backoff.pause();
  }

 private:
  const int threads_;
  const Wait wait_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> phase_{0};
};

}  // namespace bench
