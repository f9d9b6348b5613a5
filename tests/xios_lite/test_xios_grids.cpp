// Grids beyond one domain and one axis: a domain with two axes (sea-ice
// layers x categories). The model sends field(ni, nj, n_layer, n_cat), the
// layers fastest; the file variable has both axes as dimensions, the grid's
// members in reverse as XIOS writes them (time, cat, layer, y, x), with
// both coordinate variables, and every value where it belongs. Before: the
// grid was refused ("at most one axis").
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 7;
constexpr int kNj = 5;
constexpr int kLayers = 3;
constexpr int kCats = 2;
constexpr int kSteps = 4;  // two records of 2 steps

// Level k of the field's levels is layer k % kLayers of category k / kLayers.
double sample(int f, int s, int cat, int layer, int j, int i) {
  return value(f, s, 10 * cat + layer, j, i);
}

TEST(XiosGrids, DomainWithTwoAxes) {
  const std::string dir = xios_test::scratch_dir("two_axes");
  const std::string cfg =
      xios_test::write_config(dir, config_file("two_axes.xml", {{"NAME", dir + "/ice"}}));
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = servers();
  spec.mode = mode();
  spec.model = [](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = xios_test::uneven_block(comm.rank(), comm.size(), kNi, kNj);
    c.set_domain_block("ice", b);
    c.close_definition();
    for (int s = 1; s <= kSteps; ++s) {
      c.update_calendar(s);
      for (const int f : {1, 2}) {
        c.send_field(f == 1 ? "t_ice" : "h_ice",
                     xios_test::block_values(b, kLayers * kCats, [&](int k, int j, int i) {
                       return sample(f, s, k / kLayers, k % kLayers, j, i);
                     }));
      }
    }
    (void)c.finalise();
  };
  const xios_test::Outcome outcome = xios_test::run(spec);
  xios_test::expect_no_errors(outcome);
  if (ep_test::world_rank() == 0) {
    const std::string path = dir + "/ice.nc";
    for (const char* var : {"t_inst", "t_avg", "h_max"}) {
      EXPECT_EQ(xios_test::var_dims(path, var),
                (std::vector<std::string>{"time", "cat", "layer", "lat", "lon"}))
          << var;
    }
    EXPECT_EQ(xios_test::read_var(path, "layer"), (std::vector<double>{0.1, 0.5, 0.9}));
    EXPECT_EQ(xios_test::read_var(path, "cat"), (std::vector<double>{1, 2}));
    const std::vector<double> inst = xios_test::read_var(path, "t_inst");
    const std::vector<double> avg = xios_test::read_var(path, "t_avg");
    const std::vector<double> max = xios_test::read_var(path, "h_max");
    const std::size_t size = static_cast<std::size_t>(kSteps / 2) * kCats * kLayers * kNj * kNi;
    ASSERT_EQ(inst.size(), size);
    ASSERT_EQ(avg.size(), size);
    ASSERT_EQ(max.size(), size);
    std::size_t n = 0;
    for (int r = 0; r < kSteps / 2; ++r) {
      for (int cat = 0; cat < kCats; ++cat) {
        for (int layer = 0; layer < kLayers; ++layer) {
          for (int j = 0; j < kNj; ++j) {
            for (int i = 0; i < kNi; ++i, ++n) {
              const double a = sample(1, 2 * r + 1, cat, layer, j, i);
              const double b = sample(1, 2 * r + 2, cat, layer, j, i);
              const std::string at = "record " + std::to_string(r) + " cat " + std::to_string(cat) +
                                     " layer " + std::to_string(layer) + " j " + std::to_string(j) +
                                     " i " + std::to_string(i);
              EXPECT_EQ(inst[n], b) << at;
              EXPECT_EQ(avg[n], (a + b) * (1.0 / 2)) << at;
              EXPECT_EQ(max[n], sample(2, 2 * r + 2, cat, layer, j, i)) << at;
            }
          }
        }
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A field on a grid of a scalar alone, or of an axis alone, is refused with
// a message that says so (not supported yet).
TEST(XiosGrids, ScalarAndAxisOnlyGridsRefused) {
  for (const char* grid : {R"(<grid id="g0"><scalar id="s"/></grid>)",
                           R"(<grid id="g0"><axis axis_ref="layer"/></grid>)"}) {
    const std::string dir = xios_test::scratch_dir("grids_refused");
    std::string text = config_file("two_axes.xml", {{"NAME", dir + "/ice"}});
    const std::string anchor = "</grid_definition>";
    text.insert(text.find(anchor), grid);
    const std::string field = R"(<field id="x" grid_ref="g0"/>)";
    text.insert(text.find("</field_definition>"), field);
    text.insert(text.find("</file>"), R"(<field field_ref="x"/>)");
    const std::string cfg = xios_test::write_config(dir, text);
    const std::string e = error_of([&] { (void)xios_lite::parse_config(cfg, ""); });
    EXPECT_HAS(e, "scalar-only and axis-only grids are not supported");
    EXPECT_HAS(e, "grid 'g0'");
  }
}

}  // namespace
