// Spectral transposition: for every cx x cy grid of the rank count (1x1,
// 1x2, 2x1, 2x2, 3x2, ...) and odd field sizes (also smaller than the grid),
// each space holds exactly the points the reference (the gathered global
// field) says, the round trip returns the field bit for bit, and rebuilding a
// plan for the same shape keeps its buffers and allocates nothing. Bound
// plans (the fused zero-copy path on one process; on several, local members
// copied directly and the others' blocks exchanged) give the same fields
// over repeated calls and refuse arrays other than the bound ones, and a
// bound plan matches an unbound one bit for bit, and the analytic field, in
// sequences of forward and backward calls with new data each time, for
// every alltoallv algorithm and every grid (rows and columns all in one
// process, all in others, or mixed, as the launch's shape gives).
// The replaced global operator new below pairs with free(); GCC cannot see
// that both sides were replaced together.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "backends.hpp"
#include "collectives/transpose.hpp"
#include "common/error.hpp"
#include "reference.hpp"

// Sanitizer runtimes define the global operator new/delete themselves (and
// link them statically with Clang): under a sanitizer the allocations are not
// counted and only the buffer identity of a rebuild is checked.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COLLECTIVES_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COLLECTIVES_TEST_SANITIZED 1
#endif
#endif

// Allocations made by the calling thread, for the no-allocation check.
namespace {
thread_local long g_thread_allocations = 0;
}
#ifndef COLLECTIVES_TEST_SANITIZED
void* operator new(std::size_t size) {
  ++g_thread_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

using collectives::AlltoallvAlgorithm;
using collectives::Space;
using collectives::TransposeShape;
using collectives_test::gather_all;
using collectives_test::run_on_backends;

/// The global field: every point a distinct double.
double field_value(int x, int y, int z) { return x + 1000.0 * y + 1.0e6 * z + 0.25; }

std::vector<TransposeShape> grids_for(int n, int nx, int ny, int nz) {
  std::vector<TransposeShape> list;
  for (int cx = 1; cx <= n; ++cx) {
    if (n % cx == 0) list.push_back({nx, ny, nz, cx, n / cx});
  }
  return list;
}

/// Every point of `space` on this rank equals the global field there.
template <class Plan>
void expect_space(const Plan& plan, Space space, const std::vector<double>& local,
                  const std::string& where) {
  const collectives::Box b = plan.box(space);
  std::size_t i = 0;
  int wrong = 0;
  for (int z = 0; z < b.n[2]; ++z) {
    for (int y = 0; y < b.n[1]; ++y) {
      for (int x = 0; x < b.n[0]; ++x, ++i) {
        if (local[i] != field_value(b.lo[0] + x, b.lo[1] + y, b.lo[2] + z)) ++wrong;
      }
    }
  }
  EXPECT_EQ(wrong, 0) << where << " space " << static_cast<int>(space);
}

// "<backend> NXxNYxNZ on CXxCY <algorithm>", for the failure messages.
template <class C>
std::string case_name(const C& comm, const TransposeShape& shape,
                      const collectives::AlltoallvOptions& options) {
  return std::string(comm.backend()) + " " + std::to_string(shape.nx) + "x" +
         std::to_string(shape.ny) + "x" + std::to_string(shape.nz) + " on " +
         std::to_string(shape.cx) + "x" + std::to_string(shape.cy) + " " +
         collectives::alltoallv_name({options.algorithm, options.k});
}

template <class C>
void check_round_trip(const C& comm, const TransposeShape& shape,
                      const collectives::AlltoallvOptions& options) {
  collectives::TransposePlan<C, double> plan(comm, shape, options);
  const std::string where = case_name(comm, shape, options);
  // The grid-space field, and the reference: the gathered global field.
  const collectives::Box g = plan.box(Space::kGrid);
  std::vector<double> grid(plan.local_size(Space::kGrid));
  for (int z = 0, i = 0; z < g.n[2]; ++z) {
    for (int y = 0; y < g.n[1]; ++y) {
      for (int x = 0; x < g.n[0]; ++x) {
        grid[static_cast<std::size_t>(i++)] = field_value(g.lo[0] + x, g.lo[1] + y, g.lo[2] + z);
      }
    }
  }
  const auto gathered = gather_all(comm, std::span<const double>(grid));
  std::size_t points = 0;
  for (const auto& part : gathered) points += part.size();
  EXPECT_EQ(points, static_cast<std::size_t>(shape.nx) * static_cast<std::size_t>(shape.ny) *
                        static_cast<std::size_t>(shape.nz))
      << where;

  // Step by step, every space checked.
  std::vector<double> yz(plan.local_size(Space::kYZ));
  std::vector<double> xz(plan.local_size(Space::kXZ));
  std::vector<double> spectral(plan.local_size(Space::kSpectral));
  plan.transpose(Space::kGrid, Space::kYZ, grid, yz);
  expect_space(plan, Space::kYZ, yz, where);
  plan.transpose(Space::kYZ, Space::kXZ, yz, xz);
  expect_space(plan, Space::kXZ, xz, where);
  plan.transpose(Space::kXZ, Space::kSpectral, xz, spectral);
  expect_space(plan, Space::kSpectral, spectral, where);

  // The round trip through the plan's own work fields.
  std::vector<double> spectral2(spectral.size(), -1.0);
  std::vector<double> back(grid.size(), -1.0);
  plan.forward(grid, spectral2);
  EXPECT_EQ(spectral2, spectral) << where;
  plan.backward(spectral2, back);
  EXPECT_EQ(back, grid) << where << ": round trip not exact";

  // Bound arrays (fused zero-copy on one process): three round trips with
  // both fields changed between calls, so a read before the owner's
  // arrival or an overwrite before the readers' departure shows as a value
  // of another call.
  std::vector<double> bound_grid(grid.size());
  std::vector<double> bound_spectral(spectral.size(), -1.0);
  plan.bind(bound_grid, bound_spectral);
  int world_processes = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_processes);
  EXPECT_EQ(plan.fused(), comm.backend() == std::string_view("ep") && world_processes == 1)
      << where;
  EXPECT_EQ(plan.copies_local_members(),
            comm.backend() == std::string_view("ep") && world_processes > 1)
      << where;
  for (int call = 0; call < 3; ++call) {
    for (std::size_t i = 0; i < grid.size(); ++i) bound_grid[i] = grid[i] + call;
    plan.forward(bound_grid, bound_spectral);
    int wrong = 0;
    for (std::size_t i = 0; i < spectral.size(); ++i) {
      if (bound_spectral[i] != spectral[i] + call) ++wrong;
      bound_spectral[i] += 0.5;  // the spectral-space work
    }
    EXPECT_EQ(wrong, 0) << where << ": bound forward, call " << call;
    plan.backward(bound_spectral, bound_grid);
    wrong = 0;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      if (bound_grid[i] != grid[i] + call + 0.5) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << where << ": bound backward, call " << call;
  }
  // Other arrays than the bound ones: refused on every rank (each passes
  // other arrays), before any rank waits for another; the plan stays usable.
  // Only where every rank holds points in both spaces: two empty arrays have
  // the same (null) address.
  int all_hold_points = grid.empty() || spectral.empty() ? 0 : 1;
  comm.library_allreduce(MPI_IN_PLACE, &all_hold_points, 1, MPI_INT, MPI_MIN);
  if (all_hold_points == 1) {
    try {
      plan.forward(grid, spectral2);
      ADD_FAILURE() << where << ": forward on other arrays than the bound ones was accepted";
    } catch (const common::Error& e) {
      EXPECT_NE(std::string(e.what()).find("not the bound ones"), std::string::npos) << e.what();
    }
  }
  const std::vector<double> before_trip = bound_grid;
  plan.forward(bound_grid, bound_spectral);
  std::fill(bound_grid.begin(), bound_grid.end(), -1.0);
  plan.backward(bound_spectral, bound_grid);
  EXPECT_EQ(bound_grid, before_trip) << where << ": bound round trip after the refused call";
}

