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
// NemoStyle: NEMO's ORCA2 uses of expressions (cfgs/SHARED field_def and
// file_def) on a small grid with a halo, over 14 months of daily steps:
// thickness-weighted monthly means "@toce_e3t / @e3t" whose operands sit
// on the halo'd grid and its _inner twin (masked differently), monthly
// standard deviations "sqrt(@sst2 - @sst * @sst)", a plain freq_op="1mo",
// "$rho0"-style variables, a yearly window "@sst" and the yearly mean of
// monthly maxima, operands through a reduce_axis (vertical sums, as NEMO's
// toce_vmean300) and a zoom_axis. The months are the gregorian calendar's (2000 is leap).
//
// Shapes: r1t2 (synchronous), r2t2 and r3t1 (one server).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"
#include "xios_lite/config.hpp"

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

std::vector<double> sent(int s, const Block& b, double (*f)(int, int, int)) {
  return xios_test::block_values(b, 1,
                                 [&](int, int j, int i) { return land(j, i) ? 1e30 : f(s, j, i); });
}

// Each client's uneven block of d, with the land masked; the definition
// closed. Returns the block.
Block define_surface(xios_lite::Client& c, const ep::Communicator& comm) {
  const Block b = xios_test::uneven_block(comm, kNi, kNj);
  c.set_domain_block("d", b);
  xios_test::mask_land(c, "d", b, land);
  c.close_definition();
  return b;
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
  const auto [dir, spec] =
      xios_test::scratch_run("expressions_at", "expressions_at.xml", {{"DIR", ""}},
                             [](xios_lite::Client& c, const ep::Communicator& comm) {
                               const Block b = define_surface(c, comm);
                               for (int s = 1; s <= kPeriods * kStepsPerPeriod; ++s) {
                                 c.update_calendar(s);
                                 c.send_field("field_A_srf", sent(s, b, a_at));
                                 c.send_field("b", sent(s, b, b_at));
                                 c.send_field("c", sent(s, b, c_at));
                               }
                               (void)c.finalise();
                             });
  if (xios_test::run_without_errors(spec)) {
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
  const auto [dir, spec] = xios_test::scratch_run(
      "expressions_at_missing", "expressions_at.xml", {{"DIR", ""}},
      [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = define_surface(c, comm);
        std::string first;
        for (int s = 1; s <= kPeriods * kStepsPerPeriod; ++s) {
          const std::string e = xios_test::error_of([&] { c.update_calendar(s); });
          if (first.empty()) first = e;
          if (s != 3) c.send_field("field_A_srf", sent(s, b, a_at));
          c.send_field("b", sent(s, b, b_at));
          c.send_field("c", sent(s, b, c_at));
        }
        // Step 3 ends a window of a_avg3_sum (steps 1-3), whose sampling
        // slot (freq_op 90 min) those steps are.
        EXPECT_HAS(first,
                   "field 'surface.a_avg3_sum' was due in steps 1-3 and could not be computed "
                   "(its expression reads field 'field_A_srf', which was not sent)");
        EXPECT_HAS(xios_test::error_of([&] { (void)c.finalise(); }), "was due in steps 1-3");
      });
  const xios_test::Outcome o = xios_test::run(spec);
  for (const auto& e : o.client_errors) ADD_FAILURE() << "client: " << e;
  if (ep_test::world_rank() == 0) {
    const std::string path = dir + "/surface.nc";
    const std::size_t n = static_cast<std::size_t>(kNi) * kNj;
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

// ---- NEMO style ------------------------------------------------------------

namespace nemo {

constexpr int kNi = 6;
constexpr int kNj = 4;
constexpr int kNk = 2;
constexpr double kFill = 1e20;  // the field_definition's default_value
// Days of each month from January 2000 (leap) to February 2001.
constexpr std::array<int, 14> kMonth{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 28};
constexpr int kYear2000 = 366;
constexpr int kSteps = kYear2000 + 31 + 28;  // one daily step, to 2001-03-01

bool land_t(int j, int i) { return j == 2 && i == 4; }
bool land_inner(int j, int i) { return land_t(j, i) || (j == 0 && i == 1); }

double toce(int s, int k, int j, int i) {
  return 5 + ((s * 3 + i * 5 + j * 2 + k * 7) % 13) * 0.25;
}
double e3t(int s, int k, int j, int i) { return 10 + k * 5 + ((s + i + 2 * j) % 5) * 0.5; }
double sst(int s, int j, int i) { return 10 + ((s * 7 + i * 3 + j) % 11) * 0.5; }
double qns(int s, int j, int i) { return -50 + ((s * 5 + i * 2 + j * 3) % 17) * 2.5; }

// The last step of month m (0: January 2000).
int month_end(int m) {
  int d = 0;
  for (int x = 0; x <= m; ++x) d += kMonth[static_cast<std::size_t>(x)];
  return d;
}
int month_start(int m) { return m == 0 ? 1 : month_end(m - 1) + 1; }

// The mean as the operations fold it: the first value, the next ones
// added, the sum multiplied by the reciprocal of the count.
template <class F>
double mean(int first, int last, F&& value) {
  double acc = value(first);
  for (int s = first + 1; s <= last; ++s) acc += value(s);
  const int n = last - first + 1;
  return n > 1 ? acc * (1.0 / n) : acc;
}
template <class F>
double maximum(int first, int last, F&& value) {
  double acc = value(first);
  for (int s = first + 1; s <= last; ++s) acc = std::max(acc, value(s));
  return acc;
}

// A halo of one point on each side (NEMO's data_ibegin = data_jbegin = -1),
// garbage in it, levels outermost.
std::vector<double> halo_array(const Block& b, int nk,
                               const std::function<double(int, int, int)>& f) {
  const int dni = b.ni + 2;
  const int dnj = b.nj + 2;
  std::vector<double> a(static_cast<std::size_t>(nk) * dni * dnj, -7e30);
  std::size_t n = 0;
  for (int k = 0; k < nk; ++k) {
    for (int kj = 0; kj < dnj; ++kj) {
      for (int ki = 0; ki < dni; ++ki, ++n) {
        const int i = ki - 1;
        const int j = kj - 1;
        if (i >= 0 && i < b.ni && j >= 0 && j < b.nj) a[n] = f(k, b.jbegin + j, b.ibegin + i);
      }
    }
  }
  return a;
}

// As NEMO's iom_init: both domains' sizes and this client's block, a halo
// on grid_T only, each domain its own mask.
void define_domains(xios_lite::Client& c, const Block& t, const Block& inner) {
  for (const auto& [id, b] : {std::pair{"grid_T", t}, std::pair{"grid_T_inner", inner}}) {
    c.set_domain_attr(id, xios_test::block_attributes(b, kNi, kNj));
  }
  c.set_domain_attr("grid_T", xios_test::halo_attributes(t, 1, 1));
  xios_test::mask_land(c, "grid_T", t, land_t);
  xios_test::mask_land(c, "grid_T_inner", inner, land_inner);
}

void send_step(xios_lite::Client& c, const Block& b, int s) {
  c.send_field("toce", halo_array(b, kNk, [s](int k, int j, int i) { return toce(s, k, j, i); }));
  c.send_field("sst", halo_array(b, 1, [s](int, int j, int i) { return sst(s, j, i); }));
  c.send_field(
      "e3t", xios_test::block_values(b, kNk, [s](int k, int j, int i) { return e3t(s, k, j, i); }));
  c.send_field("qns",
               xios_test::block_values(b, 1, [s](int, int j, int i) { return qns(s, j, i); }));
}

// Per record and point (levels outermost): `f(record, k, j, i)`, kFill where `land`.
std::vector<double> expected(int records, int nk, bool (*land)(int, int),
                             const std::function<double(int, int, int, int)>& f) {
  std::vector<double> out;
  for (int r = 0; r < records; ++r) {
    for (int k = 0; k < nk; ++k) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) out.push_back(land(j, i) ? kFill : f(r, k, j, i));
      }
    }
  }
  return out;
}

// A spec of nemo_expressions.xml in the fresh scratch directory `tag`:
// `model` on every client with its uneven block of grid_T. Collective.
xios_test::ScratchRun nemo_run(
    const std::string& tag,
    std::function<void(xios_lite::Client&, const ep::Communicator&, const Block&)> model) {
  return xios_test::scratch_run(tag, "nemo_expressions.xml", {{"DIR", ""}},
                                [model](xios_lite::Client& c, const ep::Communicator& comm) {
                                  model(c, comm, xios_test::uneven_block(comm, kNi, kNj));
                                });
}

}  // namespace nemo

