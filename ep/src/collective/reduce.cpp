// MPI_Reduce and MPI_Allreduce.
//
// Hierarchical path: the threads of a process fold their contributions in
// thread order, each thread taking one slice of the vector (so a large
// reduction uses every core), into a process buffer; the leaders combine the
// process buffers with MPI (in process order, which MPI keeps for
// non-commutative ops); the threads copy the result out. On a communicator
// within one process a large vector skips the process buffer: each thread
// writes its folded slice straight into every receive buffer
// (reduce_scatter_within_process). A small dense one (up to 112 B, up to 8
// threads) is one line exchange (LocalTeam::line_staging): each thread's
// contribution travels on the line that announces it and every thread folds
// them all, 0.55x the leader's gather-release round at 8-64 B, 1 process x 2
// threads (ep_collectives, t_min); an exchange round whose counter and
// staging lie on different lines had measured no faster than the leader's
// round. Larger small ones stay with the leader's round. With process-major
// numbering, thread order then process order is EP rank order, so
// non-commutative ops are honoured.
//
// A small reduction within one process with a predefined op on a predefined
// type (MPI_SUM of doubles above all) is decided at entry, before the
// general path builds anything (reduce_predefined_in_line): the line
// exchange with the op's own loop folding the lines in thread order
// (collective/predefined_fold.hpp), which is what every other local fold
// of such a pair runs too, so both give the same bits. The general path
// spent more instructions than the hand-off itself on its layers (element
// layout, input list, typed copy, dispatch); docs/profiles.md, "The team
// round and the intra latency against the floors", has the counts.
//
// Rank-order path (ReduceOptions::layout_independent, or a non-commutative op
// on a communicator whose ranks are not process-major): every process
// gathers all contributions and folds them in EP rank order, the same
// evaluation whatever the layout, hence the same bits. The fold order and
// the slot layout are those of fold.hpp, shared with every other reduction.
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "collective/fold.hpp"
#include "collective/predefined_fold.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::Elements;
using detail::TypedScratch;

// One endpoint's reduction: the element type and op, and its input
// (recvbuf for MPI_IN_PLACE).
struct Reduction {
  Elements e;
  const void* contribution;
  int count;
};

Reduction make_reduction(const CollectiveCall& call, const void* sendbuf, const void* recvbuf,
                         int count, MPI_Datatype type, MPI_Op op) {
  return {detail::make_elements(call, count, type, op), sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
          count};
}

void copy_out(const Reduction& red, const void* result, void* recvbuf) {
  detail::copy_elements(red.e, result, recvbuf, red.count);
}

// Up to this vector size the leader folds everything in one gather-release
// round; above it the threads share the fold out by slices, which pays for
// the extra team barriers.
constexpr std::size_t kSharedFoldBytes = std::size_t{16} * 1024;

// The threads' published contributions, in thread order. Kept per thread:
// allocating the list on every call cost as much as folding a short vector.
std::span<const void* const> published_inputs(const CollectiveCall& call) {
  thread_local std::vector<const void*> inputs;
  inputs.resize(static_cast<std::size_t>(call.local_size()));
  for (int t = 0; t < call.local_size(); ++t) {
    inputs[static_cast<std::size_t>(t)] = call.team.published(t);
  }
  return inputs;
}

// Large vectors: publishes the contributions and the leader's scratch (aux
// of thread 0), and folds with each thread taking a slice.
void fold_in_slices(CollectiveCall& call, const Reduction& red, TypedScratch& leader_scratch) {
  if (call.leader()) {
    leader_scratch.reshape(red.count, red.e.type, call.name, call.rank);
    call.team.publish_aux(0, leader_scratch.data());
  }
  call.team.publish(call.thread, red.contribution);
  call.team.barrier();
  const auto [first, last] = detail::slice_of(call, red.count);
  detail::fold_right_slice(call, red.e, published_inputs(call), call.team.published_aux(0), first,
                           last);
  call.team.barrier();
}

