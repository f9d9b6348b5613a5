// Cartesian and distributed-graph topologies on endpoint communicators and
// their neighbourhood collectives.
//
// Expected values never come from the topology under test: neighbours are
// recomputed here from the coordinates (Cartesian) or from the global edge
// list every endpoint can build (graph), and every block carries a value that
// names its sender and the sender's slot, so a block landing in the wrong
// slot shows. Grids include periodic dimensions of size 1 (a rank is its own
// neighbour twice) and 2 (the same neighbour on both sides), non-periodic
// edges (MPI_PROC_NULL slots must stay untouched) and grids smaller than the
// communicator (the endpoints left out get a null handle). Every shape has
// intra- and, with several processes, inter-process edges.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/topology.hpp"
#include "ep_test.hpp"

namespace {

constexpr int kUntouched = -1;

/// Value of element k of the block `sender` sends through its slot `slot`.
int value(int sender, int slot, int k) { return sender * 10000 + slot * 100 + k; }

// ---------------------------------------------------------------------------
// Reference Cartesian arithmetic (row-major, as MPI).

struct Grid {
  std::vector<int> dims;
  std::vector<int> periods;
  [[nodiscard]] int size() const {
    return std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>());
  }
};

std::vector<int> ref_coords(const Grid& g, int rank) {
  std::vector<int> c(g.dims.size());
  for (std::size_t d = g.dims.size(); d-- > 0;) {
    c[d] = rank % g.dims[d];
    rank /= g.dims[d];
  }
  return c;
}

