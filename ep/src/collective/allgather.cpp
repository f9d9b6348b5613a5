// MPI_Allgather and MPI_Allgatherv.
//
// Each process gathers its threads' contributions into one buffer, in slot
// order (or straight into the leader's receive buffer when its type is
// contiguous and each process's blocks lie there back to back in thread
// order), the leaders exchange them with one MPI_Iallgatherv in place, and
// every thread fills its own receive buffer: the blocks of its own process
// straight from the other threads' contributions, the others from the
// leader's buffer, each placed by EP rank (so any rank order works).
//
// Block sizes that disagree between processes: each process sends its blocks
// at the sizes its own endpoints give them, and another process may expect
// others (an erroneous call, on which MPI aborts the job). So the leaders
// first exchange the size of every block as its process sends it (one small
// MPI_Iallgatherv of the counts, whose per-process counts every process
// knows from the rank map) and run the data exchange at those sizes; an
// endpoint that expects another size for a block throws kTruncate or kCount
// naming it, and the rest complete with their data. With one endpoint per
// process, in process order, each process's block goes to every other
// process as a message of its own instead (segment_exchange.hpp, exchange_peer_blocks), received at
// the size it was sent: no size round. On a communicator within one process
// the threads take one exchange round of LocalTeam instead
// (allgather_within_process): no leader, no barrier.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "collective/aggregated_exchange.hpp"
#include "collective/block_table.hpp"
#include "collective/segment_exchange.hpp"
#include "datatype.hpp"
#include "ep/collectives.hpp"

namespace ep {

namespace {

using detail::Block;
using detail::BlockArgs;
using detail::BlockTable;
using detail::CollectiveCall;
using detail::ProcessPlan;

// What every endpoint publishes.
struct EndpointSide {
  Block contribution;
  BlockTable table;  // its receive buffer
};

// What the leader publishes besides: the buffer of the MPI call.
struct LeaderSide {
  ProcessPlan plan;
  std::vector<std::byte> staging;
  std::byte* mpi_buffer = nullptr;
  BlockTable table;  // whose block sizes the plan follows
  // When another process sends a block at another size than `table` gives:
  // the data as it came, and per EP rank where each block lies in it and its
  // size. Empty when every size agreed (the plan holds).
  std::vector<std::byte> as_sent;
  std::vector<std::size_t> sent_at;
  std::vector<std::size_t> sent_bytes;
};

// The leader's size round and data exchange (see the top of the file).
void exchange_blocks(const CollectiveCall& call, LeaderSide& lead) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const int processes = map.num_processes();
  // Block sizes in slot order (process by process, thread order), as each
  // process sends them: its own are what the leader's plan packed.
  std::vector<int> counts(static_cast<std::size_t>(processes));
  std::vector<int> displs(static_cast<std::size_t>(processes));
  int slots = 0;
  for (int p = 0; p < processes; ++p) {
    counts[static_cast<std::size_t>(p)] = map.endpoints_of(p);
    displs[static_cast<std::size_t>(p)] = slots;
    slots += map.endpoints_of(p);
  }
  // Where process p's local thread t sits among the sizes.
  const auto slot_of = [&](int p, int t) {
    return static_cast<std::size_t>(displs[static_cast<std::size_t>(p)]) +
           static_cast<std::size_t>(t);
  };
  std::vector<unsigned long long> sizes(static_cast<std::size_t>(slots));
  for (int t = 0; t < call.local_size(); ++t) {
    sizes[slot_of(me, t)] = lead.table.bytes(map.ep_rank(me, t));
  }
  detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
    return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sizes.data(), counts.data(),
                           displs.data(), MPI_UNSIGNED_LONG_LONG, mpi, request);
  });
  bool agree = true;
  for (int p = 0; p < processes && agree; ++p) {
    for (int t = 0; t < map.endpoints_of(p); ++t) {
      if (sizes[slot_of(p, t)] != lead.table.bytes(map.ep_rank(p, t))) agree = false;
    }
  }
  if (agree) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, lead.mpi_buffer, lead.plan.counts.data(),
                             lead.plan.displs.data(), MPI_BYTE, mpi, request);
    });
    return;
  }
  // Exchange the blocks at the sizes they are sent with, into a buffer laid
  // out by those sizes; this process's region comes from the packed one.
  lead.sent_at.assign(static_cast<std::size_t>(map.size()), 0);
  lead.sent_bytes.assign(static_cast<std::size_t>(map.size()), 0);
  std::vector<int> region_bytes(static_cast<std::size_t>(processes));
  std::vector<int> region_at(static_cast<std::size_t>(processes));
  std::size_t total = 0;
  for (int p = 0; p < processes; ++p) {
    const std::size_t first = total;
    for (int t = 0; t < map.endpoints_of(p); ++t) {
      const auto r = static_cast<std::size_t>(map.ep_rank(p, t));
      lead.sent_at[r] = total;
      lead.sent_bytes[r] = sizes[slot_of(p, t)];
      total += lead.sent_bytes[r];
    }
    region_at[static_cast<std::size_t>(p)] =
        detail::checked_int_count(first, "bytes before a process's blocks", call.name, call.rank);
    region_bytes[static_cast<std::size_t>(p)] = detail::checked_int_count(
        total - first, "bytes of a process's blocks", call.name, call.rank);
  }
  lead.as_sent.resize(std::max<std::size_t>(total, 1));
  const auto own = static_cast<std::size_t>(me);
  std::copy_n(lead.mpi_buffer + lead.plan.displs[own], region_bytes[own],
              lead.as_sent.data() + region_at[own]);
  detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
    return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, lead.as_sent.data(), region_bytes.data(),
                           region_at.data(), MPI_BYTE, mpi, request);
  });
}