// Rank-order reduction. The leader's scratch (aux of thread 0) holds every
// contribution in the slots of fold.hpp, followed by the result; returns the
// result.
void* reduce_in_rank_order(CollectiveCall& call, const Reduction& red, TypedScratch& storage) {
  const RankMap& map = call.comm.rank_map();
  const int slots = map.size() + 1;
  detail::checked_int_count(red.count, slots, "count x slots of the rank-order reduction",
                            call.name, call.rank);
  const detail::SlotLayout layout(map, red.count);

  if (call.leader()) {
    storage = TypedScratch(red.count * slots, red.e.type, call.name, call.rank);
    call.team.publish_aux(0, storage.data());
  }
  call.team.barrier();
  void* base = call.team.published_aux(0);
  void* result = red.e.at(base, layout.total_elements());
  detail::copy_elements(red.e, red.contribution,
                        red.e.at(base, layout.first_element(map.locate(call.rank))), red.count);
  call.team.barrier();
  detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
    if (map.num_processes() == 1) return;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(layout.start_allgather(base, red.e.type, call.mpi(), &request), call.name, call.rank);
    detail::wait_mpi(request, call);
  });
  const auto [first, last] = detail::slice_of(call, red.count);
  detail::fold_right_slice(call, red.e, layout.in_rank_order(red.e, base, map.size()), result,
                           first, last);
  call.team.barrier();
  return result;
}

// The leader's fold target of the hierarchical reductions, kept by each thread
// from call to call (TypedScratch::reshape). A thread leads at most one
// blocking collective at a time, and the team reads the scratch only until
// the collective's last barrier.
thread_local TypedScratch t_fold_scratch;

// Hierarchical reduction of a large vector: the sliced fold into the
// leader's scratch, then, with several processes, the leader's
// `combine(process_result, &request)` (an MPI nonblocking reduction over the
// process results) and its wait. Returns the process result; the caller
// copies out and meets the team before returning.
template <class Combine>
void* reduce_hierarchically(CollectiveCall& call, const Reduction& red, TypedScratch& scratch,
                            Combine&& combine) {
  fold_in_slices(call, red, scratch);
  void* process_result = call.team.published_aux(0);
  detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
    if (call.processes() == 1) return;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(combine(process_result, &request), call.name, call.rank);
    detail::wait_mpi(request, call);
  });
  return process_result;
}

// Small vectors (at most kSharedFoldBytes): one gather-release round. Each
// thread publishes its contribution and its receive buffer (null where it
// gets no result); the leader folds them in thread order into its scratch,
// with several processes runs `combine(process_result, &request)` and its
// wait, and copies the result into every receive buffer before releasing
// the team.
template <class Combine>
void reduce_in_one_round(CollectiveCall& call, const Reduction& red, void* recvbuf,
                         Combine&& combine) {
  call.team.publish(call.thread, red.contribution);
  call.team.publish_aux(call.thread, recvbuf);
  detail::gather_release(call, 0, [&](detail::RoundArrivals& arrivals) {
    t_fold_scratch.reshape(red.count, red.e.type, call.name, call.rank);
    arrivals.await();
    void* result = t_fold_scratch.data();
    detail::fold_right(call, red.e, published_inputs(call), result, red.count);
    if (call.processes() > 1) {
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(combine(result, &request), call.name, call.rank);
      detail::wait_mpi(request, call);
    }
    for (int t = 0; t < call.local_size(); ++t) {
      void* target = call.team.published_aux(t);
      if (target != nullptr) copy_out(red, result, target);
    }
  });
}

// A communicator within one process, vectors above kSharedFoldBytes: a
// reduce-scatter among the threads in shared memory, then each hands its
// share out. Thread t folds slice t of every contribution (in thread order,
// as every hierarchical fold: the same bits) into a scratch of its own and
// copies it into slice t of every receive buffer (null where the endpoint
// gets no result). Under MPI_IN_PLACE the contributions are receive
// buffers, but slice t of them is read and written by thread t alone, the
// writes after the reads. Two barriers and every thread's memory bandwidth,
// where folding into the leader's scratch and copying it all out took four
// and made each thread read the whole vector from one place.
void reduce_scatter_within_process(CollectiveCall& call, const Reduction& red, void* recvbuf) {
  call.team.publish(call.thread, red.contribution);
  call.team.publish_aux(call.thread, recvbuf);
  call.team.barrier();
  std::exception_ptr failure;
  try {
    const auto [first, last] = detail::slice_of(call, red.count);
    if (last > first) {
      t_fold_scratch.reshape(last - first, red.e.type, call.name, call.rank);
      const std::span<const void* const> published = published_inputs(call);
      std::vector<const void*> inputs(published.begin(), published.end());
      for (const void*& input : inputs) input = red.e.at(input, first);
      detail::fold_right(call, red.e, inputs, t_fold_scratch.data(), last - first);
      for (int t = 0; t < call.local_size(); ++t) {
        void* target = call.team.published_aux(t);
        if (target != nullptr) {
          detail::copy_elements(red.e, t_fold_scratch.data(), red.e.at(target, first),
                                last - first);
        }
      }
    }
  } catch (...) {
    failure = std::current_exception();  // raised after the barrier: nobody waits for this thread
  }
  call.team.barrier();  // every slice is read and written until here
  if (failure) std::rethrow_exception(failure);
}

