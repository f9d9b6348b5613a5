// XIOS's '@' operator over a freq_op longer than one timestep: "@f" in the
// expression of a field whose freq_op is F is f's own temporal operation
// over each window of F steps, "f" without '@' its value at the window's
// last step; the expression is computed once per window, a sample for the
// field's own operation over the output period. The case of XIOS's
// test_complete (context_surface.xml: a timestep of 1800 s, the mean over
// 6 h of the hourly maxima), windows of 3 steps, a window as long as the
// output period, "@a + b", missing values inside the windows and land
// the model masks.
//
// Every value is computed here by a loop folding as the operations do
// (the first sample taken, the next ones added, compared or kept, a mean
// multiplied by the reciprocal of its count) and compared exactly.
//
// Shapes: r1t2 (synchronous), r2t2 and r3t1 (one server).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 7;
constexpr int kNj = 5;
constexpr int kStepsPerPeriod = 12;  // 6 h of 1800 s
constexpr int kPeriods = 2;
constexpr double kMissing = -999;
constexpr double kNcFill = 9.96920996838686905e+36;  // the default default_value

// Land the model masks (set_domain_mask): sent as garbage, _FillValue in every record.
bool land(int j, int i) { return j == 2 && i == 4; }

double a_at(int s, int j, int i) { return ((s * 7 + i * 3 + j) % 11) * 0.25 - 1.0 + 0.1 * j; }
double b_at(int s, int j, int i) {
  return ((s * 5 + 2 * i) % 9) * 0.5 - 2.0 + 0.01 * i + 0.125 * j;
}
// Missing at some points of some steps: at (i + s) % 3 == 0 (one step in
// three), and at every step of the first hour at i == 1 (a whole window).
double c_at(int s, int j, int i) {
  if ((i + s) % 3 == 0 || (i == 1 && s <= 2)) return kMissing;
  return ((s * 3 + i + 2 * j) % 7) * 0.75 - 2.0;
}

std::string config(const std::string& dir) {
  return R"xml(<?xml version="1.0"?>
<simulation>
  <context id="xios"><variable_definition><variable id="info_level" type="int">10</variable></variable_definition></context>
  <context id="at">
    <calendar type="Gregorian" start_date="2000-01-01" timestep="1800s"/>
    <domain_definition><domain id="d" ni_glo="7" nj_glo="5"/></domain_definition>
    <grid_definition><grid id="g"><domain domain_ref="d"/></grid></grid_definition>
    <field_definition grid_ref="g">
      <field id="field_A_srf" operation="average"/>
      <field id="field_A_srf_max" field_ref="field_A_srf" operation="maximum"/>
      <field id="b" operation="minimum"/>
      <field id="c" operation="maximum" detect_missing_value="true" default_value="-999"/>
    </field_definition>
    <file_definition>
      <file id="surface" name=")xml" +
         dir + R"xml(/surface" output_freq="6h">
        <field field_ref="field_A_srf_max" name="field_A_srf_mean_max" operation="average" freq_op="1h"> @field_A_srf_max </field>
        <field field_ref="field_A_srf" name="a_avg3_sum" operation="accumulate" freq_op="90mi">@field_A_srf</field>
        <field field_ref="b" name="b_min" operation="average" freq_op="6h">@b</field>
        <field field_ref="field_A_srf" name="a_plus_b" operation="average" freq_op="1h">@field_A_srf + b</field>
        <field field_ref="c" name="c_mean_max" operation="average" freq_op="1h">@c</field>
      </file>
    </file_definition>
  </context>
</simulation>
)xml";
}

std::vector<double> sent(int s, const Block& b, double (*f)(int, int, int)) {
  return xios_test::block_values(b, 1,
                                 [&](int, int j, int i) { return land(j, i) ? 1e30 : f(s, j, i); });
}

void set_block_and_land(xios_lite::Client& c, const Block& b) {
  c.set_domain_block("d", b);
  const std::size_t points = static_cast<std::size_t>(b.ni) * static_cast<std::size_t>(b.nj);
  const std::unique_ptr<bool[]> valid(new bool[points]);
  std::size_t at = 0;
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) valid[at++] = !land(j, i);
  }
  c.set_domain_mask("d", std::span<const bool>(valid.get(), points));
}

// The operations' fold over samples (missing ones: nullopt, left out);
// nullopt when every sample is missing.
std::optional<double> fold(char op, const std::vector<std::optional<double>>& xs) {
  std::optional<double> acc;
  int n = 0;
  for (const std::optional<double>& x : xs) {
    if (!x) continue;
    if (!acc) {
      acc = *x;
    } else if (op == 'n') {
      acc = std::min(*acc, *x);
    } else if (op == 'x') {
      acc = std::max(*acc, *x);
    } else {  // average, accumulate
      *acc += *x;
    }
    ++n;
  }
  if (acc && op == 'a' && n > 1) *acc *= 1.0 / n;
  return acc;
}

// Per output period and point: `host` over the windows of `window` steps,
// each window's value `in_window(first step, j, i)`; `fill` where none is
// valid and on land.
std::vector<double> expected(
    char host, int window,
    const std::function<std::optional<double>(int first, int j, int i)>& in_window,
    double fill = kNcFill) {
  std::vector<double> out;
  for (int p = 0; p < kPeriods; ++p) {
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        if (land(j, i)) {
          out.push_back(fill);
          continue;
        }
        std::vector<std::optional<double>> samples;
        for (int first = p * kStepsPerPeriod + 1; first <= (p + 1) * kStepsPerPeriod;
             first += window) {
          samples.push_back(in_window(first, j, i));
        }
        out.push_back(fold(host, samples).value_or(fill));
      }
    }
  }
  return out;
}

