// A small ORCA-like run of NEMO's whole output path, through XIOS's own
// interface (xios.h, as NEMO's iom.F90 calls it): the configuration in
// configs/test_xios/nemo_orca/ (iodef.xml, context_nemo.xml and the
// *_def_nemo.xml it includes, written in NEMO's style), a model that sets
// the calendar's run, both domains' blocks (grid_T with a halo of one
// point, grid_T_inner without, each its own land mask), the axes' sizes,
// the windows of a section and a mooring (xios_set_zoom_domain_attr), a
// grid it adds (iom_set_zoom_domain_attr's EqT_3D) and the files' names
// (@expname@, @freq@, @startdate@, @enddate@), then sends every field the
// configuration names for two months of 12-hour steps.
//
// Every variable of every file is read back and compared with a value
// computed here from the closed forms the model sent (to 1e-12 relative:
// the files fold sums in their own order): 5-day means, maxima and
// instants, thickness-weighted means (@toce_e3t / @e3t with freq_op="5d"
// and "1mo"), standard deviations (sqrt(@sst2 - @sst * @sst)), the
// diurnal amplitude @sstmax - @sstmin over daily windows, monthly means,
// $rho0 and $rcp, a field sent on the halo'd grid and its _inner twin,
// expressions mixing the two, vertical means of operands reduced on the
// clients (all levels, and a zoom to the upper ones then their sum) beside
// surface fields, the surface level extracted to a scalar as an operand,
// ice layers x categories (one category extracted, the sum over
// categories), a 2-D field duplicated over straits (as a variable and as
// an operand), whole-domain, zonal and vertical sums, client-local
// reductions followed by one across clients, a model-sent scalar, a
// section and a mooring.
//
// Shapes: r1t1 (no server: the model disables the file of grid reductions,
// which only servers compute) and r3t1, run twice: one server process
// (two clients) and two (one client).
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"
#include "xios_h_calls.hpp"
#include "xios_lite/contexts.hpp"
#include "xios_lite/xios.h"

