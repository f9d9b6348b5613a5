// MPI_Scatter and MPI_Scatterv.
//
// The mirror of gather: the threads of the root's process copy their blocks
// straight from the root's send buffer. The blocks of every other process go
// in one MPI_Iscatterv over the processes: straight from the root's send
// buffer when the type is contiguous and each process's blocks lie there back
// to back in thread order, otherwise packed by the root's process into a
// staging buffer in slot order. The leader of each other process receives
// its process's blocks (in thread order) and every thread unpacks its own.
#include <optional>
#include <string>
#include <vector>

#include "collective/block_table.hpp"
#include "ep/collectives.hpp"

namespace ep {

namespace {

using detail::Block;
using detail::BlockTable;
using detail::CollectiveCall;

using RootSide = detail::RootSide<const std::byte>;

// Root's process: packs the blocks of other processes' ranks into the
// staging buffer; this thread takes every `stride`-th of them from `first` on.
void pack_remote(const CollectiveCall& call, RootSide& side, int first, int stride) {
  detail::for_each_remote_rank(call, first, stride, [&](int r) {
    detail::pack_into(side.table.block(r).typed(),
                      side.staging.data() + side.plan.offset[static_cast<std::size_t>(r)]);
  });
}

void scatter_at_root_process(CollectiveCall& call, const Block& mine, bool in_place,
                             const Location& root_at, std::optional<Error>& deferred) {
  // Threads of the root's process share the packing, so they write into it.
  auto& side = *static_cast<RootSide*>(call.team.published_aux(root_at.thread));
  if (!in_place) {
    deferred =
        detail::copy_checked(side.table.block(call.rank).typed(), mine.typed(), call, call.rank);
  }
  if (call.processes() == 1) {
    call.team.barrier();  // the root's buffer and table are used until here
    return;
  }
  const bool parallel = !side.plan.direct && side.plan.moved_bytes >= detail::kParallelCopyBytes &&
                        call.local_size() > 1;
  if (parallel) {
    // On overflow there is no staging: the stage raises it.
    if (!side.plan.overflow) pack_remote(call, side, call.thread, call.local_size());
    call.team.barrier();
  }
  detail::mpi_stage(call, root_at.thread, detail::StageEnd::kLast, [&] {
    side.plan.check(call);
    if (!side.plan.direct && !parallel) pack_remote(call, side, 0, 1);
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iscatterv(side.mpi_buffer, side.plan.counts.data(), side.plan.displs.data(),
                           MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, root_at.process, mpi, request);
    });
  });
}

void scatter_at_other_process(CollectiveCall& call, const Block& mine, int root_process) {
  const detail::LocalSegment segment = detail::local_segment(call);
  const std::size_t offset = segment.offset;
  const std::size_t total = segment.total;
  const bool direct = call.local_size() == 1 && mine.layout.contiguous;
  std::vector<std::byte> staging;  // the leader's
  // Alone (direct), the leader is the whole team: nothing follows the stage.
  const auto end = direct ? detail::StageEnd::kLast : detail::StageEnd::kTeamContinues;
  detail::mpi_stage(call, 0, end, [&] {
    const int count = detail::checked_int_count(total, "staged bytes", call.name, call.rank);
    std::byte* data = nullptr;
    if (direct) {
      data = static_cast<std::byte*>(const_cast<void*>(mine.buf)) + mine.layout.true_lb;
    } else {
      staging.resize(total);
      data = staging.data();
    }
    call.team.publish_aux(0, data);
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iscatterv(nullptr, nullptr, nullptr, MPI_BYTE, data, count, MPI_BYTE, root_process,
                           mpi, request);
    });
  });
  if (direct) return;
  detail::unpack_from(static_cast<const std::byte*>(call.team.published_aux(0)) + offset,
                      mine.bytes(), mine.typed());
  call.team.barrier();  // the leader's staging is read until here
}

// Shared by scatter and scatterv: `table` is significant at the root only.
void scatter_blocks(CollectiveCall& call, const BlockTable& table, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root) {
  const RankMap& map = call.comm.rank_map();
  const Location root_at = map.locate(root);
  const bool is_root = call.rank == root;
  const bool root_process = root_at.process == call.comm.process_rank();
  const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
  const Block mine = in_place ? Block{} : detail::make_block(recvbuf, recvcount, recvtype, call);

  RootSide side;
  if (is_root) {
    side.table = table;
    if (call.processes() > 1) {
      side.plan = detail::plan_processes(call, table, root_at.process, /*allow_direct=*/true);
      side.staging.resize(side.plan.staging_bytes);
      side.mpi_buffer = side.plan.direct ? table.data_start() : side.staging.data();
    }
    call.team.publish_aux(call.thread, &side);
  }
  call.team.publish(call.thread, &mine);
  call.team.barrier();

  std::optional<Error> deferred;
  if (root_process) {
    scatter_at_root_process(call, mine, in_place, root_at, deferred);
  } else {
    scatter_at_other_process(call, mine, root_at.process);
  }
  detail::raise(deferred);
}

}  // namespace

void scatter(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::scatter");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_in_place_only_at_root(recvbuf, root, call.name, call.rank);
  if (recvbuf != MPI_IN_PLACE) detail::check_count(recvcount, call.name, call.rank);
  BlockTable table;
  if (call.rank == root) table = BlockTable(sendbuf, sendcount, sendtype, call);

  if (call.one_endpoint_per_process()) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          call.comm.rank_map().locate(root).process, mpi, request);
    });
    return;
  }
  scatter_blocks(call, table, recvbuf, recvcount, recvtype, root);
}

void scatterv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
              std::span<const int> displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::scatterv");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_in_place_only_at_root(recvbuf, root, call.name, call.rank);
  if (recvbuf != MPI_IN_PLACE) detail::check_count(recvcount, call.name, call.rank);
  BlockTable table;
  if (call.rank == root)
    table = BlockTable(sendbuf, sendcounts, displs, sendtype, call, "sendcounts");

  if (call.one_endpoint_per_process()) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iscatterv(sendbuf, sendcounts.data(), displs.data(), sendtype, recvbuf, recvcount,
                           recvtype, call.comm.rank_map().locate(root).process, mpi, request);
    });
    return;
  }
  scatter_blocks(call, table, recvbuf, recvcount, recvtype, root);
}

}  // namespace ep
