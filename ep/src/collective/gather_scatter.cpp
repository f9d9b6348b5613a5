// MPI_Gather(v), MPI_Scatter(v) and their nonblocking forms on an endpoint
// communicator, as block exchanges: each call lists, per EP rank, the block
// it sends there and the block it receives from there, count 0 where MPI
// moves nothing (to and from non-roots, and the root's own block under
// MPI_IN_PLACE). Between two processes that is one message per pair,
// received at the size it arrives with, so a block whose two sides disagree
// is reported (kTruncate / kCount) wherever the two endpoints are, instead
// of reaching MPI as an erroneous call. The nonblocking forms, and the
// blocking ones with several endpoints in a process, run the block exchange
// of block_exchange.hpp (the blocking forms wait for it); the blocking
// forms with one endpoint per process send each block as a message of its
// own, to or from the root only (segment_exchange.hpp, exchange_peer_blocks), and those on a
// communicator within one process copy each block straight between the
// root's buffer and its endpoint's, every thread its own, after one
// publication by the root (within_process_run).
#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "collective/block_exchange.hpp"
#include "collective/block_table.hpp"
#include "collective/segment_exchange.hpp"
#include "ep/collectives.hpp"
#include "ep/request.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::Block;
using detail::BlockArgs;
using detail::CollectiveCall;

// The local thread of EP rank `rank` (an endpoint of this process).
int team_thread_of(const CollectiveCall& call, int rank) {
  return call.comm.rank_map().locate(rank).thread;
}

// The count and displacement arrays of one side, kept by each thread from
// call to call, one pair per role (a call has one send and one receive
// side). Allocating them on every call cost more than copying a small
// block (callgrind: about 700 instructions per call and thread in malloc
// and free for an 8-byte gather at 1 x 2). Every use ends before the call
// returns: the nonblocking forms copy them into their exchange spec.
struct SideArrays {
  std::vector<int> counts;
  std::vector<int> displs;
};
SideArrays& side_arrays(bool is_send) {
  thread_local SideArrays arrays[2];
  return arrays[is_send ? 1 : 0];
}

// One side of the exchange in per-EP-rank form, with its count and
// displacement arrays (BlockArgs only refers to them).
struct Side {
  std::vector<int>& counts;
  std::vector<int>& displs;
  BlockArgs args;

  Side(const CollectiveCall& call, bool is_send, const void* buf, MPI_Datatype type)
      : counts(side_arrays(is_send).counts), displs(side_arrays(is_send).displs) {
    counts.assign(static_cast<std::size_t>(call.size()), 0);
    displs.assign(static_cast<std::size_t>(call.size()), 0);
    args.is_send = is_send;
    args.buf = buf;
    args.per_peer = true;
    // An insignificant side (a non-root's) may name no valid type: it moves nothing.
    args.type = type == MPI_DATATYPE_NULL ? MPI_BYTE : type;
  }

  /// Block r: `count` elements at element r * count (in ints, checked).
  void consecutive(const CollectiveCall& call, int count) {
    detail::checked_int_count(count, call.size(), "count x ranks", call.name, call.rank);
    for (int r = 0; r < call.size(); ++r) set(r, count, r * count);
  }
  /// Block r: the user's counts[r] and displs[r] (spans of at least size() entries).
  void given(const CollectiveCall& call, std::span<const int> user_counts,
             std::span<const int> user_displs, const char* counts_name, const char* displs_name) {
    detail::check_counts(user_counts, call.size(), counts_name, call.name, call.rank);
    detail::check_entries(user_displs.size(), call.size(), displs_name, call.name, call.rank);
    for (int r = 0; r < call.size(); ++r) {
      set(r, user_counts[static_cast<std::size_t>(r)], user_displs[static_cast<std::size_t>(r)]);
    }
  }
  void set(int rank, int count, int displ) {
    counts[static_cast<std::size_t>(rank)] = count;
    displs[static_cast<std::size_t>(rank)] = displ;
  }
  const BlockArgs& finish() {
    args.counts = counts;
    args.displs = displs;
    return args;
  }
};

// Gather (`to_root`) and scatter: every endpoint's own block goes to (comes
// from) the root, whose table holds one block per EP rank, laid out by
// `fill_table`. The own buffer may be MPI_IN_PLACE at the root only; the
// root's own block then moves nothing. The table is significant at the root
// only. Returns what `run(send, recv)` returns for the two sides.
template <class FillTable, class Run>
auto rooted_exchange(const CollectiveCall& call, bool to_root, int root, const void* own_buf,
                     int own_count, MPI_Datatype own_type, const void* table_buf,
                     MPI_Datatype table_type, FillTable&& fill_table, Run&& run) {
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_in_place_only_at_root(own_buf, root, call.name, call.rank);
  const bool in_place = own_buf == MPI_IN_PLACE;
  const bool is_root = call.rank == root;
  Side own(call, to_root, in_place ? nullptr : own_buf, in_place ? MPI_BYTE : own_type);
  Side table(call, !to_root, is_root ? table_buf : nullptr, is_root ? table_type : MPI_BYTE);
  if (!in_place) {
    detail::check_count(own_count, call.name, call.rank);
    own.set(root, own_count, 0);
  }
  if (is_root) {
    fill_table(table);
    if (in_place) table.set(root, 0, 0);
  }
  return to_root ? run(own.finish(), table.finish()) : run(table.finish(), own.finish());
}