// `op` over the steps [first, first + n) of `f`.
std::optional<double> over(char op, int first, int n, int j, int i, double (*f)(int, int, int)) {
  std::vector<std::optional<double>> xs;
  for (int s = first; s < first + n; ++s) {
    const double v = f(s, j, i);
    xs.push_back(v == kMissing ? std::nullopt : std::optional<double>(v));
  }
  return fold(op, xs);
}

void expect_equal(const std::vector<double>& got, const std::vector<double>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t x = 0; x < got.size(); ++x) {
    EXPECT_EQ(got[x], want[x]) << what << " [" << x << "]";
  }
}

TEST(XiosExpressionsAt, WindowsOfTheFieldsOwnOperation) {
  const std::string dir = xios_test::scratch_dir("expressions_at");
  const std::string cfg = xios_test::write_config(dir, config(dir));
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm.rank(), comm.size(), kNi, kNj);
        set_block_and_land(c, b);
        c.close_definition();
        for (int s = 1; s <= kPeriods * kStepsPerPeriod; ++s) {
          c.update_calendar(s);
          c.send_field("field_A_srf", sent(s, b, a_at));
          c.send_field("b", sent(s, b, b_at));
          c.send_field("c", sent(s, b, c_at));
        }
        (void)c.finalise();
      });
  const xios_test::Outcome o = xios_test::run(spec);
  xios_test::expect_no_errors(o);
  if (ep_test::world_rank() == 0) {
    const std::string path = dir + "/surface.nc";
    // test_complete: the mean over 6 h of the maxima over each hour (2 steps).
    expect_equal(xios_test::read_var(path, "field_A_srf_mean_max"),
                 expected('a', 2, [](int s, int j, int i) { return over('x', s, 2, j, i, a_at); }),
                 "field_A_srf_mean_max");
    // The sum over 6 h of the means over 90 min (3 steps).
    expect_equal(xios_test::read_var(path, "a_avg3_sum"),
                 expected('s', 3, [](int s, int j, int i) { return over('a', s, 3, j, i, a_at); }),
                 "a_avg3_sum");
    // freq_op = output_freq: one window, b's minimum over the whole period.
    expect_equal(
        xios_test::read_var(path, "b_min"),
        expected('a', kStepsPerPeriod,
                 [](int s, int j, int i) { return over('n', s, kStepsPerPeriod, j, i, b_at); }),
        "b_min");
    // "@a + b": a's hourly mean plus b at the hour's last step.
    expect_equal(xios_test::read_var(path, "a_plus_b"),
                 expected('a', 2,
                          [](int s, int j, int i) {
                            return *over('a', s, 2, j, i, a_at) + b_at(s + 1, j, i);
                          }),
                 "a_plus_b");
    // Missing values left out of each window's maximum; a window with none
    // (i == 1, the first hour) left out of the mean.
    expect_equal(
        xios_test::read_var(path, "c_mean_max"),
        expected(
            'a', 2, [](int s, int j, int i) { return over('x', s, 2, j, i, c_at); }, kMissing),
        "c_mean_max");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A window in which an '@' operand was not sent at one step is not
// computed: the error names the operand, and the variables reading it have
// _FillValue in that period's record (not a window of fewer samples).
TEST(XiosExpressionsAt, AnOperandMissingInAWindowIsNamed) {
  const std::string dir = xios_test::scratch_dir("expressions_at_missing");
  const std::string cfg = xios_test::write_config(dir, config(dir));
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm.rank(), comm.size(), kNi, kNj);
        set_block_and_land(c, b);
        c.close_definition();
        std::string first;
        for (int s = 1; s <= kPeriods * kStepsPerPeriod; ++s) {
          const std::string e = xios_test::error_of([&] { c.update_calendar(s); });
          if (first.empty()) first = e;
          if (s != 3) c.send_field("field_A_srf", sent(s, b, a_at));
          c.send_field("b", sent(s, b, b_at));
          c.send_field("c", sent(s, b, c_at));
        }
        // Step 3 ends a window of a_avg3_sum (steps 1-3), which is due there.
        EXPECT_HAS(first,
                   "field 'surface.a_avg3_sum' was due at step 3 and could not be computed (its "
                   "expression reads field 'field_A_srf', which was not sent)");
        EXPECT_HAS(xios_test::error_of([&] { (void)c.finalise(); }), "was due at step 3");
      });
  const xios_test::Outcome o = xios_test::run(spec);
  for (const auto& e : o.client_errors) ADD_FAILURE() << "client: " << e;
  if (ep_test::world_rank() == 0) {
    const std::string path = dir + "/surface.nc";
    const std::size_t n = kNi * kNj;
    for (const char* var : {"field_A_srf_mean_max", "a_avg3_sum", "a_plus_b"}) {
      const std::vector<double> got = xios_test::read_var(path, var);
      ASSERT_EQ(got.size(), kPeriods * n) << var;
      for (std::size_t x = 0; x < n; ++x) EXPECT_EQ(got[x], kNcFill) << var << x;
    }
    // The second period, and the fields that do not read field_A_srf, as sent.
    const std::vector<double> mean_max = xios_test::read_var(path, "field_A_srf_mean_max");
    const std::vector<double> want =
        expected('a', 2, [](int s, int j, int i) { return over('x', s, 2, j, i, a_at); });
    expect_equal({mean_max.begin() + static_cast<std::ptrdiff_t>(n), mean_max.end()},
                 {want.begin() + static_cast<std::ptrdiff_t>(n), want.end()}, "second period");
    expect_equal(
        xios_test::read_var(path, "b_min"),
        expected('a', kStepsPerPeriod,
                 [](int s, int j, int i) { return over('n', s, kStepsPerPeriod, j, i, b_at); }),
        "b_min");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