// Rank at `c`, or MPI_PROC_NULL off a non-periodic edge.
int ref_rank(const Grid& g, std::vector<int> c) {
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
std::vector<int> ref_neighbors(const Grid& g, int rank) {
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
std::vector<Grid> grids_for(int size) {
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

std::string describe(const Grid& g) {
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

// ---------------------------------------------------------------------------
// dims_create

TEST(Topology, DimsCreateKnownValues) {
  const auto dims = [](int n, std::vector<int> d) {
    ep::dims_create(n, d);
    return d;
  };
  EXPECT_EQ(dims(6, {0, 0}), (std::vector<int>{3, 2}));
  EXPECT_EQ(dims(7, {0, 0}), (std::vector<int>{7, 1}));
  EXPECT_EQ(dims(12, {0, 0, 0}), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(dims(16, {0, 0, 0}), (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(dims(1, {0, 0, 0}), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(dims(12, {0, 3, 0}), (std::vector<int>{2, 3, 2}));
  EXPECT_EQ(dims(24, {2, 0, 2}), (std::vector<int>{2, 6, 2}));
  EXPECT_EQ(dims(8, {2, 4}), (std::vector<int>{2, 4}));
  // As balanced as possible: 9 x 8, where a greedy prime split gives 12 x 6.
  EXPECT_EQ(dims(72, {0, 0}), (std::vector<int>{9, 8}));
  std::vector<int> none;
  EXPECT_NO_THROW(ep::dims_create(5, none));
}

TEST(Topology, DimsCreateAgreesWithMpiOnSmallSizes) {
  for (int n = 1; n <= 64; ++n) {
    for (int k = 1; k <= 3; ++k) {
      std::vector<int> mine(static_cast<std::size_t>(k), 0);
      std::vector<int> mpi(static_cast<std::size_t>(k), 0);
      ep::dims_create(n, mine);
      MPI_Dims_create(n, k, mpi.data());
      EXPECT_EQ(mine, mpi) << "n " << n << ", ndims " << k;
    }
  }
}

TEST(Topology, DimsCreateErrors) {
  std::vector<int> d{3, 0};
  EXPECT_THROW(ep::dims_create(10, d), ep::Error);
  d = {-1, 0};
  EXPECT_THROW(ep::dims_create(4, d), ep::Error);
  d = {0};
  EXPECT_THROW(ep::dims_create(0, d), ep::Error);
}

// ---------------------------------------------------------------------------
// Cartesian queries

TEST(Topology, CartQueriesAndRoundTrips) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    EXPECT_EQ(ep::topo_test(comm), ep::TopologyKind::kNone);
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) {
        EXPECT_EQ(grid.size(), g.size());
        EXPECT_EQ(grid.rank(), comm.rank());  // no reordering
        EXPECT_EQ(ep::topo_test(grid), ep::TopologyKind::kCartesian);
        EXPECT_EQ(ep::cartdim_get(grid), static_cast<int>(g.dims.size()));
        const ep::CartInfo info = ep::cart_get(grid);
        EXPECT_EQ(info.dims, g.dims);
        EXPECT_EQ(info.periods, g.periods);
        EXPECT_EQ(info.coords, ref_coords(g, grid.rank()));
        for (int r = 0; r < grid.size(); ++r) {
          const std::vector<int> c = ep::cart_coords(grid, r);
          EXPECT_EQ(c, ref_coords(g, r));
          EXPECT_EQ(ep::cart_rank(grid, c), r);
          // Periodic coordinates wrap; non-periodic ones out of range are errors.
          for (std::size_t d = 0; d < c.size(); ++d) {
            std::vector<int> beyond = c;
            beyond[d] += g.dims[d];
            if (g.periods[d] != 0) {
              EXPECT_EQ(ep::cart_rank(grid, beyond), r);
              beyond[d] = c[d] - 3 * g.dims[d];
              EXPECT_EQ(ep::cart_rank(grid, beyond), r);
            } else {
              EXPECT_THROW(static_cast<void>(ep::cart_rank(grid, beyond)), ep::Error);
            }
          }
        }
        EXPECT_THROW(static_cast<void>(ep::cart_coords(grid, grid.size())), ep::Error);
        EXPECT_THROW(static_cast<void>(ep::dist_graph_neighbors(grid)), ep::Error);
      });
    }
  });
}

TEST(Topology, CartShiftPeriodicAndNot) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) {
        const std::vector<int> c = ref_coords(g, grid.rank());
        for (std::size_t d = 0; d < g.dims.size(); ++d) {
          for (const int disp : {0, 1, -1, 2, 5, -7}) {
            std::vector<int> back = c;
            std::vector<int> ahead = c;
            back[d] -= disp;
            ahead[d] += disp;
            const ep::ShiftRanks shift = ep::cart_shift(grid, static_cast<int>(d), disp);
            EXPECT_EQ(shift.source, ref_rank(g, back)) << "dim " << d << " disp " << disp;
            EXPECT_EQ(shift.dest, ref_rank(g, ahead)) << "dim " << d << " disp " << disp;
          }
        }
        const ep::Neighbors n = ep::topology_neighbors(grid);
        EXPECT_EQ(n.sources, ref_neighbors(g, grid.rank()));
        EXPECT_EQ(n.destinations, ref_neighbors(g, grid.rank()));
        EXPECT_THROW(static_cast<void>(ep::cart_shift(grid, static_cast<int>(g.dims.size()), 1)),
                     ep::Error);
      });
    }
  });
}

// A grid smaller than the communicator keeps the first ranks; the rest get a
// null handle, and what remains is a working communicator of its own.
TEST(Topology, CartSmallerThanCommunicator) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const int size = comm.size();
    for (const int nodes : {std::max(1, size - 1), std::max(1, size / 2), 1}) {
      SCOPED_TRACE("grid of " + std::to_string(nodes));
      const std::array<int, 1> dims{nodes};
      const std::array<int, 1> periods{1};
      ep::Communicator grid = ep::cart_create(comm, dims, periods);
      EXPECT_EQ(grid.is_null(), comm.rank() >= nodes);
      if (grid.is_null()) continue;
      EXPECT_EQ(grid.size(), nodes);
      EXPECT_EQ(grid.rank(), comm.rank());
      int sum = 0;
      const int mine = grid.rank() + 1;
      ep::allreduce(grid, &mine, &sum, 1, MPI_INT, MPI_SUM);
      EXPECT_EQ(sum, nodes * (nodes + 1) / 2);
      std::array<int, 2> got{kUntouched, kUntouched};
      ep::neighbor_allgather(grid, &mine, 1, MPI_INT, got.data(), 1, MPI_INT);
      EXPECT_EQ(got[0], (grid.rank() - 1 + nodes) % nodes + 1);
      EXPECT_EQ(got[1], (grid.rank() + 1) % nodes + 1);
      grid.free();
    }
  });
}

