// How the endpoints of one process act together in a collective call: the
// call context (CollectiveCall), waiting on MPI without busy-polling
// (wait_mpi, run_on_mpi) and the process-level MPI stage that one thread
// runs for the team (mpi_stage). Used by collective/, communicator/ and
// topology/; the team itself is local_team.hpp, the leader-runs-it pattern
// of the constructors on_leader.hpp.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "comm_state.hpp"
#include "datatype.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "team/local_team.hpp"
#include "trace/recorder.hpp"

namespace ep::detail {

/// Whether MPI's own collective needs EP ranks to be process ranks.
enum class RankOrder {
  kProcess,  ///< ranks matter (roots, blocks, prefixes): EP rank r must be process r
  kAny,      ///< a reduction whose order the caller has settled already
};

/// One endpoint's view of the collective it is in.
struct CollectiveCall {
  CommState& comm;
  LocalTeam& team;
  int thread;  // local thread index
  int rank;    // EP rank
  const char* name;
  /// Times the collective for tracing, from begin_collective until the
  /// caller's CollectiveCall goes out of scope (copies do not time).
  TraceScope traced{};

  /// The endpoint that talks MPI for its process (local thread 0).
  [[nodiscard]] bool leader() const noexcept { return thread == 0; }
  [[nodiscard]] int size() const noexcept { return comm.rank_map().size(); }
  [[nodiscard]] int local_size() const noexcept { return comm.local_size(); }
  [[nodiscard]] int processes() const noexcept { return comm.rank_map().num_processes(); }
  [[nodiscard]] MPI_Comm mpi() const noexcept { return comm.internal_comm(); }
  /// One endpoint per process (numbered in process order, with
  /// RankOrder::kProcess): EP ranks are process ranks, so MPI's own
  /// collective can run with the user's arguments (see run_on_mpi).
  [[nodiscard]] bool one_endpoint_per_process(RankOrder order = RankOrder::kProcess) const {
    const RankMap& map = comm.rank_map();
    return map.max_endpoints_per_process() == 1 &&
           (order == RankOrder::kAny || map.process_major());
  }
};

/// Checks the handle and returns the call context. Throws kFreedComm.
/// Inline: the usual case (a live handle) is two loads and a branch, which
/// the small collectives within a process pay on every call; usable_state
/// raises the errors with their messages.
inline CollectiveCall begin_collective(const Communicator& comm, const char* name) {
  CommState* state = comm.state().get();
  if (state == nullptr || state->is_freed(comm.local_thread())) [[unlikely]] {
    state = &usable_state(comm, name);  // throws
  }
  return {*state,
          state->team(),
          comm.local_thread(),
          comm.rank(),
          name,
          TraceScope(TraceKind::kCollective, *state, comm.rank(), comm.local_thread())};
}

/// Waits for an MPI request with the project's backoff (Open MPI's blocking
/// collectives busy-poll, which starves oversubscribed cores).
void wait_mpi(MPI_Request& request, const char* call, int rank);
/// The same for a collective's MPI stage; while waiting it routes incoming
/// point-to-point messages of the communicator (the team's idle work).
void wait_mpi(MPI_Request& request, const CollectiveCall& call);
/// wait_mpi for every request of `requests` (MPI_Testall): returns once all
/// have completed.
void wait_mpi_all(std::span<MPI_Request> requests, const CollectiveCall& call);

/// Starts one of MPI's nonblocking collectives with `start(mpi_comm,
/// &request)` (returning its MPI code) on the internal communicator and
/// waits for it with the project's backoff, routing point-to-point messages
/// meanwhile. The "one endpoint per process, straight to MPI" opening of
/// every collective (when one_endpoint_per_process() holds) and the leaders'
/// process-level stages both go through it.
template <class Start>
void run_on_mpi(const CollectiveCall& call, Start&& start) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(std::forward<Start>(start)(call.mpi(), &request), call.name, call.rank);
  wait_mpi(request, call);
}