namespace {

using namespace xios_test;

constexpr int kNi = 8;
constexpr int kNj = 6;
constexpr int kNk = 3;
constexpr int kLay = 2;          // nlayice
constexpr int kCat = 3;          // ncatice
constexpr int kStrait = 3;       // nstrait
constexpr int kStepsPerDay = 2;  // a timestep of 12 h
constexpr int kDays = 60;        // 2000-01-01 to 2000-02-29 (a leap year)
constexpr int kSteps = kDays * kStepsPerDay;
constexpr int kFiveDays = 5 * kStepsPerDay;
constexpr double kFill = 1e20;  // the field_definition's default_value
constexpr double kRho0 = 1026.0;
constexpr double kRcp = 3991.86795711963;
// The months' steps.
constexpr std::array<int, 2> kMonthFirst{1, 31 * kStepsPerDay + 1};
constexpr std::array<int, 2> kMonthLast{31 * kStepsPerDay, kSteps};
// The section's row and the mooring's point (set at run time).
constexpr int kEqJ = 3;
constexpr int kMoorJ = 2;
constexpr int kMoorI = 5;

constexpr std::array<const char*, 7> kConfigFiles{
    "iodef.xml",         "context_nemo.xml",    "field_def_nemo.xml", "file_def_nemo.xml",
    "axis_def_nemo.xml", "domain_def_nemo.xml", "grid_def_nemo.xml"};

bool land_t(int j, int i) { return (j == 2 && i == 4) || (j == 4 && i == 1); }
// grid_T_inner masks one more point.
bool land_inner(int j, int i) { return land_t(j, i) || (j == 0 && i == 6); }

// What the model sends, at step s.
double toce(int s, int k, int j, int i) {
  return 4.0 + 2.0 * k + 0.5 * j - 0.25 * i + 0.125 * (s % 7) + 0.0625 * ((i * j + s) % 3);
}
double e3t(int s, int k, int j, int i) { return 10.0 + 5.0 * k + 0.5 * ((s + i + 2 * j) % 5); }
double sst(int s, int j, int i) { return 10.0 + ((s * 7 + i * 3 + j) % 11) * 0.5; }
double sss(int s, int j, int i) { return 34.0 + 0.25 * j + 0.125 * i - 0.0625 * (s % 4); }
double ssh(int s, int j, int i) { return 0.5 - 0.125 * j + 0.0625 * i + 0.03125 * (s % 3); }
double qns(int s, int j, int i) { return -50.0 + ((s * 5 + i * 2 + j * 3) % 17) * 2.5; }
double u_masstr(int s, int j, int i) { return 1.0 + 0.5 * j + 0.25 * i + 0.125 * (s % 5); }
double strait(int s, int q, int j, int i) {
  return (q + 1) * (j - 2.5) + 0.5 * i - 0.125 * (s % 6);
}
double icetemp(int s, int l, int c, int j, int i) {
  return -2.0 - l - 0.5 * c + 0.125 * j + 0.0625 * i - 0.25 * (s % 3);
}
double bgtemper(int s) { return 3.5 + 0.25 * (s % 5); }
double icevol(int s, int c, int j, int i) {
  return 0.5 * (c + 1) + 0.125 * j + 0.0625 * i + 0.25 * (s % 4);
}

// ---- the model, through xios.h ----

using xios_test::handle;
using xios_test::ok;

void update_file_name(const std::string& id) {
  xios_test::update_file_name(id, "ORCA2", "20000101", "20000229");
}

// A domain's block, as NEMO's iom_init sets it; with a halo of one point
// on each side when `halo`. Its land masked.
void set_domain(const std::string& id, const Block& b, bool halo, bool (*land)(int, int)) {
  const xios_handle_t d = handle("domain", id);
  ok(cxios_set_domain_type(d, "rectilinear", 11), id + " type");
  xios_test::set_domain_block(d, id, kNi, kNj, b);
  std::vector<double> lon;
  std::vector<double> lat;
  for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) lon.push_back(2.0 * i);
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) lat.push_back(-10.0 + 4.0 * j);
  ok(cxios_set_domain_lonvalue_1d(d, lon.data(), b.ni), id + " lonvalue_1d");
  ok(cxios_set_domain_latvalue_1d(d, lat.data(), b.nj), id + " latvalue_1d");
  if (halo) {
    ok(cxios_set_domain_data_dim(d, 2), id + " data_dim");
    ok(cxios_set_domain_data_ibegin(d, -1), id + " data_ibegin");
    ok(cxios_set_domain_data_ni(d, b.ni + 2), id + " data_ni");
    ok(cxios_set_domain_data_jbegin(d, -1), id + " data_jbegin");
    ok(cxios_set_domain_data_nj(d, b.nj + 2), id + " data_nj");
  }
  // mask_2d: ni x nj, i fastest (Fortran's order).
  const auto mask = std::make_unique<bool[]>(static_cast<std::size_t>(b.ni) * b.nj);
  std::size_t n = 0;
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) mask[n++] = !land(j, i);
  }
  ok(cxios_set_domain_mask_2d(d, mask.get(), b.ni, b.nj), id + " mask_2d");
}

void set_axis(const std::string& id, int n) {
  const xios_handle_t a = handle("axis", id);
  ok(cxios_set_axis_n_glo(a, n), id + " n_glo");
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) v[static_cast<std::size_t>(k)] = k + 1.0;
  ok(cxios_set_axis_value(a, v.data(), n), id + " value");
}

void set_zoom(const std::string& id, int ibegin, int ni, int jbegin, int nj) {
  const xios_handle_t z = handle("zoom_domain", id);
  ok(cxios_set_zoom_domain_ibegin(z, ibegin), id + " ibegin");
  ok(cxios_set_zoom_domain_ni(z, ni), id + " ni");
  ok(cxios_set_zoom_domain_jbegin(z, jbegin), id + " jbegin");
  ok(cxios_set_zoom_domain_nj(z, nj), id + " nj");
}

