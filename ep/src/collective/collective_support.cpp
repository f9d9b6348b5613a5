#include "collective/collective_support.hpp"

#include "backoff.hpp"
#include "ep/error.hpp"

namespace ep::detail {

CollectiveCall begin_collective(const Communicator& comm, const char* name) {
  CommState& state = usable_state(comm, name);
  return {state, state.team(), comm.local_thread(), comm.rank(), name};
}

void wait_mpi(MPI_Request& request, const char* call, int rank) {
  Backoff backoff;
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call, rank);
    if (done != 0) return;
    backoff.pause();
  }
}

void wait_mpi(MPI_Request& request, const CollectiveCall& call) {
  Backoff backoff;
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call.name, call.rank);
    if (done != 0) return;
    call.team.idle();
    backoff.pause();
  }
}

void check_root(int root, int size, const char* call, int rank) {
  if (root < 0 || root >= size) {
    throw Error(
        ErrorKind::kRank, call, rank,
        "root " + std::to_string(root) + " out of range [0, " + std::to_string(size - 1) + "]");
  }
}

void check_in_place_only_at_root(const CollectiveCall& call, const void* buffer, int root) {
  if (buffer == MPI_IN_PLACE && call.rank != root) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "MPI_IN_PLACE is only allowed at the root (" + std::to_string(root) + ")");
  }
}

TypedScratch::TypedScratch(int count, MPI_Datatype type, const char* call, int rank) {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), call, rank);
  check_mpi(MPI_Type_get_true_extent(type, &true_lb_, &true_extent), call, rank);
  const MPI_Aint span = count == 0 ? 0 : (count - 1) * extent + true_extent;
  storage_.resize(static_cast<std::size_t>(span));
}

MPI_Aint element_offset(MPI_Datatype type, MPI_Aint index, const char* call, int rank) {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), call, rank);
  return index * extent;
}

}  // namespace ep::detail
