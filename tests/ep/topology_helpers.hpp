// Reference arithmetic shared by the topology suites (test_topology.cpp,
// test_topology_neighbors.cpp, test_ineighbor.cpp, test_persistent_neighbor.cpp):
// grids, their row-major coordinates and neighbours recomputed without the
// topology under test, the block values that name their sender and slot, and
// the variants of the neighbourhood collectives.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

#include "ep/communicator.hpp"
#include "ep/topology.hpp"
#include "ep_test.hpp"

namespace ep_topo {

inline constexpr int kUntouched = -1;

/// Value of element k of the block `sender` sends through its slot `slot`.
inline int value(int sender, int slot, int k) { return sender * 10000 + slot * 100 + k; }

/// The neighbourhood collectives a suite runs in each of its forms.
enum class Variant { kAllgather, kAllgatherv, kAlltoall, kAlltoallv, kAlltoallw };
inline constexpr std::array kVariants{Variant::kAllgather, Variant::kAllgatherv, Variant::kAlltoall,
                                      Variant::kAlltoallv, Variant::kAlltoallw};
inline constexpr std::array kVariantNames{"allgather", "allgatherv", "alltoall", "alltoallv",
                                          "alltoallw"};
static_assert(kVariantNames.size() == kVariants.size());

inline const char* name_of(Variant v) { return kVariantNames[static_cast<std::size_t>(v)]; }

// ---------------------------------------------------------------------------
// Reference Cartesian arithmetic (row-major, as MPI).

struct Grid {
  std::vector<int> dims;
  std::vector<int> periods;
  [[nodiscard]] int size() const {
    return std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>());
  }
};

/// The 2-D periodic grid of `size` ranks with ep::dims_create's dimensions.
inline Grid periodic_grid_2d(int size) {
  std::array<int, 2> dims{0, 0};
  ep::dims_create(size, dims);
  return Grid{{dims[0], dims[1]}, {1, 1}};
}

inline std::vector<int> ref_coords(const Grid& g, int rank) {
  std::vector<int> c(g.dims.size());
  for (std::size_t d = g.dims.size(); d-- > 0;) {
    c[d] = rank % g.dims[d];
    rank /= g.dims[d];
  }
  return c;
}

// Rank at `c`, or MPI_PROC_NULL off a non-periodic edge.
inline int ref_rank(const Grid& g, std::vector<int> c) {
  int rank = 0;
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    const int n = g.dims[d];
    if (g.periods[d] != 0) {
      c[d] = ((c[d] % n) + n) % n;
    } else if (c[d] < 0 || c[d] >= n) {
      return MPI_PROC_NULL;
    }
    rank = rank * n + c[d];
  }
  return rank;
}

// MPI's neighbour order: for each dimension, the -1 then the +1 neighbour.
inline std::vector<int> ref_neighbors(const Grid& g, int rank) {
  std::vector<int> out;
  const std::vector<int> c = ref_coords(g, rank);
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    for (const int step : {-1, +1}) {
      std::vector<int> n = c;
      n[d] += step;
      out.push_back(ref_rank(g, n));
    }
  }
  return out;
}

/// Grids for a communicator of `size` endpoints: rings (a size-1 ring makes a
/// rank its own neighbour twice, a size-2 ring the same neighbour on both
/// sides), 2-D and 3-D grids with periodic dimensions of size 1 and 2,
/// non-periodic edges, and grids smaller than the communicator.
inline std::vector<Grid> grids_for(int size) {
  std::vector<Grid> grids = {
      {{size}, {1}},       {{size}, {0}},       {{1}, {1}},
      {{1, size}, {1, 1}}, {{size, 1}, {0, 0}}, {{size, 1}, {1, 0}},
  };
  if (size >= 2) {
    grids.push_back({{2}, {1}});
    grids.push_back({{2, 1}, {1, 1}});
    grids.push_back({{size - 1}, {1}});
  }
  if (size % 2 == 0) grids.push_back({{2, size / 2}, {1, 1}});
  std::array<int, 2> d2{0, 0};
  ep::dims_create(size, d2);
  grids.push_back({{d2[0], d2[1]}, {1, 0}});
  grids.push_back({{d2[0], d2[1]}, {0, 1}});
  std::array<int, 3> d3{0, 0, 0};
  ep::dims_create(size, d3);
  grids.push_back({{d3[0], d3[1], d3[2]}, {1, 1, 1}});
  grids.push_back({{d3[0], d3[1], d3[2]}, {0, 1, 0}});
  return grids;
}

