// The test watchdog (see hang_watchdog.hpp).
#include "support/hang_watchdog.hpp"

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace ep_test {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kDefaultFailureGraceSeconds = 30.0;
// How often the thread looks; short against the grace, cheap against the tests.
constexpr auto kCheckPeriod = std::chrono::milliseconds(200);

// A number of seconds from the environment; `fallback` when unset. A value
// that is not a number is reported and ignored (the harness must not fail
// every test because of a typo in a knob).
double seconds_from_env(const char* name, double fallback) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const double value = std::strtod(env, &end);
  if (end == env || *end != '\0' || value < 0) {
    std::fprintf(stderr, "ep_test watchdog: ignoring %s='%s' (not a number of seconds >= 0)\n",
                 name, env);
    return fallback;
  }
  return value;
}

class Watchdog {
 public:
  void start(int rank) {
    const std::lock_guard lock(mutex_);
    if (thread_.joinable()) return;
    rank_ = rank;
    grace_seconds_ = seconds_from_env("EP_TEST_FAILURE_GRACE_SECONDS", kDefaultFailureGraceSeconds);
    budget_seconds_ = seconds_from_env("EP_TEST_TIME_BUDGET_SECONDS", 0.0);
    started_ = Clock::now();
    stop_ = false;
    thread_ = std::thread([this] { run(); });
  }

  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void test_started(const std::string& name) {
    const std::lock_guard lock(mutex_);
    test_ = name;
    first_failure_.reset();
    failures_.clear();
  }

  void test_ended() {
    const std::lock_guard lock(mutex_);
    test_.clear();
    first_failure_.reset();
    failures_.clear();
  }

  void note_failure(const std::string& text) {
    const std::lock_guard lock(mutex_);
    if (!first_failure_) first_failure_ = Clock::now();
    failures_ += text;
  }

  void endpoint_state(int ep_rank, const std::string& where) {
    const std::lock_guard lock(mutex_);
    if (where.empty()) {
      endpoints_.erase(ep_rank);
    } else {
      endpoints_[ep_rank] = where;
    }
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, kCheckPeriod);
      if (stop_) return;
      const auto now = Clock::now();
      if (grace_seconds_ > 0 && first_failure_ &&
          seconds(now - *first_failure_) >= grace_seconds_) {
        fire(lock, "a failure was recorded on this rank " + whole(grace_seconds_) +
                       " s ago (EP_TEST_FAILURE_GRACE_SECONDS) and the test has not ended: an "
                       "endpoint that failed presumably left a collective that others still "
                       "wait in");
      }
      if (budget_seconds_ > 0 && seconds(now - started_) >= budget_seconds_) {
        fire(lock, "the test executable has run " + whole(budget_seconds_) +
                       " s (EP_TEST_TIME_BUDGET_SECONDS, just below the ctest timeout): a test "
                       "hangs or the executable is too slow");
      }
    }
  }

  [[noreturn]] void fire(std::unique_lock<std::mutex>& lock, const std::string& why) {
    std::string report = "\n[rank " + std::to_string(rank_) + "] ep_test watchdog: " +
                         (test_.empty() ? std::string("outside any test") : "test " + test_) +
                         " does not finish: " + why + ". Aborting the job.\n";
    report += failures_.empty() ? "  no failure recorded on this rank\n"
                                : "  failures recorded on this rank:\n" + failures_;
    if (endpoints_.empty()) {
      report += "  no endpoint of this process is inside run_endpoints\n";
    } else {
      report += "  endpoints of this process:\n";
      for (const auto& [ep, where] : endpoints_) {
        report += "    ep " + std::to_string(ep) + ": " + where + "\n";
      }
    }
    lock.unlock();
    std::fputs(report.c_str(), stderr);
    std::fflush(stderr);
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::_Exit(3);  // MPI_Abort does not return; this is for an MPI that does
  }

  static double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
  static std::string whole(double s) { return std::to_string(static_cast<long>(s)); }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  bool stop_ = false;
  int rank_ = -1;
  double grace_seconds_ = kDefaultFailureGraceSeconds;
  double budget_seconds_ = 0;
  Clock::time_point started_;
  std::string test_;                                // guarded by mutex_
  std::optional<Clock::time_point> first_failure_;  // in the running test
  std::string failures_;                            // this rank's, in the running test
  std::map<int, std::string> endpoints_;            // EP rank -> where it is
};

Watchdog& watchdog() {
  static Watchdog instance;
  return instance;
}

}  // namespace

void watchdog_start(int rank) { watchdog().start(rank); }
void watchdog_stop() { watchdog().stop(); }
void watchdog_test_started(const std::string& name) { watchdog().test_started(name); }
void watchdog_test_ended() { watchdog().test_ended(); }
void watchdog_note_failure(const std::string& text) { watchdog().note_failure(text); }
void watchdog_endpoint_state(int ep_rank, const std::string& where) {
  watchdog().endpoint_state(ep_rank, where);
}

}  // namespace ep_test
