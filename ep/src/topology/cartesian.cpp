// Cartesian topologies: MPI_Dims_create, MPI_Cart_create and the coordinate
// queries. Ranks are laid out row-major (the last dimension varies fastest)
// and never reordered.
#include <algorithm>
#include <cstdint>
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

using detail::Topology;

const Topology& cartesian_of(const Communicator& comm, const char* call) {
  const Topology& topology = detail::topology_of(comm, call);
  if (topology.kind != TopologyKind::kCartesian) {
    throw Error(ErrorKind::kArgument, call, comm.rank(),
                "the communicator's topology is not Cartesian (MPI_ERR_TOPOLOGY)");
  }
  return topology;
}

int rank_at(const std::vector<int>& dims, const std::vector<int>& coords) {
  int rank = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) rank = rank * dims[d] + coords[d];
  return rank;
}

// Coordinate `c` along a dimension of `size` ranks, or -1 off the edge of a
// non-periodic one.
int wrap(int c, int size, bool periodic) {
  if (periodic) return ((c % size) + size) % size;
  return c >= 0 && c < size ? c : -1;
}

// The rank `disp` steps from `coords` along `direction`, or MPI_PROC_NULL.
int neighbor(const Topology& grid, std::vector<int> coords, int direction, long long disp) {
  const auto d = static_cast<std::size_t>(direction);
  // 64 bits: coords + disp may overflow int for extreme displacements.
  const long long target = coords[d] + disp;
  const int size = grid.dims[d];
  const long long wrapped = grid.periods[d] != 0 ? ((target % size) + size) % size : target;
  if (wrapped < 0 || wrapped >= size) return MPI_PROC_NULL;
  coords[d] = static_cast<int>(wrapped);
  return rank_at(grid.dims, coords);
}

// The slots of a Cartesian endpoint: for each dimension the -1 then the +1
// neighbour, on both sides. What leaves through slot s arrives in the
// receiver's slot s ^ 1 (the -1 direction of the sender is the +1 direction
// of the receiver), so the pairing key of send slot s is s ^ 1 and that of
// receive slot s is s itself.
detail::EndpointNeighbors cart_neighbors(const Topology& grid, int rank) {
  detail::EndpointNeighbors me;
  me.rank = rank;
  const std::vector<int> coords = detail::coords_of(grid.dims, rank);
  for (std::size_t d = 0; d < grid.dims.size(); ++d) {
    for (const int step : {-1, +1}) {
      const int slot = static_cast<int>(me.sources.size());
      const int peer = neighbor(grid, coords, static_cast<int>(d), step);
      me.sources.push_back(peer);
      me.destinations.push_back(peer);
      me.source_ordinals.push_back(slot);
      me.dest_ordinals.push_back(slot ^ 1);
    }
  }
  return me;
}

struct CartArgs {
  std::span<const int> dims;
  std::span<const int> periods;
};

// This endpoint's argument problem, or an empty string.
std::string check_cart_args(const CartArgs& args, int size) {
  if (args.dims.size() != args.periods.size()) {
    return "dims has " + std::to_string(args.dims.size()) + " entries but periods has " +
           std::to_string(args.periods.size());
  }
  long long nodes = 1;
  for (std::size_t d = 0; d < args.dims.size(); ++d) {
    if (args.dims[d] <= 0) {
      return "dims[" + std::to_string(d) + "] = " + std::to_string(args.dims[d]) +
             " is not positive";
    }
    nodes *= args.dims[d];
    if (nodes > size) {
      return "the grid has more than " + std::to_string(size) + " ranks (the communicator's size)";
    }
  }
  return {};
}

// Leader: the grid of the new communicator, whose ranks are those of the
// old one below the grid size.
std::shared_ptr<const Topology> build_grid(const detail::CommState& created, const CartArgs& args) {
  auto grid = std::make_shared<Topology>();
  grid->kind = TopologyKind::kCartesian;
  grid->dims.assign(args.dims.begin(), args.dims.end());
  for (const int p : args.periods) grid->periods.push_back(p != 0 ? 1 : 0);
  const RankMap& map = created.rank_map();
  grid->endpoints.resize(static_cast<std::size_t>(created.local_size()));
  for (int t = 0; t < created.local_size(); ++t) {
    grid->endpoints[static_cast<std::size_t>(t)] =
        cart_neighbors(*grid, map.ep_rank(created.process_rank(), t));
  }
  // Cannot fail: every edge of a grid is named at both ends.
  static_cast<void>(grid->build_routes(map, created.process_rank()));
  return grid;
}

