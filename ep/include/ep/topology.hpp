// Process topologies on endpoint communicators (Cartesian and distributed
// graph) and the neighbourhood collectives that use them, with MPI's semantics.
//
//   // 2-D periodic grid over all endpoints, then a halo exchange.
//   std::array<int, 2> dims{0, 0};
//   ep::dims_create(comm.size(), dims);
//   const std::array<int, 2> periods{1, 1};
//   ep::Communicator grid = ep::cart_create(comm, dims, periods, false);
//   ep::neighbor_alltoall(grid, halo_out, n, MPI_DOUBLE, halo_in, n, MPI_DOUBLE);
//
// Creation calls are collective over every endpoint of the old communicator
// (each thread calls with its own handle) and return that thread's handle of
// the new one. The new communicator is made by ep::dup (or, for a Cartesian
// grid smaller than the communicator, by ep::split keeping the lowest ranks)
// and follows their rules (fresh matching, parent, free, compare); it carries
// the topology. Ranks are never reordered: `reorder` is accepted for MPI
// compatibility and ignored, which MPI allows. A dup of a topology
// communicator keeps its topology, as MPI_Comm_dup does.
//
// Neighbour lists follow MPI. On a Cartesian communicator the neighbours are,
// for each dimension d in order, the -1 then the +1 neighbour (slots 2d and
// 2d+1); off the edge of a non-periodic dimension the neighbour is
// MPI_PROC_NULL and its buffer slots are neither sent nor written. A periodic
// dimension of size 1 or 2 makes a rank its own neighbour or the same
// neighbour twice; both slots are kept, and as MPI-4 states, the block sent
// in the -1 direction lands in the receiver's +1 slot and vice versa. On a
// distributed graph the k-th edge from a source to a destination matches the
// k-th occurrence of that source in the destination's source list.
//
// Neighbour collectives: threads of one process copy straight between each
// other's buffers; everything the threads of a process send to the threads of
// another process travels as one aggregated MPI message per process pair.
//
// Errors throw ep::Error naming the call, the EP rank and the bad value.
#pragma once

#include <mpi.h>

#include <span>
#include <vector>

#include "ep/communicator.hpp"
#include "ep/request.hpp"

