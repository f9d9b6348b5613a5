// MPI_Barrier: threads meet, the leaders meet over MPI, threads are released.
#include "collective/collective_support.hpp"
#include "ep/collectives.hpp"

namespace ep {

void barrier(const Communicator& comm) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::barrier");
  call.team.barrier();
  if (call.leader() && call.processes() > 1) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(call.mpi(), &request), call.name, call.rank);
    detail::wait_mpi(request, call.name, call.rank);
  }
  call.team.barrier();
}

}  // namespace ep
