// Nonblocking collectives on endpoint communicators: the per-communicator
// sequence of collective instances and the state machine each instance runs.
//
// Every endpoint calls the collectives of a communicator in the same order
// (MPI's rule), so the k-th nonblocking collective of every local thread is
// the same instance k. The first local thread to reach instance k creates it;
// each thread contributes (records its buffers and does its share of the
// local work, all bounded) and returns at once, never waiting for another
// endpoint. The contribution that completes instance k starts the
// process-level MPI operation.
//
// Order of MPI calls. MPI requires every process to start the collectives of
// a communicator in the same order, so instances start strictly in sequence:
// k only after k-1 (an instance ready before its predecessor waits in the
// registry and is started right after it). In a correct program that never
// waits: the last contribution to k comes after every local thread has left
// its call k-1, so k-1 has started by then. Hence every instance has started
// before the last local thread returns from its call, and a blocking
// collective issued afterwards (whose MPI call comes after a barrier of the
// local threads) can never overtake it.
//
// Completion. The owner's test/wait polls its request: a poll first lets the
// instance post what it could not post at its start (receives of messages
// whose size it learns by a matched probe: post_more), then MPI_Testalls the
// instance's requests (one poller at a time, the others just report "not
// yet"), and once the MPI part is complete the polling thread copies its own
// result out. The instance lives as long as a request of it does.
//
// Thread safety: join/contributed are called concurrently by the local
// threads; a registry lock orders them. Instances guard their own state.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "collective/internal_tags.hpp"
#include "collective/segment_exchange.hpp"
#include "ep/communicator.hpp"
#include "ep/request.hpp"
#include "spin_lock.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

struct RequestState;
class NbcRegistry;
class NbcInstance;

/// One nonblocking collective in flight on one communicator, shared by the
/// process's endpoints.
class NbcInstance : public std::enable_shared_from_this<NbcInstance> {
 public:
  NbcInstance(const CollectiveCall& creator, std::shared_ptr<CommState> comm);
  NbcInstance(const NbcInstance&) = delete;
  NbcInstance& operator=(const NbcInstance&) = delete;
  virtual ~NbcInstance() = default;

  [[nodiscard]] const char* name() const noexcept { return name_; }

  /// Owner poll for local thread `thread`: true once its part is complete
  /// (any failure is then recorded in `request`). Never waits.
  bool poll(int thread, RequestState& request);

  /// Runs post_more() if it is still due and no other thread is polling the
  /// instance (ProbeTurns::help_older). Never waits.
  void try_post_more(int rank);

  /// Failures seen by any local endpoint; every request of the instance reports them.
  [[nodiscard]] FailureSlot& failure() noexcept { return failure_; }

 protected:
  /// Starts the process-level part once every local endpoint has
  /// contributed; called once, in sequence order, under the registry lock.
  /// Returns the MPI request to wait for, MPI_REQUEST_NULL when none.
  virtual MPI_Request start() { return MPI_REQUEST_NULL; }
  /// start() for a process-level part made of several MPI requests (point-
  /// to-point messages, say); all of them are waited for. By default start()'s one.
  virtual std::vector<MPI_Request> start_requests() { return {start()}; }
  /// Posts what the process-level part could not post at its start (a
  /// receive whose size a matched probe tells), appending the requests to
  /// `requests`; called by one poller at a time until it returns true (all
  /// posted). Never waits. By default there is nothing more.
  virtual bool post_more(std::vector<MPI_Request>& /*requests*/) { return true; }
  /// Called once, by the poller that saw every request of start_requests()
  /// and post_more() complete, with their statuses (in the same order); failures go to failure().
  virtual void mpi_completed(std::span<const MPI_Status> /*statuses*/) {}
  /// The owner's part after the MPI part completed (copying its result out).
  /// Failures that concern only this endpoint go to `mine`.
  virtual void finish(int thread, FailureSlot& mine) = 0;