namespace ep {

/// MPI_Topo_test's answer.
enum class TopologyKind {
  kNone,       ///< MPI_UNDEFINED: no topology attached
  kCartesian,  ///< MPI_CART
  kDistGraph,  ///< MPI_DIST_GRAPH
};

/// MPI_Topo_test. Local.
[[nodiscard]] TopologyKind topo_test(const Communicator& comm);

// ---------------------------------------------------------------------------
// Cartesian topologies

/// MPI_Dims_create: fills the zero entries of `dims` so that the product of
/// all entries is `nnodes`, the filled entries as close to each other as
/// possible and in non-increasing order. Positive entries are kept. Throws
/// ep::Error(kArgument) when nnodes is not a multiple of the fixed entries'
/// product or an entry is negative. Local.
void dims_create(int nnodes, std::span<int> dims);

/// MPI_Cart_create with reorder ignored (ranks stay as in `comm`). Collective
/// over every endpoint of `comm`, all passing the same dims and periods
/// (non-zero: periodic). The grid may be smaller than `comm`: endpoints of
/// rank >= product(dims) get a null handle (MPI_COMM_NULL). A zero-dimensional
/// grid has one rank.
[[nodiscard]] Communicator cart_create(const Communicator& comm, std::span<const int> dims,
                                       std::span<const int> periods, bool reorder = false);

/// MPI_Cart_sub: splits the Cartesian communicator `comm` into subgrids that
/// keep the dimensions d with remain_dims[d] != 0 (one entry per dimension,
/// the same on every endpoint) and returns the calling endpoint's subgrid: the
/// endpoints that share its coordinates in the dropped dimensions, ranked
/// row-major over the kept ones, with the kept dimensions' extents and
/// periodicity as its Cartesian topology. Keeping no dimension gives a
/// zero-dimensional grid of one rank. Collective over every endpoint of
/// `comm` (each thread calls with its own handle; threads of one process may
/// land in different subgrids); made by ep::split. A wrong-length or
/// differing remain_dims throws ep::Error on every endpoint.
[[nodiscard]] Communicator cart_sub(const Communicator& comm, std::span<const int> remain_dims);

/// MPI_Cartdim_get: number of dimensions.
[[nodiscard]] int cartdim_get(const Communicator& comm);

/// MPI_Cart_get: the grid and the calling endpoint's coordinates.
struct CartInfo {
  std::vector<int> dims;
  std::vector<int> periods;  ///< 1: periodic, 0: not
  std::vector<int> coords;   ///< of the calling endpoint
};
[[nodiscard]] CartInfo cart_get(const Communicator& comm);

/// MPI_Cart_coords: coordinates of `rank` (row-major: the last dimension varies fastest).
[[nodiscard]] std::vector<int> cart_coords(const Communicator& comm, int rank);

/// MPI_Cart_rank: rank at `coords`. Coordinates of periodic dimensions wrap;
/// out of range in a non-periodic dimension throws ep::Error(kRank).
[[nodiscard]] int cart_rank(const Communicator& comm, std::span<const int> coords);

/// MPI_Cart_shift's two ranks (MPI_PROC_NULL off the edge of a non-periodic dimension).
struct ShiftRanks {
  int source = MPI_PROC_NULL;  ///< rank at coords - disp along `direction`
  int dest = MPI_PROC_NULL;    ///< rank at coords + disp along `direction`
};
/// MPI_Cart_shift of the calling endpoint: `disp` steps along dimension `direction`.
[[nodiscard]] ShiftRanks cart_shift(const Communicator& comm, int direction, int disp);

// ---------------------------------------------------------------------------
// Distributed graph topologies

/// MPI_Dist_graph_create_adjacent without weights (MPI_UNWEIGHTED). Collective
/// over every endpoint of `comm`; each endpoint names its own in-neighbours
/// (`sources`) and out-neighbours (`destinations`), EP ranks of `comm`,
/// repeats allowed. Every edge must be named at both ends: the process pair
/// counts are checked at creation (a mismatch throws ep::Error on every
/// endpoint instead of hanging the first neighbour collective).
[[nodiscard]] Communicator dist_graph_create_adjacent(const Communicator& comm,
                                                      std::span<const int> sources,
                                                      std::span<const int> destinations,
                                                      bool reorder = false);

/// MPI_Dist_graph_create_adjacent with weights (one per source and per destination).
[[nodiscard]] Communicator dist_graph_create_adjacent(
    const Communicator& comm, std::span<const int> sources, std::span<const int> sourceweights,
    std::span<const int> destinations, std::span<const int> destweights, bool reorder = false);

/// MPI_Dist_graph_neighbors_count.
struct NeighborCounts {
  int indegree = 0;
  int outdegree = 0;
  bool weighted = false;
};
[[nodiscard]] NeighborCounts dist_graph_neighbors_count(const Communicator& comm);

/// MPI_Dist_graph_neighbors (weights empty when the graph is unweighted).
struct Neighbors {
  std::vector<int> sources;
  std::vector<int> sourceweights;
  std::vector<int> destinations;
  std::vector<int> destweights;
};
[[nodiscard]] Neighbors dist_graph_neighbors(const Communicator& comm);

/// The calling endpoint's neighbour lists on any topology, in the order the
/// neighbour collectives use for their buffer slots. For a Cartesian
/// communicator sources == destinations == {-1, +1 neighbour of dimension 0,
/// ...}, with MPI_PROC_NULL off the edge.
[[nodiscard]] Neighbors topology_neighbors(const Communicator& comm);

// ---------------------------------------------------------------------------
// Neighbourhood collectives (collective over every endpoint of `comm`, which
// must carry a topology). MPI_IN_PLACE is not allowed (as in MPI). Blocks are
// indexed by neighbour slot: send block i goes to destination i, receive
// block j comes from source j. Count and displacement spans must hold at
// least outdegree (send side) / indegree (receive side) entries.

/// MPI_Neighbor_allgather.
void neighbor_allgather(const Communicator& comm, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype);

/// MPI_Neighbor_allgatherv: block j lands at recvbuf + displs[j] * extent(recvtype).
void neighbor_allgatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                         std::span<const int> displs, MPI_Datatype recvtype);

