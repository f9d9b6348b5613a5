// MPI_Gather(v), MPI_Scatter(v) and their nonblocking forms on an endpoint
// communicator, as block exchanges (nonblocking_exchange.hpp): each call
// lists, per EP rank, the block it sends there and the block it receives
// from there, count 0 where MPI moves nothing (to and from non-roots, and the
// root's own block under MPI_IN_PLACE). Between two processes that is one
// message per pair, received at the size it arrives with, so a block whose
// two sides disagree is reported (kTruncate / kCount) wherever the two
// endpoints are, instead of reaching MPI as an erroneous call. The blocking
// forms start the same exchange and wait for it; with one endpoint per
// process they call MPI's own collective with the user's arguments (MPI's
// speed and behaviour), unless EndpointOptions::check_collectives asks for
// the checked exchange.
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "collective/nonblocking_exchange.hpp"
#include "ep/collectives.hpp"
#include "ep/request.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::BlockArgs;
using detail::CollectiveCall;

// One side of the exchange in per-EP-rank form, with its own count and
// displacement arrays (BlockArgs only refers to them).
struct Side {
  std::vector<int> counts;
  std::vector<int> displs;
  BlockArgs args;

  Side(const CollectiveCall& call, bool is_send, const void* buf, MPI_Datatype type)
      : counts(static_cast<std::size_t>(call.size()), 0),
        displs(static_cast<std::size_t>(call.size()), 0) {
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

Request exchange(const Communicator& comm, const CollectiveCall& call, Side& send, Side& recv) {
  return detail::start_block_exchange(comm, call, send.finish(), recv.finish(), false);
}

// Gather (`to_root`) and scatter: every endpoint's own block goes to (comes
// from) the root, whose table holds one block per EP rank, laid out by
// `fill_table`. The own buffer may be MPI_IN_PLACE at the root only; the
// root's own block then moves nothing. The table is significant at the root only.
template <class FillTable>
Request rooted_exchange(const Communicator& comm, const CollectiveCall& call, bool to_root,
                        int root, const void* own_buf, int own_count, MPI_Datatype own_type,
                        const void* table_buf, MPI_Datatype table_type, FillTable&& fill_table) {
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
  return to_root ? exchange(comm, call, own, table) : exchange(comm, call, table, own);
}

// The exchange of each form, started by its nonblocking call and by its
// blocking call when that does not go to MPI's own collective.
Request start_gather(const Communicator& comm, const CollectiveCall& call, const void* sendbuf,
                     int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root) {
  return rooted_exchange(comm, call, true, root, sendbuf, sendcount, sendtype, recvbuf, recvtype,
                         [&](Side& table) {
                           detail::check_count(recvcount, call.name, call.rank);
                           table.consecutive(call, recvcount);
                         });
}

Request start_gatherv(const Communicator& comm, const CollectiveCall& call, const void* sendbuf,
                      int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      std::span<const int> recvcounts, std::span<const int> displs,
                      MPI_Datatype recvtype, int root) {
  return rooted_exchange(
      comm, call, true, root, sendbuf, sendcount, sendtype, recvbuf, recvtype,
      [&](Side& table) { table.given(call, recvcounts, displs, "recvcounts", "displs"); });
}

Request start_scatter(const Communicator& comm, const CollectiveCall& call, const void* sendbuf,
                      int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root) {
  return rooted_exchange(comm, call, false, root, recvbuf, recvcount, recvtype, sendbuf, sendtype,
                         [&](Side& table) {
                           detail::check_count(sendcount, call.name, call.rank);
                           table.consecutive(call, sendcount);
                         });
}

Request start_scatterv(const Communicator& comm, const CollectiveCall& call, const void* sendbuf,
                       std::span<const int> sendcounts, std::span<const int> displs,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root) {
  return rooted_exchange(
      comm, call, false, root, recvbuf, recvcount, recvtype, sendbuf, sendtype,
      [&](Side& table) { table.given(call, sendcounts, displs, "sendcounts", "displs"); });
}

// Whether a blocking call goes to MPI's own collective: one endpoint per
// process, in process order, and no size checking asked for.
bool mpi_takes_it(const CollectiveCall& call) {
  return call.one_endpoint_per_process() && !call.comm.settings().check_collectives;
}

// Checks what MPI's own collective would take on trust (the root, the own
// buffer and count; the root's table is checked by the caller) and returns
// the MPI rank of the root's process.
int checked_root_process(const CollectiveCall& call, int root, const void* own_buf, int own_count) {
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_in_place_only_at_root(own_buf, root, call.name, call.rank);
  if (own_buf != MPI_IN_PLACE) detail::check_count(own_count, call.name, call.rank);
  return call.comm.rank_map().locate(root).process;
}

}  // namespace

void gather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::gather");
  if (mpi_takes_it(call)) {
    const int at = checked_root_process(call, root, sendbuf, sendcount);
    if (call.rank == root) detail::check_count(recvcount, call.name, call.rank);
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, at, mpi,
                         request);
    });
    return;
  }
  Request request =
      start_gather(comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  wait(request);
}

void gatherv(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, std::span<const int> recvcounts, std::span<const int> displs,
             MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::gatherv");
  if (mpi_takes_it(call)) {
    const int at = checked_root_process(call, root, sendbuf, sendcount);
    if (call.rank == root) {
      detail::check_counts(recvcounts, call.size(), "recvcounts", call.name, call.rank);
      detail::check_entries(displs.size(), call.size(), "displs", call.name, call.rank);
    }
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts.data(), displs.data(),
                          recvtype, at, mpi, request);
    });
    return;
  }
  Request request = start_gatherv(comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                  displs, recvtype, root);
  wait(request);
}

void scatter(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::scatter");
  if (mpi_takes_it(call)) {
    const int at = checked_root_process(call, root, recvbuf, recvcount);
    if (call.rank == root) detail::check_count(sendcount, call.name, call.rank);
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, at, mpi,
                          request);
    });
    return;
  }
  Request request =
      start_scatter(comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  wait(request);
}

void scatterv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
              std::span<const int> displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root) {
  CollectiveCall call = detail::begin_collective(comm, "ep::scatterv");
  if (mpi_takes_it(call)) {
    const int at = checked_root_process(call, root, recvbuf, recvcount);
    if (call.rank == root) {
      detail::check_counts(sendcounts, call.size(), "sendcounts", call.name, call.rank);
      detail::check_entries(displs.size(), call.size(), "displs", call.name, call.rank);
    }
    detail::run_on_mpi(call, [&](MPI_Comm mpi, MPI_Request* request) {
      return MPI_Iscatterv(sendbuf, sendcounts.data(), displs.data(), sendtype, recvbuf, recvcount,
                           recvtype, at, mpi, request);
    });
    return;
  }
  Request request = start_scatterv(comm, call, sendbuf, sendcounts, displs, sendtype, recvbuf,
                                   recvcount, recvtype, root);
  wait(request);
}

Request igather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::igather");
  return start_gather(comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
}

Request igatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                 std::span<const int> displs, MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::igatherv");
  return start_gatherv(comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                       recvtype, root);
}

Request iscatter(const Communicator& comm, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::iscatter");
  return start_scatter(comm, call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                       root);
}

Request iscatterv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
                  std::span<const int> displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::iscatterv");
  return start_scatterv(comm, call, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                        recvtype, root);
}

}  // namespace ep
