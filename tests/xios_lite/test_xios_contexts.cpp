// Several contexts in one run: a coupled atmosphere and ocean, each with
// its own client processes, its own share of the server processes, its own
// calendar, grids and files, from one iodef.xml (split_world with a
// context). Every value of both files is checked, and that each context's
// files were written by its own server (one server process each: no server
// index in the names). The splits that cannot work fail on every process.
//
// Shapes: r2t2 (no server: each component writes alone, synchronous),
// r4t1 (one client process and one server process per context), r5t1 (two
// atmosphere processes, one ocean process, two servers).
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kAtmNi = 8;
constexpr int kAtmNj = 6;
constexpr int kOceNi = 5;
constexpr int kOceNj = 4;
constexpr int kOceNk = 2;
constexpr int kAtmSteps = 4;  // 1 h each: two 2 h averages
constexpr int kOceSteps = 3;  // 2 h each: three instants

double sst_at(int s, int k, int j, int i) { return 270.0 + 10.0 * s + k + 0.1 * j + 0.001 * i; }

std::string config(const std::string& dir) { return config_file("contexts.xml", {{"DIR", dir}}); }

int servers() { return ep_test::world_size() >= 4 ? 2 : 0; }

// The first half of the client processes (rounded up) run the atmosphere.
std::string component_of(int world_rank) {
  const int clients = ep_test::world_size() - servers();
  return world_rank < (clients + 1) / 2 ? "atmosphere" : "ocean";
}

// One component's part of the model: its uneven block of domain `domain`,
// then field `field` (nk levels) at steps 1..steps, value(s, k, j, i).
struct Component {
  const char* domain;
  int ni, nj, nk, steps;
  const char* field;
};
void send_steps(xios_lite::Client& c, const ep::Communicator& comm, const Component& component,
                const std::function<double(int s, int k, int j, int i)>& value) {
  const Block b = xios_test::uneven_block(comm, component.ni, component.nj);
  c.set_domain_block(component.domain, b);
  c.close_definition();
  for (int s = 1; s <= component.steps; ++s) {
    c.update_calendar(s);
    c.send_field(component.field,
                 xios_test::block_values(b, component.nk,
                                         [&](int k, int j, int i) { return value(s, k, j, i); }));
  }
}

TEST(XiosContexts, CoupledAtmosphereAndOcean) {
  if (ep_test::world_size() < 2) {
    GTEST_SKIP() << "two components need two processes";
  }
  const std::string dir = xios_test::scratch_dir("contexts");
  const std::string cfg = xios_test::write_config(dir, config(dir));
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = servers();
  spec.mode = servers() > 0 ? xios_lite::Mode::kEndpoints : xios_lite::Mode::kSynchronous;
  spec.context = component_of;
  spec.model = [](xios_lite::Client& c, const ep::Communicator& comm) {
    // The endpoints of one component: comm spans its clients only.
    EXPECT_EQ(component_of(ep_test::world_rank()), c.config().context);
    if (c.config().context == "atmosphere") {
      send_steps(c, comm, {"atm_d", kAtmNi, kAtmNj, 1, kAtmSteps, "tas"},
                 [](int s, int, int j, int i) { return tas_at(s, j, i); });
    } else {
      EXPECT_EQ(c.config().context, "ocean");
      send_steps(c, comm, {"oce_d", kOceNi, kOceNj, kOceNk, kOceSteps, "thetao"}, sst_at);
    }
    (void)c.finalise();
  };
  if (xios_test::run_without_errors(spec)) {
    const std::vector<double> tas = two_step_means(kAtmSteps, kAtmNj, kAtmNi);
    std::vector<double> sst;
    for (int s = 1; s <= kOceSteps; ++s) {
      for (int k = 0; k < kOceNk; ++k) {
        for (int j = 0; j < kOceNj; ++j) {
          for (int i = 0; i < kOceNi; ++i) sst.push_back(sst_at(s, k, j, i));
        }
      }
    }
    // One server process per context: each context's multiple_file file
    // is whole and carries no server index.
    const std::vector<double> got_tas = xios_test::read_var(dir + "/atm.nc", "tas");
    ASSERT_EQ(got_tas.size(), tas.size());
    for (std::size_t x = 0; x < tas.size(); ++x) EXPECT_NEAR(got_tas[x], tas[x], 1e-12) << x;
    EXPECT_EQ(xios_test::read_var(dir + "/ocean.nc", "thetao"), sst);
    EXPECT_EQ(xios_test::read_var(dir + "/ocean.nc", "depth"), (std::vector<double>{5, 15}));
    EXPECT_EQ(xios_test::text_att(dir + "/ocean.nc", "time", "calendar"), "noleap");
    EXPECT_EQ(xios_test::text_att(dir + "/atm.nc", "time", "calendar"), "gregorian");
    EXPECT_EQ(xios_test::var_type(dir + "/atm.nc", "thetao"), -1);
    EXPECT_EQ(xios_test::var_type(dir + "/ocean.nc", "tas"), -1);
    EXPECT_FALSE(xios_test::file_exists(dir + "/atm_0.nc"));
    EXPECT_FALSE(xios_test::file_exists(dir + "/ocean_1.nc"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Splits that cannot work fail on every process, with the reason.
TEST(XiosContexts, ImpossibleSplitsFailEverywhere) {
  if (ep_test::world_size() < 3) {
    GTEST_SKIP() << "needs two client processes and a server";
  }
  const int rank = ep_test::world_rank();
  const bool server = rank == ep_test::world_size() - 1;
  const auto role = server ? xios_lite::Role::kServer : xios_lite::Role::kClient;
  // Two contexts, one server process.
  const std::string few = xios_test::error_of([&] {
    xios_lite::World w =
        xios_lite::split_world(MPI_COMM_WORLD, role, server ? "" : (rank == 0 ? "atm" : "oce"));
    xios_lite::free_world(w);
  });
  EXPECT_HAS(few,
             "2 contexts ('atm', 'oce') need at least 2 server processes, one for each; "
             "there are 1");
  // A client naming a context beside clients naming none.
  const std::string mixed = xios_test::error_of([&] {
    xios_lite::World w =
        xios_lite::split_world(MPI_COMM_WORLD, role, rank == 0 && !server ? "atm" : "");
    xios_lite::free_world(w);
  });
  EXPECT_HAS(mixed, "some client processes name their context ('atm') and some do not");
  // One context named: the plain split, knowing its context.
  xios_lite::World w = xios_lite::split_world(MPI_COMM_WORLD, role, server ? "" : "atm");
  EXPECT_EQ(w.context, "atm");
  EXPECT_EQ(w.server_processes, 1);
  EXPECT_EQ(w.context_world, MPI_COMM_NULL);
  xios_lite::free_world(w);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