inline std::string describe(const Grid& g) {
  std::string s = "dims {";
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    s += (d ? ", " : "") + std::to_string(g.dims[d]) + (g.periods[d] ? "p" : "");
  }
  return s + "}";
}

// Runs `body` on the grid handle of every endpoint inside the grid.
template <typename Body>
void on_grid(ep::Communicator& comm, const Grid& g, Body body) {
  SCOPED_TRACE(describe(g));
  ep::Communicator grid = ep::cart_create(comm, g.dims, g.periods, false);
  EXPECT_EQ(grid.is_null(), comm.rank() >= g.size());
  if (grid.is_null()) return;
  body(grid);
  grid.free();
}

/// Runs `body(grid, g)` for every grid `g` of grids_for(size) on the grid
/// handle of every endpoint inside it (on_grid), each over a fresh endpoint
/// communicator. Collective over MPI_COMM_WORLD.
template <typename Body>
void on_every_grid(Body body) {
  ep_test::run_endpoints([&](ep::Communicator& comm) {
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) { body(grid, g); });
    }
  });
}

/// A distributed graph with repeated, self and one-way edges: rank r sends
/// twice to r + 1 and once to r + 2 (mod n), and rank 0 one more edge to
/// itself. Collective over `comm`; the caller frees the result.
inline ep::Communicator irregular_dist_graph(const ep::Communicator& comm) {
  const int n = comm.size();
  const int r = comm.rank();
  std::vector<int> dests{(r + 1) % n, (r + 2) % n, (r + 1) % n};
  std::vector<int> sources{(r + n - 2) % n, (r + n - 1) % n, (r + n - 1) % n};
  if (r == 0) {
    dests.push_back(0);
    sources.push_back(0);
  }
  return ep::dist_graph_create_adjacent(comm, sources, dests);
}

/// Runs `body(graph)` on irregular_dist_graph of a fresh endpoint
/// communicator, freed after. Collective over MPI_COMM_WORLD.
template <typename Body>
void on_irregular_dist_graph(Body body) {
  ep_test::run_endpoints([&](ep::Communicator& comm) {
    ep::Communicator graph = irregular_dist_graph(comm);
    body(graph);
    graph.free();
  });
}

/// A 2-D halo exchange as a model writes it: every rank owns a block of
/// kBlock x kBlock points of the field f(x, y) = 100 x + y (periodic) on grid
/// `g`; `edges` are its four edges in neighbour order (-x, +x, -y, +y), and
/// the halo received from the neighbours must hold their edge values.
struct Halo2D {
  static constexpr int kBlock = 3;
  Grid g;
  int x0 = 0;
  int y0 = 0;

  Halo2D(const Grid& grid, int rank) : g(grid) {
    const std::vector<int> c = ref_coords(g, rank);
    x0 = c[0] * kBlock;
    y0 = c[1] * kBlock;
  }
  [[nodiscard]] int field(int gx, int gy) const {
    const int nx = g.dims[0] * kBlock;
    const int ny = g.dims[1] * kBlock;
    return 100 * (((gx % nx) + nx) % nx) + ((gy % ny) + ny) % ny;
  }
  [[nodiscard]] std::vector<int> edges() const {
    std::vector<int> out(4 * kBlock);
    for (int i = 0; i < kBlock; ++i) {
      out[0 * kBlock + i] = field(x0, y0 + i);
      out[1 * kBlock + i] = field(x0 + kBlock - 1, y0 + i);
      out[2 * kBlock + i] = field(x0 + i, y0);
      out[3 * kBlock + i] = field(x0 + i, y0 + kBlock - 1);
    }
    return out;
  }
  void expect_halo(const std::vector<int>& halo) const {
    for (int i = 0; i < kBlock; ++i) {
      EXPECT_EQ(halo[0 * kBlock + i], field(x0 - 1, y0 + i));
      EXPECT_EQ(halo[1 * kBlock + i], field(x0 + kBlock, y0 + i));
      EXPECT_EQ(halo[2 * kBlock + i], field(x0 + i, y0 - 1));
      EXPECT_EQ(halo[3 * kBlock + i], field(x0 + i, y0 + kBlock));
    }
  }
};

/// Elements sender `rank` sends through its slot `slot` in the v/w tests.
inline int varying_count(int rank, int slot) {
  return (rank * 7 + slot * 3) % 4;
}  // 0..3, zeros too