/// Global point (x, y, z) in call `call` of a sequence: distinct for every
/// point and call (exact in a double), so a block copied from the wrong
/// place, from another member, or from another call's data shows.
double call_value(int x, int y, int z, int call) { return field_value(x, y, z) + 1.0e9 * call; }

void fill_box(const collectives::Box& b, int call, std::vector<double>& local) {
  std::size_t i = 0;
  for (int z = 0; z < b.n[2]; ++z) {
    for (int y = 0; y < b.n[1]; ++y) {
      for (int x = 0; x < b.n[0]; ++x, ++i) {
        local[i] = call_value(b.lo[0] + x, b.lo[1] + y, b.lo[2] + z, call);
      }
    }
  }
}

/// Points of `got` that differ from the analytic field of `call` (value) or,
/// bit for bit, from the unbound plan's `expected`.
std::pair<int, int> count_wrong(const collectives::Box& b, int call, const std::vector<double>& got,
                                const std::vector<double>& expected) {
  std::vector<double> exact(got.size());
  fill_box(b, call, exact);
  int analytic = 0;
  int unbound = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != exact[i]) ++analytic;
    if (std::bit_cast<std::uint64_t>(got[i]) != std::bit_cast<std::uint64_t>(expected[i])) {
      ++unbound;
    }
  }
  return {analytic, unbound};
}