TEST(XiosExpressionsAt, NemoStyle) {
  using namespace nemo;
  using nemo::kNi;
  using nemo::kNj;
  const auto [dir, spec] = nemo_run(
      "expressions_nemo", [](xios_lite::Client& c, const ep::Communicator&, const Block& b) {
        define_domains(c, b, b);
        xios_test::close_and_step(c, kSteps, [&](int s) { send_step(c, b, s); });
      });
  if (xios_test::run_without_errors(spec)) {
    const std::string monthly = dir + "/nemo_1m_grid_T.nc";
    const int months = static_cast<int>(kMonth.size());
    // grid_T and grid_T_inner (grids naming it name="grid_T", as NEMO's)
    // share one pair of horizontal dimensions and coordinates.
    EXPECT_EQ(xios_test::var_dims(monthly, "heat_content"),
              xios_test::var_dims(monthly, "sstmax_1m"));
    EXPECT_EQ(xios_test::var_dims(monthly, "sstmax_1m"),
              (std::vector<std::string>{"time", "lat", "lon"}));
    // Thickness-weighted: each month's mean of toce * e3t over its mean of
    // e3t; e3t's grid_T_inner masks one more point than grid_T.
    expect_equal(xios_test::read_var(monthly, "thetao"),
                 expected(months, kNk, land_inner,
                          [](int m, int k, int j, int i) {
                            const int a = month_start(m);
                            const int z = month_end(m);
                            return mean(a, z,
                                        [&](int s) { return toce(s, k, j, i) * e3t(s, k, j, i); }) /
                                   mean(a, z, [&](int s) { return e3t(s, k, j, i); });
                          }),
                 "thetao");
    expect_equal(xios_test::read_var(monthly, "sststd"),
                 expected(months, 1, land_t,
                          [](int m, int, int j, int i) {
                            const int a = month_start(m);
                            const int z = month_end(m);
                            const double m2 =
                                mean(a, z, [&](int s) { return sst(s, j, i) * sst(s, j, i); });
                            const double m1 = mean(a, z, [&](int s) { return sst(s, j, i); });
                            return std::sqrt(m2 - m1 * m1);
                          }),
                 "sststd");
    // freq_op="1mo" on a plain field: one sample per month, as XIOS takes
    // it: the first value sent in the month (its first step).
    expect_equal(xios_test::read_var(monthly, "sstmax_1m"),
                 expected(months, 1, land_t,
                          [](int m, int, int j, int i) { return sst(month_start(m), j, i); }),
                 "sstmax_1m");
    expect_equal(xios_test::read_var(monthly, "heat_content"),
                 expected(months, 1, land_inner,
                          [](int m, int, int j, int i) {
                            return mean(month_start(m), month_end(m), [&](int s) {
                              return qns(s, j, i) * 1026.0 * 3991.5 / 1000;
                            });
                          }),
                 "heat_content");
    // sst (grid_T) + qns (grid_T_inner) at each month's last step.
    expect_equal(xios_test::read_var(monthly, "sst_plus_qns"),
                 expected(months, 1, land_inner,
                          [](int m, int, int j, int i) {
                            return sst(month_end(m), j, i) + qns(month_end(m), j, i);
                          }),
                 "sst_plus_qns");
    // Vertical sums (reduce_axis sum) of toce * e3t and of e3t, level by
    // level in order, their ratio averaged over each month.
    expect_equal(xios_test::read_var(monthly, "thetao_vmean"),
                 expected(months, 1, land_inner,
                          [](int m, int, int j, int i) {
                            return mean(month_start(m), month_end(m), [&](int s) {
                              double num = toce(s, 0, j, i) * e3t(s, 0, j, i);
                              num += toce(s, 1, j, i) * e3t(s, 1, j, i);
                              double den = e3t(s, 0, j, i);
                              den += e3t(s, 1, j, i);
                              return num / den;
                            });
                          }),
                 "thetao_vmean");
    // The deep level alone (zoom_axis begin 1) of both operands, at each
    // month's last step.
    expect_equal(xios_test::read_var(monthly, "toce_deep_ratio"),
                 expected(months, 1, land_inner,
                          [](int m, int, int j, int i) {
                            return toce(month_end(m), 1, j, i) / e3t(month_end(m), 1, j, i);
                          }),
                 "toce_deep_ratio");
    // '@' of a field sampled every 2 days: its mean over the month's odd
    // days (XIOS samples steps 1, 3, 5, ...).
    expect_equal(xios_test::read_var(monthly, "sst_mean_2d"),
                 expected(months, 1, land_t,
                          [](int m, int, int j, int i) {
                            const int first = month_start(m) + (1 - month_start(m) % 2);
                            double acc = sst(first, j, i);
                            int n = 1;
                            for (int s = first + 2; s <= month_end(m); s += 2, ++n) {
                              acc += sst(s, j, i);
                            }
                            return acc * (1.0 / n);
                          }),
                 "sst_mean_2d");
    const std::string yearly = dir + "/nemo_1y_grid_T.nc";
    expect_equal(xios_test::read_var(yearly, "tos"),
                 expected(1, 1, land_t,
                          [](int, int, int j, int i) {
                            return mean(1, kYear2000, [&](int s) { return sst(s, j, i); });
                          }),
                 "tos");
    // The mean over 2000 of each month's maximum.
    expect_equal(xios_test::read_var(yearly, "sstmax_mean"),
                 expected(1, 1, land_t,
                          [](int, int, int j, int i) {
                            return mean(0, 11, [&](int m) {
                              return maximum(month_start(m), month_end(m),
                                             [&](int s) { return sst(s, j, i); }) -
                                     1900 + 1900;
                            });
                          }),
                 "sstmax_mean");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// An operand on a twin domain is read point for point: a client whose
// blocks of the two domains differ is refused at close_definition, on every
// client, naming both domains.
TEST(XiosExpressionsAt, TwinDomainsWithOtherBlocksAreRefused) {
  using namespace nemo;
  using nemo::kNi;
  using nemo::kNj;
  const auto [dir, spec] =
      nemo_run("expressions_twin_blocks",
               [](xios_lite::Client& c, const ep::Communicator& comm, const Block& b) {
                 // The inner domain's blocks in the opposite order: the domain is
                 // covered, but client by client the points are not grid_T's.
                 const Block other =
                     xios_test::uneven_block(comm.size() - 1 - comm.rank(), comm.size(), kNi, kNj);
                 define_domains(c, b, other);
                 const std::string e = error_of([&] { c.close_definition(); });
                 if (comm.size() > 1) {
                   EXPECT_HAS(e, "xios_lite::Client::close_definition");
                   EXPECT_HAS(e, "on domain 'grid_T_inner', whose block on client 0");
                   EXPECT_HAS(e, "is not that of domain 'grid_T'");
                 }
               });
  const xios_test::Outcome o = xios_test::run(spec);
  (void)o;
  MPI_Barrier(MPI_COMM_WORLD);
}

// Configuration errors of the features above, each naming its place.
TEST(XiosExpressionsAt, VariablesAndWindowsRefusedWithTheirPlace) {
  const auto parse = [](const std::string& field, const std::string& file_field) {
    return error_of([&] {
      (void)xios_lite::parse_config_string(
          R"(<simulation><context id="c">
  <calendar type="gregorian" start_date="2000-01-01" timestep="1d"/>
  <variable_definition><variable id="rho0" type="double">1026</variable><variable id="tag" type="string">x</variable></variable_definition>
  <domain_definition><domain id="d" ni_glo="4" nj_glo="2"/><domain id="z" domain_ref="d"><zoom_domain ibegin="0" jbegin="0" ni="2" nj="2"/></domain></domain_definition>
  <axis_definition><axis id="k" n_glo="2"/></axis_definition>
  <grid_definition><grid id="g3"><domain domain_ref="d"/><axis axis_ref="k"/></grid><grid id="gsum"><domain domain_ref="d"/><scalar><reduce_axis operation="sum"/></scalar></grid></grid_definition>
  <field_definition><field id="a" domain_ref="d" operation="average"/><field id="b" domain_ref="z"/>)" +
              field + R"(</field_definition>
  <file_definition><file id="o" output_freq="1y">)" +
              file_field + R"(</file></file_definition>
</context></simulation>)",
          "i.xml");
    });
  };
  EXPECT_HAS(
      parse(R"(<field id="x" domain_ref="d">a * $rau0</field>)", R"(<field field_ref="x"/>)"),
      "unknown variable '$rau0' (no <variable id=\"rau0\"> in the context's "
      "<variable_definition>)");
  EXPECT_HAS(parse(R"(<field id="x" domain_ref="d">a * $tag</field>)", R"(<field field_ref="x"/>)"),
             "variable '$tag' is not a number (its type is string)");
  EXPECT_TRUE(
      parse(R"(<field id="x" domain_ref="d">a * $rho0</field>)", R"(<field field_ref="x"/>)")
          .empty());
  // A monthly window sampled by a variable at another frequency.
  EXPECT_HAS(parse(R"(<field id="x" field_ref="a" freq_op="1mo">@a</field>)",
                   R"(<field field_ref="x" freq_op="1d"/>)"),
             "attribute freq_op: value '1d' out of range (field 'x' is computed once per freq_op "
             "1mo by its @ operator");
  // Operands on a zoom of the expression's domain are other points.
  EXPECT_HAS(parse(R"(<field id="x" domain_ref="d">a + b</field>)", R"(<field field_ref="x"/>)"),
             "operand 'b' is on grid");
  // Monthly samples of a variable the servers reduce (they fold samples of
  // a fixed interval).
  EXPECT_HAS(parse(R"(<field id="t" grid_ref="g3"/>)",
                   R"(<field field_ref="t" grid_ref="gsum" operation="average" freq_op="1mo"/>)"),
             "unsupported XIOS feature (a reduced variable sampled every 1mo");
  // '@' of an operand sampled monthly inside a window.
  EXPECT_HAS(
      parse(
          R"(<field id="m" field_ref="a" freq_op="1mo"/><field id="x" field_ref="a" freq_op="1y">@m</field>)",
          R"(<field field_ref="x" freq_op="1y"/>)"),
      "is sampled every 1mo inside each window");
}

}  // namespace
