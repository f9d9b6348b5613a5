// Bad halo arguments give an common::Error on every rank, never a hang: width
// below 1, width beyond a non-periodic domain, sizes that do not cover the
// domain, too few ranks, ranks that disagree, fields whose shapes do not
// match the plan (including on one rank only); and the plan stays usable.
#include <gtest/gtest.h>

#include <vector>

#include "backends.hpp"
#include "collectives/halo.hpp"
#include "common/error.hpp"
#include "halo_reference.hpp"

namespace {

using collectives::HaloSpec;
using collectives_test::run_on_backends;

HaloSpec good_spec(int ranks) {
  HaloSpec spec;
  spec.decomposition = collectives_test::uneven_decomposition(ranks, false, false);
  spec.width = 2;
  return spec;
}

template <class C>
void expect_plan_error(const C& comm, const HaloSpec& spec, const char* what) {
  bool thrown = false;
  try {
    collectives::HaloPlan plan(comm, spec);
  } catch (const common::Error& e) {
    thrown = true;
    EXPECT_NE(std::string(e.what()).find("collectives::HaloPlan"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(thrown) << what << " on rank " << comm.rank();
}

TEST(CollectivesHaloErrors, BadSpecsThrowOnEveryRank) {
  run_on_backends([](const auto& comm) {
    HaloSpec spec = good_spec(comm.size());
    spec.width = 0;
    expect_plan_error(comm, spec, "width 0");

    spec = good_spec(comm.size());
    spec.width = spec.decomposition.nj + 1;  // nj <= ni here, y not periodic
    expect_plan_error(comm, spec, "width beyond the non-periodic domain");

    spec = good_spec(comm.size());
    spec.decomposition.ni += 1;
    expect_plan_error(comm, spec, "sizes not covering the domain");

    spec = good_spec(comm.size());
    spec.decomposition.x_sizes.push_back(2);
    spec.decomposition.ni += 2;
    expect_plan_error(comm, spec, "more subdomains than ranks");

    spec = good_spec(comm.size());
    if (comm.rank() == 0) spec.width = 1;  // only rank 0 differs
    if (comm.size() > 1) expect_plan_error(comm, spec, "ranks disagreeing on the width");
  });
}

TEST(CollectivesHaloErrors, FieldShapeMismatchThrowsThenPlanStillWorks) {
  run_on_backends([](const auto& comm) {
    const HaloSpec spec = good_spec(comm.size());
    collectives::HaloPlan plan(comm, spec);
    std::vector<double> u(plan.field_elements(2), 1.0);
    // Wrong on rank 0 only (as with a field allocated for another subdomain):
    // every rank must still throw.
    std::vector<float> v(plan.field_elements(1) + (comm.rank() == 0 ? 1 : 0), 2.0F);
    bool thrown = false;
    try {
      plan.exchange({collectives::halo_field<double>(u, 2), collectives::halo_field<float>(v, 1)});
    } catch (const common::Error& e) {
      thrown = true;
      if (comm.rank() == 0) {
        EXPECT_NE(std::string(e.what()).find("field 1"), std::string::npos) << e.what();
      }
    }
    EXPECT_TRUE(thrown) << "rank " << comm.rank();
    // Levels that do not match the size: a 2-level field declared with 3.
    thrown = false;
    try {
      plan.exchange({collectives::halo_field<double>(u, 3)});
    } catch (const common::Error&) {
      thrown = true;
    }
    EXPECT_TRUE(thrown) << "rank " << comm.rank();
    // The plan is still good.
    plan.exchange({collectives::halo_field<double>(u, 2)});
    for (const double x : u) EXPECT_EQ(x, 1.0);
  });
}

}  // namespace
