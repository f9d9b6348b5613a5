// Topology routing tables, the shared creation skeleton and the queries that
// apply to every topology kind.
#include "topology/topology.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "comm_state.hpp"
#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "team/collective_call.hpp"
#include "team/failure_slot.hpp"
#include "topology/creation.hpp"

namespace ep {
namespace detail {

namespace {

// (receiver EP rank, sender EP rank, ordinal): names an edge at both ends.
using EdgeKey = std::tuple<int, int, int>;

struct KeyedBlock {
  EdgeKey key;
  SlotRef ref;
};

// Turns the per-process block lists into routes (ascending process, blocks
// in key order) and tells each thread where its blocks are.
void make_routes(std::map<int, std::vector<KeyedBlock>>& by_process, std::vector<PeerRoute>& routes,
                 std::vector<std::vector<BlockRef>>& refs) {
  routes.clear();
  for (auto& [process, blocks] : by_process) {
    std::sort(blocks.begin(), blocks.end(),
              [](const KeyedBlock& a, const KeyedBlock& b) { return a.key < b.key; });
    const int route = static_cast<int>(routes.size());
    PeerRoute& out = routes.emplace_back();
    out.process = process;
    out.blocks.reserve(blocks.size());
    for (const KeyedBlock& block : blocks) {
      const int index = static_cast<int>(out.blocks.size());
      out.blocks.push_back(block.ref);
      refs[static_cast<std::size_t>(block.ref.thread)].push_back({route, index, block.ref.slot});
    }
  }
}

std::vector<int> counts_per_process(const std::vector<PeerRoute>& routes, int processes) {
  std::vector<int> counts(static_cast<std::size_t>(processes), 0);
  for (const PeerRoute& route : routes) {
    counts[static_cast<std::size_t>(route.process)] = static_cast<int>(route.blocks.size());
  }
  return counts;
}

}  // namespace

std::string Topology::build_routes(const RankMap& map, int process_rank) {
  const std::size_t threads = endpoints.size();
  local_in.assign(threads, {});
  send_refs.assign(threads, {});
  recv_refs.assign(threads, {});
  std::map<int, std::vector<KeyedBlock>> outgoing;
  std::map<int, std::vector<KeyedBlock>> incoming;
  // Sends between local threads wait here for the receive slot naming them.
  std::map<EdgeKey, SlotRef> local_out;

  for (std::size_t t = 0; t < threads; ++t) {
    const EndpointNeighbors& me = endpoints[t];
    for (std::size_t i = 0; i < me.destinations.size(); ++i) {
      const int peer = me.destinations[i];
      if (peer == MPI_PROC_NULL) continue;
      const EdgeKey key{peer, me.rank, me.dest_ordinals[i]};
      const SlotRef ref{static_cast<int>(t), static_cast<int>(i)};
      const int process = map.locate(peer).process;
      if (process == process_rank) {
        local_out.emplace(key, ref);
      } else {
        outgoing[process].push_back({key, ref});
      }
    }
  }
  for (std::size_t t = 0; t < threads; ++t) {
    const EndpointNeighbors& me = endpoints[t];
    for (std::size_t j = 0; j < me.sources.size(); ++j) {
      const int peer = me.sources[j];
      if (peer == MPI_PROC_NULL) continue;
      const EdgeKey key{me.rank, peer, me.source_ordinals[j]};
      const int process = map.locate(peer).process;
      if (process != process_rank) {
        incoming[process].push_back({key, {static_cast<int>(t), static_cast<int>(j)}});
        continue;
      }
      const auto sender = local_out.find(key);
      if (sender == local_out.end()) {
        return "ep rank " + std::to_string(me.rank) + " lists ep rank " + std::to_string(peer) +
               " as a source " + std::to_string(std::get<2>(key) + 1) + " time(s), but ep rank " +
               std::to_string(peer) + " lists it as a destination" + " fewer times";
      }
      local_in[t].push_back({static_cast<int>(j), sender->second.thread, sender->second.slot});
      local_out.erase(sender);
    }
  }
  if (!local_out.empty()) {
    const auto& [receiver, sender, ordinal] = local_out.begin()->first;
    return "ep rank " + std::to_string(sender) + " lists ep rank " + std::to_string(receiver) +
           " as a destination " + std::to_string(ordinal + 1) + " time(s), but ep rank " +
           std::to_string(receiver) + " lists it as a source fewer times";
  }
  make_routes(outgoing, send_routes, send_refs);
  make_routes(incoming, recv_routes, recv_refs);
  return {};
}

std::vector<int> Topology::edges_to(int processes) const {
  return counts_per_process(send_routes, processes);
}

std::vector<int> Topology::edges_from(int processes) const {
  return counts_per_process(recv_routes, processes);
}

const Topology& topology_of(const Communicator& comm, const char* call) {
  const CollectiveCall context = begin_collective(comm, call);  // null and freed checks
  const Topology* topology = context.comm.topology.get();
  if (topology == nullptr) {
    throw Error(ErrorKind::kArgument, call, comm.rank(),
                "the communicator has no topology (MPI_ERR_TOPOLOGY)");
  }
  return *topology;
}

std::vector<int> coords_of(const std::vector<int>& dims, int rank) {
  std::vector<int> coords(dims.size());
  for (std::size_t d = dims.size(); d-- > 0;) {
    coords[d] = rank % dims[d];
    rank /= dims[d];
  }
  return coords;
}

std::uint64_t fingerprint(std::initializer_list<std::span<const int>> values) {
  std::uint64_t hash = 1469598103934665603ULL;
  const auto mix = [&hash](std::uint64_t word) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (word >> (8 * byte)) & 0xffU;
      hash *= 1099511628211ULL;
    }
  };
  for (std::span<const int> list : values) {
    mix(list.size());
    for (int v : list) mix(static_cast<std::uint32_t>(v));
  }
  return hash;
}

