// MPI_Barrier. Within one process: one arrive-and-depart round of the team
// (LocalTeam::barrier), whose last arriver releases the others with one
// store on the line they counted on, the floor of demos/bench/limits
// (floor.barrier). Across processes: the threads arrive at their leader,
// the leaders meet over MPI, the leader releases its threads (one
// gather-release round).
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

void barrier(const Communicator& comm) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::barrier");
  if (call.processes() == 1) {
    // A gather-release round here is two line hand-offs in a row (the
    // others' arrival at the owner, then its release); this is one.
    call.team.barrier();
    return;
  }
  detail::gather_release(call, 0, [&](detail::RoundArrivals& arrivals) {
    arrivals.await();
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(call.mpi(), &request), call.name, call.rank);
    detail::wait_mpi(request, call);
  });
}

}  // namespace ep
