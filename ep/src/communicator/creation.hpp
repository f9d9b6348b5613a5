// Shared machinery of the communicator constructors (dup, split,
// intercommunicators, merge).
//
// The pattern: every local endpoint enters, the process's leader (local
// thread 0) does the MPI work and builds the new detail::CommState(s), and
// every local endpoint takes its handle from what the leader published. The
// leader's failures reach every local endpoint, so no thread is left waiting
// in the team barrier.
#pragma once

#include <mpi.h>

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "collective/collective_support.hpp"
#include "comm_state.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/rank_map.hpp"

namespace ep::detail {

/// What the leader's work failed with, for every local endpoint to rethrow.
struct LeaderFailure {
  ErrorKind kind = ErrorKind::kArgument;
  std::string detail;
  int mpi_code = MPI_SUCCESS;
};

/// The detail part of an ep::Error (its what() without "call: ep rank N: "),
/// so that each endpoint can rethrow it under its own rank.
LeaderFailure failure_of(const std::exception& error);

/// Runs `work` on the process's leader while the other local endpoints wait,
/// then hands its result to every local endpoint. When `work` throws, every
/// local endpoint throws an ep::Error with the same kind and detail, naming
/// its own rank. `work` must not use call.team (the others are waiting in it).
template <typename Result, typename Work>
Result on_leader(CollectiveCall& call, Work&& work) {
  // A plain value and a flag rather than std::optional: GCC 12 reports a
  // false "maybe uninitialized" on optionals of shared_ptr here.
  struct Outcome {
    Result result{};
    bool done = false;
    LeaderFailure failure;
  };
  Outcome outcome;
  if (call.leader()) {
    try {
      outcome.result = std::forward<Work>(work)();
      outcome.done = true;
    } catch (const std::exception& e) {
      outcome.failure = failure_of(e);
    }
    call.team.publish_aux(0, &outcome);
  }
  call.team.barrier();
  const auto& shared = *static_cast<const Outcome*>(call.team.published_aux(0));
  const bool done = shared.done;
  Result mine{};
  LeaderFailure failure;
  if (done) {
    mine = shared.result;
  } else {
    failure = shared.failure;
  }
  call.team.barrier();  // the leader's outcome lives on its stack until here
  if (!done) throw Error(failure.kind, call.name, call.rank, failure.detail, failure.mpi_code);
  return mine;
}

/// Who each EP rank of `comm` is (see CommState::origins()), computed from the
/// rank map when the state does not carry the table.
std::vector<Location> origins_of(const CommState& comm, const char* call, int rank);

/// Gives `to` the error handler of `from`, as MPI does for a communicator
/// made from another (the user's choice of handler carries over).
void inherit_errhandler(MPI_Comm from, MPI_Comm to, const char* call, int rank);

/// Frees an MPI group when it goes out of scope.
class ScopedGroup {
 public:
  ScopedGroup() = default;
  ScopedGroup(const ScopedGroup&) = delete;
  ScopedGroup& operator=(const ScopedGroup&) = delete;
  ~ScopedGroup() {
    if (group_ != MPI_GROUP_NULL) MPI_Group_free(&group_);
  }
  [[nodiscard]] MPI_Group* out() noexcept { return &group_; }
  [[nodiscard]] MPI_Group get() const noexcept { return group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

/// Ranks in `to` of ranks 0..n-1 of `from` (MPI_UNDEFINED where absent).
std::vector<int> translate_all(MPI_Group from, MPI_Group to, const char* call, int rank);

/// The parts of an InterCommunicator, for the implementation files.
struct InterAccess {
  static const Communicator& bridge(const InterCommunicator& inter) { return inter.bridge_; }
  static const Communicator& group(const InterCommunicator& inter) { return inter.group_; }
  static bool local_first(const InterCommunicator& inter) { return inter.local_first_; }
  static InterCommunicator make(Communicator bridge, Communicator group, bool local_first) {
    InterCommunicator inter;
    inter.bridge_ = std::move(bridge);
    inter.group_ = std::move(group);
    inter.local_first_ = local_first;
    return inter;
  }
};

/// The bridge of `inter` after checking that it is usable; throws kFreedComm
/// naming `call` and the endpoint's rank in its group.
const Communicator& usable_bridge(const InterCommunicator& inter, const char* call);

}  // namespace ep::detail
