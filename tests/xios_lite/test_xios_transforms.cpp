// Grid transformations on the servers, each against values computed here:
// reduce_axis (sum, average, min, max) to a scalar, reduce_domain along i
// (zonal), along j and to a scalar (global, area-weighted averages), zoom
// and extract of a domain and an axis; the reduction before the temporal
// operation (a time maximum of a vertical sum is not the vertical sum of
// time maxima); land points left out; one_file and multiple_file (the
// whole-domain reductions on the first server process only).
//
// NEMO's transformations (configs/test_xios/nemo_transforms.xml, in the
// style of NEMO's grid_def_nemo.xml): a level of an axis as a scalar
// (extract_axis in a scalar), one position of a grid's second axis, a 2-D
// field duplicated along an axis (duplicate_scalar), client-local reductions
// followed by a reduction across clients (reduce_domain local="true" then
// reduce_scalar or reduce_axis), named zooms with defaults (a section, a
// mooring), ice layers x categories, a grid of two scalars.
//
// NEMO's run-time definitions through XIOS's interface (xios.h, as NEMO's
// iom.F90 calls it): file names with @expname@, @freq@, @startdate@,
// @enddate@ read with xios_get_file_attr and replaced with
// xios_set_file_attr (iom_update_file_name), a mooring's name_suffix, and
// named zooms whose windows the model sets (xios_set_zoom_domain_attr).
//
// Shapes: r1t2 (no server: reductions refused in the synchronous mode),
// r2t2 (one server), r3t2 (two server processes), r2t1 with three
// receiving endpoints on the server.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"
#include "xios_h_calls.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/xios.h"

namespace {

using namespace xios_test;

constexpr int kNi = 8;
constexpr int kNj = 6;
constexpr int kNk = 4;
constexpr int kSteps = 4;  // two output periods of 2 steps
constexpr double kFill = -1e30;

double sample(int s, int k, int j, int i) {
  return static_cast<double>((s * 7) % 5) - 2.0 + 0.25 * j - 0.1 * i + 10.0 * k + 0.01 * s * k;
}
bool land(int j, int i) { return (i * 3 + j) % 11 == 4; }
double area(int j, int i) { return 1.0 + std::cos(0.3 * j) + 0.01 * i; }

std::string config(const std::string& dir, const std::string& type) {
  return config_file("transforms.xml", {{"DIR", dir}, {"TYPE", type}});
}

void model(xios_lite::Client& c, const ep::Communicator& comm) {
  const Block b = xios_test::uneven_block(comm, kNi, kNj);
  xios_lite::DomainAttributes a = xios_test::block_attributes(b);
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
      a.area.push_back(area(j, i));
      a.mask.push_back(!land(j, i));
    }
  }
  c.set_domain_attr("d", a);
  c.close_definition();
  for (int s = 1; s <= kSteps; ++s) {
    c.update_calendar(s);
    std::vector<double> t;
    std::vector<double> s2;
    for (int k = 0; k < kNk; ++k) {
      for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
        for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
          t.push_back(sample(s, k, j, i));
          if (k == 0) s2.push_back(sample(s, 0, j, i) * 2.0);
        }
      }
    }
    c.send_field("t", t);
    c.send_field("s", s2);
  }
  (void)c.finalise();
}

// ---- the expected values, computed here ----

// A reduction of the valid values (the order of the server's loops).
struct Fold {
  char op;  // 's' sum, 'a' average, 'n' min, 'x' max
  double acc = 0;
  double w = 0;
  bool any = false;
  void add(double v, double weight = 1) {
    if (!any) {
      acc = op == 'a' ? v * weight : v;
      w = weight;
      any = true;
      return;
    }
    if (op == 's') acc += v;
    if (op == 'a') {
      acc += v * weight;
      w += weight;
    }
    if (op == 'n') acc = std::min(acc, v);
    if (op == 'x') acc = std::max(acc, v);
  }
  [[nodiscard]] double get() const { return !any ? kFill : op == 'a' ? acc / w : acc; }
};

// Per output period (2 samples), the temporal average (or maximum) of the
// per-sample reductions `per_sample(s)` (one vector per sample).
std::vector<double> in_time(const std::function<std::vector<double>(int)>& per_sample,
                            bool maximum = false) {
  std::vector<double> out;
  for (int p = 0; p < kSteps / 2; ++p) {
    const std::vector<double> a = per_sample(2 * p + 1);
    const std::vector<double> b = per_sample(2 * p + 2);
    for (std::size_t x = 0; x < a.size(); ++x) {
      std::vector<double> valid;
      for (double v : {a[x], b[x]}) {
        if (v != kFill) valid.push_back(v);
      }
      if (valid.empty()) {
        out.push_back(kFill);
      } else if (maximum) {
        out.push_back(*std::max_element(valid.begin(), valid.end()));
      } else {
        double sum = 0;
        for (double v : valid) sum += v;
        out.push_back(valid.size() > 1 ? sum * (1.0 / static_cast<double>(valid.size())) : sum);
      }
    }
  }
  return out;
}