// ---------------------------------------------------------------------------
// Neighbour collectives on Cartesian grids

TEST(Topology, CartNeighborAllgather) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) {
        constexpr int kCount = 3;
        const int me = grid.rank();
        const std::vector<int> nbrs = ref_neighbors(g, me);
        std::vector<int> out(kCount);
        for (int k = 0; k < kCount; ++k) out[k] = value(me, 0, k);
        std::vector<int> in(nbrs.size() * kCount, kUntouched);
        ep::neighbor_allgather(grid, out.data(), kCount, MPI_INT, in.data(), kCount, MPI_INT);
        for (std::size_t j = 0; j < nbrs.size(); ++j) {
          for (int k = 0; k < kCount; ++k) {
            const int expected = nbrs[j] == MPI_PROC_NULL ? kUntouched : value(nbrs[j], 0, k);
            EXPECT_EQ(in[j * kCount + k], expected) << "slot " << j << " element " << k;
          }
        }
      });
    }
  });
}

TEST(Topology, CartNeighborAllgatherv) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) {
        constexpr int kCount = 4;
        const int me = grid.rank();
        const std::vector<int> nbrs = ref_neighbors(g, me);
        std::vector<int> out(kCount);
        for (int k = 0; k < kCount; ++k) out[k] = value(me, 0, k);
        // Slots placed back to front with a gap of 2 ints after each (the
        // counts all equal kCount: MPI requires matching type signatures).
        const std::size_t n = nbrs.size();
        std::vector<int> counts(n, kCount);
        std::vector<int> displs(n);
        for (std::size_t j = 0; j < n; ++j)
          displs[j] = static_cast<int>((n - 1 - j) * (kCount + 2));
        std::vector<int> in(n * (kCount + 2), kUntouched);
        ep::neighbor_allgatherv(grid, out.data(), kCount, MPI_INT, in.data(), counts, displs,
                                MPI_INT);
        for (std::size_t j = 0; j < n; ++j) {
          for (int k = 0; k < kCount + 2; ++k) {
            const bool data = k < kCount && nbrs[j] != MPI_PROC_NULL;
            const int expected = data ? value(nbrs[j], 0, k) : kUntouched;
            EXPECT_EQ(in[displs[j] + k], expected) << "slot " << j << " element " << k;
          }
        }
      });
    }
  });
}

TEST(Topology, CartNeighborAlltoall) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) {
        constexpr int kCount = 2;
        const int me = grid.rank();
        const std::vector<int> nbrs = ref_neighbors(g, me);
        const std::size_t n = nbrs.size();
        std::vector<int> out(n * kCount);
        for (std::size_t i = 0; i < n; ++i) {
          for (int k = 0; k < kCount; ++k) out[i * kCount + k] = value(me, static_cast<int>(i), k);
        }
        std::vector<int> in(n * kCount, kUntouched);
        ep::neighbor_alltoall(grid, out.data(), kCount, MPI_INT, in.data(), kCount, MPI_INT);
        // Slot j's neighbour sent it through its opposite slot j ^ 1 (MPI-4:
        // what goes in the -1 direction arrives from the +1 side), also
        // when both slots of a dimension name the same rank.
        for (std::size_t j = 0; j < n; ++j) {
          for (int k = 0; k < kCount; ++k) {
            const int expected =
                nbrs[j] == MPI_PROC_NULL ? kUntouched : value(nbrs[j], static_cast<int>(j ^ 1U), k);
            EXPECT_EQ(in[j * kCount + k], expected) << "slot " << j << " element " << k;
          }
        }
      });
    }
  });
}

/// Elements sender `rank` sends through its slot `slot` in the v/w tests.
int varying_count(int rank, int slot) { return (rank * 7 + slot * 3) % 4; }  // 0..3, zeros too

