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
#include "comm_state.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/rank_map.hpp"
#include "team/collective_call.hpp"
#include "team/on_leader.hpp"

namespace ep::detail {

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
