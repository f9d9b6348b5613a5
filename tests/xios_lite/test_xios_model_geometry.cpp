// Geometry and calendar set by the model (XIOS's xios_set_domain_attr,
// xios_set_axis_attr, xios_define_calendar, xios_set_timestep): a
// configuration in XIOS syntax with empty domains and axis and no
// calendar; every client gives its block, its block's coordinates, bounds,
// areas and mask, the axis and the calendar; the files must hold the
// assembled coordinates and the values exactly. And every way the clients
// can disagree fails on every client, naming them.
//
// Shapes: r1t2 (synchronous, no server), r2t2 and r3t1 (one server).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 9;
constexpr int kNj = 6;
constexpr int kLevels = 3;

// Rectilinear domain "atm", curvilinear domain "ocean", axis "z": all empty.
std::string config(const std::string& dir) {
  return config_file("model_geometry.xml", {{"DIR", dir}});
}

double lon_of(int i) { return 10.0 + 20.0 * i; }
double lat_of(int j) { return -50.0 + 20.0 * j; }
double lon2d_of(int j, int i) { return 100.0 + i + 0.01 * j; }
double lat2d_of(int j, int i) { return -30.0 + 10.0 * j + 0.001 * i; }
double area_of(int j, int i) { return 1e6 * (1 + j) + i; }
bool land(int j, int i) { return (i + 2 * j) % 7 == 3; }

// Every client sets its block and its block's values, then writes 2 steps.
void model(xios_lite::Client& c, const ep::Communicator& comm) {
  const Block b = xios_test::uneven_block(comm, kNi, kNj);
  xios_lite::CalendarAttributes cal;
  cal.type = "NoLeap";
  cal.start_date = "2001-02-27 12:00:00";
  cal.time_origin = "2001-02-26 12:00:00 + 12h";  // 2001-02-27 00:00
  c.define_calendar(cal);
  c.set_timestep("6h");
  xios_lite::DomainAttributes atm = xios_test::block_attributes(b, kNi, kNj);
  for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
    atm.lonvalue_1d.push_back(lon_of(i));
    atm.bounds_lon_1d.insert(atm.bounds_lon_1d.end(), {lon_of(i) - 10, lon_of(i) + 10});
  }
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    atm.latvalue_1d.push_back(lat_of(j));
    atm.bounds_lat_1d.insert(atm.bounds_lat_1d.end(), {lat_of(j) - 10, lat_of(j) + 10});
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
      atm.area.push_back(area_of(j, i));
    }
  }
  c.set_domain_attr("atm", atm);
  // The ocean: the same block, curvilinear coordinates with 4 vertices, land masked.
  xios_lite::DomainAttributes oce;
  oce.ni_glo = kNi;
  oce.nj_glo = kNj;
  oce.nvertex = 4;
  c.set_domain_attr("ocean", oce);
  c.set_domain_block("ocean", b);
  oce = {};
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
      oce.lonvalue_2d.push_back(lon2d_of(j, i));
      oce.latvalue_2d.push_back(lat2d_of(j, i));
      for (int v = 0; v < 4; ++v) {
        oce.bounds_lon_2d.push_back(lon2d_of(j, i) + v);
        oce.bounds_lat_2d.push_back(lat2d_of(j, i) - v);
      }
      oce.mask.push_back(!land(j, i));
    }
  }
  c.set_domain_attr("ocean", oce);
  xios_lite::AxisAttributes z;
  z.n_glo = kLevels;
  z.value = {10, 50, 200};
  z.bounds = {0, 20, 20, 100, 100, 300};
  z.unit = "m";
  z.positive = "down";
  z.long_name = "depth";
  c.set_axis_attr("z", z);
  c.close_definition();
  for (int s = 1; s <= 2; ++s) {
    c.update_calendar(s);
    c.send_field("ta", xios_test::field_values(1, s, kLevels, b));
    c.send_field("sst", xios_test::field_values(2, s, 1, b));
  }
  (void)c.finalise();
}

