// MPI_Reduce and MPI_Allreduce.
//
// Hierarchical path: the threads of a process fold their contributions in
// thread order, each thread taking one slice of the vector (so a large
// reduction uses every core), into a process buffer; the leaders combine the
// process buffers with MPI (in process order, which MPI keeps for
// non-commutative ops); the threads copy the result out. With process-major
// numbering, thread order then process order is EP rank order, so
// non-commutative ops are honoured.
//
// Rank-order path (ReduceOptions::layout_independent, or a non-commutative op
// on a communicator whose ranks are not process-major): every process
// gathers all contributions and folds them in EP rank order, the same
// evaluation whatever the layout, hence the same bits.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "collective/collective_support.hpp"
#include "ep/collectives.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::TypedBuffer;
using detail::TypedScratch;

struct ReduceArgs {
  const void* contribution;  // this endpoint's input (recvbuf for MPI_IN_PLACE)
  int count;
  MPI_Datatype type;
  MPI_Op op;
  detail::TypeLayout layout;
  MPI_Aint extent;
};

ReduceArgs make_args(const CollectiveCall& call, const void* sendbuf, const void* recvbuf,
                     int count, MPI_Datatype type, MPI_Op op) {
  detail::check_count(count, call.name, call.rank);
  if (op == MPI_OP_NULL) {
    throw Error(ErrorKind::kArgument, call.name, call.rank, "op is MPI_OP_NULL");
  }
  ReduceArgs args{sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,   count, type, op,
                  detail::layout_of(type, call.name, call.rank), 0};
  args.extent = detail::element_offset(type, 1, call.name, call.rank);
  return args;
}

bool commutative(const CollectiveCall& call, MPI_Op op) {
  int commute = 0;
  check_mpi(MPI_Op_commutative(op, &commute), call.name, call.rank);
  return commute != 0;
}

const std::byte* at(const void* base, MPI_Aint offset) {
  return static_cast<const std::byte*>(base) + offset;
}

// This thread's slice [first, last) of `count` elements.
std::pair<int, int> slice_of(const CollectiveCall& call, int count) {
  const auto threads = static_cast<long long>(call.local_size());
  const auto first = static_cast<int>(count * static_cast<long long>(call.thread) / threads);
  const auto last = static_cast<int>(count * static_cast<long long>(call.thread + 1) / threads);
  return {first, last};
}

// result[slice] = c[0] op (c[1] op (... op c[n-1])) over `inputs` in order.
void fold_slice(const CollectiveCall& call, const ReduceArgs& args,
                const std::vector<const void*>& inputs, void* result, int first, int last) {
  const int n = last - first;
  if (n <= 0 || inputs.empty()) return;
  const MPI_Aint offset = first * args.extent;
  void* target = static_cast<std::byte*>(result) + offset;
  const TypedBuffer source{at(inputs.back(), offset), n, args.type, args.layout};
  detail::copy_typed(source, {target, n, args.type, args.layout}, source.bytes());
  for (auto i = static_cast<std::ptrdiff_t>(inputs.size()) - 2; i >= 0; --i) {
    check_mpi(MPI_Reduce_local(at(inputs[static_cast<std::size_t>(i)], offset), target, n,
                               args.type, args.op),
              call.name, call.rank);
  }
}

void copy_out(const ReduceArgs& args, const void* result, void* recvbuf) {
  if (result == recvbuf) return;
  const TypedBuffer source{result, args.count, args.type, args.layout};
  detail::copy_typed(source, {recvbuf, args.count, args.type, args.layout}, source.bytes());
}

// Below this vector size one thread folds everything: sharing the work out
// would cost one more team barrier than the fold itself takes.
constexpr std::size_t kSharedFoldBytes = 16 * 1024;

std::vector<const void*> published_inputs(const CollectiveCall& call) {
  std::vector<const void*> inputs(static_cast<std::size_t>(call.local_size()));
  for (int t = 0; t < call.local_size(); ++t) {
    inputs[static_cast<std::size_t>(t)] = call.team.published(t);
  }
  return inputs;
}

// Publishes the contributions and the leader's scratch (aux of thread 0). A
// large vector is folded now, each thread taking a slice; returns false when
// the vector is small and the leader must still fold it (fold_all_on_leader,
// inside its MPI stage, so that a failure reaches the whole team).
bool fold_locally(CollectiveCall& call, const ReduceArgs& args, TypedScratch& leader_scratch) {
  if (call.leader()) {
    leader_scratch = TypedScratch(args.count, args.type, call.name, call.rank);
    call.team.publish_aux(0, leader_scratch.data());
  }
  call.team.publish(call.thread, args.contribution);
  call.team.barrier();
  const std::size_t bytes = static_cast<std::size_t>(args.count) * args.layout.size;
  if (bytes <= kSharedFoldBytes) return false;
  const auto [first, last] = slice_of(call, args.count);
  fold_slice(call, args, published_inputs(call), call.team.published_aux(0), first, last);
  call.team.barrier();
  return true;
}

void fold_all_on_leader(const CollectiveCall& call, const ReduceArgs& args) {
  fold_slice(call, args, published_inputs(call), call.team.published_aux(0), 0, args.count);
}

// Elements in `count` blocks of `per_block` elements, or kCount when that
// exceeds what an MPI count can hold.
int checked_product(const CollectiveCall& call, long long count, long long per_block) {
  const long long total = count * per_block;
  if (total > std::numeric_limits<int>::max()) {
    throw Error(ErrorKind::kCount, call.name, call.rank,
                std::to_string(count) + " x " + std::to_string(per_block) +
                    " elements exceed the largest MPI count");
  }
  return static_cast<int>(total);
}

