// MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw.
//
// One aggregated message per process pair (see aggregated_exchange.hpp for its
// format), never a gather to one root:
//   1. every thread describes its blocks (packing its outgoing data first
//      under MPI_IN_PLACE) and publishes them;
//   2. the leader lays out one send staging buffer (a segment per destination
//      process, a region per local thread in it) and one receive staging
//      buffer (sizes from the local threads' own receive arguments, so no
//      count exchange is needed);
//   3. every thread packs its own regions, in parallel;
//   4. the leader exchanges the segments with one MPI_Ialltoallw of bytes
//      while the other threads copy the blocks between threads of the process
//      directly (copy_typed, no MPI);
//   5. every thread unpacks its own blocks from the received segments (the
//      leader then does its direct copies).
// With one endpoint per process and EP ranks in process order the call goes
// straight to MPI with the user's arguments.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "collective/aggregated_exchange.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::BlockArgs;
using detail::CollectiveCall;
using detail::ExchangeSpec;
using detail::FailureSlot;

// A staging buffer kept by a thread from call to call. Allocating the
// staging afresh on every call cost more than the exchange itself (glibc
// hands large freed blocks back to the system, and the next call faults them
// in again: 4x slower at 64 KiB blocks on 2x2). A thread leads at most one
// blocking collective at a time, so one buffer per role and thread is
// enough; requests above kMaxKept bytes get a buffer of their own, freed
// after the call, so a single huge exchange does not pin its memory.
class KeptBuffer {
 public:
  static constexpr std::size_t kMaxKept = std::size_t{64} << 20;

  // A buffer of at least `bytes` bytes (contents undefined), valid until the
  // next get() on this object or until `oversize` is released.
  std::byte* get(std::size_t bytes, std::unique_ptr<std::byte[]>& oversize) {
    bytes = std::max<std::size_t>(bytes, 1);
    if (bytes > kMaxKept) {
      oversize = std::make_unique_for_overwrite<std::byte[]>(bytes);
      return oversize.get();
    }
    if (bytes > capacity_) {
      data_.reset();  // before allocating: never hold both
      data_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
      capacity_ = bytes;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t capacity_ = 0;
};

thread_local KeptBuffer t_send_staging;
thread_local KeptBuffer t_recv_staging;

// What the leader lays out for the whole process, shared by its threads.
struct ProcessExchange {
  // Send staging: segment q holds the regions of threads 0..T-1, thread s's
  // at region_offset[q * T + s]. The buffers belong to the leader thread
  // (KeptBuffer), or to `oversize_*` for very large exchanges.
  std::byte* send = nullptr;
  std::vector<std::size_t> region_offset;
  std::vector<std::size_t> send_offset;  // per process: segment start
  std::vector<std::size_t> send_size;
  std::byte* recv = nullptr;
  std::vector<std::size_t> recv_offset;  // per process: segment start
  std::vector<std::size_t> recv_size;
  std::unique_ptr<std::byte[]> oversize_send;
  std::unique_ptr<std::byte[]> oversize_recv;
  FailureSlot failure;
};

void plan(const CollectiveCall& call, std::span<const ExchangeSpec* const> specs,
          ProcessExchange& px) {
  const RankMap& map = call.comm.rank_map();
  const int processes = call.processes();
  const int me = call.comm.process_rank();
  const auto threads = static_cast<std::size_t>(call.local_size());
  px.region_offset.assign(static_cast<std::size_t>(processes) * threads, 0);
  px.send_offset.assign(static_cast<std::size_t>(processes), 0);
  px.send_size.assign(static_cast<std::size_t>(processes), 0);
  px.recv_offset.assign(static_cast<std::size_t>(processes), 0);
  px.recv_size.assign(static_cast<std::size_t>(processes), 0);
  std::size_t send_total = 0;
  std::size_t recv_total = 0;
  for (int q = 0; q < processes; ++q) {
    if (q == me) continue;
    const auto qi = static_cast<std::size_t>(q);
    px.send_offset[qi] = send_total;
    for (std::size_t s = 0; s < threads; ++s) {
      px.region_offset[qi * threads + s] = send_total;
      send_total += specs[s]->region_bytes[qi];
    }
    px.send_size[qi] = send_total - px.send_offset[qi];
    px.recv_offset[qi] = recv_total;
    px.recv_size[qi] = detail::expected_segment_size(map, q, specs);
    recv_total += px.recv_size[qi];
  }
  // Contents undefined: every byte is written by a pack or by MPI before it is read.
  px.send = t_send_staging.get(send_total, px.oversize_send);
  px.recv = t_recv_staging.get(recv_total, px.oversize_recv);
}

void exchange_segments(const CollectiveCall& call, ProcessExchange& px) {
  const int processes = call.processes();
  const int me = call.comm.process_rank();
  detail::ByteRuns sends(processes, px.send);
  detail::ByteRuns recvs(processes, px.recv);
  for (int q = 0; q < processes; ++q) {
    if (q == me) continue;
    const auto qi = static_cast<std::size_t>(q);
    sends.add(q, px.send + px.send_offset[qi], px.send_size[qi]);
    recvs.add(q, px.recv + px.recv_offset[qi], px.recv_size[qi]);
  }
  sends.build(call.name, call.rank);
  recvs.build(call.name, call.rank);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ialltoallw(sends.buffer(), sends.counts(), sends.displs(), sends.types(),
                           recvs.mutable_buffer(), recvs.counts(), recvs.displs(), recvs.types(),
                           call.mpi(), &request),
            call.name, call.rank);
  detail::wait_mpi(request, call);
}

// Blocks between threads of this process: this thread pulls what each local
// thread sends it.
void copy_local(const CollectiveCall& call, std::span<const ExchangeSpec* const> specs,
                FailureSlot& failure) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const ExchangeSpec& mine = *specs[static_cast<std::size_t>(call.thread)];
  for (int s = 0; s < call.local_size(); ++s) {
    detail::copy_local_block(call, *specs[static_cast<std::size_t>(s)], map.ep_rank(me, s), mine,
                             call.rank, failure);
  }
}

