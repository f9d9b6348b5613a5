// The constructors' pattern (dup, split, intercommunicators, topologies):
// the process's leader (local thread 0) does the MPI work while the other
// local endpoints wait, and its result, or its failure, reaches every one of
// them, so no thread is left waiting in the team barrier.
#pragma once

#include <mpi.h>

#include <exception>
#include <string>
#include <utility>

#include "checks.hpp"
#include "ep/error.hpp"
#include "team/collective_call.hpp"

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
    } catch (...) {
      // Whatever the leader's work threw, the others must not be left waiting.
      outcome.failure = {ErrorKind::kArgument, kForeignException, MPI_SUCCESS};
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

}  // namespace ep::detail