TEST(Topology, CartNeighborAlltoallv) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) {
        const int me = grid.rank();
        const std::vector<int> nbrs = ref_neighbors(g, me);
        const std::size_t n = nbrs.size();
        // Send blocks packed in reverse slot order; receive blocks spaced out
        // with room for 4 elements each, in slot order from offset 1.
        std::vector<int> scounts(n);
        std::vector<int> sdispls(n);
        std::vector<int> out;
        for (std::size_t i = n; i-- > 0;) {
          scounts[i] = varying_count(me, static_cast<int>(i));
          sdispls[i] = static_cast<int>(out.size());
          for (int k = 0; k < scounts[i]; ++k) out.push_back(value(me, static_cast<int>(i), k));
        }
        out.push_back(0);  // never empty, so data() is a valid address
        std::vector<int> rcounts(n);
        std::vector<int> rdispls(n);
        for (std::size_t j = 0; j < n; ++j) {
          rcounts[j] =
              nbrs[j] == MPI_PROC_NULL ? 0 : varying_count(nbrs[j], static_cast<int>(j ^ 1U));
          rdispls[j] = 1 + static_cast<int>(j) * 5;
        }
        std::vector<int> in(1 + n * 5, kUntouched);
        ep::neighbor_alltoallv(grid, out.data(), scounts, sdispls, MPI_INT, in.data(), rcounts,
                               rdispls, MPI_INT);
        for (std::size_t j = 0; j < n; ++j) {
          for (int k = 0; k < 5; ++k) {
            const int expected =
                k < rcounts[j] ? value(nbrs[j], static_cast<int>(j ^ 1U), k) : kUntouched;
            EXPECT_EQ(in[rdispls[j] + k], expected) << "slot " << j << " element " << k;
          }
        }
        EXPECT_EQ(in[0], kUntouched);
      });
    }
  });
}

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

TEST(Topology, CartNeighborAlltoallw) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    for (const Grid& g : grids_for(comm.size())) {
      on_grid(comm, g, [&](ep::Communicator& grid) {
        const std::vector<int> nbrs = ref_neighbors(g, grid.rank());
        alltoallw_check(grid, nbrs, nbrs, [](std::size_t j) { return static_cast<int>(j ^ 1U); });
      });
    }
  });
}

// A halo exchange on a 2-D periodic grid, as a model would write it: every
// rank owns a value field f(x, y) = 100 x + y on its block; the halo cells
// received from the four neighbours must hold the neighbours' edge values.
TEST(Topology, CartHaloExchange2D) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    std::array<int, 2> dims{0, 0};
    ep::dims_create(comm.size(), dims);
    const Grid g{{dims[0], dims[1]}, {1, 1}};
    on_grid(comm, g, [&](ep::Communicator& grid) {
      constexpr int kBlock = 3;  // points per side of a rank's block
      const std::vector<int> c = ref_coords(g, grid.rank());
      const auto field = [&](int gx, int gy) {
        const int nx = g.dims[0] * kBlock;
        const int ny = g.dims[1] * kBlock;
        return 100 * (((gx % nx) + nx) % nx) + ((gy % ny) + ny) % ny;
      };
      const int x0 = c[0] * kBlock;
      const int y0 = c[1] * kBlock;
      // Edges in neighbour order: -x, +x, -y, +y.
      std::vector<int> out(4 * kBlock);
      for (int i = 0; i < kBlock; ++i) {
        out[0 * kBlock + i] = field(x0, y0 + i);
        out[1 * kBlock + i] = field(x0 + kBlock - 1, y0 + i);
        out[2 * kBlock + i] = field(x0 + i, y0);
        out[3 * kBlock + i] = field(x0 + i, y0 + kBlock - 1);
      }
      std::vector<int> halo(4 * kBlock, kUntouched);
      ep::neighbor_alltoall(grid, out.data(), kBlock, MPI_INT, halo.data(), kBlock, MPI_INT);
      for (int i = 0; i < kBlock; ++i) {
        EXPECT_EQ(halo[0 * kBlock + i], field(x0 - 1, y0 + i));
        EXPECT_EQ(halo[1 * kBlock + i], field(x0 + kBlock, y0 + i));
        EXPECT_EQ(halo[2 * kBlock + i], field(x0 + i, y0 - 1));
        EXPECT_EQ(halo[3 * kBlock + i], field(x0 + i, y0 + kBlock));
      }
    });
  });
}

