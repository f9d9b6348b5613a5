// MPI_Scan and MPI_Exscan.
//
// Hierarchical path (process-major numbering): the threads of a process
// compute the prefixes of their contributions in thread order, each thread
// one slice of the vector across all the threads' buffers; the leaders
// combine the process totals with one MPI_Iexscan; each thread then puts the
// combination of the processes before its own in front of its local prefix.
// With process-major numbering "the processes before, then the threads
// before" is exactly "the EP ranks before", in rank order, so
// non-commutative ops are honoured.
//
// Rank-order path (ReduceOptions::layout_independent, or a numbering that is
// not process-major, where the ranks below r are no prefix of processes):
// every process gathers all contributions with one MPI_Iallgatherv and each
// thread folds ranks 0..r (scan) or 0..r-1 (exscan) in rank order with the
// right fold of the layout-independent reduce.
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "collective/block_table.hpp"
#include "collective/fold.hpp"
#include "ep/collectives.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::Elements;
using detail::TypedScratch;

// What every endpoint publishes.
struct Buffers {
  const void* contribution;
  void* result;
};

// The leader's: this process's total and the combination of the processes
// before it.
struct ProcessPrefix {
  TypedScratch total;
  TypedScratch before;
};

const Buffers& buffers_of(const CollectiveCall& call, int thread) {
  return call.team.shared<Buffers>(thread);
}

// Local prefixes over the slice [first, first + n) of every thread's buffer.
// Inclusive: result_t = c_0 op ... op c_t, computed in the result buffers
// themselves (in place works: each step reads c_t before writing it).
// Exclusive: result_t = c_0 op ... op c_t-1 for t > 0 (result_0 is left
// alone); the running combination lives in scratch because c_t may be
// result_t. Returns the process total in `total` for the exclusive form.
void local_prefix(const CollectiveCall& call, const Elements& e, int first, int n, bool exclusive,
                  void* total) {
  if (n <= 0) return;
  const int threads = call.local_size();
  if (!exclusive) {
    for (int t = 0; t < threads; ++t) {
      const Buffers& b = buffers_of(call, t);
      void* target = e.at(b.result, first);
      detail::copy_elements(e, e.at(b.contribution, first), target, n);
      if (t > 0)
        detail::reduce_local(call, e, e.at(buffers_of(call, t - 1).result, first), target, n);
    }
    return;
  }
  TypedScratch running(n, e.type, call.name, call.rank);
  TypedScratch next(n, e.type, call.name, call.rank);
  for (int t = 0; t < threads; ++t) {
    const Buffers& b = buffers_of(call, t);
    detail::copy_elements(e, e.at(b.contribution, first), next.data(), n);
    if (t > 0) {
      detail::copy_elements(e, running.data(), e.at(b.result, first), n);
      detail::reduce_local(call, e, running.data(), next.data(), n);  // next = running op c_t
    }
    std::swap(running, next);
  }
  if (total != nullptr) detail::copy_elements(e, running.data(), e.at(total, first), n);
}

void scan_hierarchical(CollectiveCall& call, const Elements& e, const void* contribution,
                       void* recvbuf, int count, bool exclusive) {
  const bool multi = call.processes() > 1;
  const Buffers mine{contribution, recvbuf};
  ProcessPrefix prefix;
  if (call.leader()) {
    if (multi) {
      if (exclusive) prefix.total = TypedScratch(count, e.type, call.name, call.rank);
      prefix.before = TypedScratch(count, e.type, call.name, call.rank);
    }
    call.team.share_aux(0, &prefix);
  }
  call.team.share(call.thread, mine);
  call.team.barrier();

  auto& shared = *call.team.shared_aux<ProcessPrefix>(0);
  const auto [first, last] = detail::slice_of(call, count);
  local_prefix(call, e, first, last - first, exclusive,
               multi && exclusive ? shared.total.data() : nullptr);
  call.team.barrier();
  if (multi) {
    detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
      // Inclusive: the last thread's prefix is the process total.
      const void* total =
          exclusive ? shared.total.data() : buffers_of(call, call.local_size() - 1).result;
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(MPI_Iexscan(total, shared.before.data(), count, e.type, e.op, call.mpi(), &request),
                call.name, call.rank);
      detail::wait_mpi(request, call);
    });
    if (call.comm.process_rank() > 0) {
      if (exclusive && call.thread == 0) {
        detail::copy_elements(e, shared.before.data(), recvbuf, count);
      } else {
        detail::reduce_local(call, e, shared.before.data(), recvbuf, count);
      }
    }
  }
  call.team.barrier();  // the leader's buffers and the local results are read until here
}

void scan_in_rank_order(CollectiveCall& call, const Elements& e, const void* contribution,
                        void* recvbuf, int count, bool exclusive) {
  const RankMap& map = call.comm.rank_map();
  const detail::SlotLayout slots(map, count);  // all contributions, in the slots of fold.hpp

  TypedScratch all;
  if (call.leader()) {
    all = TypedScratch(count * map.size(), e.type, call.name, call.rank);
    call.team.publish_aux(0, all.data());
  }
  call.team.barrier();
  void* base = call.team.published_aux(0);
  detail::copy_elements(e, contribution, e.at(base, slots.first_element(map.locate(call.rank))),
                        count);
  call.team.barrier();
  if (map.num_processes() > 1) {
    detail::mpi_stage(call, 0, detail::StageEnd::kTeamContinues, [&] {
      detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
        return slots.start_allgather(base, e.type, mpi, request);
      });
    });
  }
  const int ranks = exclusive ? call.rank : call.rank + 1;  // the ranks this result combines
  // Nothing for exscan at rank 0.
  detail::fold_right(call, e, slots.in_rank_order(e, base, ranks), recvbuf, count);
  call.team.barrier();  // the gathered contributions are read until here
}

void scan_any(const Communicator& comm, const char* name, const void* sendbuf, void* recvbuf,
              int count, MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options,
              bool exclusive) {
  CollectiveCall call = detail::begin_collective(comm, name);
  const Elements e = detail::make_elements(call, count, datatype, op);
  const RankMap& map = call.comm.rank_map();
  if (!options.layout_independent && call.one_endpoint_per_process()) {
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return exclusive ? MPI_Iexscan(sendbuf, recvbuf, count, datatype, op, mpi, request)
                       : MPI_Iscan(sendbuf, recvbuf, count, datatype, op, mpi, request);
    });
    return;
  }
  const void* contribution = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  if (options.layout_independent || !map.process_major()) {
    detail::checked_int_count(count, map.size(), "count x endpoints of the rank-order scan",
                              call.name, call.rank);
    scan_in_rank_order(call, e, contribution, recvbuf, count, exclusive);
  } else {
    scan_hierarchical(call, e, contribution, recvbuf, count, exclusive);
  }
}

}  // namespace

void scan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
          MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  scan_any(comm, "ep::scan", sendbuf, recvbuf, count, datatype, op, options, false);
}

void exscan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
            MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  scan_any(comm, "ep::exscan", sendbuf, recvbuf, count, datatype, op, options, true);
}

}  // namespace ep