double t_at(int s, int k, int j, int i) { return land(j, i) ? kFill : sample(s, k, j, i); }
double s_at(int s, int j, int i) { return land(j, i) ? kFill : 2.0 * sample(s, 0, j, i); }

std::vector<double> vertical(int s, char op) {
  std::vector<double> out;
  for (int j = 0; j < kNj; ++j) {
    for (int i = 0; i < kNi; ++i) {
      Fold f{op};
      for (int k = 0; k < kNk; ++k) {
        if (t_at(s, k, j, i) != kFill) f.add(t_at(s, k, j, i));
      }
      out.push_back(f.get());
    }
  }
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t x = 0; x < got.size(); ++x) {
    if (want[x] == kFill) {
      EXPECT_EQ(got[x], kFill) << what << " [" << x << "]";
    } else {
      EXPECT_NEAR(got[x], want[x], 1e-9 * (1 + std::fabs(want[x]))) << what << " [" << x << "]";
    }
  }
}

int servers_for_shape() { return ep_test::world_size() >= 3 ? 2 : xios_test::servers(); }

void check_one_file(const std::string& path) {
  expect_near(xios_test::read_var(path, "t_vsum"), in_time([](int s) { return vertical(s, 's'); }),
              "t_vsum");
  expect_near(xios_test::read_var(path, "t_vavg"), in_time([](int s) { return vertical(s, 'a'); }),
              "t_vavg");
  expect_near(xios_test::read_var(path, "t_vmin"), in_time([](int s) { return vertical(s, 'n'); }),
              "t_vmin");
  expect_near(xios_test::read_var(path, "t_vmax"), in_time([](int s) { return vertical(s, 'x'); }),
              "t_vmax");
  expect_near(xios_test::read_var(path, "t_vsum_tmax"),
              in_time([](int s) { return vertical(s, 's'); }, true), "t_vsum_tmax");
  // Zonal means: per row over i, area-weighted.
  const auto zonal = [](int s, int k, bool three_d) {
    std::vector<double> out;
    for (int j = 0; j < kNj; ++j) {
      Fold f{'a'};
      for (int i = 0; i < kNi; ++i) {
        const double v = three_d ? t_at(s, k, j, i) : s_at(s, j, i);
        if (v != kFill) f.add(v, area(j, i));
      }
      out.push_back(f.get());
    }
    return out;
  };
  expect_near(xios_test::read_var(path, "s_zonal"),
              in_time([&](int s) { return zonal(s, 0, false); }), "s_zonal");
  expect_near(xios_test::read_var(path, "t_zonal"), in_time([&](int s) {
                std::vector<double> out;
                for (int k = 0; k < kNk; ++k) {
                  const std::vector<double> z = zonal(s, k, true);
                  out.insert(out.end(), z.begin(), z.end());
                }
                return out;
              }),
              "t_zonal");
  EXPECT_EQ(xios_test::dim_len(path, "lat_zonal"), kNj);
  expect_near(xios_test::read_var(path, "s_merid"), in_time([](int s) {
                std::vector<double> out;
                for (int i = 0; i < kNi; ++i) {
                  Fold f{'x'};
                  for (int j = 0; j < kNj; ++j) {
                    if (s_at(s, j, i) != kFill) f.add(s_at(s, j, i));
                  }
                  out.push_back(f.get());
                }
                return out;
              }),
              "s_merid");
  const auto global = [](int s, int k, bool three_d, char op) {
    Fold f{op};
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        const double v = three_d ? t_at(s, k, j, i) : s_at(s, j, i);
        if (v != kFill) f.add(v, area(j, i));
      }
    }
    return f.get();
  };
  expect_near(xios_test::read_var(path, "s_global"),
              in_time([&](int s) { return std::vector<double>{global(s, 0, false, 'a')}; }),
              "s_global");
  expect_near(xios_test::read_var(path, "t_global"), in_time([&](int s) {
                std::vector<double> out(kNk);
                for (int k = 0; k < kNk; ++k)
                  out[static_cast<std::size_t>(k)] = global(s, k, true, 's');
                return out;
              }),
              "t_global");
  expect_near(xios_test::read_var(path, "t_total"), in_time([&](int s) {
                Fold f{'s'};
                for (const double v : vertical(s, 's')) {
                  if (v != kFill) f.add(v);
                }
                return std::vector<double>{f.get()};
              }),
              "t_total");
  // Zoom and extract: the window and levels of the time average.
  const auto window = [](int i0, int ni, int j0, int nj, const std::vector<int>& levels) {
    return in_time([=](int s) {
      std::vector<double> out;
      for (const int k : levels) {
        for (int j = j0; j < j0 + nj; ++j) {
          for (int i = i0; i < i0 + ni; ++i) out.push_back(t_at(s, k, j, i));
        }
      }
      return out;
    });
  };
  expect_near(xios_test::read_var(path, "t_zoom"), window(2, 4, 1, 3, {0, 1}), "t_zoom");
  expect_near(xios_test::read_var(path, "t_extract"), window(5, 3, 0, 2, {1, 3}), "t_extract");
  EXPECT_EQ(xios_test::read_var(path, "zx"), (std::vector<double>{2, 4}));
  expect_near(
      xios_test::read_var(path, "t_zoom_vsum"), in_time([](int s) {
        const std::vector<double> all = vertical(s, 's');
        std::vector<double> out;
        for (int j = 1; j < 4; ++j) {
          for (int i = 2; i < 6; ++i)
            out.push_back(all[static_cast<std::size_t>(j) * kNi + static_cast<std::size_t>(i)]);
        }
        return out;
      }),
      "t_zoom_vsum");
  EXPECT_EQ(xios_test::text_att(path, "t_vsum", "cell_methods"), "z: sum time: mean");
  EXPECT_EQ(xios_test::text_att(path, "s_global", "cell_methods"), "area: mean time: mean");
  EXPECT_EQ(xios_test::read_var(path, "time"), (std::vector<double>{3600, 3 * 3600}));
}