// Many calls in a row with counts changing from call to call: the
// aggregated messages of successive calls share one tag, so this checks that
// they never mix.
TEST(Topology, CartRepeatedCallsStayApart) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    std::array<int, 2> dims{0, 0};
    ep::dims_create(comm.size(), dims);
    const Grid g{{dims[0], dims[1]}, {1, 1}};
    on_grid(comm, g, [&](ep::Communicator& grid) {
      const int me = grid.rank();
      const std::vector<int> nbrs = ref_neighbors(g, me);
      const std::size_t n = nbrs.size();
      for (int round = 0; round < 40; ++round) {
        std::vector<int> scounts(n);
        std::vector<int> sdispls(n);
        std::vector<int> out;
        for (std::size_t i = 0; i < n; ++i) {
          scounts[i] = varying_count(me + round, static_cast<int>(i)) + round % 3;
          sdispls[i] = static_cast<int>(out.size());
          for (int k = 0; k < scounts[i]; ++k) {
            out.push_back(value(me, static_cast<int>(i), k) + round * 1000000);
          }
        }
        out.push_back(0);
        std::vector<int> rcounts(n);
        std::vector<int> rdispls(n);
        for (std::size_t j = 0; j < n; ++j) {
          rcounts[j] = varying_count(nbrs[j] + round, static_cast<int>(j ^ 1U)) + round % 3;
          rdispls[j] = static_cast<int>(j) * 6;
        }
        std::vector<int> in(n * 6, kUntouched);
        ep::neighbor_alltoallv(grid, out.data(), scounts, sdispls, MPI_INT, in.data(), rcounts,
                               rdispls, MPI_INT);
        for (std::size_t j = 0; j < n; ++j) {
          for (int k = 0; k < rcounts[j]; ++k) {
            EXPECT_EQ(in[rdispls[j] + k],
                      value(nbrs[j], static_cast<int>(j ^ 1U), k) + round * 1000000)
                << "round " << round << " slot " << j;
          }
        }
      }
    });
  });
}

// Topologies on a communicator whose ranks are not process-major (a split
// with reversed keys): which neighbours are local and which remote must
// follow the rank map, also on a grid smaller than the communicator, which
// leaves out an endpoint of process 0 there.
TEST(Topology, CartOnReversedCommunicator) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    ep::Communicator reversed = ep::split(comm, 0, comm.size() - comm.rank());
    ASSERT_FALSE(reversed.is_null());
    EXPECT_EQ(reversed.rank(), comm.size() - 1 - comm.rank());
    const int size = reversed.size();
    for (const Grid& g :
         {Grid{{size}, {1}}, Grid{{std::max(1, size - 1)}, {1}}, Grid{{1, size}, {1, 1}}}) {
      on_grid(reversed, g, [&](ep::Communicator& grid) {
        const std::vector<int> nbrs = ref_neighbors(g, grid.rank());
        std::vector<int> out(nbrs.size());
        for (std::size_t i = 0; i < nbrs.size(); ++i)
          out[i] = value(grid.rank(), static_cast<int>(i), 0);
        std::vector<int> in(nbrs.size(), kUntouched);
        ep::neighbor_alltoall(grid, out.data(), 1, MPI_INT, in.data(), 1, MPI_INT);
        for (std::size_t j = 0; j < nbrs.size(); ++j) {
          EXPECT_EQ(in[j], value(nbrs[j], static_cast<int>(j ^ 1U), 0)) << "slot " << j;
        }
      });
    }
    reversed.free();
  });
}

// ---------------------------------------------------------------------------
// Distributed graphs

// Every endpoint can build the whole graph: rank r sends to r + 1 twice
// (a repeated edge), to 2r + 1 once (asymmetric: not the reverse of any
// edge in general) and to itself, except ranks r % 3 == 2, which send to
// nobody (but still receive).
std::vector<int> graph_destinations(int rank, int size) {
  if (rank % 3 == 2) return {};
  return {(rank + 1) % size, (2 * rank + 1) % size, (rank + 1) % size, rank};
}

