// Neighbourhood collectives on Cartesian topologies of endpoint
// communicators: allgather(v), alltoall(v/w) on grids with periodic
// dimensions of size 1 and 2 and non-periodic edges, a 2-D halo exchange,
// repeated calls and a communicator whose ranks are not in process order.
// Expected values come from the reference arithmetic of topology_helpers.hpp,
// never from the topology under test.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
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
#include "topology_helpers.hpp"

namespace {

using namespace ep_topo;  // NOLINT(google-build-using-namespace): the suite's reference helpers

// ---------------------------------------------------------------------------
// Neighbour collectives on Cartesian grids

// value(me, 0, k) for k = 0 .. count - 1: what an endpoint gives every
// neighbour in the allgather forms.
std::vector<int> own_block(int me, int count) {
  std::vector<int> out(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) out[static_cast<std::size_t>(k)] = value(me, 0, k);
  return out;
}

// on_every_grid with the caller's rank in the grid and its neighbours there
// by the reference (ref_neighbors, MPI_PROC_NULL off a non-periodic edge).
template <class Body>
void on_every_grid_with_neighbors(Body body) {
  on_every_grid([&](ep::Communicator& grid, const Grid& g) {
    const int me = grid.rank();
    body(grid, me, ref_neighbors(g, me));
  });
}

TEST(Topology, CartNeighborAllgather) {
  on_every_grid_with_neighbors([](ep::Communicator& grid, int me, const std::vector<int>& nbrs) {
    constexpr int kCount = 3;
    const std::vector<int> out = own_block(me, kCount);
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

TEST(Topology, CartNeighborAllgatherv) {
  on_every_grid_with_neighbors([](ep::Communicator& grid, int me, const std::vector<int>& nbrs) {
    constexpr int kCount = 4;
    const std::vector<int> out = own_block(me, kCount);
    // Slots placed back to front with a gap of 2 ints after each (the
    // counts all equal kCount: MPI requires matching type signatures).
    const std::size_t n = nbrs.size();
    std::vector<int> counts(n, kCount);
    std::vector<int> displs(n);
    for (std::size_t j = 0; j < n; ++j) displs[j] = static_cast<int>((n - 1 - j) * (kCount + 2));
    std::vector<int> in(n * (kCount + 2), kUntouched);
    ep::neighbor_allgatherv(grid, out.data(), kCount, MPI_INT, in.data(), counts, displs, MPI_INT);
    for (std::size_t j = 0; j < n; ++j) {
      for (int k = 0; k < kCount + 2; ++k) {
        const bool data = k < kCount && nbrs[j] != MPI_PROC_NULL;
        const int expected = data ? value(nbrs[j], 0, k) : kUntouched;
        EXPECT_EQ(in[displs[j] + k], expected) << "slot " << j << " element " << k;
      }
    }
  });
}

TEST(Topology, CartNeighborAlltoall) {
  on_every_grid_with_neighbors([](ep::Communicator& grid, int me, const std::vector<int>& nbrs) {
    constexpr int kCount = 2;
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

TEST(Topology, CartNeighborAlltoallv) {
  on_every_grid_with_neighbors([](ep::Communicator& grid, int me, const std::vector<int>& nbrs) {
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
      rcounts[j] = nbrs[j] == MPI_PROC_NULL ? 0 : varying_count(nbrs[j], static_cast<int>(j ^ 1U));
      rdispls[j] = 1 + static_cast<int>(j) * 5;
    }
    std::vector<int> in(1 + n * 5, kUntouched);
    ep::neighbor_alltoallv(grid, out.data(), scounts, sdispls, MPI_INT, in.data(), rcounts, rdispls,
                           MPI_INT);
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

TEST(Topology, CartNeighborAlltoallw) {
  on_every_grid([](ep::Communicator& grid, const Grid& g) {
    const std::vector<int> nbrs = ref_neighbors(g, grid.rank());
    alltoallw_check(grid, nbrs, nbrs, [](std::size_t j) { return static_cast<int>(j ^ 1U); });
  });
}

// A halo exchange on a 2-D periodic grid, as a model would write it: every
// rank owns a value field f(x, y) = 100 x + y on its block; the halo cells
// received from the four neighbours must hold the neighbours' edge values.
TEST(Topology, CartHaloExchange2D) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const Grid g = periodic_grid_2d(comm.size());
    on_grid(comm, g, [&](ep::Communicator& grid) {
      const Halo2D h(g, grid.rank());
      const std::vector<int> out = h.edges();
      std::vector<int> halo(4 * Halo2D::kBlock, kUntouched);
      ep::neighbor_alltoall(grid, out.data(), Halo2D::kBlock, MPI_INT, halo.data(), Halo2D::kBlock,
                            MPI_INT);
      h.expect_halo(halo);
    });
  });
}

// Many calls in a row with counts changing from call to call: the
// aggregated messages of successive calls share one tag, so this checks that
// they never mix.
TEST(Topology, CartRepeatedCallsStayApart) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const Grid g = periodic_grid_2d(comm.size());
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
    // Every endpoint passed colour 0, so the split's result is null on all of
    // them or on none: leaving together on a null result keeps no one waiting.
    EXPECT_FALSE(reversed.is_null());
    if (reversed.is_null()) return;
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

}  // namespace
