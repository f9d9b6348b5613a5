// The collective skeleton shared by cart_create and dist_graph_create_adjacent.
//
// Every endpoint checks its own arguments and publishes what it found. The
// leader checks the process's arguments as a whole, then the leaders of all
// processes agree (one allreduce, plus for graphs an alltoall of the edge
// counts per process pair) before any communicator is made, so that bad or
// mismatched arguments anywhere make every endpoint throw the same error
// instead of leaving some of them in a collective that never completes.
// Only then is the communicator made and its topology attached.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include "comm_state.hpp"
#include "ep/error.hpp"
#include "team/collective_call.hpp"
#include "topology/topology.hpp"

namespace ep::detail {

/// What one endpoint brings to the creation call (published to the leader).
struct CreationArgs {
  std::string error;  // this endpoint's argument problem; empty when fine
  ErrorKind error_kind = ErrorKind::kArgument;
  // Arguments every endpoint must pass identically (0 when there are none).
  std::uint64_t fingerprint = 0;
  const void* args = nullptr;  // call-specific, read by the leader's builder
};

/// The leader's part of a creation, in two steps around the making of the
/// communicator.
struct TopologyBuilder {
  /// Before any communicator is made, once every local endpoint's arguments
  /// passed their own checks: whatever needs the whole process's arguments.
  /// Returns the problem found (empty: none). May fill `prepared` (a graph's
  /// topology, complete already since its communicator keeps the rank map).
  std::function<std::string(std::shared_ptr<Topology>& prepared)> check;
  /// After: the topology of the new communicator (`created` is this process's
  /// state of it), given what `check` prepared.
  std::function<std::shared_ptr<const Topology>(const CommState& created,
                                                std::shared_ptr<Topology> prepared)>
      build;
};

struct CreationOptions {
  /// Ranks kept: those below it (Cartesian grids smaller than the
  /// communicator); -1 keeps them all.
  int keep_below = -1;
  /// When not negative: the communicator is made by ep::split with this
  /// colour and `split_key` instead (cart_sub: one communicator per
  /// subgrid; a process may then hold endpoints of several, each of which
  /// gets its topology). Per endpoint.
  int split_color = -1;
  int split_key = 0;
  /// Check that every inter-process edge is named by both processes (graphs;
  /// a Cartesian grid is consistent by construction). Needs the topology
  /// prepared by TopologyBuilder::check.
  bool check_edge_counts = false;
};

/// Runs the creation on every endpoint of `comm` (`call` is its collective
/// context; the leader runs `builder`).
/// The communicator itself is made by ep::dup, or ep::split when ranks are
/// left out, so it follows their rules (parent, free, compare); the topology
/// is attached before the handles leave the call. Returns this endpoint's
/// handle (null when left out); throws ep::Error on every endpoint when any
/// endpoint of any process had bad arguments.
Communicator create_with_topology(const Communicator& comm, CollectiveCall& call,
                                  const CreationArgs& mine, const TopologyBuilder& builder,
                                  const CreationOptions& options);

/// A 64-bit FNV-1a digest of `values`, for comparing arguments across endpoints.
std::uint64_t fingerprint(std::initializer_list<std::span<const int>> values);

}  // namespace ep::detail
