// Neighbourhood collectives on Cartesian and graph endpoint communicators.
//
// Every variant is reduced to one form: each endpoint lists a typed block per
// send slot (destination) and per receive slot (source), and the exchange
// moves each send block into the receive block its edge pairs it with (see
// topology.hpp). One call runs in phases separated by team barriers:
//   1. every endpoint publishes its blocks;
//   2. the leader sizes one aggregated message per peer process (blocks in
//      the route's key order), checks the local edges and posts the receives;
//   3. every endpoint packs its own outgoing blocks into those messages;
//   4. the leader sends them while every endpoint copies the blocks coming
//      from threads of its own process straight from the sender's buffer,
//      then the leader waits for the MPI traffic with backoff;
//   5. every endpoint unpacks its incoming blocks.
// Packing and unpacking are spread over the threads (each handles its own
// blocks), and there is one MPI message per process pair and direction
// whatever the number of threads.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backoff.hpp"
#include "checks.hpp"
#include "collective/segment_exchange.hpp"
#include "comm_state.hpp"
#include "datatype.hpp"
#include "ep/error.hpp"
#include "ep/topology.hpp"
#include "team/collective_call.hpp"
#include "topology/neighbor_blocks.hpp"
#include "topology/topology.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::Topology;
using detail::TypedBuffer;

// The leader's per-call state: the aggregated messages and their requests.
struct Exchange {
  // Byte offset of every block in the send (receive) data, by route and block.
  std::vector<std::vector<std::size_t>> send_at;
  std::vector<std::vector<std::size_t>> recv_at;
  std::vector<std::size_t> send_start;  // by route; one past the end at index size()
  std::vector<std::size_t> recv_start;
  std::unique_ptr<std::byte[]> send_data;
  std::unique_ptr<std::byte[]> recv_data;
  std::vector<MPI_Request> requests;  // receives by route, then sends by route
  std::string error;
  ErrorKind error_kind = ErrorKind::kArgument;
};

const detail::NeighborBlocks& blocks_of(const CollectiveCall& call, int thread) {
  return call.team.shared<detail::NeighborBlocks>(thread);
}

const Exchange& exchange_of(const CollectiveCall& call) {
  return *call.team.shared_aux<Exchange>(0);
}

// The first problem any local endpoint published, as this endpoint reports
// it (its own, or naming the endpoint that had it).
std::pair<std::string, ErrorKind> first_local_error(const CollectiveCall& call) {
  for (int t = 0; t < call.local_size(); ++t) {
    const detail::NeighborBlocks& blocks = blocks_of(call, t);
    if (blocks.error.empty()) continue;
    if (t == call.thread) return {blocks.error, blocks.error_kind};
    const int rank = call.comm.rank_map().ep_rank(call.comm.process_rank(), t);
    return {"ep rank " + std::to_string(rank) + " failed: " + blocks.error, blocks.error_kind};
  }
  return {};
}

// Throws on every local endpoint together: the published state stays
// readable until all have copied the message. `error` is taken by value on
// purpose: the copy is made before the barrier, after which the shared
// original may be gone.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void throw_together(CollectiveCall& call, std::pair<std::string, ErrorKind> error) {
  call.team.barrier();
  throw Error(error.second, call.name, call.rank, error.first);
}

// Records a failure of the leader's MPI stage. MPI may still write into (or
// read from) the buffers of requests left pending, so they are kept alive:
// a leak, on a path that ends in an error on every endpoint anyway.
void abandon(Exchange& ex, std::string error, ErrorKind kind) {
  ex.error = std::move(error);
  ex.error_kind = kind;
  static_cast<void>(ex.send_data.release());
  static_cast<void>(ex.recv_data.release());
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return "MPI error " + std::to_string(code);
  }
  return std::string(text, static_cast<std::size_t>(length));
}

// Lays out the aggregated messages (block offsets in route order) and
// returns the total size in bytes.
std::size_t lay_out(const CollectiveCall& call, const std::vector<detail::PeerRoute>& routes,
                    bool sending, std::vector<std::vector<std::size_t>>& at,
                    std::vector<std::size_t>& start) {
  at.resize(routes.size());
  start.resize(routes.size() + 1);
  std::size_t total = 0;
  for (std::size_t k = 0; k < routes.size(); ++k) {
    start[k] = total;
    at[k].reserve(routes[k].blocks.size());
    for (const detail::SlotRef& ref : routes[k].blocks) {
      const detail::NeighborBlocks& owner = blocks_of(call, ref.thread);
      at[k].push_back(total);
      total += (sending ? owner.send : owner.recv)[static_cast<std::size_t>(ref.slot)].bytes();
    }
  }
  start[routes.size()] = total;
  return total;
}