const EndpointSide& side_of(const CollectiveCall& call, int thread) {
  return call.team.shared<EndpointSide>(thread);
}

// Copies local thread `t`'s contribution into the leader's MPI buffer.
void pack_contribution(const CollectiveCall& call, const LeaderSide& leader, int t,
                       std::optional<Error>& deferred) {
  const int rank = call.comm.rank_map().ep_rank(call.comm.process_rank(), t);
  const Block& source = side_of(call, t).contribution;
  const Block target = leader.table.block(rank);
  std::byte* packed = leader.mpi_buffer + leader.plan.offset[static_cast<std::size_t>(rank)];
  if (leader.plan.direct && source.buf == target.buf) return;  // the leader's, in place
  auto error = detail::copy_checked(source, target.packed_at(packed), call, rank);
  if (error && !deferred) deferred = std::move(error);
}

void allgather_blocks(CollectiveCall& call, const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, const BlockTable& table) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const EndpointSide mine{
      in_place ? table.block(call.rank) : detail::make_block(sendbuf, sendcount, sendtype, call),
      table};
  const bool multi = call.processes() > 1;

  LeaderSide lead;
  if (call.leader() && multi) {
    lead.table = table;
    lead.plan = detail::plan_processes(call, table, -1, /*allow_direct=*/true);
    lead.staging.resize(lead.plan.staging_bytes);
    lead.mpi_buffer =
        lead.plan.direct ? const_cast<std::byte*>(table.data_start()) : lead.staging.data();
    call.team.share_aux(0, &lead);
  }
  call.team.share(call.thread, mine);
  call.team.barrier();

  std::optional<Error> deferred;
  // With one process every block is local and the (empty) own side is never read.
  const LeaderSide& leader = multi ? *call.team.shared_aux<LeaderSide>(0) : lead;
  if (multi) {
    std::size_t local_bytes = 0;
    for (int t = 0; t < call.local_size(); ++t)
      local_bytes += side_of(call, t).contribution.bytes();
    const bool parallel = local_bytes >= detail::kParallelCopyBytes && call.local_size() > 1;
    if (parallel) {
      if (!leader.plan.overflow) pack_contribution(call, leader, call.thread, deferred);
      call.team.barrier();
    }
    detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
      leader.plan.check(call);
      if (!parallel) {
        for (int t = 0; t < call.local_size(); ++t) pack_contribution(call, leader, t, deferred);
      }
      exchange_blocks(call, lead);  // the stage runs on the leader: `lead` is `leader`
    });
  }

  // Fill this thread's receive buffer (the leader's is complete already
  // when MPI worked in it at the sizes it expects).
  const bool done = multi && call.leader() && leader.plan.direct && leader.as_sent.empty();
  for (int r = 0; r < map.size() && !done; ++r) {
    if (r == call.rank && in_place) continue;
    const Block target = table.block(r);
    const Location from = map.locate(r);
    std::optional<Error> error;
    if (from.process == me) {
      error = detail::copy_checked(side_of(call, from.thread).contribution, target, call, r);
    } else if (!leader.as_sent.empty()) {
      const auto ri = static_cast<std::size_t>(r);
      const detail::TypedBuffer sent{
          leader.as_sent.data() + leader.sent_at[ri],
          detail::checked_int_count(leader.sent_bytes[ri], "bytes of a block", call.name, r),
          MPI_BYTE, detail::layout_of(MPI_BYTE, call.name, r)};
      error = detail::copy_checked(sent, target, call, r);
    } else {
      const std::byte* packed = leader.mpi_buffer + leader.plan.offset[static_cast<std::size_t>(r)];
      error = detail::copy_checked(leader.table.block(r).packed_at(packed), target, call, r);
    }
    if (error && !deferred) deferred = std::move(error);
  }
  call.team.barrier();  // contributions and the leader's buffer are read until here
  detail::raise(deferred);
}

// A communicator within one process: one exchange round of LocalTeam, no
// barrier. Each thread writes the size of its contribution into its staging
// and, up to kStagedBytes, the contribution itself (packed); a larger one
// stays where it is (sendbuf, or its block of recvbuf in place, which no
// other thread writes), and its LocalTeam slot says where. It publishes,
// copies its own block while the others publish, waits for every other
// publication and copies their blocks, from their staging or their buffers.
// Nobody waits for the readers of a staged contribution (the staging halves
// alternate, see LocalTeam); a thread whose contribution was read in place
// waits for its readers' counters before it returns. A block whose size
// disagrees with what its receiver expects is that receiver's error: it
// receives what fits and throws once the exchange is over.
constexpr std::size_t kStagedBytes = 2048;
constexpr std::uint64_t kInPlace = ~std::uint64_t{0};

