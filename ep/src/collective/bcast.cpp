// MPI_Bcast: the root's thread broadcasts its own buffer to the other
// processes (it is its process's voice for this call), every other process
// receives into its leader's buffer, then the data spreads to the other
// threads from that representative. Small messages: the representative
// copies into their buffers itself before releasing them (one gather-release
// round). Large ones, where several threads copying at once pays off: each
// copies its own, and a barrier keeps the representative's buffer until they
// are done. On a communicator within one process the root does not wait
// for the others at all (bcast_within_process).
#include <algorithm>
#include <string>

#include "datatype.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {
// Up to this many bytes in all, the representative copies into every other
// thread's buffer itself (a copy costs less than a second meeting).
constexpr std::size_t kPushBytes = std::size_t{256} * 1024;

// A communicator within one process: a one-way broadcast (LocalTeam): the
// root stages a small message and leaves, or publishes its buffer and waits
// until every thread has copied from it; each other thread copies when it
// comes. A receive buffer of another size than the root's is an error of
// that endpoint alone (it receives what fits), as MPI requires the type
// signatures to match.
void bcast_within_process(const detail::CollectiveCall& call, const detail::TypedBuffer& mine,
                          int root_thread) {
  detail::LocalTeam& team = call.team;
  if (call.thread == root_thread) {
    const std::size_t bytes = mine.bytes();
    if (bytes <= detail::LocalTeam::kStagedBroadcastBytes) {
      std::byte* staging = team.broadcast_staging(call.thread);
      try {
        detail::pack_into(mine, staging);
      } catch (...) {
        // The others must not wait for data that never comes.
        team.broadcast_publish(call.thread, {staging, 0, true, true});
        throw;
      }
      team.broadcast_publish(call.thread, {staging, bytes, true, false});
      return;
    }
    team.broadcast_publish(call.thread, {&mine, bytes, false, false});
    team.broadcast_await_readers(call.thread);
    return;
  }
  const detail::LocalTeam::Broadcast from = team.broadcast_wait(call.thread);
  const std::size_t fits = std::min(from.bytes, mine.bytes());
  try {
    if (from.staged && !from.failed) {
      detail::unpack_from(static_cast<const std::byte*>(from.source), fits, mine);
    } else if (!from.staged) {
      detail::copy_typed(*static_cast<const detail::TypedBuffer*>(from.source), mine, fits);
    }
  } catch (...) {
    team.broadcast_done(call.thread);
    throw;
  }
  team.broadcast_done(call.thread);
  if (from.failed) {
    throw Error(ErrorKind::kMpi, call.name, call.rank,
                "the root (local thread " + std::to_string(root_thread) +
                    ") could not copy its data (see its error)");
  }
  if (from.bytes != mine.bytes()) {
    throw Error(from.bytes > mine.bytes() ? ErrorKind::kTruncate : ErrorKind::kCount, call.name,
                call.rank,
                "the root broadcasts " + std::to_string(from.bytes) +
                    " bytes but this endpoint's buffer holds " + std::to_string(mine.bytes()) +
                    " (send and receive type signatures must match); the first " +
                    std::to_string(fits) + " bytes were received");
  }
}

}  // namespace

void bcast(const Communicator& comm, void* buffer, int count, MPI_Datatype datatype, int root) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::bcast");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_count(count, call.name, call.rank);
  const detail::TypeLayout layout = detail::layout_of(datatype, call.name, call.rank);
  const Location root_at = call.comm.rank_map().locate(root);
  if (call.processes() == 1) {
    if (call.local_size() > 1) {
      bcast_within_process(call, {buffer, count, datatype, layout}, root_at.thread);
    }
    return;
  }
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