// Phase 2, on the leader. Errors go into `ex` (before any receive is posted).
void plan_exchange(const CollectiveCall& call, const Topology& topology, Exchange& ex) {
  // Blocks between two threads of this process must match exactly (MPI
  // requires equal type signatures; sizes are what can be checked).
  for (int t = 0; t < call.local_size(); ++t) {
    for (const detail::LocalEdge& edge : topology.local_in[static_cast<std::size_t>(t)]) {
      const std::size_t sent =
          blocks_of(call, edge.send_thread).send[static_cast<std::size_t>(edge.send_slot)].bytes();
      const std::size_t room =
          blocks_of(call, t).recv[static_cast<std::size_t>(edge.recv_slot)].bytes();
      ex.error = detail::local_edge_mismatch(call, edge, t, sent, room, ex.error_kind);
      if (!ex.error.empty()) return;
    }
  }
  const std::size_t send_bytes =
      lay_out(call, topology.send_routes, true, ex.send_at, ex.send_start);
  const std::size_t recv_bytes =
      lay_out(call, topology.recv_routes, false, ex.recv_at, ex.recv_start);
  const auto too_large = [](const std::vector<std::size_t>& start) {
    for (std::size_t k = 0; k + 1 < start.size(); ++k) {
      if (!detail::fits_int_count(start[k + 1] - start[k])) {
        return true;
      }
    }
    return false;
  };
  if (too_large(ex.send_start) || too_large(ex.recv_start)) {
    ex.error = "an aggregated message between two processes exceeds 2^31-1 bytes";
    ex.error_kind = ErrorKind::kCount;
    return;
  }
  ex.send_data = std::make_unique_for_overwrite<std::byte[]>(send_bytes);
  ex.recv_data = std::make_unique_for_overwrite<std::byte[]>(recv_bytes);
  ex.requests.clear();
  ex.requests.reserve(topology.recv_routes.size() + topology.send_routes.size());
  for (std::size_t k = 0; k < topology.recv_routes.size(); ++k) {
    detail::post_segment(call, call.mpi(), detail::kNeighborTag, topology.recv_routes[k].process,
                         ex.recv_data.get() + ex.recv_start[k],
                         ex.recv_start[k + 1] - ex.recv_start[k], ex.requests);
  }
}

void start_sends(const CollectiveCall& call, const Topology& topology, Exchange& ex) {
  for (std::size_t k = 0; k < topology.send_routes.size(); ++k) {
    const int bytes = static_cast<int>(ex.send_start[k + 1] - ex.send_start[k]);
    detail::send_segment(call, call.mpi(), detail::kNeighborTag, topology.send_routes[k].process,
                         {ex.send_data.get() + ex.send_start[k], bytes, MPI_BYTE}, ex.requests);
  }
}

// Waits for every message with backoff and checks that each incoming one
// had the size the receivers' blocks add up to.
void finish_messages(const Topology& topology, Exchange& ex) {
  std::vector<MPI_Status> statuses(ex.requests.size());
  detail::Backoff backoff;
  while (true) {
    int done = 0;
    const int rc = MPI_Testall(static_cast<int>(ex.requests.size()), ex.requests.data(), &done,
                               statuses.data());
    if (rc != MPI_SUCCESS) {
      int code = rc;
      for (const MPI_Status& status : statuses) {
        if (status.MPI_ERROR != MPI_SUCCESS && status.MPI_ERROR != MPI_ERR_PENDING) {
          code = status.MPI_ERROR;
          break;
        }
      }
      // An error class that cannot be read leaves the failure a plain MPI one.
      int error_class = MPI_SUCCESS;
      const bool classified = MPI_Error_class(code, &error_class) == MPI_SUCCESS;
      const bool truncated = classified && error_class == MPI_ERR_TRUNCATE;
      abandon(ex, "aggregated neighbour message: " + mpi_error_string(code),
              truncated ? ErrorKind::kTruncate : ErrorKind::kMpi);
      return;
    }
    if (done != 0) break;
    backoff.pause();
  }
  for (std::size_t k = 0; k < topology.recv_routes.size(); ++k) {
    // Every request is complete: nothing to keep alive, unlike abandon().
    ex.error =
        detail::received_size_problem(statuses[k], topology.recv_routes[k].process,
                                      ex.recv_start[k + 1] - ex.recv_start[k], ex.error_kind);
    if (!ex.error.empty()) return;
  }
}

// Copies into this endpoint's blocks everything its local neighbours send it.
void copy_local(const CollectiveCall& call, const Topology& topology,
                const detail::NeighborBlocks& mine) {
  for (const detail::LocalEdge& edge : topology.local_in[static_cast<std::size_t>(call.thread)]) {
    const TypedBuffer& source =
        blocks_of(call, edge.send_thread).send[static_cast<std::size_t>(edge.send_slot)];
    detail::copy_typed(source, mine.recv[static_cast<std::size_t>(edge.recv_slot)], source.bytes());
  }
}

