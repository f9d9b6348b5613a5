// Making new endpoint communicators from existing ones.
//
// All calls here are collective over every endpoint of the communicator
// (each thread calls with its own handle) and return that thread's handle of
// the new communicator.
#pragma once

#include "ep/communicator.hpp"

namespace ep {

/// MPI_Comm_dup: same endpoints, same ranks, fresh matching (messages on the
/// copy never match messages on the original).
[[nodiscard]] Communicator dup(const Communicator& comm);

}  // namespace ep