TEST(XiosTransforms, ReductionsZoomsAndExtractions) {
  for (const std::string type : {"one_file", "multiple_file"}) {
    const std::string dir = xios_test::scratch_dir("transforms");
    const std::string cfg = xios_test::write_config(dir, config(dir, type));
    xios_test::RunSpec spec;
    spec.config = cfg;
    spec.servers = servers_for_shape();
    spec.mode = xios_test::mode();
    spec.server_threads = ep_test::world_size() == 2 && omp_get_max_threads() == 1 ? 3 : 1;
    const bool synchronous = spec.servers == 0;
    spec.model = [&](xios_lite::Client& c, const ep::Communicator& comm) {
      if (synchronous) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        c.set_domain_block("d", b);
        EXPECT_HAS(xios_test::error_of([&] { c.close_definition(); }),
                   "grid reductions (reduce_axis, reduce_domain) are computed by the servers");
        return;
      }
      model(c, comm);
    };
    const xios_test::Outcome o = xios_test::run(spec);
    xios_test::expect_no_errors(o);
    if (synchronous || ep_test::world_rank() != 0) {
      continue;
    }
    const std::string stem = dir + "/red_" + std::string(type);
    if (type == "one_file" || spec.servers == 1) {
      check_one_file(stem + ".nc");
      continue;
    }
    // multiple_file over two server processes: each holds its rows; the
    // whole-domain reductions live on the first only.
    const std::string p0 = stem + "_0.nc";
    const std::string p1 = stem + "_1.nc";
    EXPECT_EQ(xios_test::read_var(p0, "s_global").size(), 2U);
    EXPECT_EQ(xios_test::var_type(p1, "s_global"), -1);
    EXPECT_EQ(xios_test::var_type(p1, "s_merid"), -1);
    std::vector<double> zonal = xios_test::read_var(p0, "lat_zonal");
    const std::vector<double> more = xios_test::read_var(p1, "lat_zonal");
    zonal.insert(zonal.end(), more.begin(), more.end());
    EXPECT_EQ(zonal.size(), static_cast<std::size_t>(kNj));
    EXPECT_EQ(xios_test::dim_len(p0, "lat_d") + xios_test::dim_len(p1, "lat_d"), kNj);
  }
}

// ---- NEMO's transformations ----

