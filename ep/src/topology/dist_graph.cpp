// Distributed graph topologies: MPI_Dist_graph_create_adjacent and the
// neighbour queries. Each endpoint names its own in- and out-neighbours; the
// leader gathers its threads' lists into the topology.
#include <memory>
#include <string>
#include <vector>

#include "comm_state.hpp"
#include "ep/error.hpp"
#include "ep/topology.hpp"
#include "team/collective_call.hpp"
#include "topology/creation.hpp"
#include "topology/topology.hpp"

namespace ep {

namespace {

struct GraphArgs {
  std::span<const int> sources;
  std::span<const int> sourceweights;
  std::span<const int> destinations;
  std::span<const int> destweights;
  bool weighted = false;
};

std::string check_ranks(std::span<const int> ranks, const char* what, int size) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= size) {
      return std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(ranks[i]) +
             " out of range [0, " + std::to_string(size - 1) + "]";
    }
  }
  return {};
}

std::string check_weights(std::span<const int> weights, std::size_t expected, const char* what) {
  if (weights.size() != expected) {
    return std::string(what) + " has " + std::to_string(weights.size()) + " entries for " +
           std::to_string(expected) + " neighbours";
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] < 0) {
      return std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(weights[i]) +
             " is negative";
    }
  }
  return {};
}

// This endpoint's argument problem, or an empty string.
std::string check_graph_args(const GraphArgs& args, int size) {
  std::string error = check_ranks(args.sources, "sources", size);
  if (error.empty()) error = check_ranks(args.destinations, "destinations", size);
  if (error.empty() && args.weighted) {
    error = check_weights(args.sourceweights, args.sources.size(), "sourceweights");
    if (error.empty()) {
      error = check_weights(args.destweights, args.destinations.size(), "destweights");
    }
  }
  return error;
}

// ordinals[i]: how often ranks[i] occurs before position i (the k-th edge
// between two endpoints matches the k-th one at the other end).
std::vector<int> occurrence_numbers(std::span<const int> ranks, int size) {
  std::vector<int> seen(static_cast<std::size_t>(size), 0);
  std::vector<int> ordinals(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    ordinals[i] = seen[static_cast<std::size_t>(ranks[i])]++;
  }
  return ordinals;
}

// Leader: the graph from every local endpoint's lists. The communicator is a
// dup (same rank map), so the topology can be complete before it exists.
std::shared_ptr<detail::Topology> plan_graph(const detail::CollectiveCall& call,
                                             std::string& problem) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  auto graph = std::make_shared<detail::Topology>();
  graph->kind = TopologyKind::kDistGraph;
  graph->endpoints.resize(static_cast<std::size_t>(call.local_size()));
  for (int t = 0; t < call.local_size(); ++t) {
    const auto& published = call.team.shared<detail::CreationArgs>(t);
    const auto& args = *static_cast<const GraphArgs*>(published.args);
    detail::EndpointNeighbors& mine = graph->endpoints[static_cast<std::size_t>(t)];
    mine.rank = map.ep_rank(me, t);
    mine.sources.assign(args.sources.begin(), args.sources.end());
    mine.destinations.assign(args.destinations.begin(), args.destinations.end());
    mine.source_ordinals = occurrence_numbers(args.sources, call.size());
    mine.dest_ordinals = occurrence_numbers(args.destinations, call.size());
    mine.weighted = args.weighted;
    if (args.weighted) {
      mine.sourceweights.assign(args.sourceweights.begin(), args.sourceweights.end());
      mine.destweights.assign(args.destweights.begin(), args.destweights.end());
    }
  }
  problem = graph->build_routes(map, me);
  return graph;
}

Communicator create_graph(const Communicator& comm, const GraphArgs& args) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::dist_graph_create_adjacent");
  detail::CreationArgs mine;
  mine.error = check_graph_args(args, call.size());
  mine.args = &args;
  detail::TopologyBuilder builder;
  builder.check = [&call](std::shared_ptr<detail::Topology>& prepared) {
    std::string problem;
    prepared = plan_graph(call, problem);
    return problem;
  };
  builder.build = [](const detail::CommState&, std::shared_ptr<detail::Topology> prepared) {
    return std::shared_ptr<const detail::Topology>(std::move(prepared));
  };
  detail::CreationOptions options;
  options.check_edge_counts = true;
  return detail::create_with_topology(comm, call, mine, builder, options);
}

const detail::EndpointNeighbors& graph_neighbors_of(const Communicator& comm, const char* call) {
  const detail::Topology& topology = detail::topology_of(comm, call);
  if (topology.kind != TopologyKind::kDistGraph) {
    throw Error(ErrorKind::kArgument, call, comm.rank(),
                "the communicator's topology is not a distributed graph (MPI_ERR_TOPOLOGY)");
  }
  return topology.endpoints[static_cast<std::size_t>(comm.local_thread())];
}

}  // namespace

Communicator dist_graph_create_adjacent(const Communicator& comm, std::span<const int> sources,
                                        std::span<const int> destinations, bool /*reorder*/) {
  return create_graph(comm, {sources, {}, destinations, {}, false});
}

Communicator dist_graph_create_adjacent(const Communicator& comm, std::span<const int> sources,
                                        std::span<const int> sourceweights,
                                        std::span<const int> destinations,
                                        std::span<const int> destweights, bool /*reorder*/) {
  return create_graph(comm, {sources, sourceweights, destinations, destweights, true});
}

NeighborCounts dist_graph_neighbors_count(const Communicator& comm) {
  const detail::EndpointNeighbors& me = graph_neighbors_of(comm, "ep::dist_graph_neighbors_count");
  return {static_cast<int>(me.sources.size()), static_cast<int>(me.destinations.size()),
          me.weighted};
}

Neighbors dist_graph_neighbors(const Communicator& comm) {
  const detail::EndpointNeighbors& me = graph_neighbors_of(comm, "ep::dist_graph_neighbors");
  return {me.sources, me.sourceweights, me.destinations, me.destweights};
}

}  // namespace ep