namespace {

// The leader's verdict on the arguments, read by every local endpoint: the
// first problem, with the EP rank whose arguments were bad (-1: elsewhere or
// none).
using Verdict = FailureSlot;

// MPI_Ialltoall + wait with backoff on the internal communicator.
std::vector<int> exchange_counts(const CollectiveCall& call, std::vector<int> mine) {
  std::vector<int> theirs(mine.size());
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ialltoall(mine.data(), 1, MPI_INT, theirs.data(), 1, MPI_INT, call.mpi(), &request),
            call.name, call.rank);
  wait_mpi(request, call);
  return theirs;
}

// Every process's leader learns whether any process failed and whether all
// passed the same fingerprint. The fingerprint is cut to 62 bits so that its
// negation fits: max(f) == f and max(-f) == -f everywhere iff all are equal.
void agree(const CollectiveCall& call, std::uint64_t fingerprint, Verdict& verdict) {
  const auto f = static_cast<long long>(fingerprint >> 2);
  long long values[3] = {verdict.failed() ? 1 : 0, f, -f};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values, 3, MPI_LONG_LONG, MPI_MAX, call.mpi(), &request),
            call.name, call.rank);
  wait_mpi(request, call);
  if (values[0] != 0) {
    verdict.record(ErrorKind::kArgument, "bad arguments on another process", -1);
  } else if (values[1] != f || values[2] != -f) {
    verdict.record(ErrorKind::kArgument,
                   "endpoints of different processes passed different arguments", -1);
  }
}

// Compares the edges this process's endpoints name towards every process
// with those the other processes' endpoints name towards this one.
void check_edge_counts(const CollectiveCall& call, const Topology* prepared, Verdict& verdict) {
  const int processes = call.processes();
  const std::vector<int> none(static_cast<std::size_t>(processes), 0);
  const std::vector<int> from = prepared != nullptr ? prepared->edges_from(processes) : none;
  const std::vector<int> sent =
      exchange_counts(call, prepared != nullptr ? prepared->edges_to(processes) : none);
  for (int p = 0; p < processes; ++p) {
    if (sent[p] == from[p]) continue;
    verdict.record(ErrorKind::kArgument,
                   "the endpoints of process " + std::to_string(p) + " name " +
                       std::to_string(sent[p]) + " edge(s) to those of process " +
                       std::to_string(call.comm.process_rank()) + ", which name " +
                       std::to_string(from[p]) + " from them",
                   -1);
    return;
  }
}