// `outer` levels of block `b`, levels outermost; with a halo of one point
// (garbage in it) when `halo`.
std::vector<double> array(const Block& b, int outer, bool halo,
                          const std::function<double(int o, int j, int i)>& f) {
  const int h = halo ? 1 : 0;
  const int dni = b.ni + 2 * h;
  const int dnj = b.nj + 2 * h;
  std::vector<double> a;
  a.reserve(static_cast<std::size_t>(outer) * dni * dnj);
  for (int o = 0; o < outer; ++o) {
    for (int kj = 0; kj < dnj; ++kj) {
      for (int ki = 0; ki < dni; ++ki) {
        const int i = ki - h;
        const int j = kj - h;
        const bool inside = i >= 0 && i < b.ni && j >= 0 && j < b.nj;
        a.push_back(inside ? f(o, b.jbegin + j, b.ibegin + i) : -7e30);
      }
    }
  }
  return a;
}

void send(const std::string& id, const std::vector<double>& data, std::vector<std::int64_t> ext) {
  ok(cxios_write_data_k8(id.c_str(), static_cast<int>(id.size()), data.data(),
                         static_cast<int>(ext.size()), ext.data()),
     "xios_send_field " + id);
}

// xios_close_context_definition fails; every later call of the context
// names that failure (not a missing close, not a finalise),
// xios_context_finalize gives the error again and xios_finalize still ends
// the run.
void expect_calls_name_the_refusal() {
  EXPECT_NE(cxios_context_close_definition(), 0);
  std::string refusal = cxios_last_error();
  refusal = refusal.substr(0, refusal.find('\n'));
  ASSERT_FALSE(refusal.empty());
  const auto expect_refused = [&](const char* call, int rc) {
    EXPECT_NE(rc, 0) << call;
    const std::string e = cxios_last_error();
    EXPECT_NE(e.find(call), std::string::npos) << e;
    EXPECT_NE(e.find("called after xios_close_context_definition failed (" + refusal),
              std::string::npos)
        << e;
  };
  expect_refused("xios_update_calendar", cxios_update_calendar(1));
  const std::vector<double> values(1, 0.0);
  const std::int64_t one = 1;
  expect_refused("xios_send_field", cxios_write_data_k8("sst", 3, values.data(), 1, &one));
  expect_refused("xios_close_context_definition", cxios_context_close_definition());
  EXPECT_NE(cxios_context_finalize(), 0);
  const std::string at_finalize = cxios_last_error();
  EXPECT_NE(at_finalize.find(refusal), std::string::npos) << at_finalize;
  ok(cxios_finalize(), "xios_finalize");
}

