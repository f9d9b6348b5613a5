// ep::cart_sub on the grids of topology_helpers.hpp with every choice of
// kept dimensions (sizes, ranks, coordinates and members against the
// reference arithmetic, neighbour collectives on the subgrids, zero kept
// dimensions), its argument errors, and ep::compare on intercommunicators
// (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "topology_helpers.hpp"

namespace {

using namespace ep_topo;  // NOLINT(google-build-using-namespace): the suite's reference helpers

// Row-major index of `coords` restricted to the dimensions where `keep` is set.
int index_over(const Grid& g, const std::vector<int>& coords, const std::vector<int>& keep,
               bool kept) {
  int index = 0;
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    if ((keep[d] != 0) == kept) index = index * g.dims[d] + coords[d];
  }
  return index;
}

void check_subgrid(const ep::Communicator& grid, const Grid& g, const std::vector<int>& keep) {
  SCOPED_TRACE("keep mask " + [&] {
    std::string s;
    for (const int k : keep) s += k != 0 ? '1' : '0';
    return s;
  }());
  ep::Communicator sub = ep::cart_sub(grid, keep);
  // Every endpoint gets a subgrid with a Cartesian topology; agreed on the
  // parent grid first, so that a failure here cannot leave the others waiting
  // in a collective of the subgrid below.
  const int ok = !sub.is_null() && ep::topo_test(sub) == ep::TopologyKind::kCartesian ? 1 : 0;
  int all_ok = 0;
  ep::allreduce(grid, &ok, &all_ok, 1, MPI_INT, MPI_MIN);
  EXPECT_EQ(ok, 1) << "no subgrid, or one without a Cartesian topology";
  if (all_ok == 0) {
    if (!sub.is_null()) sub.free();
    return;
  }
  const std::vector<int> coords = ref_coords(g, grid.rank());
  Grid expected;
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    if (keep[d] != 0) {
      expected.dims.push_back(g.dims[d]);
      expected.periods.push_back(g.periods[d]);
    }
  }
  EXPECT_EQ(sub.size(), expected.size());
  EXPECT_EQ(sub.rank(), index_over(g, coords, keep, true));
  const ep::CartInfo info = ep::cart_get(sub);
  EXPECT_EQ(info.dims, expected.dims);
  EXPECT_EQ(info.periods, expected.periods);
  EXPECT_EQ(info.coords, ref_coords(expected, sub.rank()));
  // Members: every endpoint of the subgrid shares my dropped coordinates and
  // sits at the rank its kept coordinates give.
  const int mine[2] = {grid.rank(), index_over(g, coords, keep, false)};
  std::vector<int> all(static_cast<std::size_t>(2 * sub.size()), -1);
  ep::allgather(sub, mine, 2, MPI_INT, all.data(), 2, MPI_INT);
  for (int r = 0; r < sub.size(); ++r) {
    const int parent = all[static_cast<std::size_t>(2 * r)];
    EXPECT_EQ(all[static_cast<std::size_t>(2 * r + 1)], mine[1]) << "member " << r;
    EXPECT_EQ(index_over(g, ref_coords(g, parent), keep, true), r) << "member " << r;
  }
  // The subgrid's neighbours work: one int through every slot.
  const std::vector<int> nbrs = ref_neighbors(expected, sub.rank());
  std::vector<int> out(nbrs.size());
  for (std::size_t i = 0; i < nbrs.size(); ++i) out[i] = value(sub.rank(), static_cast<int>(i), 0);
  std::vector<int> in(nbrs.size(), kUntouched);
  ep::Request request = ep::ineighbor_alltoall(sub, out.data(), 1, MPI_INT, in.data(), 1, MPI_INT);
  ep::wait(request);
  for (std::size_t j = 0; j < nbrs.size(); ++j) {
    const int want =
        nbrs[j] == MPI_PROC_NULL ? kUntouched : value(nbrs[j], static_cast<int>(j ^ 1U), 0);
    EXPECT_EQ(in[j], want) << "slot " << j;
  }
  sub.free();
}

TEST(CartSub, EveryKeptSetOnEveryGrid) {
  on_every_grid([](ep::Communicator& grid, const Grid& g) {
    const std::size_t n = g.dims.size();
    for (unsigned mask = 0; mask < (1U << n); ++mask) {
      std::vector<int> keep(n);
      for (std::size_t d = 0; d < n; ++d) keep[d] = (mask >> d) & 1U ? 7 : 0;  // any non-zero keeps
      check_subgrid(grid, g, keep);
    }
  });
}

