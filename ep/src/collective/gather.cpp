// MPI_Gather and MPI_Gatherv.
//
// The threads of the root's process copy their blocks straight into the
// root's receive buffer. Every other process packs its threads' blocks (in
// thread order) into one buffer that its leader sends with one MPI_Igatherv
// over the processes, so a process sends one message whatever its thread
// count. The root's thread receives them all: straight into its receive
// buffer when the type is contiguous and each process's blocks lie there back
// to back in thread order, otherwise into a staging buffer in slot order that
// the root's process unpacks, each block to the place of its EP rank (so any
// rank order and any displacements work).
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

using RootSide = detail::RootSide<std::byte>;

// Root's process: unpacks the staged blocks of other processes' ranks; this
// thread takes every `stride`-th of them from `first` on.
void unpack_remote(const CollectiveCall& call, const RootSide& side, int first, int stride,
                   std::optional<Error>& deferred) {
  detail::for_each_remote_rank(call, first, stride, [&](int r) {
    const Block dst = side.table.block(r);
    const auto* packed = side.mpi_buffer + side.plan.offset[static_cast<std::size_t>(r)];
    auto error = detail::copy_checked(dst.packed_at(packed), dst.typed(), call, r);
    if (error && !deferred) deferred = std::move(error);
  });
}

void gather_at_root_process(CollectiveCall& call, const Block& mine, bool in_place,
                            const Location& root_at, std::optional<Error>& deferred) {
  const auto& side = *static_cast<const RootSide*>(call.team.published_aux(root_at.thread));
  if (!in_place) {
    deferred =
        detail::copy_checked(mine.typed(), side.table.block(call.rank).typed(), call, call.rank);
  }
  if (call.processes() == 1) {
    call.team.barrier();  // the root's buffer and table are used until here
    return;
  }
  const bool parallel = !side.plan.direct && side.plan.moved_bytes >= detail::kParallelCopyBytes &&
                        call.local_size() > 1;
  // In parallel the threads unpack after the stage; otherwise the root's
  // thread unpacks inside it and the others are done.
  const auto end = parallel ? detail::StageEnd::kTeamContinues : detail::StageEnd::kLast;
  detail::mpi_stage(call, root_at.thread, end, [&] {
    side.plan.check(call);
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Igatherv(MPI_IN_PLACE, 0, MPI_BYTE, side.mpi_buffer, side.plan.counts.data(),
                          side.plan.displs.data(), MPI_BYTE, root_at.process, mpi, request);
    });
    if (!side.plan.direct && !parallel) unpack_remote(call, side, 0, 1, deferred);
  });
  if (parallel) {
    unpack_remote(call, side, call.thread, call.local_size(), deferred);
    call.team.barrier();
  }
}

void gather_at_other_process(CollectiveCall& call, const Block& mine, int root_process) {
  // This process's blocks in thread order: where mine goes, and the total.
  const detail::LocalSegment segment = detail::local_segment(call);
  const std::size_t offset = segment.offset;
  const std::size_t total = segment.total;
  const bool direct = call.local_size() == 1 && mine.layout.contiguous;
  const bool parallel = !direct && total >= detail::kParallelCopyBytes && call.local_size() > 1;
  std::vector<std::byte> staging;  // the leader's
  if (parallel) {
    if (call.leader()) {
      staging.resize(total);
      call.team.publish_aux(0, staging.data());
    }
    call.team.barrier();
    detail::pack_into(mine.typed(), static_cast<std::byte*>(call.team.published_aux(0)) + offset);
    call.team.barrier();
  }
  detail::mpi_stage(call, 0, detail::StageEnd::kLast, [&] {
    const int count = detail::checked_int_count(total, "staged bytes", call.name, call.rank);
    const std::byte* data = staging.data();
    if (direct) {
      data = static_cast<const std::byte*>(mine.buf) + mine.layout.true_lb;
    } else if (!parallel) {
      staging.resize(total);
      std::size_t at = 0;
      for (int t = 0; t < call.local_size(); ++t) {
        const auto& block = *static_cast<const Block*>(call.team.published(t));
        detail::pack_into(block.typed(), staging.data() + at);
        at += block.bytes();
      }
      data = staging.data();
    }
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Igatherv(data, count, MPI_BYTE, nullptr, nullptr, nullptr, MPI_BYTE, root_process,
                          mpi, request);
    });
  });
}

// Shared by gather and gatherv: `table` is significant at the root only.
void gather_blocks(CollectiveCall& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   const BlockTable& table, int root) {
  const RankMap& map = call.comm.rank_map();
  const Location root_at = map.locate(root);
  const bool is_root = call.rank == root;
  const bool root_process = root_at.process == call.comm.process_rank();
  const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
  const Block mine = in_place ? Block{} : detail::make_block(sendbuf, sendcount, sendtype, call);

  RootSide side;
  if (is_root) {
    side.table = table;
    if (call.processes() > 1) {
      side.plan = detail::plan_processes(call, table, root_at.process, /*allow_direct=*/true);
      side.staging.resize(side.plan.staging_bytes);
      side.mpi_buffer =
          side.plan.direct ? const_cast<std::byte*>(table.data_start()) : side.staging.data();
    }
    call.team.publish_aux(call.thread, &side);
  }
  call.team.publish(call.thread, &mine);
  call.team.barrier();

  std::optional<Error> deferred;
  if (root_process) {
    gather_at_root_process(call, mine, in_place, root_at, deferred);
  } else {
    gather_at_other_process(call, mine, root_at.process);
  }
  detail::raise(deferred);
}

}  // namespace

void gather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::gather");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_in_place_only_at_root(sendbuf, root, call.name, call.rank);
  if (sendbuf != MPI_IN_PLACE) detail::check_count(sendcount, call.name, call.rank);
  BlockTable table;
  if (call.rank == root) table = BlockTable(recvbuf, recvcount, recvtype, call);

  if (call.one_endpoint_per_process()) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         call.comm.rank_map().locate(root).process, mpi, request);
    });
    return;
  }
  gather_blocks(call, sendbuf, sendcount, sendtype, table, root);
}

void gatherv(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, std::span<const int> recvcounts, std::span<const int> displs,
             MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::gatherv");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_in_place_only_at_root(sendbuf, root, call.name, call.rank);
  if (sendbuf != MPI_IN_PLACE) detail::check_count(sendcount, call.name, call.rank);
  BlockTable table;
  if (call.rank == root)
    table = BlockTable(recvbuf, recvcounts, displs, recvtype, call, "recvcounts");

  if (call.one_endpoint_per_process()) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts.data(), displs.data(),
                          recvtype, call.comm.rank_map().locate(root).process, mpi, request);
    });
    return;
  }
  gather_blocks(call, sendbuf, sendcount, sendtype, table, root);
}

}  // namespace ep