void run_exchange(CollectiveCall& call, const ExchangeSpec& spec) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const int processes = call.processes();
  const auto threads = static_cast<std::size_t>(call.local_size());

  // The leader's layout outlives its stack frame for threads still reading the
  // failure slot after the last barrier: each thread holds a reference.
  std::shared_ptr<ProcessExchange> created;
  if (call.leader()) {
    created = std::make_shared<ProcessExchange>();
    call.team.publish_aux(0, &created);
  }
  call.team.publish(call.thread, &spec);
  call.team.barrier();
  const std::shared_ptr<ProcessExchange> px =
      *static_cast<std::shared_ptr<ProcessExchange>*>(call.team.published_aux(0));
  std::vector<const ExchangeSpec*> specs(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    specs[t] = static_cast<const ExchangeSpec*>(call.team.published(static_cast<int>(t)));
  }
  FailureSlot& failure = px->failure;
  const auto step = [&](auto&& work) { failure.guard(call.name, call.rank, work); };

  if (processes == 1) {
    step([&] { copy_local(call, specs, failure); });
    call.team.barrier();  // sources (user buffers, in-place copies) are read until here
    failure.rethrow(call.name, call.rank);
    return;
  }

  if (call.leader()) step([&] { plan(call, specs, *px); });
  call.team.barrier();
  // Without staging (allocation failed) nothing can be packed or exchanged;
  // the failure is reported after the protocol.
  const bool staged = px->send != nullptr && px->recv != nullptr;
  if (staged) {
    step([&] {
      for (int q = 0; q < processes; ++q) {
        if (q == me) continue;
        const std::size_t at = px->region_offset[static_cast<std::size_t>(q) * threads +
                                                 static_cast<std::size_t>(call.thread)];
        detail::pack_region(spec, map, q, px->send + at);
      }
    });
  }
  call.team.barrier();
  if (call.leader()) {
    if (staged) step([&] { exchange_segments(call, *px); });
  } else {
    step([&] { copy_local(call, specs, failure); });  // overlaps the leader's MPI exchange
  }
  call.team.barrier();
  if (staged) {
    step([&] {
      for (int q = 0; q < processes; ++q) {
        if (q == me) continue;
        const auto qi = static_cast<std::size_t>(q);
        detail::unpack_segment(call, spec, q, px->recv + px->recv_offset[qi], px->recv_size[qi],
                               failure);
      }
    });
  }
  if (call.leader()) step([&] { copy_local(call, specs, failure); });
  call.team.barrier();  // staging, specs and user send buffers are read until here
  failure.rethrow(call.name, call.rank);
}