// The model of one client process. `with_reductions`: the file of grid
// reductions is written (a server computes them). `leave_a_row_out`: the
// blocks miss a row of grid_T, the close fails (see above) and the model stops.
void model(bool with_reductions, bool leave_a_row_out = false) {
  const auto [comm, rank, size] = xios_test::init_nemo_client();
  Block b = xios_test::uneven_block(rank, size, kNi, kNj);
  if (leave_a_row_out && rank == size - 1) {
    b.nj -= 1;
  }
  const xios_handle_t cal = handle("calendar_wrapper", "");
  ok(cxios_set_calendar_wrapper_type(cal, "Gregorian", 9), "calendar type");
  const cxios_date start{2000, 1, 1, 0, 0, 0};
  ok(cxios_set_calendar_wrapper_start_date(cal, start), "start_date");
  ok(cxios_set_calendar_wrapper_time_origin(cal, start), "time_origin");
  cxios_duration day{};
  day.hour = 24.0 / kStepsPerDay;
  ok(cxios_set_timestep(day), "timestep");
  set_domain("grid_T", b, true, land_t);
  set_domain("grid_T_inner", b, false, land_inner);
  set_axis("deptht", kNk);
  set_axis("ncatice", kCat);
  set_axis("nlayice", kLay);
  set_axis("nstrait", kStrait);
  // dom_init's sections and moorings, then iom_set_zoom_domain_attr's grid.
  set_zoom("EqT", 0, kNi, kEqJ, 1);
  set_zoom("2n5eT", kMoorI, 1, kMoorJ, 1);
  xios_handle_t grids = handle("gridgroup", "grid_definition");
  xios_handle_t eq3d = nullptr;
  xios_handle_t member = nullptr;
  ok(cxios_add_child(grids, "grid", "EqT_3D", 6, &eq3d), "add grid EqT_3D");
  ok(cxios_add_child(eq3d, "domain", "EqT", 3, &member), "add domain EqT");
  ok(cxios_add_child(eq3d, "axis", "deptht", 6, &member), "add axis deptht");
  for (const char* id : {"file1", "file2", "file3", "file5", "EqT", "2n5eT", "file4"})
    update_file_name(id);
  if (!with_reductions) ok(cxios_set_file_enabled(handle("file", "file3"), false), "enabled");
  if (leave_a_row_out) {
    expect_calls_name_the_refusal();
    return;
  }
  ok(cxios_context_close_definition(), "xios_close_context_definition");

  const std::int64_t hni = b.ni + 2;
  const std::int64_t hnj = b.nj + 2;
  for (int s = 1; s <= kSteps; ++s) {
    ok(cxios_update_calendar(s), "xios_update_calendar " + std::to_string(s));
    send("toce", array(b, kNk, true, [s](int k, int j, int i) { return toce(s, k, j, i); }),
         {hni, hnj, kNk});
    send("e3t", array(b, kNk, false, [s](int k, int j, int i) { return e3t(s, k, j, i); }),
         {b.ni, b.nj, kNk});
    send("sst", array(b, 1, true, [s](int, int j, int i) { return sst(s, j, i); }), {hni, hnj});
    send("sss", array(b, 1, true, [s](int, int j, int i) { return sss(s, j, i); }), {hni, hnj});
    send("sss_inner", array(b, 1, false, [s](int, int j, int i) { return sss(s, j, i); }),
         {b.ni, b.nj});
    send("ssh", array(b, 1, false, [s](int, int j, int i) { return ssh(s, j, i); }), {b.ni, b.nj});
    send("qns", array(b, 1, false, [s](int, int j, int i) { return qns(s, j, i); }), {b.ni, b.nj});
    send("u_masstr", array(b, 1, true, [s](int, int j, int i) { return u_masstr(s, j, i); }),
         {hni, hnj});
    send("masstr_strait",
         array(b, kStrait, true, [s](int q, int j, int i) { return strait(s, q, j, i); }),
         {hni, hnj, kStrait});
    // Layers fastest, then categories (Fortran's (ji, jj, jl, jc)).
    send("icetemp",
         array(b, kLay * kCat, true,
               [s](int o, int j, int i) { return icetemp(s, o % kLay, o / kLay, j, i); }),
         {hni, hnj, kLay, kCat});
    send("icevolcat", array(b, kCat, true, [s](int c, int j, int i) { return icevol(s, c, j, i); }),
         {hni, hnj, kCat});
    send("bgtemper", {bgtemper(s)}, {});
  }
  ok(cxios_context_finalize(), "xios_context_finalize");
  ok(cxios_finalize(), "xios_finalize");
}

// ---- what the files hold, computed here ----

// The steps of record r of a file: 5-day periods, or the months.
struct Period {
  int first;
  int last;
};
Period five_days(int r) { return {kFiveDays * r + 1, kFiveDays * (r + 1)}; }
Period month(int r) {
  return {kMonthFirst[static_cast<std::size_t>(r)], kMonthLast[static_cast<std::size_t>(r)]};
}

double mean(Period p, const std::function<double(int)>& f) {
  double sum = 0;
  for (int s = p.first; s <= p.last; ++s) sum += f(s);
  return sum / (p.last - p.first + 1);
}
double maximum(Period p, const std::function<double(int)>& f) {
  double m = f(p.first);
  for (int s = p.first + 1; s <= p.last; ++s) m = std::max(m, f(s));
  return m;
}
double minimum(Period p, const std::function<double(int)>& f) {
  return -maximum(p, [&](int s) { return -f(s); });
}
// The days of period p.
std::vector<Period> days(Period p) {
  std::vector<Period> out;
  for (int s = p.first; s <= p.last; s += kStepsPerDay) out.push_back({s, s + kStepsPerDay - 1});
  return out;
}
// The mean of `f` over the windows `w`.
double mean_of(const std::vector<Period>& w, const std::function<double(Period)>& f) {
  double sum = 0;
  for (const Period& d : w) sum += f(d);
  return sum / static_cast<double>(w.size());
}