struct InEdge {
  int source;
  int sender_slot;  // the slot of `source` whose edge this is
};

// `rank`'s in-edges in the order it lists them: by source descending (so not
// the senders' order), repeated edges from one source in occurrence order, as
// MPI pairs the k-th edge s->r with the k-th occurrence of s among r's sources.
std::vector<InEdge> graph_sources(int rank, int size) {
  std::vector<InEdge> in;
  for (int s = size; s-- > 0;) {
    const std::vector<int> dests = graph_destinations(s, size);
    for (std::size_t i = 0; i < dests.size(); ++i) {
      if (dests[i] == rank) in.push_back({s, static_cast<int>(i)});
    }
  }
  return in;
}

std::vector<int> source_ranks(const std::vector<InEdge>& in) {
  std::vector<int> ranks;
  for (const InEdge& e : in) ranks.push_back(e.source);
  return ranks;
}

ep::Communicator make_graph(const ep::Communicator& comm) {
  const std::vector<int> sources = source_ranks(graph_sources(comm.rank(), comm.size()));
  const std::vector<int> dests = graph_destinations(comm.rank(), comm.size());
  return ep::dist_graph_create_adjacent(comm, sources, dests);
}

TEST(Topology, DistGraphQueries) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const std::vector<InEdge> in = graph_sources(comm.rank(), comm.size());
    const std::vector<int> sources = source_ranks(in);
    const std::vector<int> dests = graph_destinations(comm.rank(), comm.size());
    {
      ep::Communicator graph = ep::dist_graph_create_adjacent(comm, sources, dests);
      ASSERT_FALSE(graph.is_null());
      EXPECT_EQ(graph.size(), comm.size());
      EXPECT_EQ(graph.rank(), comm.rank());
      EXPECT_EQ(ep::topo_test(graph), ep::TopologyKind::kDistGraph);
      const ep::NeighborCounts counts = ep::dist_graph_neighbors_count(graph);
      EXPECT_EQ(counts.indegree, static_cast<int>(sources.size()));
      EXPECT_EQ(counts.outdegree, static_cast<int>(dests.size()));
      EXPECT_FALSE(counts.weighted);
      const ep::Neighbors n = ep::dist_graph_neighbors(graph);
      EXPECT_EQ(n.sources, sources);
      EXPECT_EQ(n.destinations, dests);
      EXPECT_TRUE(n.sourceweights.empty());
      EXPECT_THROW(static_cast<void>(ep::cart_coords(graph, 0)), ep::Error);
      graph.free();
    }
    {
      std::vector<int> sw(sources.size());
      std::vector<int> dw(dests.size());
      std::iota(sw.begin(), sw.end(), 10);
      std::iota(dw.begin(), dw.end(), 20);
      ep::Communicator graph = ep::dist_graph_create_adjacent(comm, sources, sw, dests, dw);
      const ep::NeighborCounts counts = ep::dist_graph_neighbors_count(graph);
      EXPECT_TRUE(counts.weighted);
      const ep::Neighbors n = ep::dist_graph_neighbors(graph);
      EXPECT_EQ(n.sourceweights, sw);
      EXPECT_EQ(n.destweights, dw);
      graph.free();
    }
  });
}

TEST(Topology, DistGraphNeighborAllgather) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    ep::Communicator graph = make_graph(comm);
    const std::vector<InEdge> in = graph_sources(graph.rank(), graph.size());
    const int mine[2] = {value(graph.rank(), 0, 0), value(graph.rank(), 0, 1)};
    std::vector<int> got(in.size() * 2 + 1, kUntouched);
    ep::neighbor_allgather(graph, mine, 2, MPI_INT, got.data(), 2, MPI_INT);
    for (std::size_t j = 0; j < in.size(); ++j) {
      EXPECT_EQ(got[2 * j], value(in[j].source, 0, 0)) << "slot " << j;
      EXPECT_EQ(got[2 * j + 1], value(in[j].source, 0, 1)) << "slot " << j;
    }
    EXPECT_EQ(got.back(), kUntouched);

    // allgatherv: slots placed back to front.
    std::vector<int> counts(in.size(), 2);
    std::vector<int> displs(in.size());
    for (std::size_t j = 0; j < in.size(); ++j)
      displs[j] = static_cast<int>(2 * (in.size() - 1 - j));
    std::fill(got.begin(), got.end(), kUntouched);
    ep::neighbor_allgatherv(graph, mine, 2, MPI_INT, got.data(), counts, displs, MPI_INT);
    for (std::size_t j = 0; j < in.size(); ++j) {
      EXPECT_EQ(got[displs[j]], value(in[j].source, 0, 0)) << "slot " << j;
      EXPECT_EQ(got[displs[j] + 1], value(in[j].source, 0, 1)) << "slot " << j;
    }
    graph.free();
  });
}

