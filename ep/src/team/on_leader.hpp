// The constructors' pattern (dup, split, intercommunicators, topologies):
// the process's leader (local thread 0) does the MPI work while the other
// local endpoints wait, and its result, or its failure, reaches every one of
// them, so no thread is left waiting in the team barrier.
#pragma once

#include <mpi.h>

#include <optional>
#include <utility>

#include "ep/error.hpp"
#include "team/collective_call.hpp"
#include "team/failure_slot.hpp"

namespace ep::detail {

/// Runs `work` on the process's leader while the other local endpoints wait,
/// then hands its result to every local endpoint. Whatever `work` throws
/// (an ep::Error or anything else) is recorded in the team's FailureSlot and
/// every local endpoint throws it as an ep::Error with the same kind and
/// detail, naming its own rank. `work` must not use call.team (the others
/// are waiting in it).
template <typename Result, typename Work>
Result on_leader(CollectiveCall& call, Work&& work) {
  // A plain value and a flag rather than std::optional: GCC 12 reports a
  // false "maybe uninitialized" on optionals of shared_ptr here.
  struct Outcome {
    Result result{};
    bool done = false;
    FailureSlot failure;
  };
  Outcome outcome;
  if (call.leader()) {
    outcome.failure.guard(call.name, call.rank, [&] {
      outcome.result = std::forward<Work>(work)();
      outcome.done = true;
    });
    call.team.share_aux(0, &outcome);
  }
  call.team.barrier();
  const auto& shared = *call.team.shared_aux<Outcome>(0);
  Result mine{};
  std::optional<Error> failure;
  if (shared.done) {
    mine = shared.result;
  } else {
    failure = shared.failure.error_for(call.name, call.rank);
  }
  call.team.barrier();  // the leader's outcome lives on its stack until here
  if (failure) throw *failure;
  return mine;
}

}  // namespace ep::detail