// Alltoallw with different types on the two sides: odd send slots go out as
// contiguous int pairs, odd receive slots land in a strided pair type (ints
// at 0 and 2 of every 3), so packing and unpacking of non-contiguous data run
// on the intra- and the inter-process path.
class PairTypes {
 public:
  PairTypes() {
    MPI_Type_contiguous(2, MPI_INT, &contiguous_);
    MPI_Type_commit(&contiguous_);
    MPI_Datatype vector = MPI_DATATYPE_NULL;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vector);
    MPI_Type_create_resized(vector, 0, 3 * static_cast<MPI_Aint>(sizeof(int)), &strided_);
    MPI_Type_commit(&strided_);
    MPI_Type_free(&vector);
  }
  PairTypes(const PairTypes&) = delete;
  PairTypes& operator=(const PairTypes&) = delete;
  ~PairTypes() {
    MPI_Type_free(&contiguous_);
    MPI_Type_free(&strided_);
  }
  [[nodiscard]] MPI_Datatype contiguous() const { return contiguous_; }
  [[nodiscard]] MPI_Datatype strided() const { return strided_; }

 private:
  MPI_Datatype contiguous_ = MPI_DATATYPE_NULL;
  MPI_Datatype strided_ = MPI_DATATYPE_NULL;
};

// Sends 2 * varying_count ints through every slot, receives through
// `nbrs` (with `pair_slot(j)` the sender's slot for receive slot j), checks.
template <typename PairSlot>
void alltoallw_check(const ep::Communicator& comm, const std::vector<int>& dests,
                     const std::vector<int>& nbrs, PairSlot pair_slot) {
  const PairTypes types;
  const int me = comm.rank();
  constexpr std::size_t kStride = 12;  // ints of room per slot (4 strided pairs)
  const std::size_t out_slots = dests.size();
  const std::size_t in_slots = nbrs.size();
  std::vector<int> out(out_slots * kStride + 1, 0);
  std::vector<int> scounts(out_slots);
  std::vector<MPI_Aint> sdispls(out_slots);
  std::vector<MPI_Datatype> stypes(out_slots);
  for (std::size_t i = 0; i < out_slots; ++i) {
    const int pairs = varying_count(me, static_cast<int>(i));
    const bool odd = i % 2 == 1;
    scounts[i] = odd ? pairs : 2 * pairs;
    stypes[i] = odd ? types.contiguous() : MPI_INT;
    sdispls[i] = static_cast<MPI_Aint>(i * kStride * sizeof(int));
    for (int k = 0; k < 2 * pairs; ++k) out[i * kStride + k] = value(me, static_cast<int>(i), k);
  }
  std::vector<int> in(in_slots * kStride + 1, kUntouched);
  std::vector<int> rcounts(in_slots);
  std::vector<MPI_Aint> rdispls(in_slots);
  std::vector<MPI_Datatype> rtypes(in_slots);
  for (std::size_t j = 0; j < in_slots; ++j) {
    const int pairs = nbrs[j] == MPI_PROC_NULL ? 0 : varying_count(nbrs[j], pair_slot(j));
    const bool odd = j % 2 == 1;
    rcounts[j] = odd ? pairs : 2 * pairs;
    rtypes[j] = odd ? types.strided() : MPI_INT;
    rdispls[j] = static_cast<MPI_Aint>(j * kStride * sizeof(int));
  }
  ep::neighbor_alltoallw(comm, out.data(), scounts, sdispls, stypes, in.data(), rcounts, rdispls,
                         rtypes);
  for (std::size_t j = 0; j < in_slots; ++j) {
    std::vector<int> expected(kStride, kUntouched);
    if (nbrs[j] != MPI_PROC_NULL) {
      const int sender_slot = pair_slot(j);
      const int pairs = varying_count(nbrs[j], sender_slot);
      for (int k = 0; k < 2 * pairs; ++k) {
        // Strided pairs put element k at 3 * (k / 2) + 2 * (k % 2).
        const std::size_t at = j % 2 == 1 ? 3 * (k / 2) + 2 * (k % 2) : k;
        expected[at] = value(nbrs[j], sender_slot, k);
      }
    }
    const std::vector<int> got(in.begin() + static_cast<std::ptrdiff_t>(j * kStride),
                               in.begin() + static_cast<std::ptrdiff_t>((j + 1) * kStride));
    EXPECT_EQ(got, expected) << "receive slot " << j << " from " << nbrs[j];
  }
}

}  // namespace ep_topo