namespace nemo {

constexpr int kLay = 2;      // nlayice
constexpr int kCat = 3;      // ncatice
constexpr int kBasin = 3;    // basin
constexpr int kSection = 3;  // section (n_glo in the configuration)

// What the model sends: small exact binary fractions, so that sums and
// averages are exact whatever the order.
double toce(int s, int k, int j, int i) { return 10.0 * k + 0.5 * j - 0.25 * i + 0.125 * s; }
double sst(int s, int j, int i) { return 20.0 + j - 0.5 * i + 0.25 * s; }
double ice(int s, int l, int c, int j, int i) {
  return -2.0 - l - 0.5 * c + 0.125 * j + 0.0625 * i - 0.25 * s;
}
double zotem(int s, int k, int b, int j, int i) {
  return 100.0 * b + 10.0 * k + j + 0.5 * i + 0.25 * s;
}
double masstr(int s, int j, int i) { return 1.0 + 0.5 * j + 0.25 * i + s; }
double strait(int s, int q, int j, int i) { return (q + 1) * (j - 2.5) + 0.5 * i - 0.125 * s; }
double bgtemper(int s) { return 3.5 + s; }

// The domain's and the axes' sizes, as NEMO's iom_init sets them.
Block define(xios_lite::Client& c, const ep::Communicator& comm) {
  const Block b = xios_test::uneven_block(comm, kNi, kNj);
  xios_lite::DomainAttributes d = xios_test::block_attributes(b, kNi, kNj);
  c.set_domain_attr("grid_T", d);
  const auto axis = [&](const char* id, int n) {
    xios_lite::AxisAttributes a;
    a.n_glo = n;
    for (int k = 0; k < n; ++k) a.value.push_back(k + 1.0);
    c.set_axis_attr(id, a);
  };
  axis("deptht", kNk);
  axis("nlayice", kLay);
  axis("ncatice", kCat);
  axis("basin", kBasin);
  return b;
}

void model(xios_lite::Client& c, const ep::Communicator& comm) {
  const Block b = define(c, comm);
  c.close_definition();
  const auto block = [&](auto&& value, int outer) {
    std::vector<double> out;
    for (int o = 0; o < outer; ++o) {
      for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
        for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) out.push_back(value(o, j, i));
      }
    }
    return out;
  };
  for (int s = 1; s <= kSteps; ++s) {
    c.update_calendar(s);
    c.send_field("toce", block([&](int k, int j, int i) { return toce(s, k, j, i); }, kNk));
    c.send_field("sst", block([&](int, int j, int i) { return sst(s, j, i); }, 1));
    c.send_field("icetemp_lay", block(
                                    [&](int o, int j, int i) {
                                      return ice(s, o % kLay, o / kLay, j, i);  // layers fastest
                                    },
                                    kLay * kCat));
    c.send_field("zotem", block(
                              [&](int o, int j, int i) {
                                return zotem(s, o % kNk, o / kNk, j, i);  // levels fastest
                              },
                              kNk * kBasin));
    c.send_field("u_masstr_vint", block([&](int, int j, int i) { return masstr(s, j, i); }, 1));
    c.send_field("masstr_strait",
                 block([&](int q, int j, int i) { return strait(s, q, j, i); }, kSection));
    c.send_field("bgtemper", std::vector<double>{bgtemper(s)});
  }
  (void)c.finalise();
}

// The time average of period p (steps 2p + 1, 2p + 2) of f(step).
double mean(int p, const std::function<double(int)>& f) {
  return 0.5 * (f(2 * p + 1) + f(2 * p + 2));
}