// A communicator within one process, a dense vector of at most
// LocalTeam::kLineExchangeBytes: one line exchange. Every thread copies its
// contribution into its own line, publishes it with the same line, waits
// for the others' and folds them all in thread order (the hierarchical
// order, so every endpoint gets the same bits) straight into its receive
// buffer (null: no result here, a reduce's non-root). One line hand-off
// per peer and nobody waits for a leader, where the gather-release round
// is two hand-offs in a row (the arrivals, then the leader's release).
// Past kLineExchangeThreads every thread would read too many lines: the
// leader's round folds once for all.
constexpr int kLineExchangeThreads = 8;

bool fits_line_exchange(const CollectiveCall& call, const Reduction& red) {
  const detail::TypeLayout& layout = red.e.layout;
  return call.processes() == 1 && call.local_size() > 1 &&
         call.local_size() <= kLineExchangeThreads && layout.contiguous && layout.true_lb == 0 &&
         red.e.extent == layout.size &&
         static_cast<std::size_t>(red.count) * static_cast<std::size_t>(layout.size) <=
             detail::LocalTeam::kLineExchangeBytes;
}

void reduce_in_line_exchange(CollectiveCall& call, const Reduction& red, void* recvbuf) {
  detail::LocalTeam& team = call.team;
  const std::size_t bytes =
      static_cast<std::size_t>(red.count) * static_cast<std::size_t>(red.e.layout.size);
  std::byte* mine = team.line_staging(call.thread);
  // Before the fold writes recvbuf, which is the contribution under MPI_IN_PLACE.
  if (bytes > 0) std::memcpy(mine, red.contribution, bytes);
  team.line_publish(call.thread);
  team.line_await_all(call.thread);
  if (recvbuf == nullptr) return;
  thread_local std::vector<const void*> inputs;
  inputs.resize(static_cast<std::size_t>(call.local_size()));
  for (int t = 0; t < call.local_size(); ++t) {
    inputs[static_cast<std::size_t>(t)] = team.line_data(call.thread, t);
  }
  detail::fold_right(call, red.e, inputs, recvbuf, red.count);
}

// The line exchange above for a predefined op on a predefined type
// (predefined_fold.hpp), decided before anything else of the general path
// runs: no element layout, no Elements, no list of inputs; the threads'
// lines are folded by the op's own loop, in thread order with the
// evaluation of fold_right, so the bits are those of the general path
// (reduce_in_line_exchange with the same op). The arguments it accepts are
// valid by construction (a count >= 0, a predefined type and op), so every
// error is still raised by the general path with its message. Returns
// false, having done nothing, when the call does not qualify. `target`:
// null where the endpoint gets no result.
bool reduce_predefined_in_line(CollectiveCall& call, const void* contribution, void* target,
                               int count, MPI_Datatype type, MPI_Op op,
                               const ReduceOptions& options) {
  const int threads = call.local_size();
  if (options.layout_independent || count < 0 || threads < 2 || threads > kLineExchangeThreads ||
      !call.comm.single_process()) {
    return false;
  }
  const detail::PredefinedFold* fold = detail::predefined_fold(type, op);
  if (fold == nullptr) return false;
  const std::size_t bytes =
      static_cast<std::size_t>(count) * static_cast<std::size_t>(fold->element_bytes);
  if (bytes > detail::LocalTeam::kLineExchangeBytes) return false;
  detail::LocalTeam& team = call.team;
  // Before the fold writes target, which is the contribution under MPI_IN_PLACE.
  if (bytes > 0) std::memcpy(team.line_staging(call.thread), contribution, bytes);
  team.line_publish(call.thread);
  team.line_await_all(call.thread);
  if (target != nullptr && count > 0) {
    fold->fold_strided(team.line_data(call.thread, 0), detail::LocalTeam::kLineDataStride, threads,
                       target, count);
  }
  return true;
}