TEST(Topology, DistGraphNeighborAlltoallWithRepeatedEdges) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    ep::Communicator graph = make_graph(comm);
    const int me = graph.rank();
    const std::vector<InEdge> in = graph_sources(me, graph.size());
    const std::vector<int> dests = graph_destinations(me, graph.size());
    constexpr int kCount = 3;
    std::vector<int> out(dests.size() * kCount + 1, 0);
    for (std::size_t i = 0; i < dests.size(); ++i) {
      for (int k = 0; k < kCount; ++k) out[i * kCount + k] = value(me, static_cast<int>(i), k);
    }
    std::vector<int> got(in.size() * kCount + 1, kUntouched);
    ep::neighbor_alltoall(graph, out.data(), kCount, MPI_INT, got.data(), kCount, MPI_INT);
    for (std::size_t j = 0; j < in.size(); ++j) {
      for (int k = 0; k < kCount; ++k) {
        EXPECT_EQ(got[j * kCount + k], value(in[j].source, in[j].sender_slot, k))
            << "slot " << j << " from " << in[j].source;
      }
    }
    graph.free();
  });
}

TEST(Topology, DistGraphNeighborAlltoallvAndW) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    ep::Communicator graph = make_graph(comm);
    const int me = graph.rank();
    const std::vector<InEdge> in = graph_sources(me, graph.size());
    const std::vector<int> dests = graph_destinations(me, graph.size());
    // alltoallv: counts vary per edge (zeros included), blocks reversed.
    std::vector<int> scounts(dests.size());
    std::vector<int> sdispls(dests.size());
    std::vector<int> out;
    for (std::size_t i = dests.size(); i-- > 0;) {
      scounts[i] = varying_count(me, static_cast<int>(i));
      sdispls[i] = static_cast<int>(out.size());
      for (int k = 0; k < scounts[i]; ++k) out.push_back(value(me, static_cast<int>(i), k));
    }
    out.push_back(0);
    std::vector<int> rcounts(in.size());
    std::vector<int> rdispls(in.size());
    for (std::size_t j = 0; j < in.size(); ++j) {
      rcounts[j] = varying_count(in[j].source, in[j].sender_slot);
      rdispls[j] = static_cast<int>(j) * 4;
    }
    std::vector<int> got(in.size() * 4 + 1, kUntouched);
    ep::neighbor_alltoallv(graph, out.data(), scounts, sdispls, MPI_INT, got.data(), rcounts,
                           rdispls, MPI_INT);
    for (std::size_t j = 0; j < in.size(); ++j) {
      for (int k = 0; k < 4; ++k) {
        const int expected =
            k < rcounts[j] ? value(in[j].source, in[j].sender_slot, k) : kUntouched;
        EXPECT_EQ(got[rdispls[j] + k], expected) << "slot " << j << " element " << k;
      }
    }
    alltoallw_check(graph, dests, source_ranks(in),
                    [&in](std::size_t j) { return in[j].sender_slot; });
    graph.free();
  });
}

