// How the threads of a client process reach the output: the strategy behind
// a Client's mode, chosen once when the Client is made.
//
//   ep           every thread is a client of its own: its own engine, its
//                own intercommunicator and sink to the servers
//   funneled     the process's threads meet at the master (local thread 0),
//                which runs one engine for all of them and speaks to the
//                servers for the process
//   synchronous  as funneled, but the master writes the files itself
//                through parallel NetCDF (no server)
//
// A call every thread makes (update_calendar, send_field) goes through the
// funnel in two steps: arrive() with the thread's own error tells the one
// thread that works for its group (in ep mode: itself), that thread does
// the work, and depart() gives every thread of the group the same outcome.
//
// In the funneled modes the threads meet at a TimedBarrier around shared
// slots. Publication rule: a thread writes only its own slot before the
// first barrier; the master reads all slots and writes the shared outcome
// between the two barriers; every thread reads it after the second barrier.
// The barrier's mutex gives the happens-before edges, no other locking.
//
// Thread safety: one Funnel per client endpoint, used by its thread only;
// what the threads of a process share is behind the rule above.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/report.hpp"
#include "xios_lite/server.hpp"

namespace xios_lite::client {

/// A barrier of a fixed number of threads that cannot hang: a wait gives up
/// after its timeout, and a thread that leaves for good (its Client
/// destroyed) breaks it. A broken barrier stays broken: every wait returns
/// at once with the reason. Thread-safe.
///
/// Not ep's LocalTeam: that team is private to ep (ep/src/team/, outside
/// ep's public headers and the include path xios_lite gets from ep::ep),
/// and its barrier neither times out nor breaks when a thread leaves; it
/// also polls with backoff, where output calls may be seconds apart and a
/// condition variable sleeps. The slots already come from ep's public
/// share_in_process.
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

/// What failed in the work a thread did for its group ("" detail: nothing).
struct Failure {
  ep::ErrorKind kind = ep::ErrorKind::kArgument;
  std::string detail;
};

/// What finalise learnt on the thread that spoke to the servers (or wrote
/// the files), for every thread it speaks for.
struct FinishOutcome {
  std::string transport_error;
  std::vector<ServerReport> servers;
  std::vector<int> gone;  ///< clients the servers found gone
  std::string server_error;
};

/// Per domain, per point of the block: the model's mask (see set_domain_mask).
using BlockMasks = std::vector<std::vector<std::uint8_t>>;

class Funnel {
 public:
  /// A thread's barrier broke (`why`): called on the thread that saw it,
  /// before its call throws, so that the servers can hear of it.
  using BrokenHook = std::function<void(const std::string& why)>;

  /// The strategy of `mode` for the endpoint `comm` (the client's private
  /// communicator). Collective over the endpoints of `comm` in the calling
  /// process (the funneled modes share their slots).
  static std::unique_ptr<Funnel> make(Mode mode, const ep::Communicator& comm, double timeout_s,
                                      BrokenHook on_broken);
  virtual ~Funnel() = default;
  Funnel(const Funnel&) = delete;
  Funnel& operator=(const Funnel&) = delete;

  /// Whether this thread runs an engine and holds a sink (it speaks for the
  /// threads of its group).
  [[nodiscard]] bool speaks() const noexcept { return speaks_; }
  /// Whether one engine serves all threads of a process (Layout::engines).
  [[nodiscard]] virtual bool per_process() const noexcept = 0;
  /// Whether records go to server processes (else into files directly).
  [[nodiscard]] virtual bool has_servers() const noexcept = 0;
  /// The key of this thread's engine among Layout::engines(per_process()).
  [[nodiscard]] int engine_key() const noexcept { return per_process() ? process_ : rank_; }

  /// The intercommunicator to the servers of the threads that speak to
  /// them; null on the others and without servers. Collective over `comm`
  /// and the servers.
  virtual ep::InterCommunicator connect(const ep::Communicator& comm, const World& world,
                                        int tag) = 0;

  /// `value` as the thread that speaks for this one has it (check of the
  /// definitions). Throws when the threads did not all come.
  virtual std::string from_speaker(const char* call, const std::string& value) = 0;
  /// Waits for the other threads of the group (nothing in ep mode); throws
  /// when they did not all come.
  virtual void barrier(const char* call) = 0;

  /// First step of a call of every thread: `own_error` is this thread's
  /// argument error. True on the thread that works for the group, when no
  /// thread of the group brought an error. Throws in ep mode for an own
  /// error, in the funneled modes when the threads did not all come.
  virtual bool arrive(const char* call, const std::string& own_error) = 0;
  /// Second step: `outcome` is the working thread's failure (ignored on the
  /// others). Throws, on every thread of the group, this thread's own error,
  /// else the group's; returns when all went well.
  virtual void depart(const char* call, const std::string& own_error, const Failure& outcome) = 0;

  /// send_field, before arrive(): this thread's values of field `id`.
  virtual void deposit(const std::string& id, std::span<const double> values) = 0;
  /// On the working thread: the values of the threads it works for, one
  /// part per thread; `error` says when they sent different fields together.
  virtual std::span<const std::span<const double>> parts(const std::string& id,
                                                         std::string& error) = 0;

  /// close_definition, before barrier(): this thread's masks (kept alive
  /// until the next barrier); after it, on the thread that speaks: the
  /// masks of local thread `thread` of its process.
  virtual void share_masks(const BlockMasks& mine) = 0;
  [[nodiscard]] virtual const BlockMasks& masks_of(int thread) const = 0;

  /// finalise: the speaker's `outcome` reaches every thread of its group.
  /// Returns "" or why the threads did not all meet; `at_arrival`: it
  /// failed before anything was shared. Never throws.
  virtual std::string share_finish(FinishOutcome& outcome, bool& at_arrival) = 0;

  /// This thread leaves for good (its Client destroyed, `why`): the other
  /// threads of its group stop waiting for it. Never throws.
  virtual void leave(const std::string& why) noexcept = 0;

 protected:
  Funnel(const ep::Communicator& comm, bool speaks)
      : speaks_(speaks), rank_(comm.rank()), process_(comm.process_rank()) {}
  [[noreturn]] void fail(const char* call, const std::string& what) const {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank_, what);
  }
  [[nodiscard]] int rank() const noexcept { return rank_; }

 private:
  bool speaks_;
  int rank_;
  int process_;
};

}  // namespace xios_lite::client
