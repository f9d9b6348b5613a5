// MPI_Barrier: the threads arrive at their leader, the leaders meet over
// MPI, the leader releases its threads (one gather-release round).
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

void barrier(const Communicator& comm) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::barrier");
  detail::gather_release(call, 0, [&](detail::RoundArrivals& arrivals) {
    arrivals.await();
    if (call.processes() == 1) return;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(call.mpi(), &request), call.name, call.rank);
    detail::wait_mpi(request, call);
  });
}

}  // namespace ep