/// Whether the team works on after the MPI stage of a collective.
enum class StageEnd {
  kTeamContinues,  ///< the threads use the stage's result (and meet again before returning)
  kLast,           ///< the stage is the collective's last step; nothing is read after it
};

/// Runs `stage` (the process's MPI part) on local thread `representative`,
/// then meets the team.
///
/// kTeamContinues: when the stage throws, every local endpoint throws after
/// the meeting (the representative its own error) instead of working on with
/// a result that never came, or waiting forever for a thread that left. The
/// outcome travels in the team's value slot of `representative`, so the
/// caller must meet the team once more before returning: other collectives
/// may write that slot before their first barrier.
///
/// kLast: the other endpoints' part is done at the meeting, so only the
/// representative raises the failure; no slot is used.
template <typename Stage>
void mpi_stage(CollectiveCall& call, int representative, StageEnd end, Stage&& stage) {
  std::exception_ptr failure;
  if (call.thread == representative) {
    try {
      std::forward<Stage>(stage)();
    } catch (...) {
      failure = std::current_exception();
    }
    if (end == StageEnd::kTeamContinues) call.team.set_value(representative, failure ? 1 : 0);
  }
  call.team.barrier();
  if (end == StageEnd::kLast) {
    if (failure) std::rethrow_exception(failure);
    return;
  }
  if (call.team.value(representative) == 0) return;
  call.team.barrier();  // everybody has read the outcome before anyone reuses the slot
  if (failure) std::rethrow_exception(failure);
  throw Error(ErrorKind::kMpi, call.name, call.rank,
              "the process-level MPI stage failed on local thread " +
                  std::to_string(representative) + " (see its error)");
}

/// The owner's side of a gather-release round: what its work calls before
/// it reads the other threads' slots or writes into their buffers.
class RoundArrivals {
 public:
  RoundArrivals(LocalTeam& team, int thread) : team_(team), thread_(thread) {}
  /// Returns when every other local endpoint has arrived (once; later calls
  /// return at once).
  void await() {
    if (awaited_) return;
    team_.await_arrivals(thread_);
    awaited_ = true;
  }

 private:
  LocalTeam& team_;
  int thread_;
  bool awaited_ = false;
};

/// One gather-release round (local_team.hpp) with local thread `owner`
/// doing `work(arrivals)` alone: the other local endpoints arrive (having
/// published what `work` needs) and wait for it to end. `work` calls
/// arrivals.await() before it reads their slots or writes into their
/// buffers (and first thing, when the collective must not end on any thread
/// before all have entered it); it must not meet the team. When `work`
/// throws, the owner rethrows its own error and every other endpoint throws
/// kMpi naming the owner, so no thread is left waiting. One team
/// synchronisation, where a barrier, mpi_stage and a closing barrier would be
/// three.
///
/// The owner runs `work` itself also within one process, where the round
/// could be delegated to its last arriver (LocalTeam::delegated_round): at
/// 1 process x 2 threads (ep_collectives, 3 alternated launches, t_min) the
/// delegated barrier took 0.47-0.53 us against 0.43-0.44 us and the 8-256 B
/// allreduce 0.80-0.94 us against 0.58-0.71 us, the executor alternating
/// between the threads and moving both threads' data instead of one's.
template <typename Work>
void gather_release(CollectiveCall& call, int owner, Work&& work) {
  if (call.thread != owner) {
    call.team.arrive(call.thread);
    if (!call.team.wait_release(call.thread).failed) return;
    throw Error(ErrorKind::kMpi, call.name, call.rank,
                "the collective's work failed on local thread " + std::to_string(owner) +
                    " (see its error)");
  }
  call.team.open_round(call.thread);
  RoundArrivals arrivals(call.team, call.thread);
  try {
    std::forward<Work>(work)(arrivals);
  } catch (...) {
    call.team.release(call.thread, true);
    throw;
  }
  call.team.release(call.thread, false);
}

}  // namespace ep::detail