template <class C>
void check_bound_against_unbound(const C& comm, const TransposeShape& shape,
                                 const collectives::AlltoallvOptions& options) {
  collectives::TransposePlan<C, double> bound(comm, shape, options);
  collectives::TransposePlan<C, double> unbound(comm, shape, options);
  const std::string where = case_name(comm, shape, options);
  const collectives::Box g = bound.box(Space::kGrid);
  const collectives::Box s = bound.box(Space::kSpectral);
  std::vector<double> bound_grid(g.size());
  std::vector<double> bound_spectral(s.size());
  std::vector<double> grid(g.size());
  std::vector<double> spectral(s.size());
  bound.bind(bound_grid, bound_spectral);
  int world_processes = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_processes);
  const bool ep = comm.backend() == std::string_view("ep");
  EXPECT_EQ(bound.fused(), ep && world_processes == 1) << where;
  EXPECT_EQ(bound.copies_local_members(), ep && world_processes > 1) << where;
  // Both orders on the reused work fields (forward after backward and after
  // forward, backward after both), new data in every call, the target
  // poisoned before it so that a block nobody wrote shows.
  const std::string sequence = "FBFFBBF";
  for (int call = 0; call < static_cast<int>(sequence.size()); ++call) {
    const bool forward = sequence[static_cast<std::size_t>(call)] == 'F';
    std::pair<int, int> wrong;
    if (forward) {
      fill_box(g, call, bound_grid);
      grid = bound_grid;
      std::fill(bound_spectral.begin(), bound_spectral.end(), -1.0);
      bound.forward(bound_grid, bound_spectral);
      unbound.forward(grid, spectral);
      wrong = count_wrong(s, call, bound_spectral, spectral);
    } else {
      fill_box(s, call, bound_spectral);
      spectral = bound_spectral;
      std::fill(bound_grid.begin(), bound_grid.end(), -1.0);
      bound.backward(bound_spectral, bound_grid);
      unbound.backward(spectral, grid);
      wrong = count_wrong(g, call, bound_grid, grid);
    }
    EXPECT_EQ(wrong.first, 0) << where << ": call " << call << (forward ? " forward" : " backward")
                              << ", points unlike the analytic field";
    EXPECT_EQ(wrong.second, 0) << where << ": call " << call << (forward ? " forward" : " backward")
                               << ", points unlike the unbound plan's";
  }
}

TEST(Transpose, BoundMatchesUnboundOnEveryGridAndAlgorithm) {
  run_on_backends([](const auto& comm) {
    const int n = comm.size();
    for (const collectives::AlltoallvOptions& o :
         {collectives::AlltoallvOptions{},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kBurst},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kPairwise},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kBruck},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kRingK, .k = 1},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kRingK, .k = 2},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kAuto}}) {
      // Uneven sizes, and sizes smaller than the grid (empty boxes).
      for (const TransposeShape& s : grids_for(n, 7, 5, 3)) check_bound_against_unbound(comm, s, o);
      for (const TransposeShape& s : grids_for(n, 2, 3, 1)) check_bound_against_unbound(comm, s, o);
    }
  });
}

TEST(Transpose, RebuildUnbindsAndBindAgainCopiesLocalMembers) {
  run_on_backends([](const auto& comm) {
    using C = std::remove_cvref_t<decltype(comm)>;
    const auto grids = grids_for(comm.size(), 6, 5, 4);
    collectives::TransposePlan<C, double> plan(comm, grids.front());
    std::vector<double> grid(plan.local_size(Space::kGrid));
    std::vector<double> spectral(plan.local_size(Space::kSpectral));
    plan.bind(grid, spectral);
    EXPECT_TRUE(plan.bound()) << comm.backend();
    // Another grid of the same ranks: unbound, then bound again on the new
    // boxes, the board and its round count kept.
    plan.rebuild(grids.back());
    EXPECT_FALSE(plan.bound()) << comm.backend();
    EXPECT_FALSE(plan.copies_local_members()) << comm.backend();
    EXPECT_FALSE(plan.fused()) << comm.backend();
    grid.assign(plan.local_size(Space::kGrid), 0.0);
    spectral.assign(plan.local_size(Space::kSpectral), 0.0);
    plan.bind(grid, spectral);
    fill_box(plan.box(Space::kGrid), 3, grid);
    const std::vector<double> original = grid;
    plan.forward(grid, spectral);
    std::vector<double> exact(spectral.size());
    fill_box(plan.box(Space::kSpectral), 3, exact);
    EXPECT_EQ(spectral, exact) << comm.backend();
    std::fill(grid.begin(), grid.end(), -1.0);
    plan.backward(spectral, grid);
    EXPECT_EQ(grid, original) << comm.backend();
  });
}