TEST(XiosModelGeometry, SetByTheModelAndWritten) {
  const std::string dir = xios_test::scratch_dir("model_geometry");
  const std::string cfg = xios_test::write_config(dir, config(dir));
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = xios_test::servers();
  spec.mode = xios_test::mode();
  spec.model = model;
  if (xios_test::run_without_errors(spec)) {
    const std::string atm = dir + "/atm.nc";
    std::vector<double> lon;
    std::vector<double> lat;
    std::vector<double> blon;
    std::vector<double> blat;
    std::vector<double> area;
    for (int i = 0; i < kNi; ++i) {
      lon.push_back(lon_of(i));
      blon.insert(blon.end(), {lon_of(i) - 10, lon_of(i) + 10});
    }
    for (int j = 0; j < kNj; ++j) {
      lat.push_back(lat_of(j));
      blat.insert(blat.end(), {lat_of(j) - 10, lat_of(j) + 10});
      for (int i = 0; i < kNi; ++i) area.push_back(area_of(j, i));
    }
    EXPECT_EQ(xios_test::read_var(atm, "lon"), lon);
    EXPECT_EQ(xios_test::read_var(atm, "lat"), lat);
    EXPECT_EQ(xios_test::read_var(atm, "bounds_lon"), blon);
    EXPECT_EQ(xios_test::read_var(atm, "bounds_lat"), blat);
    EXPECT_EQ(xios_test::read_var(atm, "area"), area);
    EXPECT_EQ(xios_test::text_att(atm, "ta", "cell_measures"), "area: area");
    EXPECT_EQ(xios_test::read_var(atm, "z"), (std::vector<double>{10, 50, 200}));
    EXPECT_EQ(xios_test::read_var(atm, "z_bounds"),
              (std::vector<double>{0, 20, 20, 100, 100, 300}));
    EXPECT_EQ(xios_test::text_att(atm, "z", "units"), "m");
    EXPECT_EQ(xios_test::text_att(atm, "z", "long_name"), "depth");
    // The calendar the model defined, the time from its origin.
    EXPECT_EQ(xios_test::text_att(atm, "time", "calendar"), "noleap");
    EXPECT_EQ(xios_test::text_att(atm, "time", "units"), "seconds since 2001-02-27 00:00:00");
    EXPECT_EQ(xios_test::read_var(atm, "time"), (std::vector<double>{18 * 3600, 24 * 3600}));
    std::vector<double> ta;
    for (int s = 1; s <= 2; ++s) {
      for (int k = 0; k < kLevels; ++k) {
        for (int j = 0; j < kNj; ++j) {
          for (int i = 0; i < kNi; ++i) ta.push_back(xios_test::value(1, s, k, j, i));
        }
      }
    }
    EXPECT_EQ(xios_test::read_var(atm, "ta"), ta);
    // The curvilinear ocean: 2-D coordinates, 4 vertices, land as _FillValue.
    const std::string oce = dir + "/ocean.nc";
    std::vector<double> lon2;
    std::vector<double> lat2;
    std::vector<double> blon2;
    std::vector<double> sst;
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        lon2.push_back(lon2d_of(j, i));
        lat2.push_back(lat2d_of(j, i));
        for (int v = 0; v < 4; ++v) blon2.push_back(lon2d_of(j, i) + v);
      }
    }
    for (int s = 1; s <= 2; ++s) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) {
          sst.push_back(land(j, i) ? -999.0 : xios_test::value(2, s, 0, j, i));
        }
      }
    }
    EXPECT_EQ(xios_test::read_var(oce, "lon"), lon2);
    EXPECT_EQ(xios_test::read_var(oce, "lat"), lat2);
    EXPECT_EQ(xios_test::read_var(oce, "bounds_lon"), blon2);
    EXPECT_EQ(xios_test::dim_len(oce, "y"), kNj);
    EXPECT_EQ(xios_test::dim_len(oce, "x"), kNi);
    EXPECT_EQ(xios_test::dim_len(oce, "nvertex"), 4);
    EXPECT_EQ(xios_test::text_att(oce, "sst", "coordinates"), "lat lon");
    EXPECT_EQ(xios_test::read_var(oce, "sst"), sst);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// What the clients cannot get away with: every client fails at
