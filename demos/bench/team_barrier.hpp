// A barrier for the threads of one process that waits as the endpoint layer
// does (ep::Backoff: spin, yield, then short sleeps), so that a benchmark's
// funneled mode and its ep mode wait the same way. An `omp barrier` would
// instead wait by OMP_WAIT_POLICY: sleeping in the kernel (passive) or
// spinning (active), either of which skews the comparison on shared cores.
//
// Thread safety: arrive_and_wait() is called by exactly `threads` threads
// per phase; phases may follow each other without a reset.
#pragma once

#include <atomic>

#include "ep/backoff.hpp"

namespace bench {

class TeamBarrier {
 public:
  explicit TeamBarrier(int threads) : threads_(threads) {}
  TeamBarrier(const TeamBarrier&) = delete;
  TeamBarrier& operator=(const TeamBarrier&) = delete;

  void arrive_and_wait() {
    const unsigned phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);  // releases everyone's writes
      return;
    }
    ep::Backoff backoff;
    while (phase_.load(std::memory_order_acquire) == phase) backoff.pause();
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> phase_{0};
};

}  // namespace bench
