// The meeting point of a process's threads in the funneled and synchronous
// modes: every thread deposits its part, the master thread (local thread 0)
// does the work for the process, and everybody leaves with the same outcome.
//
// Publication rule: a thread writes only its own slot before the first
// barrier; the master reads all slots and writes `error`/`shared` between
// the two barriers; every thread reads them after the second barrier. The
// barrier's mutex gives the happens-before edges, no other locking.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "xios_lite/report.hpp"

namespace xios_lite::client {

/// A barrier of a fixed number of threads that cannot hang: a wait gives up
/// after its timeout, and a thread that leaves for good (its Client
/// destroyed) breaks it. A broken barrier stays broken: every wait returns
/// at once with the reason. Thread-safe.
class TimedBarrier {
 public:
  explicit TimedBarrier(int threads) : threads_(threads) {}

  /// Waits for the other threads; "" when all arrived, else why not.
  std::string arrive_and_wait(double timeout_s) {
    std::unique_lock lock(mutex_);
    if (!broken_.empty()) {
      return broken_;
    }
    const std::uint64_t generation = generation_;
    if (++arrived_ == threads_) {
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return "";
    }
    const bool done = changed_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] {
      return generation_ != generation || !broken_.empty();
    });
    if (generation_ != generation) {
      return "";
    }
    if (!done && broken_.empty()) {
      broken_ = "timed out after " + std::to_string(timeout_s) +
                " s waiting for the other threads of this process to make the same call";
      changed_.notify_all();
    }
    return broken_;
  }

  /// A thread leaves for good: the barrier breaks with `why`.
  void leave(const std::string& why) {
    const std::lock_guard lock(mutex_);
    if (broken_.empty()) {
      broken_ = why;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int threads_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::string broken_;
};

struct Funnel {
  explicit Funnel(int threads)
      : threads(threads),
        sync(threads),
        parts(static_cast<std::size_t>(threads)),
        ids(static_cast<std::size_t>(threads)),
        errors(static_cast<std::size_t>(threads)),
        masks(static_cast<std::size_t>(threads), nullptr) {}

  int threads;
  TimedBarrier sync;
  std::vector<std::span<const double>> parts;  // per thread: its values for this call
  std::vector<std::string> ids;                // per thread: the field id of this call
  std::vector<std::string> errors;             // per thread: its own argument error
  // per thread, during close_definition: its masks per domain (see ClientImpl::masks_)
  std::vector<const std::vector<std::vector<std::uint8_t>>*> masks;
  std::string error;                  // master: the outcome of the call
  std::vector<ServerReport> servers;  // master: the reports at finalise
  std::vector<int> gone;              // master: clients the servers found gone
  std::string server_error;           // master: what the servers reported at finalise
};

}  // namespace xios_lite::client
