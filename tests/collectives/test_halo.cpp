// Halo exchange against a serial reference on the gathered global field, cell
// by cell: thin, wide (w larger than a neighbour's subdomain, several
// wraps on small periodic grids), periodic or not, 5 and 9 points, with and
// without land (an all-land subdomain in the middle, land ranks absent),
// uneven subdomains, two fields of different types and levels in one
// message; every algorithm, every backend; all algorithms give the same halo,
// bound (zero-copy from peers in the same process) or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <string>
#include <vector>

#include "backends.hpp"
#include "collectives/halo.hpp"
#include "common/error.hpp"
#include "halo_reference.hpp"

namespace {

using collectives::HaloAlgorithm;
using collectives::HaloSpec;
using collectives::Stencil;
using collectives_test::run_on_backends;

constexpr std::array kAlgorithms{HaloAlgorithm::kTwoSweep, HaloAlgorithm::kNeighbor,
                                 HaloAlgorithm::kDirect, HaloAlgorithm::kSplit};
constexpr double kUntouched = -1.0;
constexpr double kFillDouble = -9.5;
constexpr int kFillInt = -7;
constexpr int kLevels = 2;  // of the double field; the int field has 1

double cell_value(int gi, int gj, int k) { return 100000.0 * k + 1000.0 * gj + gi + 0.5; }

// The cells of level 0 of `u` (plan's subdomain with a halo of `w`) that
// differ from `offset` + cell_value at their periodic global position;
// with `halo_only`, the interior is not looked at.
template <class Plan>
int wrong_cells(const Plan& plan, const collectives::Decomposition& d, int w,
                const std::vector<double>& u, double offset, bool halo_only) {
  const int row = plan.nx() + 2 * w;
  int wrong = 0;
  for (int j = -w; j < plan.ny() + w; ++j) {
    for (int i = -w; i < plan.nx() + w; ++i) {
      if (halo_only && i >= 0 && i < plan.nx() && j >= 0 && j < plan.ny()) continue;
      const int gi = ((plan.x0() + i) % d.ni + d.ni) % d.ni;
      const int gj = ((plan.y0() + j) % d.nj + d.nj) % d.nj;
      if (u[static_cast<std::size_t>((j + w) * row + i + w)] != offset + cell_value(gi, gj, 0)) {
        ++wrong;
      }
    }
  }
  return wrong;
}

// A spec of `d` with a halo of `width`; the rest as HaloSpec's defaults.
HaloSpec spec_of(const collectives::Decomposition& d, int width,
                 HaloAlgorithm algorithm = HaloAlgorithm::kTwoSweep,
                 Stencil stencil = Stencil::kNinePoint) {
  HaloSpec spec;
  spec.decomposition = d;
  spec.width = width;
  spec.stencil = stencil;
  spec.algorithm = algorithm;
  return spec;
}

// Sets the interior of level 0 of `u` (plan's subdomain with its halo) to
// `offset` + cell_value at each cell's global position; the halo is left.
template <class Plan>
void set_interior(const Plan& plan, std::vector<double>& u, double offset) {
  const int w = plan.width();
  const int row = plan.nx() + 2 * w;
  for (int j = 0; j < plan.ny(); ++j) {
    for (int i = 0; i < plan.nx(); ++i) {
      u[static_cast<std::size_t>((j + w) * row + i + w)] =
          offset + cell_value(plan.x0() + i, plan.y0() + j, 0);
    }
  }
}

std::string describe(const HaloSpec& spec) {
  const auto& d = spec.decomposition;
  return std::to_string(d.px()) + "x" + std::to_string(d.py()) + " of " + std::to_string(d.ni) +
         "x" + std::to_string(d.nj) + (d.periodic_x ? " px" : "") + (d.periodic_y ? " py" : "") +
         " w=" + std::to_string(spec.width) +
         (spec.stencil == Stencil::kNinePoint ? " 9pt" : " 5pt") +
         (spec.land_cells.empty() ? "" : " land") + " " +
         std::string(collectives::halo_algorithm_name(spec.algorithm));
}

/// Runs one exchange of spec on comm and checks both fields cell by cell;
/// returns this rank's fields after the exchange (for the cross-algorithm check).
template <class C>
std::pair<std::vector<double>, std::vector<int>> check_exchange(const C& comm, const HaloSpec& spec,
                                                                bool bind) {
  collectives::HaloPlan plan(comm, spec);
  const auto& d = spec.decomposition;
  std::vector<double> u(plan.field_elements(kLevels), kUntouched);
  std::vector<int> flag(plan.field_elements(1), static_cast<int>(kUntouched));
  // Gather the global fields: each rank adds its interior, land ranks nothing.
  const std::size_t global_cells = static_cast<std::size_t>(d.ni) * static_cast<std::size_t>(d.nj);
  std::vector<double> global_u(global_cells * kLevels, 0.0);
  std::vector<double> global_flag(global_cells, 0.0);
  const int w = spec.width;
  const int row = plan.nx() + 2 * w;
  const int plane = row * (plan.ny() + 2 * w);
  if (plan.takes_part()) {
    for (int k = 0; k < kLevels; ++k) {
      for (int j = 0; j < plan.ny(); ++j) {
        for (int i = 0; i < plan.nx(); ++i) {
          const int gi = plan.x0() + i;
          const int gj = plan.y0() + j;
          const double v = cell_value(gi, gj, k);
          u[static_cast<std::size_t>(k * plane + (j + w) * row + i + w)] = v;
          global_u[static_cast<std::size_t>((k * d.nj + gj) * d.ni + gi)] = v;
          if (k == 0) {
            flag[static_cast<std::size_t>((j + w) * row + i + w)] = gi * 31 + gj;
            global_flag[static_cast<std::size_t>(gj * d.ni + gi)] = gi * 31 + gj;
          }
        }
      }
    }
  }
  comm.library_allreduce(MPI_IN_PLACE, global_u.data(), static_cast<int>(global_u.size()),
                         MPI_DOUBLE, MPI_SUM);
  comm.library_allreduce(MPI_IN_PLACE, global_flag.data(), static_cast<int>(global_flag.size()),
                         MPI_DOUBLE, MPI_SUM);
  if (!plan.takes_part()) return {};
  const auto want_u = collectives_test::expected_field(spec, global_u, u, plan.nx(), plan.ny(),
                                                       plan.x0(), plan.y0(), kLevels, kFillDouble);
  const auto want_flag = collectives_test::expected_field(
      spec, global_flag, flag, plan.nx(), plan.ny(), plan.x0(), plan.y0(), 1, kFillInt);
  // Twice: the plan is reused, and the second exchange must give the same.
  // A bound plan (zero-copy from local peers) is called both ways.
  const collectives::HaloField fields[] = {collectives::halo_field<double>(u, kLevels, kFillDouble),
                                           collectives::halo_field<int>(flag, 1, kFillInt)};
  if (bind) plan.bind(fields);
  for (int repeat = 0; repeat < 2; ++repeat) {
    if (bind && repeat == 0) {
      plan.exchange();
    } else {
      plan.exchange(fields);
    }
    int wrong = 0;
    for (std::size_t c = 0; c < u.size(); ++c) {
      if (u[c] != want_u[c] && ++wrong <= 3) {
        ADD_FAILURE() << describe(spec) << " rank " << comm.rank() << " double cell " << c
                      << ": got " << u[c] << ", want " << want_u[c];
      }
    }
    for (std::size_t c = 0; c < flag.size(); ++c) {
      if (flag[c] != want_flag[c] && ++wrong <= 3) {
        ADD_FAILURE() << describe(spec) << " rank " << comm.rank() << " int cell " << c << ": got "
                      << flag[c] << ", want " << want_flag[c];
      }
    }
    EXPECT_EQ(wrong, 0) << describe(spec) << (bind ? " bound" : "") << " rank " << comm.rank()
                        << " repeat " << repeat;
  }
  return {u, flag};
}

/// Every algorithm on `spec`, unbound and bound, all compared with the reference and with each
/// other.
template <class C>
void check_all_algorithms(const C& comm, HaloSpec spec) {
  std::pair<std::vector<double>, std::vector<int>> first;
  for (std::size_t a = 0; a < kAlgorithms.size(); ++a) {
    spec.algorithm = kAlgorithms[a];
    for (const bool bind : {false, true}) {
      auto result = check_exchange(comm, spec, bind);
      if (a == 0 && !bind) {
        first = std::move(result);
      } else {
        EXPECT_TRUE(result == first)
            << describe(spec) << (bind ? " bound" : "") << " differs from two_sweep";
      }
    }
  }
}

/// w = 1, w = 3, wide (w larger than every neighbour's size) and w = 20,
/// where the domain allows them (non-periodic directions cap w at the
/// domain extent). Column strips of 1, 3 and 20 cells are rows of 8, 24
/// and 160 bytes of the double field and 4, 12 and 80 of the int field:
/// the bound path's fixed-size row copies and its general one.
std::vector<int> widths(const collectives::Decomposition& d) {
  int cap = INT_MAX;
  if (!d.periodic_x) cap = std::min(cap, d.ni);
  if (!d.periodic_y) cap = std::min(cap, d.nj);
  std::vector<int> out{1, 3};
  for (const int w : {2 * 6 + 1, 20}) {
    if (std::min(w, cap) != out.back()) out.push_back(std::min(w, cap));
  }
  return out;
}

TEST(CollectivesHalo, MatchesSerialReference) {
  run_on_backends([](const auto& comm) {
    for (const auto& [px, py] :
         std::array{std::pair{false, false}, std::pair{true, true}, std::pair{true, false}}) {
      const auto d = collectives_test::uneven_decomposition(comm.size(), px, py);
      for (const int w : widths(d)) {
        for (const Stencil s : {Stencil::kFivePoint, Stencil::kNinePoint}) {
          check_all_algorithms(comm, spec_of(d, w, HaloAlgorithm::kTwoSweep, s));
        }
      }
    }
  });
}

TEST(CollectivesHalo, LandSubdomainsTakeNoPart) {
  run_on_backends([](const auto& comm) {
    // As many sea subdomains as ranks, and one fewer: then the last rank
    // owns nothing and must still build the plan and return from exchange().
    for (const int sea : {std::min(comm.size(), 8), std::min(comm.size(), 8) - 1}) {
      if (sea < 1) continue;
      for (const bool periodic : {false, true}) {
        collectives::Decomposition d;
        d.x_sizes = collectives_test::uneven_sizes(3, true);
        d.y_sizes = collectives_test::uneven_sizes(3, false);
        d.ni = 13;
        d.nj = 12;
        d.periodic_x = d.periodic_y = periodic;
        for (const int w : {1, 3, 7, 20}) {
          if (!periodic && w > 12) continue;  // larger than the 13 x 12 domain
          for (const Stencil s : {Stencil::kFivePoint, Stencil::kNinePoint}) {
            HaloSpec spec = spec_of(d, w, HaloAlgorithm::kTwoSweep, s);
            spec.land_cells = collectives_test::land_with_middle_subdomain(d, sea);
            check_all_algorithms(comm, spec);
          }
        }
      }
    }
  });
}

TEST(CollectivesHalo, InteriorMayChangeBetweenStartAndFinish) {
  // start() packs what it sends, so interior work between start() and
  // finish() does not change what the neighbours receive.
  run_on_backends([](const auto& comm) {
    for (const auto algorithm : kAlgorithms) {
      const HaloSpec spec =
          spec_of(collectives_test::uneven_decomposition(comm.size(), true, true), 2, algorithm);
      collectives::HaloPlan plan(comm, spec);
      const int w = spec.width;
      const auto& d = spec.decomposition;
      std::vector<double> u(plan.field_elements(1), kUntouched);
      set_interior(plan, u, 0.0);
      plan.start({collectives::halo_field<double>(u, 1)});
      set_interior(plan, u, 0.25);  // the "interior computation"
      plan.finish();
      // Two-stage sweeps forward corners in finish(), from the neighbour's
      // x halo, which holds start-time values too.
      EXPECT_EQ(wrong_cells(plan, d, w, u, 0.0, true), 0)
          << collectives::halo_algorithm_name(algorithm) << " rank " << comm.rank();
      // A second start() before finish() is an error; the plan stays usable.
      plan.start({collectives::halo_field<double>(u, 1)});
      EXPECT_THROW(plan.start({collectives::halo_field<double>(u, 1)}), common::Error);
      plan.finish();
    }
  });
}

TEST(CollectivesHalo, BoundExchangesSeeEachCallsInterior) {
  // Bound plans read local peers' interiors in place: the interior changes
  // before every call, so a read before the owner's arrival or after its
  // next write (a missing departure wait) gives another call's value.
  // Three decompositions: small uneven subdomains, w = 2 (every row
  // narrower than kStagedRowBytes: staged by the owner, which waits for its
  // readers at the next call); 140-cell-wide ones stacked in y, w = 2
  // (south and north rows of 144 doubles, 1152 B: read straight out of the
  // owner's array); 24 x 64 ones side by side in x, w = 20 (column rows of
  // 160 B, 10 KiB per owner and reader: more than kStagedPairBytes, so
  // read in place too).
  run_on_backends([](const auto& comm) {
    const std::array decompositions{
        std::pair{collectives_test::uneven_decomposition(comm.size(), true, true), 2},
        std::pair{
            collectives::Decomposition::even(140, 6 * comm.size(), 1, comm.size(), true, true), 2},
        std::pair{
            collectives::Decomposition::even(24 * comm.size(), 64, comm.size(), 1, true, true),
            20}};
    for (const auto algorithm : kAlgorithms) {
      for (const auto& [decomposition, width] : decompositions) {
        const HaloSpec spec = spec_of(decomposition, width, algorithm);
        collectives::HaloPlan plan(comm, spec);
        const int w = spec.width;
        const auto& d = spec.decomposition;
        std::vector<double> u(plan.field_elements(1), kUntouched);
        const collectives::HaloField fields[] = {collectives::halo_field<double>(u, 1)};
        plan.bind(fields);
        EXPECT_TRUE(plan.bound());
        for (int call = 0; call < 5; ++call) {
          set_interior(plan, u, call);
          if (call % 2 == 0) {
            plan.exchange();
          } else {
            plan.start(fields);
            plan.finish();
          }
          EXPECT_EQ(wrong_cells(plan, d, w, u, call, false), 0)
              << collectives::halo_algorithm_name(algorithm) << " rank " << comm.rank() << " call "
              << call;
        }
        // Another array than the bound one: refused on every rank (each passes
        // its own copy) before any rank waits; the plan stays usable.
        std::vector<double> moved = u;
        try {
          plan.exchange({collectives::halo_field<double>(moved, 1)});
          ADD_FAILURE() << "an exchange of an unbound array was accepted";
        } catch (const common::Error& e) {
          EXPECT_NE(std::string(e.what()).find("is not the bound field"), std::string::npos)
              << e.what();
        }
        plan.exchange();
        // Binding the copy moves the plan to it.
        plan.bind({collectives::halo_field<double>(moved, 1)});
        plan.exchange({collectives::halo_field<double>(moved, 1)});
        EXPECT_EQ(moved, u) << collectives::halo_algorithm_name(algorithm) << " rank "
                            << comm.rank();
      }
    }
  });
}

TEST(CollectivesHalo, LandRanksNeedNotExist) {
  // As many ranks as sea subdomains: the land subdomains have no rank at all;
  // the graph of kNeighbor is built over the sea ranks alone.
  run_on_backends([](const auto& comm) {
    if (comm.size() > 8) return;
    collectives::Decomposition d;
    d.x_sizes = collectives_test::uneven_sizes(3, true);
    d.y_sizes = collectives_test::uneven_sizes(3, false);
    d.ni = 13;
    d.nj = 12;
    HaloSpec spec = spec_of(d, 2, HaloAlgorithm::kNeighbor);
    spec.land_cells = collectives_test::land_with_middle_subdomain(d, comm.size());
    collectives::HaloPlan plan(comm, spec);
    EXPECT_TRUE(plan.takes_part());
  });
}

}  // namespace