// How a rooted call's two sides run: the block exchange of the nonblocking
// forms (returns its request), or, for a blocking call with one endpoint per
// process, a message per block to or from the root (returns once done).
auto nonblocking_run(const Communicator& comm, const CollectiveCall& call) {
  return [&comm, &call](const BlockArgs& send, const BlockArgs& recv) {
    return detail::start_block_exchange(comm, call, send, recv, false);
  };
}
auto peer_run(const CollectiveCall& call, bool to_root, int root) {
  using Shape = detail::PeerPairs::Shape;
  const detail::PeerPairs pairs{to_root ? Shape::kToRoot : Shape::kFromRoot, root};
  return [&call, pairs](const BlockArgs& send, const BlockArgs& recv) {
    detail::exchange_peer_blocks(call, detail::make_exchange_spec(call, send, recv, false), pairs);
  };
}

// What the root of a gather or scatter within one process publishes: its
// table, and (gather) one slot per local thread where that thread leaves the
// error of a block the root cannot take (the root raises it).
struct RootTable {
  detail::BlockTable table;
  std::vector<std::optional<Error>> refused;
};

// The root's part within one process: publishes its table as a one-way
// broadcast, copies its own block meanwhile, and returns once every other
// thread has finished with its buffer; then raises its own error or the
// first one a thread left for it.
void root_within_process(const CollectiveCall& call, bool to_root, const Block& own,
                         const BlockArgs& table_args) {
  detail::LocalTeam& team = call.team;
  // Kept from call to call (no allocation for the error slots once sized):
  // the others read it only until broadcast_await_readers below.
  thread_local RootTable t_root_table;
  RootTable* root_side = &t_root_table;
  try {
    root_side->table =
        detail::BlockTable(table_args.buf, table_args.counts, table_args.displs, table_args.type,
                           call, to_root ? "recvcounts" : "sendcounts");
    root_side->refused.assign(static_cast<std::size_t>(call.local_size()), std::nullopt);
  } catch (...) {
    // The others must not wait for a table that never comes.
    team.broadcast_publish(call.thread, {team.broadcast_staging(call.thread), 0, true, true});
    throw;
  }
  team.broadcast_publish(call.thread, {root_side, 0, false, false});
  std::optional<Error> error;
  std::exception_ptr failure;
  try {
    const Block slot = root_side->table.block(call.rank);
    error = to_root ? detail::copy_checked(own, slot, call, call.rank)
                    : detail::copy_checked(slot, own, call, call.rank);
  } catch (...) {
    failure = std::current_exception();
  }
  team.broadcast_await_readers(call.thread);  // the table and the buffer are read until here
  if (failure) std::rethrow_exception(failure);
  detail::raise(error);
  for (const std::optional<Error>& refused : root_side->refused) detail::raise(refused);
}

// Any other thread within one process: copies its own block into (gather)
// or out of (scatter) the root's buffer as soon as the root has published
// it, and leaves. A block whose two sides disagree is the receiver's error:
// the root's in a gather (left in its slot), this endpoint's in a scatter.
void member_within_process(const CollectiveCall& call, bool to_root, int root, const Block& own) {
  detail::LocalTeam& team = call.team;
  const detail::LocalTeam::Broadcast from = team.broadcast_wait(call.thread);
  if (from.failed) {
    team.broadcast_done(call.thread);
    throw Error(ErrorKind::kMpi, call.name, call.rank,
                "the root (ep rank " + std::to_string(root) +
                    ") could not describe its buffer (see its error)");
  }
  // Only this thread writes its slot, and only until broadcast_done.
  auto& root_side = *static_cast<RootTable*>(const_cast<void*>(from.source));
  std::optional<Error> error;
  try {
    const Block slot = root_side.table.block(call.rank);
    if (to_root) {
      const CollectiveCall at_root{call.comm, call.team, team_thread_of(call, root), root,
                                   call.name};
      root_side.refused[static_cast<std::size_t>(call.thread)] =
          detail::copy_checked(own, slot, at_root, call.rank);
    } else {
      error = detail::copy_checked(slot, own, call, call.rank);
    }
  } catch (...) {
    root_side.refused[static_cast<std::size_t>(call.thread)] =
        Error(ErrorKind::kMpi, call.name, root,
              "ep rank " + std::to_string(call.rank) + " could not copy its block (see its error)");
    team.broadcast_done(call.thread);
    throw;
  }
  team.broadcast_done(call.thread);
  detail::raise(error);
}