  /// The call context of local thread `thread`, for helpers and errors.
  [[nodiscard]] CollectiveCall call_of(int thread) const;
  [[nodiscard]] CommState& comm() const noexcept { return *comm_; }
  /// The probe order of the communicator's block exchanges.
  [[nodiscard]] ProbeTurns& probe_turns() const;

 private:
  friend class NbcRegistry;

  /// True once the MPI part has completed (tests it, one tester at a time).
  bool mpi_complete(int rank);
  /// post_more() with its bookkeeping; true once everything is posted. Under mpi_mutex_.
  bool post_step(int rank);

  const char* name_;
  std::shared_ptr<CommState> comm_;
  FailureSlot failure_;
  // Registry bookkeeping, under the registry lock.
  std::uint64_t sequence_ = 0;
  int joined_ = 0;
  int contributed_ = 0;
  // Written by the starter before `started_` is released; afterwards only
  // under `mpi_mutex_`.
  std::vector<MPI_Request> requests_;
  std::vector<MPI_Status> statuses_;
  bool all_posted_ = false;  // post_more() returned true (under mpi_mutex_)
  std::atomic<bool> started_{false};
  std::atomic<bool> mpi_done_{false};
  std::mutex mpi_mutex_;
};

/// The nonblocking collectives of one endpoint communicator, in this process.
class NbcRegistry {
 public:
  NbcRegistry(int local_size, int processes);

  /// The registry of `comm` (each communicator state owns one).
  static std::shared_ptr<NbcRegistry> of(const std::shared_ptr<CommState>& comm);

  /// The instance of `call`'s endpoint's next nonblocking collective; `make`
  /// creates it when this endpoint is the first local one to reach it.
  /// Throws ep::Error(kArgument) when the local threads called different
  /// collectives at this position (an erroneous program).
  std::shared_ptr<NbcInstance> join(const CollectiveCall& call,
                                    const std::function<std::shared_ptr<NbcInstance>()>& make);

  /// Records that one endpoint finished contributing to `instance`; the last
  /// contribution starts it (and any later instance that was only waiting for it).
  void contributed(const std::shared_ptr<NbcInstance>& instance);

  /// The probe order of the communicator's block exchanges.
  [[nodiscard]] ProbeTurns& probe_turns() noexcept { return probe_turns_; }

 private:
  void start(NbcInstance& instance);

  // Held by a joining or contributing local thread for a few map operations
  // (and by the last contributor while it starts the instance's MPI part):
  // a SpinLock, as a futex sleep and wake would cost more than the section.
  SpinLock mutex_;
  int local_size_;
  std::vector<std::uint64_t> next_sequence_;                       // per local thread
  std::map<std::uint64_t, std::shared_ptr<NbcInstance>> joining_;  // not yet joined by all
  std::map<std::uint64_t, std::shared_ptr<NbcInstance>> ready_;    // waiting for a predecessor
  std::uint64_t next_start_ = 0;
  ProbeTurns probe_turns_;
};

/// A Request of `call`'s endpoint completed by polling `instance`.
Request make_collective_request(const CollectiveCall& call, std::shared_ptr<CommState> comm,
                                std::shared_ptr<NbcInstance> instance);

// Joins the endpoint's next nonblocking collective (creating it with `make`
// when first), contributes with `contribute` and returns the request. A
// failed contribution is reported by the request: the instance must still
// count it, or the other endpoints would never complete.
template <class Instance, class Make, class Contribute>
Request start_nonblocking(const Communicator& comm, const CollectiveCall& call, Make&& make,
                          Contribute&& contribute) {
  const std::shared_ptr<NbcRegistry> registry = NbcRegistry::of(comm.state());
  std::shared_ptr<NbcInstance> instance =
      registry->join(call, [&]() -> std::shared_ptr<NbcInstance> { return make(); });
  // join() checked the name, and each name has one instance class.
  auto& typed = static_cast<Instance&>(*instance);
  instance->failure().guard(call.name, call.rank, [&] { contribute(typed); });
  registry->contributed(instance);
  return detail::make_collective_request(call, comm.state(), std::move(instance));
}

}  // namespace ep::detail