/// MPI_Neighbor_alltoall.
void neighbor_alltoall(const Communicator& comm, const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype);

/// MPI_Neighbor_alltoallv: displacements in elements of the respective type's extent.
void neighbor_alltoallv(const Communicator& comm, const void* sendbuf,
                        std::span<const int> sendcounts, std::span<const int> sdispls,
                        MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                        std::span<const int> rdispls, MPI_Datatype recvtype);

/// MPI_Neighbor_alltoallw: one datatype per block, displacements in bytes.
void neighbor_alltoallw(const Communicator& comm, const void* sendbuf,
                        std::span<const int> sendcounts, std::span<const MPI_Aint> sdispls,
                        std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                        std::span<const int> recvcounts, std::span<const MPI_Aint> rdispls,
                        std::span<const MPI_Datatype> recvtypes);

// ---------------------------------------------------------------------------
// Nonblocking neighbourhood collectives: the arguments, checks and results of
// the blocking forms above, as Requests of the calling endpoint completed by
// ep::wait, ep::test and their all/any/some forms (collectives.hpp states the
// common rules of nonblocking collectives). Collective over every endpoint
// of `comm`, each thread calling with its own handle; a call returns without
// waiting for any other endpoint. Between threads of one process the blocks
// are copied during the calls (by the later of the two endpoints); between
// processes each pair exchanges one aggregated message per direction, posted
// by the last local endpoint to call, and each endpoint unpacks its blocks
// when it completes its request. Buffers belong to the operation until the
// request completes; the count, displacement and type spans are read during
// the call only. Argument errors throw from the call; a block size mismatch
// throws ep::Error(kTruncate or kCount) from the wait/test.

/// MPI_Ineighbor_allgather.
[[nodiscard]] Request ineighbor_allgather(const Communicator& comm, const void* sendbuf,
                                          int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                          int recvcount, MPI_Datatype recvtype);

/// MPI_Ineighbor_allgatherv.
[[nodiscard]] Request ineighbor_allgatherv(const Communicator& comm, const void* sendbuf,
                                           int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                           std::span<const int> recvcounts,
                                           std::span<const int> displs, MPI_Datatype recvtype);

/// MPI_Ineighbor_alltoall.
[[nodiscard]] Request ineighbor_alltoall(const Communicator& comm, const void* sendbuf,
                                         int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         int recvcount, MPI_Datatype recvtype);

/// MPI_Ineighbor_alltoallv.
[[nodiscard]] Request ineighbor_alltoallv(const Communicator& comm, const void* sendbuf,
                                          std::span<const int> sendcounts,
                                          std::span<const int> sdispls, MPI_Datatype sendtype,
                                          void* recvbuf, std::span<const int> recvcounts,
                                          std::span<const int> rdispls, MPI_Datatype recvtype);

/// MPI_Ineighbor_alltoallw.
[[nodiscard]] Request ineighbor_alltoallw(const Communicator& comm, const void* sendbuf,
                                          std::span<const int> sendcounts,
                                          std::span<const MPI_Aint> sdispls,
                                          std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                                          std::span<const int> recvcounts,
                                          std::span<const MPI_Aint> rdispls,
                                          std::span<const MPI_Datatype> recvtypes);