// A blocking rooted call on a communicator within one process, with
// several endpoints: no messages and no staging. The root publishes where
// its blocks lie (a one-way broadcast of LocalTeam) and each other thread
// copies its own block into or out of the root's buffer itself, in
// parallel, and leaves without waiting for the others; the root waits until
// they are done with its buffer.
auto within_process_run(const CollectiveCall& call, bool to_root, int root) {
  return [&call, to_root, root](const BlockArgs& send, const BlockArgs& recv) {
    const BlockArgs& own_args = to_root ? send : recv;
    const BlockArgs& table_args = to_root ? recv : send;
    // The own side holds one block, at the root's index (count 0 for MPI_IN_PLACE).
    const Block own = detail::make_block(
        own_args.buf, own_args.counts[static_cast<std::size_t>(root)], own_args.type, call);
    if (call.rank == root) {
      root_within_process(call, to_root, own, table_args);
    } else {
      member_within_process(call, to_root, root, own);
    }
  };
}

// A blocking rooted call: `sides(run)` describes the call's two sides and
// runs them with `run`; with one endpoint per process a message per block to
// or from the root (peer_run), within one process the root's one-way
// broadcast (within_process_run), otherwise the block exchange, waited for.
template <class Sides>
void run_blocking(const Communicator& comm, const CollectiveCall& call, bool to_root, int root,
                  Sides&& sides) {
  if (call.one_endpoint_per_process()) {
    sides(peer_run(call, to_root, root));
    return;
  }
  if (call.processes() == 1) {
    sides(within_process_run(call, to_root, root));
    return;
  }
  Request request = sides(nonblocking_run(comm, call));
  wait(request);
}

// Each form's sides, run by `run`: by its nonblocking call, and by its
// blocking call (waiting for the request, or with one endpoint per process
// through peer_run).
template <class Run>
auto gather_sides(const CollectiveCall& call, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, Run&& run) {
  return rooted_exchange(
      call, true, root, sendbuf, sendcount, sendtype, recvbuf, recvtype,
      [&](Side& table) {
        detail::check_count(recvcount, call.name, call.rank);
        table.consecutive(call, recvcount);
      },
      std::forward<Run>(run));
}

template <class Run>
auto gatherv_sides(const CollectiveCall& call, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                   std::span<const int> displs, MPI_Datatype recvtype, int root, Run&& run) {
  return rooted_exchange(
      call, true, root, sendbuf, sendcount, sendtype, recvbuf, recvtype,
      [&](Side& table) { table.given(call, recvcounts, displs, "recvcounts", "displs"); },
      std::forward<Run>(run));
}

template <class Run>
auto scatter_sides(const CollectiveCall& call, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, Run&& run) {
  return rooted_exchange(
      call, false, root, recvbuf, recvcount, recvtype, sendbuf, sendtype,
      [&](Side& table) {
        detail::check_count(sendcount, call.name, call.rank);
        table.consecutive(call, sendcount);
      },
      std::forward<Run>(run));
}

template <class Run>
auto scatterv_sides(const CollectiveCall& call, const void* sendbuf,
                    std::span<const int> sendcounts, std::span<const int> displs,
                    MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root, Run&& run) {
  return rooted_exchange(
      call, false, root, recvbuf, recvcount, recvtype, sendbuf, sendtype,
      [&](Side& table) { table.given(call, sendcounts, displs, "sendcounts", "displs"); },
      std::forward<Run>(run));
}

}  // namespace

void gather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::gather");
  run_blocking(comm, call, true, root, [&](auto&& run) {
    return gather_sides(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        std::forward<decltype(run)>(run));
  });
}

void gatherv(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, std::span<const int> recvcounts, std::span<const int> displs,
             MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::gatherv");
  run_blocking(comm, call, true, root, [&](auto&& run) {
    return gatherv_sides(call, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         root, std::forward<decltype(run)>(run));
  });
}

void scatter(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::scatter");
  run_blocking(comm, call, false, root, [&](auto&& run) {
    return scatter_sides(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                         std::forward<decltype(run)>(run));
  });
}

void scatterv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
              std::span<const int> displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::scatterv");
  run_blocking(comm, call, false, root, [&](auto&& run) {
    return scatterv_sides(call, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                          root, std::forward<decltype(run)>(run));
  });
}

Request igather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::igather");
  return gather_sides(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                      nonblocking_run(comm, call));
}

Request igatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                 std::span<const int> displs, MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::igatherv");
  return gatherv_sides(call, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                       root, nonblocking_run(comm, call));
}

Request iscatter(const Communicator& comm, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::iscatter");
  return scatter_sides(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                       nonblocking_run(comm, call));
}

Request iscatterv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
                  std::span<const int> displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::iscatterv");
  return scatterv_sides(call, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                        root, nonblocking_run(comm, call));
}

}  // namespace ep