// A halo graph as NEMO builds it: a 1-D periodic ring as a distributed graph
// must give the same data as the Cartesian ring (both neighbours listed
// -1 then +1), including the size-1 and size-2 cases where MPI pairs the
// graph's repeated edges by occurrence rather than by direction.
TEST(Topology, DistGraphRingMatchesOccurrenceOrder) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    const std::vector<int> ring{(me - 1 + n) % n, (me + 1) % n};
    ep::Communicator graph = ep::dist_graph_create_adjacent(comm, ring, ring);
    const int out[2] = {value(me, 0, 0), value(me, 1, 0)};
    int got[2] = {kUntouched, kUntouched};
    ep::neighbor_alltoall(graph, out, 1, MPI_INT, got, 1, MPI_INT);
    // Left neighbour sends its slot 1 (to its right) to me; with n <= 2 the
    // two edges between a pair are matched in list order instead.
    if (n > 2) {
      EXPECT_EQ(got[0], value(ring[0], 1, 0));
      EXPECT_EQ(got[1], value(ring[1], 0, 0));
    } else {
      EXPECT_EQ(got[0], value(ring[0], 0, 0));
      EXPECT_EQ(got[1], value(ring[1], 1, 0));
    }
    graph.free();
  });
}

// ---------------------------------------------------------------------------
// Errors: every endpoint throws, and the old communicator stays usable.

TEST(Topology, CreationErrorsThrowEverywhere) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const int n = comm.size();
    const std::array<int, 1> too_big{n + 1};
    const std::array<int, 1> periodic{1};
    EXPECT_THROW(static_cast<void>(ep::cart_create(comm, too_big, periodic)), ep::Error);
    const std::array<int, 2> two_dims{n, 1};
    EXPECT_THROW(static_cast<void>(ep::cart_create(comm, two_dims, periodic)), ep::Error);
    // Only some endpoints pass a bad rank: all must still throw.
    const std::vector<int> bad{comm.rank() == n - 1 ? n : 0};
    const std::vector<int> none;
    EXPECT_THROW(static_cast<void>(ep::dist_graph_create_adjacent(comm, none, bad)), ep::Error);
    // Edges named by the sender only.
    const std::vector<int> next{(comm.rank() + 1) % n};
    try {
      static_cast<void>(ep::dist_graph_create_adjacent(comm, none, next));
      ADD_FAILURE() << "a one-sided edge was accepted";
    } catch (const ep::Error& e) {
      EXPECT_EQ(e.kind(), ep::ErrorKind::kArgument);
      EXPECT_EQ(e.ep_rank(), comm.rank());
    }
    // No topology, no neighbour collective.
    int x = 0;
    EXPECT_THROW(ep::neighbor_allgather(comm, &x, 1, MPI_INT, &x, 1, MPI_INT), ep::Error);
    EXPECT_THROW(static_cast<void>(ep::cartdim_get(comm)), ep::Error);
    // The communicator still works after the failed creations.
    int sum = 0;
    const int one = 1;
    ep::allreduce(comm, &one, &sum, 1, MPI_INT, MPI_SUM);
    EXPECT_EQ(sum, n);
  });
}

TEST(Topology, NeighborCollectiveArgumentErrors) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const std::array<int, 1> dims{comm.size()};
    const std::array<int, 1> periodic{1};
    ep::Communicator grid = ep::cart_create(comm, dims, periodic);
    std::array<int, 2> out{1, 2};
    std::array<int, 2> in{0, 0};
    EXPECT_THROW(ep::neighbor_alltoall(grid, MPI_IN_PLACE, 1, MPI_INT, in.data(), 1, MPI_INT),
                 ep::Error);
    // Only rank 0 passes a short count list: everyone in its process throws,
    // the others see the mismatch (or the same error) rather than hanging.
    // Kept to one process: across processes MPI gives no such guarantee.
    if (comm.rank_map().num_processes() == 1) {
      const std::vector<int> counts(comm.rank() == 0 ? 1 : 2, 1);
      const std::vector<int> displs{0, 1};
      EXPECT_THROW(ep::neighbor_alltoallv(grid, out.data(), counts, displs, MPI_INT, in.data(),
                                          counts, displs, MPI_INT),
                   ep::Error);
    }
    // Still usable afterwards.
    ep::neighbor_alltoall(grid, out.data(), 1, MPI_INT, in.data(), 1, MPI_INT);
    EXPECT_EQ(in[0], 2);  // every rank sends 2 to its right, which receives it in slot 0
    EXPECT_EQ(in[1], 1);
    grid.free();
  });
}

}  // namespace