// close_definition with the same message, which names the clients.
TEST(XiosModelGeometry, DisagreementsFailEverywhere) {
  const std::string dir = xios_test::scratch_dir("model_geometry_errors");
  const std::string cfg = xios_test::write_config(dir, config(dir));
  struct Case {
    const char* expect;
    std::function<void(xios_lite::Client&, const ep::Communicator&, const Block&)> set;
  };
  const std::vector<Case> cases{
      {"ni_glo differs between clients 0 and 1",
       [](xios_lite::Client& c, const ep::Communicator& comm, const Block&) {
         xios_lite::DomainAttributes a;
         a.ni_glo = comm.rank() == 1 ? kNi + 1 : kNi;
         c.set_domain_attr("atm", a);
       }},
      {"lonvalue_1d of client 0 has 2 values, expected",
       [](xios_lite::Client& c, const ep::Communicator& comm, const Block&) {
         xios_lite::DomainAttributes a;
         if (comm.rank() == 0) a.lonvalue_1d = {1, 2};
         c.set_domain_attr("atm", a);
       }},
      {"lonvalue_2d is set by some clients but not by clients [",
       [](xios_lite::Client& c, const ep::Communicator& comm, const Block& b) {
         xios_lite::DomainAttributes a;
         if (comm.rank() == 0) {
           a.lonvalue_2d.assign(static_cast<std::size_t>(b.ni) * b.nj, 1.0);
           a.latvalue_2d = a.lonvalue_2d;
         }
         c.set_domain_attr("ocean", a);
       }},
      {"timestep differs between clients 0 and 1",
       [](xios_lite::Client& c, const ep::Communicator& comm, const Block&) {
         c.set_timestep(comm.rank() == 1 ? "3h" : "6h");
       }},
  };
  for (const Case& k : cases) {
    xios_test::RunSpec spec = xios_test::run_spec(
        cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
          const Block b = xios_test::uneven_block(comm, kNi, kNj);
          xios_lite::CalendarAttributes cal;
          cal.type = "Gregorian";
          cal.start_date = "2000-01-01";
          cal.timestep = "6h";
          c.define_calendar(cal);
          xios_lite::DomainAttributes a;
          a.ni_glo = kNi;
          a.nj_glo = kNj;
          c.set_domain_attr("atm", a);
          c.set_domain_attr("ocean", a);
          c.set_domain_block("atm", b);
          c.set_domain_block("ocean", b);
          xios_lite::AxisAttributes z;
          z.n_glo = kLevels;
          c.set_axis_attr("z", z);
          xios_lite::DomainAttributes coords;
          coords.lonvalue_2d.assign(static_cast<std::size_t>(b.ni) * b.nj, 2.0);
          coords.latvalue_2d = coords.lonvalue_2d;
          if (std::string(k.expect).find("lonvalue_2d") == std::string::npos) {
            c.set_domain_attr("ocean", coords);
          }
          k.set(c, comm, b);
          const std::string e = xios_test::error_of([&] { c.close_definition(); });
          EXPECT_HAS(e, "xios_lite::Client::close_definition");
          EXPECT_HAS(e, k.expect);
          if (e.empty()) {
            (void)c.finalise();
          }
        });
    const xios_test::Outcome o = xios_test::run(spec);
    for (const auto& e : o.client_errors) ADD_FAILURE() << "client: " << e;
    if (o.is_server) {
      EXPECT_HAS(o.server_error, "definition failed");
    }
  }
}

}  // namespace