void check_recvbuf(const CollectiveCall& call, const void* recvbuf) {
  if (recvbuf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
  }
}

// The types of an alltoallw for MPI: MPI_DATATYPE_NULL, which we accept for
// empty blocks, becomes MPI_BYTE (MPI checks every type, even unused ones).
std::vector<MPI_Datatype> usable_types(const CollectiveCall& call,
                                       std::span<const MPI_Datatype> types,
                                       std::span<const int> counts) {
  std::vector<MPI_Datatype> usable(types.begin(), types.begin() + call.size());
  for (std::size_t j = 0; j < usable.size(); ++j) {
    if (usable[j] == MPI_DATATYPE_NULL && counts[j] == 0) usable[j] = MPI_BYTE;
  }
  return usable;
}

// Runs the exchange described by `send` and `recv`: through MPI's own call
// (`start_direct(&request)`) when EP ranks are process ranks, otherwise
// aggregated per process pair.
template <class StartDirect>
void exchange(CollectiveCall& call, const BlockArgs& send, const BlockArgs& recv, bool in_place,
              StartDirect&& start_direct) {
  if (call.one_endpoint_per_process()) {
    detail::check_block_args(call, recv);
    if (!in_place) detail::check_block_args(call, send);
    detail::run_on_mpi(
        call, [&](MPI_Comm /*mpi*/, MPI_Request* request) { return start_direct(request); });
    return;
  }
  run_exchange(call, detail::make_exchange_spec(call, send, recv, in_place));
}

}  // namespace

void alltoall(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
              void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  CollectiveCall call = detail::begin_collective(comm, "ep::alltoall");
  check_recvbuf(call, recvbuf);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto [send, recv] =
      detail::alltoall_sides(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  exchange(call, send, recv, in_place, [&](MPI_Request* request) {
    return MPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, call.mpi(),
                         request);
  });
}

void alltoallv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
               std::span<const int> sdispls, MPI_Datatype sendtype, void* recvbuf,
               std::span<const int> recvcounts, std::span<const int> rdispls,
               MPI_Datatype recvtype) {
  CollectiveCall call = detail::begin_collective(comm, "ep::alltoallv");
  check_recvbuf(call, recvbuf);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto [send, recv] = detail::alltoallv_sides(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                    recvcounts, rdispls, recvtype);
  exchange(call, send, recv, in_place, [&](MPI_Request* request) {
    return MPI_Ialltoallv(sendbuf, in_place ? nullptr : sendcounts.data(),
                          in_place ? nullptr : sdispls.data(), sendtype, recvbuf, recvcounts.data(),
                          rdispls.data(), recvtype, call.mpi(), request);
  });
}

void alltoallw(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<const MPI_Datatype> sendtypes, void* recvbuf,
               std::span<const int> recvcounts, std::span<const int> rdispls,
               std::span<const MPI_Datatype> recvtypes) {
  CollectiveCall call = detail::begin_collective(comm, "ep::alltoallw");
  check_recvbuf(call, recvbuf);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto [send, recv] = detail::alltoallw_sides(sendbuf, sendcounts, sdispls, sendtypes,
                                                    recvbuf, recvcounts, rdispls, recvtypes);
  // MPI reads the type arrays until the nonblocking call completes, so they
  // live here, outside the starter (which runs after the arguments are checked).
  std::vector<MPI_Datatype> send_types;
  std::vector<MPI_Datatype> recv_types;
  exchange(call, send, recv, in_place, [&](MPI_Request* request) {
    if (!in_place) send_types = usable_types(call, sendtypes, sendcounts);
    recv_types = usable_types(call, recvtypes, recvcounts);
    return MPI_Ialltoallw(sendbuf, in_place ? nullptr : sendcounts.data(),
                          in_place ? nullptr : sdispls.data(),
                          in_place ? nullptr : send_types.data(), recvbuf, recvcounts.data(),
                          rdispls.data(), recv_types.data(), call.mpi(), request);
  });
}

}  // namespace ep