TEST(CartSub, ArgumentErrorsOnEveryEndpoint) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const auto expect_error = [&](const ep::Communicator& c, std::span<const int> keep,
                                  const char* what) {
      try {
        ep::Communicator sub = ep::cart_sub(c, keep);
        ADD_FAILURE() << what << ": no ep::Error";
        sub.free();
      } catch (const ep::Error& e) {
        EXPECT_NE(std::string(e.what()).find("ep::cart_sub"), std::string::npos) << e.what();
      }
    };
    const std::vector<int> one{1};
    expect_error(comm, one, "no topology");
    const Grid g{{1, comm.size()}, {0, 1}};
    on_grid(comm, g, [&](ep::Communicator& grid) {
      expect_error(grid, one, "one entry for two dimensions");
      // Endpoints disagree: rank 0 keeps the first dimension only.
      const std::vector<int> keep =
          grid.rank() == 0 ? std::vector<int>{1, 0} : std::vector<int>{0, 1};
      if (grid.size() > 1) expect_error(grid, keep, "remain_dims differing between endpoints");
    });
  });
}

// ---- compare on intercommunicators ------------------------------------------

constexpr int kPeerTag = 4343;

// Even processes against odd processes; the groups' ranks in the order `key`
// gives them.
ep::InterCommunicator parity_intercomm(const ep::Communicator& c, int key, int tag) {
  const int side = c.process_rank() % 2;
  ep::Communicator group = ep::split(c, side, key);
  // Rank 0 of each group (the local leader) is on the group's lowest
  // process, 0 or 1, which the other group names as remote leader.
  const int remote_leader = side == 0 ? 1 : 0;
  ep::InterCommunicator inter = ep::create_intercomm(group, 0, MPI_COMM_WORLD, remote_leader, tag);
  group.free();
  return inter;
}

TEST(InterCompare, IdentCongruentSimilarUnequal) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "needs two processes for disjoint groups";
  ep_test::run_endpoints([](ep::Communicator& c) {
    // Keys keep rank 0 of each group on its lowest process (process 0 or 1):
    // the remote leaders named above.
    const int forward = c.rank();
    ep::InterCommunicator inter = parity_intercomm(c, forward, kPeerTag);
    const ep::InterCommunicator copy = inter;
    EXPECT_EQ(ep::compare(inter, inter), MPI_IDENT);
    EXPECT_EQ(ep::compare(inter, copy), MPI_IDENT);

    ep::InterCommunicator again = parity_intercomm(c, forward, kPeerTag + 1);
    EXPECT_EQ(ep::compare(inter, again), MPI_CONGRUENT);
    EXPECT_EQ(ep::compare(again, inter), MPI_CONGRUENT);

    // The same groups, each with its threads in reverse order within a
    // process (rank 0 stays on the lowest process).
    const int reversed_key = c.process_rank() * 1000 + (c.local_size() - 1 - c.local_thread());
    ep::InterCommunicator shuffled = parity_intercomm(c, reversed_key, kPeerTag + 2);
    const bool reordered = c.rank_map().max_endpoints_per_process() > 1;
    EXPECT_EQ(ep::compare(inter, shuffled), reordered ? MPI_SIMILAR : MPI_CONGRUENT);

    // Only the first thread of every process: other groups altogether.
    ep::Communicator firsts = ep::split(c, c.local_thread() == 0 ? 0 : MPI_UNDEFINED, c.rank());
    if (!firsts.is_null()) {
      ep::InterCommunicator narrow = parity_intercomm(firsts, firsts.rank(), kPeerTag + 3);
      EXPECT_EQ(ep::compare(inter, narrow), reordered ? MPI_UNEQUAL : MPI_CONGRUENT);
      narrow.free();
      firsts.free();
    }
    shuffled.free();
    again.free();
    inter.free();
    try {
      static_cast<void>(ep::compare(inter, again));
      ADD_FAILURE() << "compare on freed intercommunicators";
    } catch (const ep::Error& e) {
      EXPECT_EQ(e.kind(), ep::ErrorKind::kFreedComm) << e.what();
      EXPECT_NE(std::string(e.what()).find("ep::compare"), std::string::npos) << e.what();
    }
  });
}

}  // namespace