// The exchange itself (phases 1-5 of the file comment), on every endpoint.
void exchange(CollectiveCall& call, const Topology& topology, const detail::NeighborBlocks& mine) {
  call.team.share(call.thread, mine);
  call.team.barrier();
  if (auto error = first_local_error(call); !error.first.empty()) throw_together(call, error);

  Exchange ex;
  if (call.leader()) {
    try {
      plan_exchange(call, topology, ex);
    } catch (const Error& e) {
      abandon(ex, detail::detail_of(e, call), e.kind());
    }
    call.team.share_aux(0, &ex);
  }
  call.team.barrier();
  const Exchange& shared = exchange_of(call);
  if (!shared.error.empty()) throw_together(call, {shared.error, shared.error_kind});

  const bool remote = !topology.send_routes.empty() || !topology.recv_routes.empty();
  if (remote) {
    for (const detail::BlockRef& ref : topology.send_refs[static_cast<std::size_t>(call.thread)]) {
      const auto route = static_cast<std::size_t>(ref.route);
      detail::pack_into(
          mine.send[static_cast<std::size_t>(ref.slot)],
          shared.send_data.get() + shared.send_at[route][static_cast<std::size_t>(ref.block)]);
    }
    call.team.barrier();
    if (call.leader()) {
      try {
        start_sends(call, topology, ex);
      } catch (const Error& e) {
        abandon(ex, detail::detail_of(e, call), e.kind());
      }
    }
  }
  copy_local(call, topology, mine);
  if (!remote) {
    call.team.barrier();  // senders' buffers are read until here
    return;
  }
  if (call.leader() && ex.error.empty()) finish_messages(topology, ex);
  call.team.barrier();
  if (!shared.error.empty()) throw_together(call, {shared.error, shared.error_kind});
  for (const detail::BlockRef& ref : topology.recv_refs[static_cast<std::size_t>(call.thread)]) {
    const TypedBuffer& target = mine.recv[static_cast<std::size_t>(ref.slot)];
    const auto route = static_cast<std::size_t>(ref.route);
    detail::unpack_from(
        shared.recv_data.get() + shared.recv_at[route][static_cast<std::size_t>(ref.block)],
        target.bytes(), target);
  }
  call.team.barrier();  // the leader's messages and the senders' buffers are read until here
}

// Every variant: check, list the blocks, exchange.
template <typename Fill>
void run_neighbor_collective(const Communicator& comm, const char* name, Fill&& fill) {
  const Topology& topology = detail::topology_of(comm, name);
  CollectiveCall call = detail::begin_collective(comm, name);
  detail::NeighborPreparation preparation(
      call, topology.endpoints[static_cast<std::size_t>(call.thread)]);
  const detail::NeighborBlocks blocks = preparation.run(std::forward<Fill>(fill));
  exchange(call, topology, blocks);
}

}  // namespace

void neighbor_allgather(const Communicator& comm, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype) {
  run_neighbor_collective(comm, "ep::neighbor_allgather", [&](detail::NeighborPreparation& p) {
    detail::fill_neighbor_allgather(p, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

void neighbor_allgatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                         std::span<const int> displs, MPI_Datatype recvtype) {
  run_neighbor_collective(comm, "ep::neighbor_allgatherv", [&](detail::NeighborPreparation& p) {
    detail::fill_neighbor_allgatherv(p, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype);
  });
}

void neighbor_alltoall(const Communicator& comm, const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  run_neighbor_collective(comm, "ep::neighbor_alltoall", [&](detail::NeighborPreparation& p) {
    detail::fill_neighbor_alltoall(p, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

void neighbor_alltoallv(const Communicator& comm, const void* sendbuf,
                        std::span<const int> sendcounts, std::span<const int> sdispls,
                        MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                        std::span<const int> rdispls, MPI_Datatype recvtype) {
  run_neighbor_collective(comm, "ep::neighbor_alltoallv", [&](detail::NeighborPreparation& p) {
    detail::fill_neighbor_alltoallv(p, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype);
  });
}

void neighbor_alltoallw(const Communicator& comm, const void* sendbuf,
                        std::span<const int> sendcounts, std::span<const MPI_Aint> sdispls,
                        std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                        std::span<const int> recvcounts, std::span<const MPI_Aint> rdispls,
                        std::span<const MPI_Datatype> recvtypes) {
  run_neighbor_collective(comm, "ep::neighbor_alltoallw", [&](detail::NeighborPreparation& p) {
    detail::fill_neighbor_alltoallw(p, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                    rdispls, recvtypes);
  });
}

}  // namespace ep