// d^k >= n, without overflow.
bool power_reaches(int d, int k, int n) {
  long long power = 1;
  for (int i = 0; i < k; ++i) {
    power *= d;
    if (power >= n) return true;
  }
  return false;
}

// The most balanced factorisation of `n` into `k` factors, none above
// `largest`, in non-increasing order: the lexicographically smallest such
// list (smallest largest factor, then smallest second, ...), which is what
// "as close to each other as possible" means for MPI_Dims_create. Trying the
// candidates for the first factor in increasing order makes the first list
// found the answer. `divisors`: the divisors of the top-level n, ascending
// (every factor divides it). Returns false when there is none.
bool balanced_factors(int n, int k, int largest, const std::vector<int>& divisors,
                      std::vector<int>& out) {
  if (k == 1) {
    if (n > largest) return false;
    out.push_back(n);
    return true;
  }
  for (const int f : divisors) {
    if (f > n || f > largest) break;
    // The first (largest) factor is at least the k-th root of n.
    if (n % f != 0 || !power_reaches(f, k, n)) continue;
    out.push_back(f);
    if (balanced_factors(n / f, k - 1, f, divisors, out)) return true;
    out.pop_back();
  }
  return false;
}

std::vector<int> divisors_of(int n) {
  std::vector<int> low;
  std::vector<int> high;
  for (int d = 1; static_cast<long long>(d) * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

}  // namespace

void dims_create(int nnodes, std::span<int> dims) {
  constexpr const char* kCall = "ep::dims_create";
  if (nnodes <= 0) {
    throw Error(ErrorKind::kArgument, kCall, -1,
                "nnodes " + std::to_string(nnodes) + " is not positive");
  }
  long long fixed = 1;
  std::vector<std::size_t> free_dims;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0) {
      throw Error(ErrorKind::kArgument, kCall, -1,
                  "dims[" + std::to_string(d) + "] = " + std::to_string(dims[d]) + " is negative");
    }
    if (dims[d] == 0) {
      free_dims.push_back(d);
    } else {
      fixed *= dims[d];
      if (fixed > nnodes) break;  // caught below; avoids overflow
    }
  }
  if (fixed > nnodes || nnodes % fixed != 0) {
    throw Error(ErrorKind::kArgument, kCall, -1,
                std::to_string(nnodes) + " nodes cannot be divided by the fixed dims (product " +
                    std::to_string(fixed) + ")");
  }
  if (free_dims.empty()) return;
  const int rest = static_cast<int>(nnodes / fixed);
  std::vector<int> extents;
  balanced_factors(rest, static_cast<int>(free_dims.size()), rest, divisors_of(rest), extents);
  for (std::size_t i = 0; i < free_dims.size(); ++i) dims[free_dims[i]] = extents[i];
}

Communicator cart_create(const Communicator& comm, std::span<const int> dims,
                         std::span<const int> periods, bool /*reorder*/) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::cart_create");
  const CartArgs args{dims, periods};
  detail::CreationArgs mine;
  mine.error = check_cart_args(args, call.size());
  std::vector<int> periodic(periods.begin(), periods.end());
  for (int& p : periodic) p = p != 0 ? 1 : 0;
  mine.fingerprint = detail::fingerprint({dims, periodic});
  mine.args = &args;
  detail::TopologyBuilder builder;
  builder.check = [](std::shared_ptr<Topology>&) { return std::string(); };
  // The builder runs on the leader, so `args` is the leader's (all endpoints
  // agree, as the fingerprint check makes sure).
  builder.build = [&args](const detail::CommState& created, std::shared_ptr<Topology>) {
    return build_grid(created, args);
  };
  detail::CreationOptions options;
  if (mine.error.empty()) {  // then the product is known to fit
    int nodes = 1;
    for (const int extent : dims) nodes *= extent;
    if (nodes < call.size()) options.keep_below = nodes;
  }
  return detail::create_with_topology(comm, call, mine, builder, options);
}