// Every output period of `per_period(p)`, concatenated (the record order).
std::vector<double> records(const std::function<std::vector<double>(int)>& per_period) {
  std::vector<double> out;
  for (int p = 0; p < kSteps / 2; ++p) {
    const std::vector<double> r = per_period(p);
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

void check(const std::string& dir) {
  const std::string t = dir + "/ORCA_2h_grid_T.nc";
  const auto each = [](int outer, int nj, int ni, const std::function<double(int, int, int)>& v) {
    std::vector<double> out;
    for (int o = 0; o < outer; ++o) {
      for (int j = 0; j < nj; ++j) {
        for (int i = 0; i < ni; ++i) out.push_back(v(o, j, i));
      }
    }
    return out;
  };
  // The field as sent, and its surface level as a scalar member (no depth dimension).
  expect_near(xios_test::read_var(t, "thetao"), records([&](int p) {
                return each(kNk, kNj, kNi, [&](int k, int j, int i) {
                  return mean(p, [&](int s) { return toce(s, k, j, i); });
                });
              }),
              "thetao");
  expect_near(xios_test::read_var(t, "tos_sfc"), records([&](int p) {
                return each(1, kNj, kNi, [&](int, int j, int i) {
                  return mean(p, [&](int s) { return toce(s, 0, j, i); });
                });
              }),
              "tos_sfc");
  EXPECT_EQ(xios_test::var_dims(t, "tos_sfc"),
            (std::vector<std::string>{"time", "lat_grid_T", "lon_grid_T"}));
  // Ice: layers x categories, written (time, ncatice, nlayice, y, x); then category 1.
  expect_near(xios_test::read_var(t, "sitemlay"), records([&](int p) {
                return each(kLay * kCat, kNj, kNi, [&](int o, int j, int i) {
                  return mean(p, [&](int s) { return ice(s, o % kLay, o / kLay, j, i); });
                });
              }),
              "sitemlay");
  EXPECT_EQ(xios_test::var_dims(t, "sitemlay"),
            (std::vector<std::string>{"time", "ncatice", "nlayice", "lat_grid_T", "lon_grid_T"}));
  expect_near(xios_test::read_var(t, "sitemlay_cat1"), records([&](int p) {
                return each(kLay, kNj, kNi, [&](int l, int j, int i) {
                  return mean(p, [&](int s) { return ice(s, l, 1, j, i); });
                });
              }),
              "sitemlay_cat1");
  EXPECT_EQ(xios_test::var_dims(t, "sitemlay_cat1"),
            (std::vector<std::string>{"time", "nlayice", "lat_grid_T", "lon_grid_T"}));
  // The zonal-mean line (column 2), the first two levels, basin 1.
  expect_near(xios_test::read_var(t, "zotem_atl"), records([&](int p) {
                return each(2, kNj, 1, [&](int k, int j, int) {
                  return mean(p, [&](int s) { return zotem(s, k, 1, j, 2); });
                });
              }),
              "zotem_atl");
  // duplicate_scalar: the 2-D field on each of the sections.
  expect_near(xios_test::read_var(t, "u_masstr_4strait"), records([&](int p) {
                return each(kSection, kNj, kNi, [&](int, int j, int i) {
                  return mean(p, [&](int s) { return masstr(s, j, i); });
                });
              }),
              "u_masstr_4strait");
  // Client sums, summed across clients: the domain's sum per section.
  expect_near(xios_test::read_var(t, "mfo"), records([&](int p) {
                std::vector<double> out;
                out.reserve(kSection);
                for (int q = 0; q < kSection; ++q) {
                  out.push_back(mean(p, [&](int s) {
                    double sum = 0;
                    for (int j = 0; j < kNj; ++j) {
                      for (int i = 0; i < kNi; ++i) sum += strait(s, q, j, i);
                    }
                    return sum;
                  }));
                }
                return out;
              }),
              "mfo");
  // Client maxima over rows, then the maximum across clients: per column and level.
  expect_near(xios_test::read_var(t, "toce_colmax"), records([&](int p) {
                return each(kNk, kNi, 1, [&](int k, int i, int) {
                  return mean(p, [&](int s) {
                    double m = toce(s, k, 0, i);
                    for (int j = 1; j < kNj; ++j) m = std::max(m, toce(s, k, j, i));
                    return m;
                  });
                });
              }),
              "toce_colmax");
  expect_near(xios_test::read_var(t, "bgtemper"),
              records([&](int p) { return std::vector<double>{mean(p, bgtemper)}; }), "bgtemper");
  EXPECT_EQ(xios_test::var_dims(t, "bgtemper"), (std::vector<std::string>{"time"}));
  // The section (row 3, every column) and the mooring (column 5, row 2, every level).
  expect_near(xios_test::read_var(dir + "/ORCA_2h_EqT.nc", "sst_eq"), records([&](int p) {
                return each(1, 1, kNi, [&](int, int, int i) {
                  return mean(p, [&](int s) { return sst(s, 3, i); });
                });
              }),
              "sst_eq");
  // extract_domain inside an axis: the same row as an axis of its own, and column 5.
  const std::string eq = dir + "/ORCA_2h_EqT.nc";
  EXPECT_EQ(xios_test::read_var(eq, "sst_eq_line"), xios_test::read_var(eq, "sst_eq"));
  EXPECT_EQ(xios_test::var_dims(eq, "sst_eq_line"), (std::vector<std::string>{"time", "eq_line"}));
  EXPECT_EQ(xios_test::text_att(eq, "sst_eq_line", "cell_methods"), "time: mean");
  expect_near(xios_test::read_var(eq, "toce_col5"), records([&](int p) {
                return each(kNk, kNj, 1, [&](int k, int j, int) {
                  return mean(p, [&](int s) { return toce(s, k, j, 5); });
                });
              }),
              "toce_col5");
  expect_near(xios_test::read_var(dir + "/ORCA_2h_2n5eT.nc", "toce_moor"), records([&](int p) {
                return each(kNk, 1, 1, [&](int k, int, int) {
                  return mean(p, [&](int s) { return toce(s, k, 2, 5); });
                });
              }),
              "toce_moor");
}

}  // namespace nemo

TEST(XiosTransforms, NemoGridDefinitions) {
  const auto [dir, cfg] =
      xios_test::scratch_config("nemo_transforms", "nemo_transforms.xml", {{"DIR", ""}});
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = servers_for_shape();
  spec.mode = xios_test::mode();
  const bool synchronous = spec.servers == 0;
  spec.model = [&](xios_lite::Client& c, const ep::Communicator& comm) {
    if (synchronous) {
      (void)nemo::define(c, comm);
      EXPECT_HAS(xios_test::error_of([&] { c.close_definition(); }), "computed by the servers");
      return;
    }
    nemo::model(c, comm);
  };
  const xios_test::Outcome o = xios_test::run(spec);
  xios_test::expect_no_errors(o);
  if (!synchronous && ep_test::world_rank() == 0) {
    nemo::check(dir);
  }
}

// ---- NEMO's run-time substitutions, through XIOS's interface ----

namespace runtime {

constexpr const char* kIodef = R"(<?xml version="1.0"?>
<simulation>
  <context id="xios">
    <variable_definition>
      <variable id="using_server" type="bool">false</variable>
    </variable_definition>
  </context>
  <context id="nemo">
    <calendar type="Gregorian" start_date="2000-01-01" timestep="1h"/>
    <domain_definition>
      <domain id="grid_T" long_name="grid T"/>
      <domain id="grid_T_inner" long_name="grid T without halo"/>
      <domain id="EqT" domain_ref="grid_T"> <zoom_domain id="EqT"/> </domain>
      <domain id="2n5eT" domain_ref="grid_T"> <zoom_domain id="2n5eT"/> </domain>
    </domain_definition>
    <grid_definition>
      <grid id="grid_T_2D"> <domain domain_ref="grid_T"/> </grid>
      <grid id="grid_T_2D_inner"> <domain domain_ref="grid_T_inner" name="grid_T"/> </grid>
      <grid id="grid_2n5eT"> <domain domain_ref="2n5eT"/> </grid>
    </grid_definition>
    <field_definition operation="average">
      <field id="sst" grid_ref="grid_T_2D"/>
      <field id="sst_inner" grid_ref="grid_T_2D_inner"/>
    </field_definition>
    <file_definition type="one_file" name="@expname@_@freq@_@startdate@_@enddate@">
      <file_group id="2h" output_freq="2h">
        <file id="file11" name_suffix="_grid_T"> <field field_ref="sst"/> </file>
        <file id="file12" name_suffix="_grid_T_inner"> <field field_ref="sst_inner"/> </file>
        <file id="EqT" name_suffix="_grid_T"> <field field_ref="sst" grid_ref="EqT_2D"/> </file>
        <file id="2n5eT" name_suffix="_grid_T"> <field field_ref="sst" grid_ref="grid_2n5eT"/> </file>
      </file_group>
    </file_definition>
  </context>
</simulation>
)";

double sst(int s, int j, int i) { return 20.0 + j - 0.5 * i + 0.25 * s; }

using xios_test::get_text;
using xios_test::handle;
using xios_test::ok;

void update_file_name(const std::string& id) {
  xios_test::update_file_name(id, "ORCA2", "20000101", "20000101");
}

}  // namespace runtime