// Records x outer x nj x ni values (ni fastest) of value(period, o, j, i),
// kFill where land(j, i) (no land when null).
std::vector<double> records(int count, Period (*period)(int), int outer, int nj, int ni,
                            bool (*land)(int, int),
                            const std::function<double(Period, int, int, int)>& value) {
  std::vector<double> out;
  for (int r = 0; r < count; ++r) {
    for (int o = 0; o < outer; ++o) {
      for (int j = 0; j < nj; ++j) {
        for (int i = 0; i < ni; ++i) {
          out.push_back(land != nullptr && land(j, i) ? kFill : value(period(r), o, j, i));
        }
      }
    }
  }
  return out;
}
constexpr int kFiveDayRecords = kSteps / kFiveDays;
constexpr int kMonths = 2;
// Step s's thickness-weighted mean of toce over the upper `levels` levels:
// the ratio of the vertical sums of toce * e3t and of e3t.
double vertical_mean(int s, int levels, int j, int i) {
  double num = 0;
  double den = 0;
  for (int k = 0; k < levels; ++k) {
    num += toce(s, k, j, i) * e3t(s, k, j, i);
    den += e3t(s, k, j, i);
  }
  return num / den;
}

// The period's mean of toce * e3t over its mean of e3t (NEMO's
// thickness-weighted @toce_e3t / @e3t).
double thickness_weighted_toce(Period p, int k, int j, int i) {
  return mean(p, [&](int s) { return toce(s, k, j, i) * e3t(s, k, j, i); }) /
         mean(p, [&](int s) { return e3t(s, k, j, i); });
}

// The period's standard deviation of sst: sqrt(@sst2 - @sst * @sst).
double sst_deviation(Period p, int /*level*/, int j, int i) {
  const double m2 = mean(p, [&](int s) { return sst(s, j, i) * sst(s, j, i); });
  const double m1 = mean(p, [&](int s) { return sst(s, j, i); });
  return std::sqrt(m2 - m1 * m1);
}

std::vector<double> five_day(int outer, bool (*land)(int, int),
                             const std::function<double(Period, int, int, int)>& value) {
  return records(kFiveDayRecords, five_days, outer, kNj, kNi, land, value);
}
std::vector<double> monthly(int outer, bool (*land)(int, int),
                            const std::function<double(Period, int, int, int)>& value) {
  return records(kMonths, month, outer, kNj, kNi, land, value);
}

// Equal to 1e-12 relative (the folds' order of additions is the files').
void expect_close(const std::string& path, const std::string& var,
                  const std::vector<double>& want) {
  const std::vector<double> got = xios_test::read_var(path, var);
  ASSERT_EQ(got.size(), want.size()) << path << " " << var;
  int shown = 0;
  for (std::size_t x = 0; x < got.size(); ++x) {
    const double tol = 1e-12 * std::max(1.0, std::abs(want[x]));
    if (std::abs(got[x] - want[x]) > tol && shown++ < 5) {
      ADD_FAILURE() << path << " " << var << " [" << x << "]: got " << got[x] << ", want "
                    << want[x];
    }
  }
  EXPECT_EQ(shown, 0) << var << ": values differ";
}

// Sums over the valid points of row j / of the domain.
double row_sum(int j, const std::function<double(int, int)>& f) {
  double sum = 0;
  for (int i = 0; i < kNi; ++i) {
    if (!land_t(j, i)) sum += f(j, i);
  }
  return sum;
}
double domain_sum(const std::function<double(int, int)>& f) {
  double sum = 0;
  for (int j = 0; j < kNj; ++j) sum += row_sum(j, f);
  return sum;
}

