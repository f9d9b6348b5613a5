// MPI_Reduce_scatter and MPI_Reduce_scatter_block.
//
// Hierarchical path: the threads of a process fold the whole vector in
// thread order into a process buffer, each thread one slice, placing the
// blocks in slot order (process by process, threads in order); one
// MPI_Ireduce_scatter over the processes then leaves each process the blocks
// of its own endpoints, whatever the EP rank order, and each thread copies
// its block out. Thread order then process order is EP rank order when the
// numbering is process-major, so non-commutative ops are honoured there.
//
// Rank-order path (ReduceOptions::layout_independent, or a non-commutative op
// on a numbering that is not process-major): one MPI_Ialltoallv hands every
// process, from every endpoint, the blocks of its own endpoints; each thread
// folds its block over all EP ranks in rank order with the same right fold
// as the layout-independent reduce, so the bits do not depend on the layout.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "collective/block_table.hpp"
#include "collective/fold.hpp"
#include "ep/collectives.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::Elements;
using detail::TypedScratch;

// How the reduced vector is cut among the EP ranks.
struct Cut {
  int uniform = -1;  // the block form: every rank gets this many elements
  std::span<const int> counts;

  [[nodiscard]] int count(int rank) const {
    return uniform >= 0 ? uniform : counts[static_cast<std::size_t>(rank)];
  }
};

// Element offsets of the blocks in the vector, in EP rank order (size + 1
// entries, the last the vector's length).
std::vector<MPI_Aint> rank_offsets(const CollectiveCall& call, const Cut& cut) {
  std::vector<MPI_Aint> offsets(static_cast<std::size_t>(call.size()) + 1, 0);
  for (int r = 0; r < call.size(); ++r) {
    offsets[static_cast<std::size_t>(r) + 1] = offsets[static_cast<std::size_t>(r)] + cut.count(r);
  }
  return offsets;
}

// Elements of the blocks of each process's endpoints.
std::vector<int> process_totals(const CollectiveCall& call, const Cut& cut) {
  const RankMap& map = call.comm.rank_map();
  std::vector<int> totals(static_cast<std::size_t>(map.num_processes()), 0);
  for (int r = 0; r < map.size(); ++r)
    totals[static_cast<std::size_t>(map.locate(r).process)] += cut.count(r);
  return totals;
}

// MPI counts are ints: the vector, times `copies` on the rank-order path,
// must fit. Every endpoint evaluates the same bound, so all of them throw or
// none does.
void check_length(const CollectiveCall& call, MPI_Aint length, int copies) {
  detail::checked_int_count(length, copies, "vector elements x copies", call.name, call.rank);
}

// The leader's buffers of the hierarchical path: the process's folded
// vector, and the process's share of the reduced one. MPI_Ireduce_scatter
// gets both, never MPI_IN_PLACE: MPICH 4.0.2's, in place, leaves the share at
// its place in the vector and copies it to the front with memcpy, which
// aborts the job when the two overlap (a share longer than what comes before
// it, from 512 KiB of vector on).
struct ProcessVectors {
  TypedScratch folded;
  TypedScratch share;
};

