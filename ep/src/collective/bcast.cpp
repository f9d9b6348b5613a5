// MPI_Bcast: the root's thread broadcasts its own buffer to the other
// processes (it is its process's voice for this call), every other process
// receives into its leader's buffer, then each thread copies from its
// process's representative.
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

void bcast(const Communicator& comm, void* buffer, int count, MPI_Datatype datatype, int root) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::bcast");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_count(count, call.name, call.rank);
  const detail::TypeLayout layout = detail::layout_of(datatype, call.name, call.rank);
  const Location root_at = call.comm.rank_map().locate(root);
  const bool root_process = root_at.process == call.comm.process_rank();
  const int representative = root_process ? root_at.thread : 0;

  call.team.publish(call.thread, buffer);
  call.team.barrier();
  detail::mpi_stage(call, representative, detail::StageEnd::kTeamContinues, [&] {
    if (call.processes() == 1) return;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(buffer, count, datatype, root_at.process, call.mpi(), &request), call.name,
              call.rank);
    detail::wait_mpi(request, call);
  });
  if (call.thread != representative) {
    const detail::TypedBuffer source{call.team.published(representative), count, datatype, layout};
    const detail::TypedBuffer target{buffer, count, datatype, layout};
    detail::copy_typed(source, target, source.bytes());
  }
  call.team.barrier();  // the representative's buffer is read until here
}

}  // namespace ep