void check_grid_t(const std::string& path) {
  expect_close(path, "thetao", five_day(kNk, land_t, [](Period p, int k, int j, int i) {
                 return mean(p, [&](int s) { return toce(s, k, j, i); });
               }));
  expect_close(path, "e3t", five_day(kNk, land_inner, [](Period p, int k, int j, int i) {
                 return mean(p, [&](int s) { return e3t(s, k, j, i); });
               }));
  // NEMO's 5-day forms: operation="instant" freq_op="5d" over one window.
  expect_close(path, "thetao_tw", five_day(kNk, land_inner, thickness_weighted_toce));
  expect_close(path, "tosstd", five_day(1, land_t, sst_deviation));
  expect_close(path, "zosstd", five_day(1, land_inner, [](Period p, int, int j, int i) {
                 const double m2 = mean(p, [&](int s) { return ssh(s, j, i) * ssh(s, j, i); });
                 const double m1 = mean(p, [&](int s) { return ssh(s, j, i); });
                 return std::sqrt(m2 - m1 * m1);
               }));
  // The mean over 5 days of each day's maximum minus its minimum.
  expect_close(path, "sstdcy", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return mean_of(days(p), [&](Period d) {
                   return maximum(d, [&](int s) { return sst(s, j, i); }) -
                          minimum(d, [&](int s) { return sst(s, j, i); });
                 });
               }));
  expect_close(path, "tos", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return sst(s, j, i); });
               }));
  expect_close(path, "tosmax", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return maximum(p, [&](int s) { return sst(s, j, i); });
               }));
  // The same values sent with the halo and without: each its grid's mask.
  expect_close(path, "sos", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return sss(s, j, i); });
               }));
  expect_close(path, "sos_inner", five_day(1, land_inner, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return sss(s, j, i); });
               }));
  expect_close(path, "zos", five_day(1, land_inner, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return ssh(s, j, i); });
               }));
  // A halo'd operand minus an _inner one, at each period's last step.
  expect_close(path, "tos_m_zos", five_day(1, land_inner, [](Period p, int, int j, int i) {
                 return sst(p.last, j, i) - ssh(p.last, j, i);
               }));
  expect_close(path, "hfds_rate", five_day(1, land_inner, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return qns(s, j, i) / (kRho0 * kRcp); });
               }));
  // The ratio of the vertical sums of toce * e3t and of e3t, step by step.
  expect_close(path, "thetao_vmean", five_day(1, land_inner, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return vertical_mean(s, kNk, j, i); });
               }));
  // The same over the two upper levels (a zoom_axis, then the sum).
  expect_close(path, "thetao_vmean_upper", five_day(1, land_inner, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return vertical_mean(s, 2, j, i); });
               }));
  // The same ratio against sst (on grid_T alone), each way round.
  for (const bool vmean_first : {true, false}) {
    expect_close(path, vmean_first ? "thetao_vmean_m_tos" : "tos_m_thetao_vmean",
                 five_day(1, land_inner, [vmean_first](Period p, int, int j, int i) {
                   return mean(p, [&](int s) {
                     const double vmean = vertical_mean(s, kNk, j, i);
                     return vmean_first ? vmean - sst(s, j, i) : sst(s, j, i) - vmean;
                   });
                 }));
  }
  // The surface level (extract_axis to a scalar) as a variable, and as an
  // operand at each period's last step.
  expect_close(path, "thetao_sfc", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return toce(s, 0, j, i); });
               }));
  expect_close(path, "tos_m_thetao_sfc", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return sst(p.last, j, i) - toce(p.last, 0, j, i);
               }));
  expect_close(path, "u_masstr_4strait", five_day(kStrait, land_t, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return u_masstr(s, j, i); });
               }));
  // Each strait's transport times the 2-D field duplicated on it.
  expect_close(path, "mfo_w", five_day(kStrait, land_t, [](Period p, int q, int j, int i) {
                 return mean(p, [&](int s) { return strait(s, q, j, i) * u_masstr(s, j, i); });
               }));
}

void check_icemod(const std::string& path) {
  expect_close(path, "sitemlay", five_day(kLay * kCat, land_t, [](Period p, int o, int j, int i) {
                 return mean(p, [&](int s) { return icetemp(s, o % kLay, o / kLay, j, i); });
               }));
  EXPECT_EQ(xios_test::var_dims(path, "sitemlay"),
            (std::vector<std::string>{"time", "ncatice", "nlayice", "lat", "lon"}));
  expect_close(path, "sitemlay_cat1", five_day(kLay, land_t, [](Period p, int l, int j, int i) {
                 return mean(p, [&](int s) { return icetemp(s, l, 1, j, i); });
               }));
  expect_close(path, "sivolcat", five_day(kCat, land_t, [](Period p, int c, int j, int i) {
                 return mean(p, [&](int s) { return icevol(s, c, j, i); });
               }));
}

