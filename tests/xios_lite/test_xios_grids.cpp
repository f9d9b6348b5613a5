// Grids beyond one domain and one axis: a scalar alone, an axis alone, and
// a domain with two axes (sea-ice layers x categories). The model sends field(ni, nj, n_layer,
// n_cat), the layers fastest; the file variable has both axes as dimensions, the grid's members in
// reverse as XIOS writes them (time, cat, layer, y, x), with both coordinate variables, and every
// value where it belongs. Before: the grid was refused ("at most one axis").
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
  const auto [dir, cfg] = xios_test::scratch_config("two_axes", "two_axes.xml", {{"NAME", "/ice"}});
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
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
      });
  if (xios_test::run_without_errors(spec)) {
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

// Fields on a grid of a scalar alone (a global total) and of an axis alone
// (a profile): every client sends the value or the whole axis, client 0's
// are written (the others send garbage here, which must not appear); the
// scalar's variable has the time dimension only, the profile's the axis
// with its coordinate. An axis alone may also be split over the clients
// (set_axis_attr begin and n): each sends its part. Before: both grids
// were refused.
TEST(XiosGrids, ScalarAndAxisAlone) {
  constexpr int kLevels = 4;
  constexpr int kLev = 6;
  const auto [dir, cfg] =
      xios_test::scratch_config("single_members", "single_members.xml", {{"NAME", "/ice"}});
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        c.set_domain_block("ice", b);
        // This client's part of axis lev (XIOS's begin and n).
        xios_lite::AxisAttributes part;
        part.begin = kLev * comm.rank() / comm.size();
        part.n = kLev * (comm.rank() + 1) / comm.size() - *part.begin;
        c.set_axis_attr("lev", part);
        c.close_definition();
        const bool first = comm.rank() == 0;
        for (int s = 1; s <= kSteps; ++s) {
          c.update_calendar(s);
          c.send_field("t_ice", xios_test::field_values(1, s, 1, b));
          c.send_field("volume", std::vector<double>{first ? value(2, s, 0, 0, 0) : 1e30});
          std::vector<double> profile;
          for (int k = 0; k < kLevels; ++k) profile.push_back(first ? value(3, s, k, 0, 0) : 1e30);
          if (s == 1) {
            // A wrong count is refused on every client, naming the axis.
            EXPECT_HAS(error_of([&] { c.send_field("profile", std::vector<double>(kLevels + 1)); }),
                       "the 4 values of axis 'layer'");
          }
          c.send_field("profile", profile);
          std::vector<double> dist;
          for (int k = *part.begin; k < *part.begin + *part.n; ++k)
            dist.push_back(value(4, s, k, 0, 0));
          c.send_field("dist", dist);
        }
        (void)c.finalise();
      });
  if (xios_test::run_without_errors(spec)) {
    const std::string path = dir + "/ice.nc";
    EXPECT_EQ(xios_test::var_dims(path, "volume_inst"), (std::vector<std::string>{"time"}));
    EXPECT_EQ(xios_test::var_dims(path, "volume_avg"), (std::vector<std::string>{"time"}));
    EXPECT_EQ(xios_test::var_dims(path, "profile_inst"),
              (std::vector<std::string>{"time", "layer"}));
    EXPECT_EQ(xios_test::var_dims(path, "t_inst"),
              (std::vector<std::string>{"time", "lat", "lon"}));
    EXPECT_EQ(xios_test::read_var(path, "layer"), (std::vector<double>{0.1, 0.4, 0.6, 0.9}));
    const std::vector<double> inst = xios_test::read_var(path, "volume_inst");
    const std::vector<double> avg = xios_test::read_var(path, "volume_avg");
    const std::vector<double> profile = xios_test::read_var(path, "profile_inst");
    const std::vector<double> max = xios_test::read_var(path, "profile_max");
    ASSERT_EQ(inst.size(), static_cast<std::size_t>(kSteps / 2));
    ASSERT_EQ(avg.size(), inst.size());
    ASSERT_EQ(profile.size(), static_cast<std::size_t>(kSteps / 2 * kLevels));
    ASSERT_EQ(max.size(), profile.size());
    for (int r = 0; r < kSteps / 2; ++r) {
      EXPECT_EQ(inst[r], value(2, 2 * r + 2, 0, 0, 0)) << r;
      EXPECT_EQ(avg[r], (value(2, 2 * r + 1, 0, 0, 0) + value(2, 2 * r + 2, 0, 0, 0)) * (1.0 / 2))
          << r;
      for (int k = 0; k < kLevels; ++k) {
        EXPECT_EQ(profile[r * kLevels + k], value(3, 2 * r + 2, k, 0, 0)) << r << " " << k;
        EXPECT_EQ(max[r * kLevels + k], value(3, 2 * r + 2, k, 0, 0)) << r << " " << k;
      }
    }
    // The distributed axis, its parts from every client.
    EXPECT_EQ(xios_test::var_dims(path, "dist_avg"), (std::vector<std::string>{"time", "lev"}));
    const std::vector<double> dist = xios_test::read_var(path, "dist_avg");
    ASSERT_EQ(dist.size(), static_cast<std::size_t>(kSteps / 2 * kLev));
    for (int r = 0; r < kSteps / 2; ++r) {
      for (int k = 0; k < kLev; ++k) {
        EXPECT_EQ(dist[r * kLev + k],
                  (value(4, 2 * r + 1, k, 0, 0) + value(4, 2 * r + 2, k, 0, 0)) * (1.0 / 2))
            << r << " " << k;
      }
    }
    const std::vector<double> t = xios_test::read_var(path, "t_inst");
    ASSERT_EQ(t.size(), static_cast<std::size_t>(kSteps / 2 * kNj * kNi));
    EXPECT_EQ(t[kNj * kNi + 3 * kNi + 2], value(1, 4, 0, 3, 2));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
