// Missing values and masks, as XIOS treats them: points masked by the domain
// (its `mask` in the configuration, or Client::set_domain_mask) and values
// equal to default_value with detect_missing_value="true" are left out of
// every temporal operation; a point missing over a whole period is
// _FillValue; _FillValue and missing_value are written. Before, land points
// sent as _FillValue entered the averages (4.98e36 for a cell missing half
// the time) and a maximum returned the fill value.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 6;
constexpr int kNj = 4;
constexpr int kSteps = 8;  // two periods of 4
constexpr double kFill = -1e20;

// Row 0, columns 0 and 1: land in the configuration's mask.
bool config_land(int j, int i) { return j == 0 && i < 2; }
// Land the model adds (set_domain_mask).
bool model_land(int j, int i) { return j == 2 && i == 4; }
// Sent as the fill value at every step / at odd steps.
bool always_missing(int j, int i) { return j == 3 && i == 0; }
bool sometimes_missing(int j, int i) { return j == 1 && i >= 3; }

double sample(int s, int j, int i) { return std::sin(s * 1.3 + j) * 10 + i - 0.25 * s; }

// What the model sends at step s (land gets garbage: it must not count).
double sent(int s, int j, int i) {
  if (config_land(j, i) || model_land(j, i)) {
    return 1e30;
  }
  if (always_missing(j, i) || (sometimes_missing(j, i) && s % 2 == 1)) {
    return kFill;
  }
  return sample(s, j, i);
}

std::string mask_attribute() {
  std::string m;
  for (int j = 0; j < kNj; ++j) {
    for (int i = 0; i < kNi; ++i) {
      m += config_land(j, i) ? "0 " : "1 ";
    }
  }
  return m;
}

std::string config(const std::string& name) {
  return config_file("missing.xml", {{"MASK", mask_attribute()}, {"NAME", name}});
}

// The expected record of `op` for period r (steps 4r+1 .. 4r+4) at a point.
double expected(const std::string& op, int r, int j, int i) {
  if (config_land(j, i) || model_land(j, i) || always_missing(j, i)) {
    return kFill;
  }
  std::vector<double> valid;
  for (int s = 4 * r + 1; s <= 4 * r + 4; ++s) {
    if (sent(s, j, i) != kFill) {
      valid.push_back(sample(s, j, i));
    }
  }
  if (op == "x_inst") {
    const int last = 4 * r + 4;
    return sent(last, j, i) == kFill ? kFill : sample(last, j, i);
  }
  if (valid.empty()) {
    return kFill;
  }
  double sum = valid[0];
  double lo = valid[0];
  double hi = valid[0];
  for (std::size_t n = 1; n < valid.size(); ++n) {
    sum += valid[n];
    lo = std::min(lo, valid[n]);
    hi = std::max(hi, valid[n]);
  }
  if (op == "x_avg")
    return valid.size() > 1 ? sum * (1.0 / static_cast<double>(valid.size())) : sum;
  if (op == "x_min") return lo;
  if (op == "x_max") return hi;
  return sum;
}

void run_and_check(Mode mode, int servers, const std::string& tag) {
  const std::string dir = xios_test::scratch_dir(tag);
  const std::string cfg = xios_test::write_config(dir, config(dir + "/ops"));
  const xios_test::RunSpec spec = xios_test::run_spec(
      cfg, servers, mode, [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        c.set_domain_block("dom", b);
        xios_test::mask_land(c, "dom", b, model_land);
        c.close_definition();
        for (int s = 1; s <= kSteps; ++s) {
          c.update_calendar(s);
          c.send_field(
              "x", xios_test::block_values(b, 1, [&](int, int j, int i) { return sent(s, j, i); }));
        }
        (void)c.finalise();
      });
  const xios_test::Outcome outcome = xios_test::run(spec);
  for (const auto& e : outcome.client_errors) {
    ADD_FAILURE() << "client error: " << e;
  }
  EXPECT_EQ(outcome.server_error, "");
  if (ep_test::world_rank() == 0) {
    const std::string path = dir + "/ops.nc";
    for (const std::string op : {"x_avg", "x_min", "x_max", "x_sum", "x_inst"}) {
      const std::vector<double> got = xios_test::read_var(path, op);
      ASSERT_EQ(got.size(), static_cast<std::size_t>(2 * kNj * kNi)) << op;
      std::size_t n = 0;
      for (int r = 0; r < 2; ++r) {
        for (int j = 0; j < kNj; ++j) {
          for (int i = 0; i < kNi; ++i, ++n) {
            EXPECT_EQ(got[n], expected(op, r, j, i))
                << tag << " " << op << " period " << r << " j " << j << " i " << i;
          }
        }
      }
      EXPECT_EQ(xios_test::double_att(path, op, "_FillValue"), kFill) << op;
      EXPECT_EQ(xios_test::double_att(path, op, "missing_value"), kFill) << op;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// In every client mode the shape allows: the funneled mode gathers the threads' masks on the
// master.
TEST(XiosMissing, LandAndMissingPointsInEveryOperation) {
  for (const auto& [client_mode, tag] : client_modes("missing")) {
    run_and_check(client_mode, servers(), tag);
  }
}

}  // namespace