bool fits_one_round(const Reduction& red) {
  return static_cast<std::size_t>(red.count) * red.e.layout.size <= kSharedFoldBytes;
}

// allreduce past reduce_predefined_in_line. Out of line (noinline), so that
// the small path's entry does not set up the frame of all of this.
[[gnu::noinline]] void allreduce_in_general(CollectiveCall& call, const void* sendbuf,
                                            void* recvbuf, int count, MPI_Datatype datatype,
                                            MPI_Op op, const ReduceOptions& options) {
  const Reduction red = make_reduction(call, sendbuf, recvbuf, count, datatype, op);

  if (detail::use_rank_order(call, op, options)) {
    TypedScratch storage;
    copy_out(red, reduce_in_rank_order(call, red, storage), recvbuf);
    call.team.barrier();
    return;
  }
  // One endpoint in every process: straight to MPI (MPI_IN_PLACE must then be
  // used by all processes or none, as it is by all endpoints or none).
  if (call.one_endpoint_per_process(detail::RankOrder::kAny)) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, mpi, request);
    });
    return;
  }
  if (fits_line_exchange(call, red)) {
    reduce_in_line_exchange(call, red, recvbuf);
    return;
  }
  auto combine = [&](void* result, MPI_Request* request) {
    return MPI_Iallreduce(MPI_IN_PLACE, result, count, datatype, op, call.mpi(), request);
  };
  if (fits_one_round(red)) {
    reduce_in_one_round(call, red, recvbuf, combine);
    return;
  }
  if (call.processes() == 1) {
    reduce_scatter_within_process(call, red, recvbuf);
    return;
  }
  void* process_result = reduce_hierarchically(call, red, t_fold_scratch, combine);
  copy_out(red, process_result, recvbuf);
  call.team.barrier();  // the leader's scratch is read until here
}

}  // namespace

void allreduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  CollectiveCall call = detail::begin_collective(comm, "ep::allreduce");
  if (reduce_predefined_in_line(call, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf, count,
                                datatype, op, options)) {
    return;
  }
  allreduce_in_general(call, sendbuf, recvbuf, count, datatype, op, options);
}

void reduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
            MPI_Datatype datatype, MPI_Op op, int root, const ReduceOptions& options) {
  CollectiveCall call = detail::begin_collective(comm, "ep::reduce");
  detail::check_root(root, call.size(), call.name, call.rank);
  const bool is_root = call.rank == root;
  detail::check_in_place_only_at_root(sendbuf, root, call.name, call.rank);
  if (reduce_predefined_in_line(call, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
                                is_root ? recvbuf : nullptr, count, datatype, op, options)) {
    return;
  }
  const Reduction red = make_reduction(call, sendbuf, recvbuf, count, datatype, op);

  if (detail::use_rank_order(call, op, options)) {
    TypedScratch storage;
    void* result = reduce_in_rank_order(call, red, storage);
    if (is_root) copy_out(red, result, recvbuf);
    call.team.barrier();
    return;
  }
  const Location root_at = call.comm.rank_map().locate(root);
  const bool root_process = root_at.process == call.comm.process_rank();
  if (call.one_endpoint_per_process(detail::RankOrder::kAny)) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root_at.process, mpi, request);
    });
    return;
  }
  if (fits_line_exchange(call, red)) {
    reduce_in_line_exchange(call, red, is_root ? recvbuf : nullptr);
    return;
  }
  auto combine = [&](void* result, MPI_Request* request) {
    const void* send = root_process ? MPI_IN_PLACE : result;
    return MPI_Ireduce(send, result, count, datatype, op, root_at.process, call.mpi(), request);
  };
  if (fits_one_round(red)) {
    reduce_in_one_round(call, red, is_root ? recvbuf : nullptr, combine);
    return;
  }
  if (call.processes() == 1) {
    reduce_scatter_within_process(call, red, is_root ? recvbuf : nullptr);
    return;
  }
  void* process_result = reduce_hierarchically(call, red, t_fold_scratch, combine);
  if (is_root) copy_out(red, process_result, recvbuf);
  call.team.barrier();
}

}  // namespace ep
