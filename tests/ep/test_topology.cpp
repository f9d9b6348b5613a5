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
#include <functional>
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
  on_every_grid([](ep::Communicator& grid, const Grid& g) {
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

// Runs `body` on every endpoint of a fresh endpoint communicator with
// make_graph over it, the endpoint's rank there and its graph_sources and
// graph_destinations; frees the graph afterwards. Collective over
// MPI_COMM_WORLD.
void on_graph(
    const std::function<void(const ep::Communicator& graph, int me, const std::vector<InEdge>& in,
                             const std::vector<int>& dests)>& body) {
  ep_test::run_endpoints([&](ep::Communicator& comm) {
    ep::Communicator graph = make_graph(comm);
    const int me = graph.rank();
    body(graph, me, graph_sources(me, graph.size()), graph_destinations(me, graph.size()));
    graph.free();
  });
}

TEST(Topology, DistGraphQueries) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const std::vector<InEdge> in = graph_sources(comm.rank(), comm.size());
    const std::vector<int> sources = source_ranks(in);
    const std::vector<int> dests = graph_destinations(comm.rank(), comm.size());
    {
      ep::Communicator graph = ep::dist_graph_create_adjacent(comm, sources, dests);
      // EXPECT and go on: the weighted creation below is collective, and an
      // endpoint that left here would keep the others waiting in it.
      EXPECT_FALSE(graph.is_null());
      if (!graph.is_null()) {
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
  on_graph([](const ep::Communicator& graph, int me, const std::vector<InEdge>& in,
              const std::vector<int>& /*dests*/) {
    const int mine[2] = {value(me, 0, 0), value(me, 0, 1)};
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
  });
}

TEST(Topology, DistGraphNeighborAlltoallWithRepeatedEdges) {
  on_graph([](const ep::Communicator& graph, int me, const std::vector<InEdge>& in,
              const std::vector<int>& dests) {
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
  });
}

TEST(Topology, DistGraphNeighborAlltoallvAndW) {
  on_graph([](const ep::Communicator& graph, int me, const std::vector<InEdge>& in,
              const std::vector<int>& dests) {
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