TEST(Transpose, RoundTripIsExactOnEveryGrid) {
  run_on_backends([](const auto& comm) {
    const collectives::AlltoallvOptions library{};
    for (const TransposeShape& s : grids_for(comm.size(), 7, 5, 3)) {
      check_round_trip(comm, s, library);
    }
    // Sizes smaller than the grid: some ranks hold nothing in some spaces.
    for (const TransposeShape& s : grids_for(comm.size(), 1, 2, 3)) {
      check_round_trip(comm, s, library);
    }
  });
}

TEST(Transpose, EveryAlltoallvAlgorithm) {
  run_on_backends([](const auto& comm) {
    const int n = comm.size();
    for (const collectives::AlltoallvOptions& o :
         {collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kBurst},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kPairwise},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kBruck},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kRingK, .k = 1},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kRingK, .k = 2},
          collectives::AlltoallvOptions{.algorithm = AlltoallvAlgorithm::kAuto}}) {
      const auto grids = grids_for(n, 9, 7, 5);
      check_round_trip(comm, grids[grids.size() / 2], o);
    }
  });
}

TEST(Transpose, RebuildForTheSameShapeAllocatesNothing) {
  run_on_backends([](const auto& comm) {
    using C = std::remove_cvref_t<decltype(comm)>;
    const auto grids = grids_for(comm.size(), 11, 9, 5);
    const TransposeShape shape = grids.back();
    collectives::TransposePlan<C, double> plan(comm, shape);
    std::vector<double> grid(plan.local_size(Space::kGrid), 1.0);
    std::vector<double> spectral(plan.local_size(Space::kSpectral));
    plan.forward(grid, spectral);  // the scratch sees its sizes
    const auto before = plan.buffers();
    const long at_start = g_thread_allocations;
    plan.rebuild(shape);
    const long in_rebuild = g_thread_allocations - at_start;
    plan.forward(grid, spectral);
    const long in_forward = g_thread_allocations - at_start - in_rebuild;
    EXPECT_EQ(plan.buffers(), before) << comm.backend();
    // The rebuild's one communication is the shape agreement: an allreduce of
    // 6 values per rank. Whatever the library allocates inside it is all.
    std::vector<long long> slots(static_cast<std::size_t>(comm.size()) * 6, 0);
    const long before_library = g_thread_allocations;
    comm.library_allreduce(MPI_IN_PLACE, slots.data(), static_cast<int>(slots.size()),
                           MPI_LONG_LONG, MPI_SUM);
    const long in_library = g_thread_allocations - before_library;
    EXPECT_LE(in_rebuild, in_library)
        << comm.backend() << ": rebuild allocated " << in_rebuild << " times, the library's "
        << "allreduce " << in_library;
    // A step allocates nothing in the plan; the endpoint layer's requests are
    // its own heap objects (ep::Request), so only MPI-based backends are zero.
    if (comm.backend() != std::string_view("ep")) {
      EXPECT_EQ(in_forward, 0) << comm.backend() << ": forward allocated " << in_forward;
    }
  });
}

TEST(Transpose, BadShapesThrowOnEveryRank) {
  run_on_backends([](const auto& comm) {
    using C = std::remove_cvref_t<decltype(comm)>;
    const int n = comm.size();
    auto expect_error = [&](const TransposeShape& s, const std::string& words) {
      try {
        collectives::TransposePlan<C, double> plan(comm, s);
        ADD_FAILURE() << comm.backend() << ": no error for " << words;
      } catch (const common::Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("collectives::TransposePlan"), std::string::npos) << what;
        EXPECT_NE(what.find(words), std::string::npos) << what;
      }
    };
    expect_error({4, 4, 4, n + 1, 1}, "cx * cy must equal the size");
    expect_error({0, 4, 4, n, 1}, "must be >= 1");
    if (n > 1) {
      expect_error({comm.rank() == n - 1 ? 6 : 5, 4, 4, n, 1}, "different from rank 0");
    }
  });
}

}  // namespace
