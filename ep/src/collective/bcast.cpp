// MPI_Bcast: the root's thread broadcasts its own buffer to the other
// processes (it is its process's voice for this call), every other process
// receives into its leader's buffer, then the data spreads to the other
// threads from that representative. Small messages: the representative
// copies into their buffers itself before releasing them (one gather-release
// round). Large ones, where several threads copying at once pays off: each
// copies its own, and a barrier keeps the representative's buffer until they
// are done.
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {
// Up to this many bytes in all, the representative copies into every other
// thread's buffer itself (a copy costs less than a second meeting).
constexpr std::size_t kPushBytes = std::size_t{256} * 1024;
}  // namespace

void bcast(const Communicator& comm, void* buffer, int count, MPI_Datatype datatype, int root) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::bcast");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_count(count, call.name, call.rank);
  const detail::TypeLayout layout = detail::layout_of(datatype, call.name, call.rank);
  const Location root_at = call.comm.rank_map().locate(root);
  const bool root_process = root_at.process == call.comm.process_rank();
  const int representative = root_process ? root_at.thread : 0;

  call.team.publish(call.thread, buffer);
  const detail::TypedBuffer mine{buffer, count, datatype, layout};
  const std::size_t followers = static_cast<std::size_t>(call.local_size() - 1);
  if (followers <= 1 || mine.bytes() * followers <= kPushBytes) {
    // The MPI stage needs nothing from the other threads: it runs while they arrive.
    detail::gather_release(call, representative, [&](detail::RoundArrivals& arrivals) {
      if (call.processes() > 1) {
        MPI_Request request = MPI_REQUEST_NULL;
        check_mpi(MPI_Ibcast(buffer, count, datatype, root_at.process, call.mpi(), &request),
                  call.name, call.rank);
        detail::wait_mpi(request, call);
      }
      arrivals.await();
      for (int t = 0; t < call.local_size(); ++t) {
        if (t == representative) continue;
        const detail::TypedBuffer target{call.team.published(t), count, datatype, layout};
        detail::copy_typed(mine, target, mine.bytes());
      }
    });
    return;
  }
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