void reduce_scatter_hierarchical(CollectiveCall& call, const Elements& e, const void* contribution,
                                 void* recvbuf, const Cut& cut) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const std::vector<MPI_Aint> offsets = rank_offsets(call, cut);
  const auto length = static_cast<int>(offsets.back());
  const std::vector<int> totals = process_totals(call, cut);
  const bool across = call.processes() > 1;

  ProcessVectors vectors;
  if (call.leader()) {
    vectors.folded = TypedScratch(length, e.type, call.name, call.rank);
    if (across) {
      vectors.share =
          TypedScratch(totals[static_cast<std::size_t>(me)], e.type, call.name, call.rank);
    }
    call.team.share_aux(0, &vectors);
  }
  call.team.publish(call.thread, contribution);
  call.team.barrier();

  ProcessVectors& shared = *call.team.shared_aux<ProcessVectors>(0);
  void* process_buffer = shared.folded.data();
  std::vector<const void*> inputs(static_cast<std::size_t>(call.local_size()));
  std::vector<const void*> shifted(inputs.size());
  for (int t = 0; t < call.local_size(); ++t)
    inputs[static_cast<std::size_t>(t)] = call.team.published(t);
  // Walk the blocks in slot order and fold the part that falls in this
  // thread's slice; note where this thread's block lands in its process's share.
  const auto [first, last] = detail::slice_of(call, length);
  int slot = 0;
  int my_share_offset = 0;
  for (int p = 0; p < map.num_processes(); ++p) {
    for (int t = 0; t < map.endpoints_of(p); ++t) {
      const int rank = map.ep_rank(p, t);
      const int count = cut.count(rank);
      if (p == me && t < call.thread) my_share_offset += count;
      const int lo = std::max(first, slot);
      const int hi = std::min(last, slot + count);
      if (lo < hi) {
        const MPI_Aint source = offsets[static_cast<std::size_t>(rank)] + (lo - slot);
        for (std::size_t i = 0; i < inputs.size(); ++i) shifted[i] = e.at(inputs[i], source);
        detail::fold_right(call, e, shifted, e.at(process_buffer, lo), hi - lo);
      }
      slot += count;
    }
  }
  call.team.barrier();
  // With one process the folded vector is its share already.
  void* share = process_buffer;
  if (across) {
    share = shared.share.data();
    detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
      detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
        return MPI_Ireduce_scatter(process_buffer, share, totals.data(), e.type, e.op, mpi,
                                   request);
      });
    });
  }
  detail::copy_elements(e, e.at(share, my_share_offset), recvbuf, cut.count(call.rank));
  call.team.barrier();  // the leader's buffers are read until here
}

// Staging buffers of the rank-order path, allocated by the leader.
struct Exchange {
  TypedScratch send;
  TypedScratch receive;
  void* received = nullptr;  // `receive`, or `send` with one process
};

void reduce_scatter_in_rank_order(CollectiveCall& call, const Elements& e, const void* contribution,
                                  void* recvbuf, const Cut& cut) {
  const RankMap& map = call.comm.rank_map();
  const int processes = map.num_processes();
  const int me = call.comm.process_rank();
  const int threads = call.local_size();
  const std::vector<MPI_Aint> offsets = rank_offsets(call, cut);
  const auto length = static_cast<int>(offsets.back());
  const std::vector<int> totals = process_totals(call, cut);
  const int mine_total = totals[static_cast<std::size_t>(me)];

  // Send buffer: for each process p, for each local thread, the blocks of
  // p's endpoints in p's thread order. Receive buffer: for each process q,
  // for each of q's threads, the blocks of this process's endpoints.
  std::vector<int> send_counts(static_cast<std::size_t>(processes));
  std::vector<int> send_displs(static_cast<std::size_t>(processes));
  std::vector<int> recv_counts(static_cast<std::size_t>(processes));
  std::vector<int> recv_displs(static_cast<std::size_t>(processes));
  for (int p = 0, sent = 0, received = 0; p < processes; ++p) {
    const auto i = static_cast<std::size_t>(p);
    send_counts[i] = threads * totals[i];
    send_displs[i] = sent;
    sent += send_counts[i];
    recv_counts[i] = map.endpoints_of(p) * mine_total;
    recv_displs[i] = received;
    received += recv_counts[i];
  }

  Exchange exchange;
  if (call.leader()) {
    exchange.send = TypedScratch(threads * length, e.type, call.name, call.rank);
    if (processes > 1) {
      exchange.receive = TypedScratch(call.size() * mine_total, e.type, call.name, call.rank);
      exchange.received = exchange.receive.data();
    } else {
      exchange.received = exchange.send.data();
    }
    call.team.share_aux(0, &exchange);
  }
  call.team.barrier();
  auto& shared = *call.team.shared_aux<Exchange>(0);

  // Each thread places its own contribution.
  void* send = shared.send.data();
  for (int p = 0; p < processes; ++p) {
    MPI_Aint at = send_displs[static_cast<std::size_t>(p)] +
                  static_cast<MPI_Aint>(call.thread) * totals[static_cast<std::size_t>(p)];
    for (int t = 0; t < map.endpoints_of(p); ++t) {
      const int rank = map.ep_rank(p, t);
      detail::copy_elements(e, e.at(contribution, offsets[static_cast<std::size_t>(rank)]),
                            e.at(send, at), cut.count(rank));
      at += cut.count(rank);
    }
  }
  call.team.barrier();
  if (processes > 1) {
    detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(
          MPI_Ialltoallv(send, send_counts.data(), send_displs.data(), e.type, shared.received,
                         recv_counts.data(), recv_displs.data(), e.type, call.mpi(), &request),
          call.name, call.rank);
      detail::wait_mpi(request, call);
    });
  }

  // This thread's block from every EP rank, in rank order.
  int within = 0;  // offset of this thread's block in its process's share
  for (int t = 0; t < call.thread; ++t) within += cut.count(map.ep_rank(me, t));
  std::vector<const void*> inputs(static_cast<std::size_t>(map.size()));
  for (int r = 0; r < map.size(); ++r) {
    const Location from = map.locate(r);
    const MPI_Aint at = recv_displs[static_cast<std::size_t>(from.process)] +
                        static_cast<MPI_Aint>(from.thread) * mine_total + within;
    inputs[static_cast<std::size_t>(r)] = e.at(static_cast<const void*>(shared.received), at);
  }
  detail::fold_right(call, e, inputs, recvbuf, cut.count(call.rank));
  call.team.barrier();  // the leader's buffers are read until here
}