Communicator cart_sub(const Communicator& comm, std::span<const int> remain_dims) {
  constexpr const char* kCall = "ep::cart_sub";
  const Topology& grid = cartesian_of(comm, kCall);
  detail::CollectiveCall call = detail::begin_collective(comm, kCall);
  detail::CreationArgs mine;
  std::vector<int> kept;  // remain_dims as 0 or 1
  for (const int r : remain_dims) kept.push_back(r != 0 ? 1 : 0);
  if (remain_dims.size() != grid.dims.size()) {
    mine.error = "remain_dims has " + std::to_string(remain_dims.size()) +
                 " entries for a grid of " + std::to_string(grid.dims.size()) + " dimensions";
    kept.assign(grid.dims.size(), 1);
  }
  mine.fingerprint = detail::fingerprint({kept});
  // The subgrid: the kept dimensions in order. Its communicators are the
  // endpoints that share the coordinates of the dropped dimensions (the
  // colour, row-major over them), ranked row-major over the kept ones (the
  // key), so that a subgrid rank is its coordinates' row-major index.
  std::vector<int> sub_dims;
  std::vector<int> sub_periods;
  const std::vector<int> coords = detail::coords_of(grid.dims, comm.rank());
  detail::CreationOptions options;
  options.split_color = 0;
  for (std::size_t d = 0; d < grid.dims.size(); ++d) {
    if (kept[d] != 0) {
      sub_dims.push_back(grid.dims[d]);
      sub_periods.push_back(grid.periods[d]);
      options.split_key = options.split_key * grid.dims[d] + coords[d];
    } else {
      options.split_color = options.split_color * grid.dims[d] + coords[d];
    }
  }
  const CartArgs args{sub_dims, sub_periods};
  mine.args = &args;
  detail::TopologyBuilder builder;
  builder.check = [](std::shared_ptr<Topology>&) { return std::string(); };
  // On the leader: every subgrid has the same dims (all endpoints agree on
  // remain_dims, as the fingerprint check makes sure).
  builder.build = [&args](const detail::CommState& created, std::shared_ptr<Topology>) {
    return build_grid(created, args);
  };
  return detail::create_with_topology(comm, call, mine, builder, options);
}

int cartdim_get(const Communicator& comm) {
  return static_cast<int>(cartesian_of(comm, "ep::cartdim_get").dims.size());
}

CartInfo cart_get(const Communicator& comm) {
  const Topology& grid = cartesian_of(comm, "ep::cart_get");
  return {grid.dims, grid.periods, detail::coords_of(grid.dims, comm.rank())};
}

std::vector<int> cart_coords(const Communicator& comm, int rank) {
  constexpr const char* kCall = "ep::cart_coords";
  const Topology& grid = cartesian_of(comm, kCall);
  if (rank < 0 || rank >= comm.size()) {
    throw Error(ErrorKind::kRank, kCall, comm.rank(),
                "rank " + std::to_string(rank) + " out of range [0, " +
                    std::to_string(comm.size() - 1) + "]");
  }
  return detail::coords_of(grid.dims, rank);
}

int cart_rank(const Communicator& comm, std::span<const int> coords) {
  constexpr const char* kCall = "ep::cart_rank";
  const Topology& grid = cartesian_of(comm, kCall);
  if (coords.size() != grid.dims.size()) {
    throw Error(ErrorKind::kArgument, kCall, comm.rank(),
                std::to_string(coords.size()) + " coordinates for a grid of " +
                    std::to_string(grid.dims.size()) + " dimensions");
  }
  std::vector<int> wrapped(coords.size());
  for (std::size_t d = 0; d < coords.size(); ++d) {
    wrapped[d] = wrap(coords[d], grid.dims[d], grid.periods[d] != 0);
    if (wrapped[d] < 0) {
      throw Error(ErrorKind::kRank, kCall, comm.rank(),
                  "coords[" + std::to_string(d) + "] = " + std::to_string(coords[d]) +
                      " out of range [0, " + std::to_string(grid.dims[d] - 1) +
                      "] in a non-periodic dimension");
    }
  }
  return rank_at(grid.dims, wrapped);
}

ShiftRanks cart_shift(const Communicator& comm, int direction, int disp) {
  constexpr const char* kCall = "ep::cart_shift";
  const Topology& grid = cartesian_of(comm, kCall);
  const int ndims = static_cast<int>(grid.dims.size());
  if (direction < 0 || direction >= ndims) {
    throw Error(ErrorKind::kArgument, kCall, comm.rank(),
                "direction " + std::to_string(direction) + " out of range [0, " +
                    std::to_string(ndims - 1) + "]");
  }
  const std::vector<int> coords = detail::coords_of(grid.dims, comm.rank());
  // Negated in 64 bits: disp may be INT_MIN.
  return {neighbor(grid, coords, direction, -static_cast<long long>(disp)),
          neighbor(grid, coords, direction, disp)};
}

}  // namespace ep
