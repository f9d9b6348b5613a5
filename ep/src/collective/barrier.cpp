// MPI_Barrier: threads meet, the leaders meet over MPI, threads are released.
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

void barrier(const Communicator& comm) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::barrier");
  call.team.barrier();
  detail::mpi_stage(call, 0, detail::StageEnd::kLast, [&] {
    if (call.processes() == 1) return;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(call.mpi(), &request), call.name, call.rank);
    detail::wait_mpi(request, call);
  });
}

}  // namespace ep