void check_diaptr(const std::string& path) {
  const auto whole = [](int outer, int nj, int ni,
                        const std::function<double(Period, int, int, int)>& v) {
    return records(kFiveDayRecords, five_days, outer, nj, ni, nullptr, v);
  };
  expect_close(path, "tos_glosum", whole(1, 1, 1, [](Period p, int, int, int) {
                 return mean(p, [&](int s) {
                   return domain_sum([&](int j, int i) { return sst(s, j, i); });
                 });
               }));
  expect_close(path, "thetao_glosum", whole(kNk, 1, 1, [](Period p, int k, int, int) {
                 return mean(p, [&](int s) {
                   return domain_sum([&](int j, int i) { return toce(s, k, j, i); });
                 });
               }));
  expect_close(path, "thetao_vsum", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) {
                   double sum = 0;
                   for (int k = 0; k < kNk; ++k) sum += toce(s, k, j, i);
                   return sum;
                 });
               }));
  expect_close(path, "sivol", five_day(1, land_t, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) {
                   double sum = 0;
                   for (int c = 0; c < kCat; ++c) sum += icevol(s, c, j, i);
                   return sum;
                 });
               }));
  expect_close(
      path, "tos_zsum", whole(1, 1, kNj, [](Period p, int, int, int j) {
        return mean(p, [&](int s) { return row_sum(j, [&](int, int i) { return sst(s, j, i); }); });
      }));
  expect_close(path, "mfo", whole(kStrait, 1, 1, [](Period p, int q, int, int) {
                 return mean(p, [&](int s) {
                   return domain_sum([&](int j, int i) { return strait(s, q, j, i); });
                 });
               }));
  // The maximum along j of each column at each step, then the period's mean.
  expect_close(path, "thetao_colmax", whole(kNk, 1, kNi, [](Period p, int k, int, int i) {
                 return mean(p, [&](int s) {
                   double m = -1e300;
                   for (int j = 0; j < kNj; ++j) {
                     if (!land_t(j, i)) m = std::max(m, toce(s, k, j, i));
                   }
                   return m;
                 });
               }));
}

void check_scalar_file(const std::string& path) {
  expect_close(path, "bgtemper",
               records(kFiveDayRecords, five_days, 1, 1, 1, nullptr,
                       [](Period p, int, int, int) { return mean(p, bgtemper); }));
}

void check_zooms(const std::string& eq, const std::string& moor) {
  expect_close(
      eq, "tos_eq",
      records(kFiveDayRecords, five_days, 1, 1, kNi, nullptr, [](Period p, int, int, int i) {
        return land_t(kEqJ, i) ? kFill : mean(p, [&](int s) { return sst(s, kEqJ, i); });
      }));
  expect_close(
      eq, "thetao_eq",
      records(kFiveDayRecords, five_days, kNk, 1, kNi, nullptr, [](Period p, int k, int, int i) {
        return land_t(kEqJ, i) ? kFill : mean(p, [&](int s) { return toce(s, k, kEqJ, i); });
      }));
  expect_close(
      moor, "thetao_moor",
      records(kFiveDayRecords, five_days, kNk, 1, 1, nullptr, [](Period p, int k, int, int) {
        return mean(p, [&](int s) { return toce(s, k, kMoorJ, kMoorI); });
      }));
}