// ---------------------------------------------------------------------------
// Persistent neighbourhood collectives (MPI-4's MPI_Neighbor_*_init): the
// arguments and checks of the blocking forms, bound once into a plan and
// run by every ep::start of the returned persistent request (request.hpp),
// completed by ep::wait, ep::test and their all/any/some forms, which leave
// it inactive for the next start; ep::request_free releases it.
//
//   ep::Request halo = ep::neighbor_alltoall_init(grid, out, n, MPI_DOUBLE, in, n, MPI_DOUBLE);
//   for (int step = 0; step < steps; ++step) {
//     fill(out);
//     ep::start(halo);
//     ep::wait(halo);
//     use(in);
//   }
//   ep::request_free(halo);
//
// The init call is collective over every endpoint of `comm` (each thread
// with its own handle) and synchronises the endpoints of each process only.
// Each round is collective too: every endpoint starts its request of the
// same init call, and all start their persistent collectives in the same
// order (MPI's rule); ep::start returns without waiting for anyone.
//
// The plan binds the buffers. The send and receive buffers must stay valid,
// at the same addresses, and the count and displacement arrays unchanged,
// from the init call until ep::request_free: the plan keeps their addresses
// and values, and a change is not seen (or, for a freed buffer, reads or
// writes freed memory). Between a start and its completion the send buffer
// must not be written nor the receive buffer read, as for the nonblocking
// forms. Debug builds (NDEBUG undefined) compare the count and displacement
// arrays with their values at init at every start and throw
// ep::Error(kArgument) from ep::start naming the array, the entry, both
// values and the EP rank; an endpoint that throws there leaves the others'
// rounds incomplete, as any erroneous program may.
//
// Why: the init call gives every endpoint the addresses of its local
// neighbours' send blocks, so between endpoints of one process a round is
// one synchronisation with the local neighbours (flags, no barrier) after
// which each endpoint copies its blocks straight from the senders' buffers
// into its receive buffer: no packing, no message, no matching. Blocks
// between processes keep the nonblocking forms' packed path (one aggregated
// message per process pair and direction), on the blocks prepared at init.
//
// Argument errors and block size mismatches between two endpoints of one
// process throw from the init call (on every local endpoint); a mismatch
// with another process's endpoint throws from the wait/test of a round.

/// MPI_Neighbor_allgather_init.
[[nodiscard]] Request neighbor_allgather_init(const Communicator& comm, const void* sendbuf,
                                              int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                              int recvcount, MPI_Datatype recvtype);

/// MPI_Neighbor_allgatherv_init: recvcounts and displs are watched by debug builds (see above).
[[nodiscard]] Request neighbor_allgatherv_init(const Communicator& comm, const void* sendbuf,
                                               int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                               std::span<const int> recvcounts,
                                               std::span<const int> displs, MPI_Datatype recvtype);

/// MPI_Neighbor_alltoall_init.
[[nodiscard]] Request neighbor_alltoall_init(const Communicator& comm, const void* sendbuf,
                                             int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                             int recvcount, MPI_Datatype recvtype);

/// MPI_Neighbor_alltoallv_init: the four arrays are watched by debug builds (see above).
[[nodiscard]] Request neighbor_alltoallv_init(const Communicator& comm, const void* sendbuf,
                                              std::span<const int> sendcounts,
                                              std::span<const int> sdispls, MPI_Datatype sendtype,
                                              void* recvbuf, std::span<const int> recvcounts,
                                              std::span<const int> rdispls, MPI_Datatype recvtype);

/// MPI_Neighbor_alltoallw_init: displacements in bytes, a datatype per block;
/// the six arrays are watched by debug builds (see above).
[[nodiscard]] Request neighbor_alltoallw_init(const Communicator& comm, const void* sendbuf,
                                              std::span<const int> sendcounts,
                                              std::span<const MPI_Aint> sdispls,
                                              std::span<const MPI_Datatype> sendtypes,
                                              void* recvbuf, std::span<const int> recvcounts,
                                              std::span<const MPI_Aint> rdispls,
                                              std::span<const MPI_Datatype> recvtypes);

}  // namespace ep
