// The topology attached to an endpoint communicator (CommState::topology) and
// the routing tables its neighbour collectives follow.
//
// Every neighbour slot of every local endpoint is an edge. An edge is named
// the same way at both ends by its key (receiver EP rank, sender EP rank,
// ordinal), which lets the two processes agree on the layout of their
// aggregated message without exchanging anything at call time:
// - distributed graph: the ordinal is the occurrence number of the peer in
//   the endpoint's list (MPI matches the k-th edge s->r with the k-th
//   occurrence of s among r's sources);
// - Cartesian: the ordinal is the receiver's slot. The block sent in the -1
//   direction of a dimension (slot 2d) lands in the receiver's slot 2d+1 and
//   vice versa (MPI-4, also right for periodic dimensions of size 1 and 2
//   where both directions reach the same rank).
// Sorting a process pair's edges by key gives the order of the blocks in the
// one message between them.
//
// Thread safety: built by the leader before the handles are handed out,
// immutable afterwards.
#pragma once

#include <string>
#include <vector>

#include "ep/rank_map.hpp"
#include "ep/topology.hpp"

namespace ep {
class Communicator;
}

namespace ep::detail {

/// One endpoint's neighbours, in slot order.
struct EndpointNeighbors {
  int rank = -1;                     // EP rank of the endpoint
  std::vector<int> sources;          // receive slots: EP ranks or MPI_PROC_NULL
  std::vector<int> destinations;     // send slots: EP ranks or MPI_PROC_NULL
  std::vector<int> source_ordinals;  // pairing keys, see the file comment
  std::vector<int> dest_ordinals;
  std::vector<int> sourceweights;  // empty when unweighted
  std::vector<int> destweights;
  bool weighted = false;
};

/// A block of a neighbour collective: slot `slot` of local thread `thread`.
struct SlotRef {
  int thread = 0;
  int slot = 0;
};

/// An edge between two threads of this process, seen from the receiver.
struct LocalEdge {
  int recv_slot = 0;
  int send_thread = 0;
  int send_slot = 0;
};

/// Everything this process exchanges with one other process in one direction,
/// in wire order.
struct PeerRoute {
  int process = 0;  // rank in the communicator's internal MPI communicator
  std::vector<SlotRef> blocks;
};

/// Position of one block in the routes: route index and block index.
struct BlockRef {
  int route = 0;
  int block = 0;
  int slot = 0;  // the owning thread's slot, repeated for the packers
};

class Topology {
 public:
  TopologyKind kind = TopologyKind::kNone;
  // Cartesian only.
  std::vector<int> dims;
  std::vector<int> periods;  // 0 or 1
  // Indexed by local thread.
  std::vector<EndpointNeighbors> endpoints;
  std::vector<std::vector<LocalEdge>> local_in;  // intra-process edges into each thread
  std::vector<std::vector<BlockRef>> send_refs;  // blocks each thread packs
  std::vector<std::vector<BlockRef>> recv_refs;  // blocks each thread unpacks
  // One route per peer process, ascending process rank.
  std::vector<PeerRoute> send_routes;
  std::vector<PeerRoute> recv_routes;

  /// Fills the routing tables from `endpoints` for the process `process_rank`
  /// of `map`. Returns an empty string, or what is inconsistent (an edge
  /// between two local endpoints named at one end only).
  std::string build_routes(const RankMap& map, int process_rank);

  /// Edges this process sends to (receives from) each process, for the check
  /// that both ends of every inter-process edge were named.
  [[nodiscard]] std::vector<int> edges_to(int processes) const;
  [[nodiscard]] std::vector<int> edges_from(int processes) const;
};

/// The topology of `comm`; throws ep::Error naming `call` for a null, freed
/// or topology-less communicator.
const Topology& topology_of(const Communicator& comm, const char* call);

/// Row-major coordinates of `rank` on `dims`.
std::vector<int> coords_of(const std::vector<int>& dims, int rank);

}  // namespace ep::detail