void reduce_scatter_cut(CollectiveCall& call, const void* sendbuf, void* recvbuf, const Cut& cut,
                        const Elements& e, const ReduceOptions& options) {
  const MPI_Aint length = rank_offsets(call, cut).back();
  const void* contribution = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  if (detail::use_rank_order(call, e.op, options)) {
    // The staging holds up to (endpoints) copies of the vector.
    check_length(call, length, call.size());
    reduce_scatter_in_rank_order(call, e, contribution, recvbuf, cut);
  } else {
    check_length(call, length, 1);
    reduce_scatter_hierarchical(call, e, contribution, recvbuf, cut);
  }
}

// Whether the call goes to MPI's own reduce_scatter with the user's
// arguments: one endpoint per process, in process order, and a separate
// send buffer (MPI_IN_PLACE takes the hierarchical path, which hands MPI two
// buffers; see ProcessVectors).
bool straight_to_mpi(const CollectiveCall& call, const void* sendbuf,
                     const ReduceOptions& options) {
  return !options.layout_independent && call.one_endpoint_per_process() && sendbuf != MPI_IN_PLACE;
}

}  // namespace

void reduce_scatter(const Communicator& comm, const void* sendbuf, void* recvbuf,
                    std::span<const int> recvcounts, MPI_Datatype datatype, MPI_Op op,
                    const ReduceOptions& options) {
  CollectiveCall call = detail::begin_collective(comm, "ep::reduce_scatter");
  const Elements e = detail::make_elements(call, 0, datatype, op);
  detail::check_counts(recvcounts, call.size(), "recvcounts", call.name, call.rank);
  if (straight_to_mpi(call, sendbuf, options)) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts.data(), datatype, op, mpi, request);
    });
    return;
  }
  reduce_scatter_cut(call, sendbuf, recvbuf, Cut{-1, recvcounts}, e, options);
}

void reduce_scatter_block(const Communicator& comm, const void* sendbuf, void* recvbuf,
                          int recvcount, MPI_Datatype datatype, MPI_Op op,
                          const ReduceOptions& options) {
  CollectiveCall call = detail::begin_collective(comm, "ep::reduce_scatter_block");
  const Elements e = detail::make_elements(call, recvcount, datatype, op);
  if (straight_to_mpi(call, sendbuf, options)) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, mpi, request);
    });
    return;
  }
  reduce_scatter_cut(call, sendbuf, recvbuf, Cut{recvcount, {}}, e, options);
}

}  // namespace ep
