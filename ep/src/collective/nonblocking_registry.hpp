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

#include "collective/aggregated_exchange.hpp"
#include "collective/internal_tags.hpp"
#include "ep/communicator.hpp"
#include "ep/request.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

struct RequestState;
class NbcRegistry;
class NbcInstance;

/// The order in which the nonblocking block exchanges of one communicator
/// (block_exchange.cpp) match their messages from each process. They
/// share one tag, and several may be in flight, polled by different threads:
/// without an order a later exchange could probe an earlier one's message.
/// Exchanges take tickets in start order; the one holding ticket k may probe
/// process q once the exchanges before it have matched theirs from q (MPI
/// keeps the messages from q in the order q started the same exchanges).
/// An exchange waiting for its turn makes the earlier ones probe (help_older):
/// the program may wait for its requests in any order, and an earlier
/// exchange nobody polls would otherwise never take its turn.
class ProbeTurns {
 public:
  explicit ProbeTurns(int processes);
  /// The ticket of `exchange`, which has yet to match its messages. Called in
  /// start order (under the registry lock).
  std::uint64_t issue(std::weak_ptr<NbcInstance> exchange);
  /// `ticket`'s exchange has matched every message (or failed): no help needed.
  void done(std::uint64_t ticket);
  /// Lets every exchange before `ticket` that still has messages to match
  /// probe now (NbcInstance::try_post_more). Never waits.
  void help_older(std::uint64_t ticket, int rank);
  /// Whether the exchange holding `ticket` may probe process `q` now.
  [[nodiscard]] bool may_probe(int q, std::uint64_t ticket) const noexcept {
    return matched_[static_cast<std::size_t>(q)].load(std::memory_order_acquire) == ticket;
  }
  /// Passes the turn for process `q` on to the next exchange.
  void matched(int q) noexcept {
    matched_[static_cast<std::size_t>(q)].fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  std::uint64_t issued_ = 0;
  std::unique_ptr<std::atomic<std::uint64_t>[]> matched_;  // per process
  std::mutex mutex_;                                       // guards unmatched_
  std::map<std::uint64_t, std::weak_ptr<NbcInstance>> unmatched_;
};

/// The probed segments of one instance: the processes whose segment it has
/// not matched yet, and its place in ProbeTurns.
struct ProbedSegments {
  std::vector<int> unmatched;
  std::uint64_t ticket = 0;
};

/// What one segment sends: MPI's buffer, count and datatype.
struct SegmentBuffer {
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
};

/// start_requests()'s part for an instance with probed segments: starts the
/// send of its segment to every other process (`segment(q)` gives the
/// SegmentBuffer for process q), records those processes as unmatched and
/// takes the instance's ticket (in start order, since start_requests() runs
/// in sequence). Returns the send requests.
template <class Segment>
std::vector<MPI_Request> send_probed_segments(ProbeTurns& turns,
                                              std::weak_ptr<NbcInstance> instance,
                                              const CollectiveCall& call, MPI_Comm mpi,
                                              ProbedSegments& segments, Segment&& segment) {
  std::vector<MPI_Request> requests;
  const int me = call.comm.process_rank();
  for (int q = 0; q < call.processes(); ++q) {
    if (q == me) continue;
    const SegmentBuffer out = segment(q);
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(out.buf, out.count, out.type, q, kProbedSegmentTag, mpi, &request),
              call.name, call.rank);
    requests.push_back(request);
    segments.unmatched.push_back(q);
  }
  segments.ticket = turns.issue(std::move(instance));
  return requests;
}

/// post_more's work for an instance with probed segments: probes each
/// unmatched process whose turn it is and starts the receive of every
/// segment it matches with `receive(q, bytes, message)`, which returns the
/// MPI request (appended to `requests`). True once every segment is matched.
/// A failure passes the instance's remaining turns on, so that later
/// instances do not wait for it, and is rethrown. Each segment is received
/// at the size it was sent, whatever the receiver expected: that is what
/// lets a block whose two sides disagree be reported instead of reaching MPI.
template <class Receive>
bool match_probed_segments(ProbeTurns& turns, ProbedSegments& segments, const CollectiveCall& call,
                           MPI_Comm mpi, std::vector<MPI_Request>& requests, Receive&& receive) {
  std::vector<int>& unmatched = segments.unmatched;
  const std::uint64_t ticket = segments.ticket;
  if (unmatched.empty()) return true;
  try {
    bool waited_for_turn = false;
    for (auto it = unmatched.begin(); it != unmatched.end();) {
      const int q = *it;
      if (!turns.may_probe(q, ticket)) {
        waited_for_turn = true;
        ++it;
        continue;
      }
      MPI_Message message = MPI_MESSAGE_NULL;
      const std::optional<std::size_t> bytes =
          probe_segment(call, mpi, kProbedSegmentTag, q, message);
      if (!bytes) {
        ++it;
        continue;
      }
      turns.matched(q);
      it = unmatched.erase(it);
      requests.push_back(receive(q, *bytes, message));
    }
    if (unmatched.empty()) {
      turns.done(ticket);
      return true;
    }
    if (waited_for_turn) turns.help_older(ticket, call.rank);
    return false;
  } catch (...) {
    for (const int q : unmatched) turns.matched(q);
    unmatched.clear();
    turns.done(ticket);
    throw;
  }
}

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

  std::mutex mutex_;
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
