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
#include "intercomm_handle.hpp"
#include "mpi_groups.hpp"
#include "team/collective_call.hpp"
#include "team/on_leader.hpp"

namespace ep::detail {

/// Gives `to` the error handler of `from`, as MPI does for a communicator
/// made from another (the user's choice of handler carries over).
void inherit_errhandler(MPI_Comm from, MPI_Comm to, const char* call, int rank);

}  // namespace ep::detail