// The leader's checks: each endpoint's own, the process's as a whole, then
// the agreement of all processes (every process takes part in the same MPI
// calls, failed or not).
void judge(const CollectiveCall& call, const TopologyBuilder& builder,
           const CreationOptions& options, std::shared_ptr<Topology>& prepared, Verdict& verdict) {
  const auto& leader_args = call.team.shared<CreationArgs>(0);
  for (int t = 0; t < call.local_size(); ++t) {
    const auto& args = call.team.shared<CreationArgs>(t);
    const int rank = call.comm.rank_map().ep_rank(call.comm.process_rank(), t);
    if (!args.error.empty()) {
      verdict.record(args.error_kind, args.error, rank);
    } else if (args.fingerprint != leader_args.fingerprint) {
      verdict.record(ErrorKind::kArgument,
                     "arguments differ from those of ep rank " + std::to_string(call.rank), rank);
    }
  }
  if (!verdict.failed()) {
    std::string problem = builder.check(prepared);
    if (!problem.empty()) verdict.record(ErrorKind::kArgument, std::move(problem), -1);
  }
  if (call.processes() == 1) return;
  if (options.check_edge_counts) check_edge_counts(call, prepared.get(), verdict);
  agree(call, leader_args.fingerprint, verdict);
}

// Every local endpoint after the leader's verdict: leaves the team together
// with the others, then throws the verdict's error when it has one.
void follow_verdict(CollectiveCall& call) {
  const auto& shared = *call.team.shared_aux<Verdict>(0);
  const std::optional<Error> error = shared.error_for(call.name, call.rank);
  call.team.barrier();  // the leader's verdict is read until here
  if (error) throw *error;
}

}  // namespace

Communicator create_with_topology(const Communicator& comm, CollectiveCall& call,
                                  const CreationArgs& mine, const TopologyBuilder& builder,
                                  const CreationOptions& options) {
  call.team.share(call.thread, mine);
  call.team.barrier();
  Verdict verdict;
  std::shared_ptr<Topology> prepared;
  if (call.leader()) {
    // Keep the local endpoints together: they all throw in follow_verdict.
    verdict.guard(call.name, call.rank, [&] { judge(call, builder, options, prepared, verdict); });
    call.team.share_aux(0, &verdict);
  }
  call.team.barrier();
  follow_verdict(call);  // dup and split below reuse the team's slots after it

  Communicator created =
      options.split_color >= 0 ? split(comm, options.split_color, options.split_key)
      : options.keep_below < 0
          ? dup(comm)
          : split(comm, call.rank < options.keep_below ? 0 : MPI_UNDEFINED, call.rank);
  // Attach the topology before the handles leave this call. The local
  // endpoints of one new communicator share one state; the old leader (which
  // may itself be left out) builds the topology of each state once.
  call.team.share_aux<CommState>(call.thread, created.is_null() ? nullptr : created.state().get());
  call.team.barrier();
  Verdict built;
  if (call.leader()) {
    std::vector<CommState*> states;
    for (int t = 0; t < call.local_size(); ++t) {
      auto* state = call.team.shared_aux<CommState>(t);
      if (state != nullptr && std::find(states.begin(), states.end(), state) == states.end()) {
        states.push_back(state);
      }
    }
    // Out of memory, in practice. The new communicator is not freed (that
    // is collective over processes that may have succeeded).
    built.guard(call.name, call.rank, [&] {
      for (CommState* state : states) state->topology = builder.build(*state, prepared);
    });
    call.team.share_aux(0, &built);
  }
  call.team.barrier();
  follow_verdict(call);
  return created;
}

}  // namespace detail

TopologyKind topo_test(const Communicator& comm) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::topo_test");
  const detail::Topology* topology = call.comm.topology.get();
  return topology == nullptr ? TopologyKind::kNone : topology->kind;
}

Neighbors topology_neighbors(const Communicator& comm) {
  const detail::Topology& topology = detail::topology_of(comm, "ep::topology_neighbors");
  const detail::EndpointNeighbors& me =
      topology.endpoints[static_cast<std::size_t>(comm.local_thread())];
  return {me.sources, me.sourceweights, me.destinations, me.destweights};
}

}  // namespace ep