void allgather_within_process(CollectiveCall& call, const void* sendbuf, int sendcount,
                              MPI_Datatype sendtype, const BlockTable& table) {
  detail::LocalTeam& team = call.team;
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const Block own =
      in_place ? table.block(call.rank) : detail::make_block(sendbuf, sendcount, sendtype, call);
  constexpr std::size_t kDataAt = 64;
  std::byte* staging = team.exchange_staging(call.thread);
  const std::uint64_t bytes = own.bytes();
  const bool staged = bytes <= kStagedBytes;
  const std::uint64_t head = staged ? bytes : kInPlace;
  std::memcpy(staging, &head, sizeof head);
  team.share(call.thread, own);  // read (when not staged) until its readers are done
  if (staged) detail::pack_into(own, staging + kDataAt);
  team.exchange_publish(call.thread);
  std::optional<Error> deferred;
  if (!in_place) deferred = detail::copy_checked(own, table.block(call.rank), call, call.rank);
  team.exchange_await_all(call.thread);
  const detail::TypeLayout bytes_layout = detail::layout_of(MPI_BYTE, call.name, call.rank);
  bool read_in_place = false;
  for (int t = 0; t < call.local_size(); ++t) {
    if (t == call.thread) continue;
    const int rank = map.ep_rank(me, t);
    const std::byte* at = team.exchanged(call.thread, t);
    std::uint64_t size = 0;
    std::memcpy(&size, at, sizeof size);
    std::optional<Error> error;
    if (size == kInPlace) {
      read_in_place = true;
      error = detail::copy_checked(team.shared<Block>(t), table.block(rank), call, rank);
    } else {
      const Block source{at + kDataAt, static_cast<int>(size), MPI_BYTE, bytes_layout};
      error = detail::copy_checked(source, table.block(rank), call, rank);
    }
    if (error && !deferred) deferred = std::move(error);
  }
  if (read_in_place) team.exchange_read_done(call.thread);
  if (!staged) team.exchange_await_readers(call.thread);
  detail::raise(deferred);
}

// One endpoint per process: the own block goes to every other process as a
// message of its own (segment_exchange.hpp, exchange_peer_blocks), from sendbuf or, under
// MPI_IN_PLACE, from its place in recvbuf (where it stays); `recv` is the
// receive side, `table` the same blocks.
void allgather_peers(const CollectiveCall& call, const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, const BlockArgs& recv, const BlockTable& table) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const Block own =
      in_place ? table.block(call.rank) : detail::make_block(sendbuf, sendcount, sendtype, call);
  const auto n = static_cast<std::size_t>(call.size());
  const std::vector<int> counts(n, own.count);
  const std::vector<int> displs(n, 0);
  BlockArgs send;
  send.buf = own.buf;
  send.per_peer = true;
  send.counts = counts;
  send.displs = displs;
  send.type = own.type;
  detail::PeerPairs pairs;
  pairs.self = !in_place;
  detail::exchange_peer_blocks(call, detail::make_exchange_spec(call, send, recv, false), pairs);
}

// The path an allgather(v) takes by how its endpoints sit on processes:
// one per process (MPI's own call, with the receive side `recv_side()`
// describes), all in one process (one exchange round), or the general
// block exchange.
template <typename RecvSide>
void allgather_by_layout(CollectiveCall& call, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, const BlockTable& table, RecvSide recv_side) {
  if (call.one_endpoint_per_process()) {
    allgather_peers(call, sendbuf, sendcount, sendtype, recv_side(), table);
  } else if (call.processes() == 1 && call.local_size() > 1) {
    allgather_within_process(call, sendbuf, sendcount, sendtype, table);
  } else {
    allgather_blocks(call, sendbuf, sendcount, sendtype, table);
  }
}

}  // namespace

void allgather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  CollectiveCall call = detail::begin_collective(comm, "ep::allgather");
  if (sendbuf != MPI_IN_PLACE) detail::check_count(sendcount, call.name, call.rank);
  const BlockTable table(recvbuf, recvcount, recvtype, call);
  allgather_by_layout(call, sendbuf, sendcount, sendtype, table, [&] {
    return detail::alltoall_sides(nullptr, 0, MPI_BYTE, recvbuf, recvcount, recvtype).recv;
  });
}

void allgatherv(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, std::span<const int> recvcounts, std::span<const int> displs,
                MPI_Datatype recvtype) {
  CollectiveCall call = detail::begin_collective(comm, "ep::allgatherv");
  if (sendbuf != MPI_IN_PLACE) detail::check_count(sendcount, call.name, call.rank);
  const BlockTable table(recvbuf, recvcounts, displs, recvtype, call, "recvcounts");
  allgather_by_layout(call, sendbuf, sendcount, sendtype, table, [&] {
    return detail::alltoallv_sides(nullptr, {}, {}, MPI_BYTE, recvbuf, recvcounts, displs, recvtype)
        .recv;
  });
}

}  // namespace ep