// Rank-order reduction. The leader's scratch (aux of thread 0) holds every
// contribution, process-major, followed by the result; returns the result.
void* reduce_in_rank_order(CollectiveCall& call, const ReduceArgs& args, TypedScratch& storage) {
  const RankMap& map = call.comm.rank_map();
  const int processes = map.num_processes();
  // Contributions are stored process-major: process p's threads from slot
  // first_slot[p] on; the result takes the slot after the last.
  std::vector<int> first_slot(static_cast<std::size_t>(processes) + 1, 0);
  for (int p = 0; p < processes; ++p) first_slot[p + 1] = first_slot[p] + map.endpoints_of(p);
  const int me = call.comm.process_rank();
  const int slots = map.size() + 1;
  checked_product(call, args.count, slots);

  if (call.leader()) {
    storage = TypedScratch(args.count * slots, args.type, call.name, call.rank);
    call.team.publish_aux(0, storage.data());
  }
  call.team.barrier();
  auto* base = static_cast<std::byte*>(call.team.published_aux(0));
  const MPI_Aint slot_bytes = args.count * args.extent;
  void* result = base + map.size() * slot_bytes;
  {
    const TypedBuffer source{args.contribution, args.count, args.type, args.layout};
    void* slot = base + (first_slot[me] + call.thread) * slot_bytes;
    detail::copy_typed(source, {slot, args.count, args.type, args.layout}, source.bytes());
  }
  call.team.barrier();
  detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
    if (processes == 1) return;
    std::vector<int> counts(static_cast<std::size_t>(processes));
    std::vector<int> displs(static_cast<std::size_t>(processes));
    for (int p = 0; p < processes; ++p) {
      counts[p] = map.endpoints_of(p) * args.count;
      displs[p] = first_slot[p] * args.count;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, counts.data(),
                              displs.data(), args.type, call.mpi(), &request),
              call.name, call.rank);
    detail::wait_mpi(request, call);
  });
  std::vector<const void*> inputs(static_cast<std::size_t>(map.size()));
  for (int r = 0; r < map.size(); ++r) {
    const Location where = map.locate(r);
    inputs[r] = base + (first_slot[where.process] + where.thread) * slot_bytes;
  }
  const auto [first, last] = slice_of(call, args.count);
  fold_slice(call, args, inputs, result, first, last);
  call.team.barrier();
  return result;
}

// Hierarchical reduction: the local fold into the leader's scratch, then, with
// several processes, the leader's `combine(process_result, &request)` (an MPI
// nonblocking reduction over the process results) and its wait. Returns the
// process result; the caller copies out and meets the team before returning.
template <class Combine>
void* reduce_hierarchically(CollectiveCall& call, const ReduceArgs& args, TypedScratch& scratch,
                            Combine&& combine) {
  const bool folded = fold_locally(call, args, scratch);
  void* process_result = call.team.published_aux(0);
  detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
    if (!folded) fold_all_on_leader(call, args);
    if (call.processes() == 1) return;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(combine(process_result, &request), call.name, call.rank);
    detail::wait_mpi(request, call);
  });
  return process_result;
}

bool use_rank_order(const CollectiveCall& call, const ReduceArgs& args,
                    const ReduceOptions& options) {
  return options.layout_independent ||
         (!call.comm.rank_map().process_major() && !commutative(call, args.op));
}

}  // namespace

void allreduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  CollectiveCall call = detail::begin_collective(comm, "ep::allreduce");
  const ReduceArgs args = make_args(call, sendbuf, recvbuf, count, datatype, op);

  if (use_rank_order(call, args, options)) {
    TypedScratch storage;
    copy_out(args, reduce_in_rank_order(call, args, storage), recvbuf);
    call.team.barrier();
    return;
  }
  // One endpoint in every process: straight to MPI (MPI_IN_PLACE must then be
  // used by all processes or none, as it is by all endpoints or none).
  if (call.comm.rank_map().max_endpoints_per_process() == 1) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, call.mpi(), &request),
              call.name, call.rank);
    detail::wait_mpi(request, call);
    return;
  }
  TypedScratch scratch;
  void* process_result =
      reduce_hierarchically(call, args, scratch, [&](void* result, MPI_Request* request) {
        return MPI_Iallreduce(MPI_IN_PLACE, result, count, datatype, op, call.mpi(), request);
      });
  copy_out(args, process_result, recvbuf);
  call.team.barrier();  // the leader's scratch is read until here
}

void reduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
            MPI_Datatype datatype, MPI_Op op, int root, const ReduceOptions& options) {
  CollectiveCall call = detail::begin_collective(comm, "ep::reduce");
  detail::check_root(root, call.size(), call.name, call.rank);
  const bool is_root = call.rank == root;
  detail::check_in_place_only_at_root(call, sendbuf, root);
  const ReduceArgs args = make_args(call, sendbuf, recvbuf, count, datatype, op);

  if (use_rank_order(call, args, options)) {
    TypedScratch storage;
    void* result = reduce_in_rank_order(call, args, storage);
    if (is_root) copy_out(args, result, recvbuf);
    call.team.barrier();
    return;
  }
  const Location root_at = call.comm.rank_map().locate(root);
  const bool root_process = root_at.process == call.comm.process_rank();
  if (call.comm.rank_map().max_endpoints_per_process() == 1) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root_at.process, call.mpi(), &request),
        call.name, call.rank);
    detail::wait_mpi(request, call);
    return;
  }
  TypedScratch scratch;
  void* process_result =
      reduce_hierarchically(call, args, scratch, [&](void* result, MPI_Request* request) {
        const void* send = root_process ? MPI_IN_PLACE : result;
        return MPI_Ireduce(send, result, count, datatype, op, root_at.process, call.mpi(), request);
      });
  if (is_root) copy_out(args, process_result, recvbuf);
  call.team.barrier();
}

}  // namespace ep