TEST(XiosTransforms, NemoRuntimeNamesAndZooms) {
  const std::string dir = xios_test::scratch_dir("nemo_runtime");
  xios_test::write_file(dir + "/iodef.xml", runtime::kIodef);
  std::array<char, 4096> home{};
  ASSERT_NE(getcwd(home.data(), home.size()), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);  // XIOS reads ./iodef.xml and writes beside it
  const auto [model, rank, size] = xios_test::init_nemo_client();
  const Block b = xios_test::uneven_block(rank, size, kNi, kNj);
  xios_test::set_domain_block(runtime::handle("domain", "grid_T"), "grid_T", kNi, kNj, b);
  // NEMO's set_xmlatt: the equatorial section's row, the mooring's point.
  const xios_handle_t eq = runtime::handle("zoom_domain", "EqT");
  runtime::ok(cxios_set_zoom_domain_ibegin(eq, 0), "EqT ibegin");
  runtime::ok(cxios_set_zoom_domain_jbegin(eq, 3), "EqT jbegin");
  runtime::ok(cxios_set_zoom_domain_ni(eq, kNi), "EqT ni");
  runtime::ok(cxios_set_zoom_domain_nj(eq, 1), "EqT nj");
  // iom_set_zoom_domain_attr: a new grid whose member is the existing
  // domain of the zoom's id (the file EqT writes on it).
  xios_handle_t grid_definition = runtime::handle("gridgroup", "grid_definition");
  xios_handle_t eq_grid = nullptr;
  xios_handle_t eq_domain = nullptr;
  runtime::ok(cxios_add_child(grid_definition, "grid", "EqT_2D", 6, &eq_grid), "add grid");
  runtime::ok(cxios_add_child(eq_grid, "domain", "EqT", 3, &eq_domain), "add domain");
  // NEMO's grid_T_inner: the block without the halo (here none), sent on a
  // grid that renames it grid_T.
  xios_test::set_domain_block(runtime::handle("domain", "grid_T_inner"), "grid_T_inner", kNi, kNj,
                              b);
  const xios_handle_t moor = runtime::handle("zoom_domain", "2n5eT");
  runtime::ok(cxios_set_zoom_domain_ibegin(moor, 5), "2n5eT ibegin");
  runtime::ok(cxios_set_zoom_domain_jbegin(moor, 2), "2n5eT jbegin");
  runtime::ok(cxios_set_zoom_domain_ni(moor, 1), "2n5eT ni");
  runtime::ok(cxios_set_zoom_domain_nj(moor, 1), "2n5eT nj");
  // The zoom's id names the zoom, not the domain of the same id.
  EXPECT_TRUE(cxios_valid_id("zoom_domain", "EqT", 3));
  EXPECT_TRUE(cxios_valid_id("domain", "EqT", 3));
  // set_mooring: the suffix names the mooring; then every file's name.
  const xios_handle_t mf = runtime::handle("file", "2n5eT");
  const std::string suffix = runtime::get_text(cxios_get_file_name_suffix, mf) + "_2n5e";
  runtime::ok(cxios_set_file_name_suffix(mf, suffix.c_str(), static_cast<int>(suffix.size())),
              "name_suffix");
  const xios_handle_t ef = runtime::handle("file", "EqT");
  const std::string eq_suffix = runtime::get_text(cxios_get_file_name_suffix, ef) + "_Eq";
  runtime::ok(cxios_set_file_name_suffix(ef, eq_suffix.c_str(), static_cast<int>(eq_suffix.size())),
              "name_suffix");
  for (const char* id : {"file11", "file12", "EqT", "2n5eT"}) runtime::update_file_name(id);
  EXPECT_EQ(runtime::get_text(cxios_get_file_name, ef), "ORCA2_2h_20000101_20000101");
  runtime::ok(cxios_context_close_definition(), "xios_close_context_definition");
  for (int s = 1; s <= kSteps; ++s) {
    runtime::ok(cxios_update_calendar(s), "xios_update_calendar");
    std::vector<double> block;
    for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
      for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) block.push_back(runtime::sst(s, j, i));
    }
    const std::array<std::int64_t, 2> extents{b.ni, b.nj};
    runtime::ok(cxios_write_data_k8("sst", 3, block.data(), 2, extents.data()), "xios_send_field");
    runtime::ok(cxios_write_data_k8("sst_inner", 9, block.data(), 2, extents.data()),
                "xios_send_field");
  }
  runtime::ok(cxios_context_finalize(), "xios_context_finalize");
  runtime::ok(cxios_finalize(), "xios_finalize");
  ASSERT_EQ(chdir(home.data()), 0);
  if (ep_test::world_rank() != 0) return;
  const std::string stem = dir + "/ORCA2_2h_20000101_20000101";
  const auto mean = [](int p, int j, int i) {
    return 0.5 * (runtime::sst(2 * p + 1, j, i) + runtime::sst(2 * p + 2, j, i));
  };
  std::vector<double> whole;
  std::vector<double> row;
  std::vector<double> point;
  for (int p = 0; p < kSteps / 2; ++p) {
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) whole.push_back(mean(p, j, i));
    }
    for (int i = 0; i < kNi; ++i) row.push_back(mean(p, 3, i));
    point.push_back(mean(p, 2, 5));
  }
  EXPECT_EQ(xios_test::read_var(stem + "_grid_T.nc", "sst"), whole);
  EXPECT_EQ(xios_test::read_var(stem + "_grid_T_inner.nc", "sst_inner"), whole);
  EXPECT_EQ(xios_test::read_var(stem + "_grid_T_Eq.nc", "sst"), row);
  EXPECT_EQ(xios_test::read_var(stem + "_grid_T_2n5e.nc", "sst"), point);
}