void check_monthly(const std::string& path) {
  // Thickness-weighted: the month's mean of toce * e3t over its mean of
  // e3t (e3t on grid_T_inner, which masks one more point).
  expect_close(path, "thetao", monthly(kNk, land_inner, thickness_weighted_toce));
  expect_close(path, "tosstd", monthly(1, land_t, sst_deviation));
  expect_close(path, "tos", monthly(1, land_t, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return sst(s, j, i); });
               }));
  expect_close(path, "hfds_heat", monthly(1, land_inner, [](Period p, int, int j, int i) {
                 return mean(p, [&](int s) { return qns(s, j, i) * kRho0 * kRcp; });
               }));
  expect_close(path, "sitemlay", monthly(kLay * kCat, land_t, [](Period p, int o, int j, int i) {
                 return mean(p, [&](int s) { return icetemp(s, o % kLay, o / kLay, j, i); });
               }));
}

// One run with `servers` server processes (the last ranks; 0: the clients
// write), in a fresh directory; rank 0 checks the files. Collective.
void run_nemo(int servers) {
  const std::string dir = xios_test::scratch_dir("nemo_orca_s" + std::to_string(servers));
  for (const char* name : kConfigFiles) {
    xios_test::write_file(dir + "/" + name,
                          xios_test::config_file(std::string("nemo_orca/") + name, {}));
  }
  std::array<char, 4096> home{};
  ASSERT_NE(getcwd(home.data(), home.size()), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);  // XIOS reads ./iodef.xml; the files are written beside it
  const bool server = ep_test::world_rank() >= ep_test::world_size() - servers;
  if (server) {
    xios_lite::World w = xios_lite::initialize(MPI_COMM_WORLD, xios_lite::Role::kServer);
    EXPECT_EQ(error_of([&] {
                xios_lite::ServerOptions options;
                options.threads = 1;
                options.finalise_timeout_s = 20;
                (void)xios_lite::serve_contexts(w, options);
              }),
              "");
    xios_lite::free_world(w);
  } else {
    model(servers > 0);
  }
  ASSERT_EQ(chdir(home.data()), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (ep_test::world_rank() != 0) return;
  const std::string stem = dir + "/ORCA2_";
  check_grid_t(stem + "5d_20000101_20000229_grid_T.nc");
  check_icemod(stem + "5d_20000101_20000229_icemod.nc");
  if (servers > 0) {
    check_diaptr(stem + "5d_20000101_20000229_diaptr.nc");
  } else {
    EXPECT_FALSE(xios_test::file_exists(stem + "5d_20000101_20000229_diaptr.nc"));
  }
  check_scalar_file(stem + "5d_20000101_20000229_scalar.nc");
  check_zooms(stem + "5d_20000101_20000229_EqT.nc", stem + "5d_20000101_20000229_2n5eT.nc");
  check_monthly(stem + "1m_20000101_20000229_grid_T.nc");
}

TEST(XiosNemoOrca, EveryVariableWithoutServers) {
  if (ep_test::world_size() != 1) GTEST_SKIP() << "the synchronous run is the one-process shape's";
  run_nemo(0);
}

TEST(XiosNemoOrca, EveryVariableWithOneServer) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "needs a server process";
  run_nemo(1);
}

TEST(XiosNemoOrca, EveryVariableWithTwoServers) {
  if (ep_test::world_size() < 3) GTEST_SKIP() << "needs two server processes and a client";
  run_nemo(2);
}

// A failed close, in the Client's configuration (a model that sets none of
// its geometry) and in its close_definition (blocks that miss a row). The
// synchronous shape (no servers).
TEST(XiosNemoOrca, CallsAfterAFailedCloseNameIt) {
  if (ep_test::world_size() != 1) GTEST_SKIP() << "the synchronous run is the one-process shape's";
  const std::string dir = xios_test::scratch_dir("nemo_orca_refused");
  for (const char* name : kConfigFiles) {
    xios_test::write_file(dir + "/" + name,
                          xios_test::config_file(std::string("nemo_orca/") + name, {}));
  }
  std::array<char, 4096> home{};
  ASSERT_NE(getcwd(home.data(), home.size()), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  MPI_Fint fcomm = 0;
  ok(cxios_init_client("nemo", 4, nullptr, &fcomm), "xios_initialize");
  ok(cxios_context_initialize("nemo", 4, &fcomm), "xios_context_initialize");
  expect_calls_name_the_refusal();
  model(false, true);
  ASSERT_EQ(chdir(home.data()), 0);
}

}  // namespace