// A sample lost (sst not sent at step 2 of its 2-hour mean):
// xios_context_finalize fails naming it, and xios_finalize still ends the
// run without finalising the context a second time.
TEST(XiosTransforms, FinalizeAfterAContextFinalizeThatFailed) {
  const std::string dir = xios_test::scratch_dir("nemo_lost_sample");
  xios_test::write_file(dir + "/iodef.xml", R"(<?xml version="1.0"?>
<simulation>
  <context id="xios"><variable_definition>
    <variable id="using_server" type="bool">false</variable>
  </variable_definition></context>
  <context id="nemo">
    <calendar type="Gregorian" start_date="2000-01-01" timestep="1h"/>
    <domain_definition><domain id="grid_T"/></domain_definition>
    <grid_definition><grid id="grid_T_2D"><domain domain_ref="grid_T"/></grid></grid_definition>
    <field_definition operation="average"><field id="sst" grid_ref="grid_T_2D"/></field_definition>
    <file_definition type="one_file">
      <file id="file11" name="lost" output_freq="2h"><field field_ref="sst"/></file>
    </file_definition>
  </context>
</simulation>
)");
  std::array<char, 4096> home{};
  ASSERT_NE(getcwd(home.data(), home.size()), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  MPI_Fint comm = 0;
  runtime::ok(cxios_init_client("nemo", 4, nullptr, &comm), "xios_initialize");
  runtime::ok(cxios_context_initialize("nemo", 4, &comm), "xios_context_initialize");
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_Comm_f2c(comm), &rank);
  MPI_Comm_size(MPI_Comm_f2c(comm), &size);
  const Block b = xios_test::uneven_block(rank, size, kNi, kNj);
  const xios_handle_t d = runtime::handle("domain", "grid_T");
  runtime::ok(cxios_set_domain_ni_glo(d, kNi) | cxios_set_domain_nj_glo(d, kNj) |
                  cxios_set_domain_ibegin(d, b.ibegin) | cxios_set_domain_ni(d, b.ni) |
                  cxios_set_domain_jbegin(d, b.jbegin) | cxios_set_domain_nj(d, b.nj),
              "grid_T");
  runtime::ok(cxios_context_close_definition(), "xios_close_context_definition");
  runtime::ok(cxios_update_calendar(0), "xios_update_calendar(0)");
  const std::vector<double> block(static_cast<std::size_t>(b.ni * b.nj), 1.0);
  const std::array<std::int64_t, 2> extents{b.ni, b.nj};
  for (int s = 1; s <= 2; ++s) {
    EXPECT_EQ(cxios_update_calendar(s), 0) << cxios_last_error();
    if (s == 1) runtime::ok(cxios_write_data_k8("sst", 3, block.data(), 2, extents.data()), "sst");
  }
  EXPECT_NE(cxios_context_finalize(), 0);
  EXPECT_HAS(std::string(cxios_last_error()), "field 'sst' was due at step 2 and was not sent");
  EXPECT_EQ(cxios_finalize(), 0) << cxios_last_error();
  ASSERT_EQ(chdir(home.data()), 0);
}

// What NEMO's transformations allow and what they do not, refused at
// parse or at completion with the element's place. Local: no MPI.
TEST(XiosTransforms, NemoTransformationRefusals) {
  const auto parse = [](const std::string& grids, const std::string& variable) {
    const std::string xml = R"(<simulation><context id="c">
      <calendar type="gregorian" start_date="2000-01-01" timestep="1h"/>
      <domain_definition><domain id="d" ni_glo="4" nj_glo="3"/></domain_definition>
      <axis_definition><axis id="z" n_glo="2"/><axis id="b" n_glo="3"/></axis_definition>
      <grid_definition>
        <grid id="g2"><domain domain_ref="d"/></grid>
        <grid id="g3"><domain domain_ref="d"/><axis axis_ref="z"/></grid>
        <grid id="g4"><domain domain_ref="d"/><axis axis_ref="z"/><axis axis_ref="b"/></grid>
        )" + grids + R"(
      </grid_definition>
      <field_definition><field id="f2" grid_ref="g2"/><field id="f3" grid_ref="g3"/>
        <field id="f4" grid_ref="g4"/></field_definition>
      <file_definition><file id="o" output_freq="1h">)" +
                            variable + R"(</file></file_definition>
    </context></simulation>)";
    return xios_test::error_of([&] { (void)xios_lite::parse_config_string(xml, "nemo.xml"); });
  };
  // The average of the clients' averages is not the domain's average.
  EXPECT_HAS(parse(R"(<grid id="h"><scalar><reduce_domain operation="average" local="true"/>
                      <reduce_scalar operation="average"/></scalar></grid>)",
                   ""),
             "unsupported XIOS feature (the average of the clients' averages");
  EXPECT_HAS(parse(R"(<grid id="h"><scalar><reduce_domain operation="sum" local="true"/>
                      <reduce_scalar operation="max"/></scalar></grid>)",
                   ""),
             "'max' after a client-local 'sum'");
  // A local reduction alone: parsed, refused where a variable uses it.
  const std::string local_alone =
      R"(<grid id="h"><scalar><reduce_domain operation="sum" local="true"/></scalar></grid>)";
  EXPECT_EQ(parse(local_alone, ""), "");
  EXPECT_HAS(parse(local_alone, R"(<field field_ref="f2" name="v" grid_ref="h"/>)"),
             "a client-local reduce_domain (local=\"true\") alone gives one value per client");
  // extract_axis inside a scalar: a position of the axis, checked against its size.
  const std::string sfc =
      R"(<grid id="h"><domain domain_ref="d"/><scalar><extract_axis position="2"/></scalar></grid>)";
  EXPECT_HAS(parse(sfc, R"(<field field_ref="f3" name="v" grid_ref="h"/>)"),
             "extracts position 2 of axis 'z' of 2 levels");
  EXPECT_HAS(parse(R"(<grid id="h"><domain domain_ref="d"/>
                      <scalar><extract_axis position="0" begin="1"/></scalar></grid>)",
                   ""),
             "an extract_axis inside a scalar takes position only");
  // duplicate_scalar adds an axis to a field without one, not to a field with one.
  const std::string dup =
      R"(<grid id="h"><domain domain_ref="d"/><axis axis_ref="b"><duplicate_scalar/></axis></grid>)";
  EXPECT_EQ(parse(dup, R"(<field field_ref="f2" name="v" grid_ref="h"/>)"), "");
  EXPECT_HAS(parse(dup, R"(<field field_ref="f3" name="v" grid_ref="h"/>)"),
             "axis 'h#1' duplicates a scalar, and the field has axis 'z'");
  // A grid naming an undefined axis: a warning while unused, an error once used.
  const std::string broken = R"(<grid id="h"><axis axis_ref="nowhere"/></grid>)";
  EXPECT_EQ(parse(broken, ""), "");
  EXPECT_HAS(parse(broken, R"(<field field_ref="f2" name="v" grid_ref="h"/>)"),
             "grid 'h' is unusable: nemo.xml:");
  // The second axis of a field on two: one position, not a reduction.
  EXPECT_HAS(parse(R"(<grid id="h"><domain domain_ref="d"/><axis axis_ref="z"/>
                      <scalar><reduce_axis operation="sum"/></scalar></grid>)",
                   R"(<field field_ref="f4" name="v" grid_ref="h"/>)"),
             "its third member is neither an axis nor a scalar with extract_axis");
  // reduce_scalar of a field's own scalar stays refused.
  EXPECT_HAS(parse(R"(<grid id="h"><scalar><reduce_scalar operation="sum"/></scalar></grid>)", ""),
             "unsupported XIOS feature (reduce_scalar of a field's scalar");
}

}  // namespace
