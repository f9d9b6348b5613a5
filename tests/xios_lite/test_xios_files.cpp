// The files users expect: `once` fields in every split file, float output
// (prec="4") and float send_field, chunks from a target size, cell bounds
// as CF bounds, domains with fewer rows than server endpoints. Shapes with
// one process use the synchronous mode.
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>

#include <cmath>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 12;
constexpr int kNj = 6;
constexpr int kLevels = 3;

std::string context(const std::string& calendar, const std::string& domain,
                    const std::string& fields, const std::string& files) {
  xios_test::ContextXml c;
  c.id = "files";
  c.calendar = calendar;
  c.domains = domain;
  c.axes = R"(<axis id="lev" n_glo="3" value="1000 850 500"/>)";
  c.grids = R"(<grid id="g2" domain_ref="dom"/><grid id="g3" domain_ref="dom" axis_ref="lev"/>)";
  c.fields = fields;
  c.files = files;
  return xios_test::context_config(c);
}

const std::string kDomain = R"(<domain id="dom" ni_glo="12" nj_glo="6"/>)";
// The calendar of most tests here: hourly steps from 2000-01-01.
const std::string kHourly = R"(type="gregorian" start_date="2000-01-01" timestep="1h")";

// Fields sent by `send` at steps 1..steps on each client's uneven block.
xios_test::RunSpec run_of(const std::string& cfg, int servers, int steps,
                          xios_test::StepSender send) {
  return xios_test::run_spec(cfg, servers,
                             xios_test::stepping_model(kNi, kNj, steps, std::move(send)));
}

std::vector<double> whole(int f, long step, int nk) {
  return xios_test::field_values(f, step, nk, Block{0, kNi, 0, kNj});
}

// A once field is written into every file of a split, not only the first
// (before: the later files held only _FillValue).
TEST(XiosFiles, OnceFieldsInEverySplitFile) {
  const std::string dir = xios_test::scratch_dir("once_split");
  const int servers = xios_test::servers(1);
  const std::string cfg = xios_test::write_config(
      dir,
      context(R"(type="noleap" start_date="2000-02-27 00:00:00" timestep="6h")", kDomain,
              R"(<field id="t2" grid_ref="g2"/><field id="orog" grid_ref="g2" operation="once"/>)",
              R"(<file id="daily" name=")" + dir +
                  R"(/daily" output_freq="6h" split_freq="1d" type="one_file">
                         <field field_ref="orog"/><field field_ref="t2"/></file>)"));
  expect_no_errors(xios_test::run(run_of(cfg, servers, 12, [](auto& c, const Block& b, int s) {
    if (s == 1) c.send_field("orog", xios_test::field_values(3, 0, 1, b));
    c.send_field("t2", xios_test::field_values(0, s, 1, b));
  })));
  if (is_reader()) {
    for (const char* name : {"daily_20000227-20000228.nc", "daily_20000228-20000301.nc",
                             "daily_20000301-20000302.nc"}) {
      const std::string path = dir + "/" + name;
      EXPECT_EQ(xios_test::read_var(path, "orog"), whole(3, 0, 1)) << path;
      EXPECT_EQ(xios_test::dim_len(path, "time"), 4) << path;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// prec="4" writes floats (from doubles or floats sent); a field of prec 8
// sent as floats holds the float values exactly; a float equal to the
// default_value stays missing.
TEST(XiosFiles, FloatOutputAndFloatSend) {
  const std::string dir = xios_test::scratch_dir("float");
  const int servers = xios_test::servers(1);
  const std::string cfg =
      xios_test::write_config(dir, context(kHourly, kDomain,
                                           R"(<field id="d4" grid_ref="g3" prec="4"/>
                      <field id="f4" grid_ref="g2" prec="4" default_value="-1e20" detect_missing_value="true" operation="average"/>
                      <field id="f8" grid_ref="g2"/>)",
                                           R"(<file id="out" name=")" + dir +
                                               R"(/out" output_freq="2ts" type="one_file">
                         <field field_ref="d4" operation="instant"/><field field_ref="f4"/>
                         <field field_ref="f8" operation="instant"/></file>)"));
  // Step 1 of f4 at point (0, 0): the fill value sent as a float.
  const auto f4 = [](int s, int j, int i) {
    return s == 1 && j == 0 && i == 0 ? -1e20F : static_cast<float>(value(1, s, 0, j, i) / 7);
  };
  expect_no_errors(xios_test::run(run_of(cfg, servers, 2, [&](auto& c, const Block& b, int s) {
    c.send_field("d4", xios_test::field_values(0, s, kLevels, b));
    std::vector<float> single;
    std::vector<float> third;
    for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
      for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
        single.push_back(f4(s, j, i));
        third.push_back(static_cast<float>(value(2, s, 0, j, i) / 3));
      }
    }
    c.send_field("f4", std::span<const float>(single));
    c.send_field("f8", std::span<const float>(third));
  })));
  if (is_reader()) {
    const std::string path = dir + "/out.nc";
    EXPECT_EQ(xios_test::var_type(path, "d4"), NC_FLOAT);
    EXPECT_EQ(xios_test::var_type(path, "f4"), NC_FLOAT);
    EXPECT_EQ(xios_test::var_type(path, "f8"), NC_DOUBLE);
    const auto d4 = xios_test::read_var(path, "d4");
    const auto expect_d4 = whole(0, 2, kLevels);
    ASSERT_EQ(d4.size(), expect_d4.size());
    for (std::size_t n = 0; n < d4.size(); ++n) {
      EXPECT_EQ(d4[n], static_cast<double>(static_cast<float>(expect_d4[n]))) << n;
    }
    const auto f4_got = xios_test::read_var(path, "f4");
    const auto f8_got = xios_test::read_var(path, "f8");
    ASSERT_EQ(f4_got.size(), static_cast<std::size_t>(kNj * kNi));
    ASSERT_EQ(f8_got.size(), static_cast<std::size_t>(kNj * kNi));
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        const auto n = static_cast<std::size_t>(j * kNi + i);
        // The mean of steps 1 and 2 in double, written as a float; (0, 0)
        // had one valid sample (step 2).
        const double mean = j == 0 && i == 0
                                ? static_cast<double>(f4(2, j, i))
                                : (static_cast<double>(f4(1, j, i)) + f4(2, j, i)) * 0.5;
        EXPECT_EQ(f4_got[n], static_cast<double>(static_cast<float>(mean))) << j << " " << i;
        EXPECT_EQ(f8_got[n], static_cast<double>(static_cast<float>(value(2, 2, 0, j, i) / 3)));
      }
    }
    EXPECT_EQ(xios_test::double_att(path, "f4", "_FillValue"), static_cast<double>(-1e20F));
    EXPECT_EQ(xios_test::double_att(path, "f4", "missing_value"), static_cast<double>(-1e20F));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Chunks follow chunking_blocksize_target (field, else file, else 20 MiB):
// a record that fits is one chunk; a small target splits the largest extents.
TEST(XiosFiles, ChunksFromATargetSize) {
  const std::string dir = xios_test::scratch_dir("chunks");
  const int servers = xios_test::servers(1);
  // 400 bytes: a record of t3 is 3 x 6 x 12 x 8 = 1728 bytes.
  const std::string cfg =
      xios_test::write_config(dir, context(kHourly, kDomain,
                                           R"(<field id="t3" grid_ref="g3"/>
                      <field id="small" grid_ref="g3" chunking_blocksize_target="0.000382"/>)",
                                           R"(<file id="out" name=")" + dir +
                                               R"(/out" output_freq="1ts" type="one_file">
                         <field field_ref="t3"/><field field_ref="small"/></file>)"));
  expect_no_errors(xios_test::run(run_of(cfg, servers, 1, [](auto& c, const Block& b, int s) {
    c.send_field("t3", xios_test::field_values(1, s, kLevels, b));
    c.send_field("small", xios_test::field_values(2, s, kLevels, b));
  })));
  if (is_reader()) {
    const std::string path = dir + "/out.nc";
    EXPECT_EQ(xios_test::var_chunks(path, "t3"), (std::vector<std::size_t>{1, 3, 6, 12}));
    const auto small = xios_test::var_chunks(path, "small");
    ASSERT_EQ(small.size(), 4U);
    EXPECT_LE(small[1] * small[2] * small[3] * 8, 400U);
    EXPECT_EQ(small, (std::vector<std::size_t>{1, 3, 3, 3}));
    EXPECT_EQ(xios_test::read_var(path, "small"), whole(2, 1, kLevels));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// bounds_lon / bounds_lat: CF bounds variables and the coordinates' bounds attribute.
TEST(XiosFiles, CellBounds) {
  const std::string dir = xios_test::scratch_dir("bounds");
  const int servers = xios_test::servers(1);
  std::string blon;
  std::vector<double> expect_lon;
  for (int i = 0; i < kNi; ++i) {
    blon += std::to_string(30 * i) + " " + std::to_string(30 * i + 30) + " ";
    expect_lon.insert(expect_lon.end(), {30.0 * i, 30.0 * i + 30});
  }
  std::string blat;
  std::vector<double> expect_lat;
  for (int j = 0; j < kNj; ++j) {
    blat += std::to_string(-90 + 30 * j) + " " + std::to_string(-60 + 30 * j) + " ";
    expect_lat.insert(expect_lat.end(), {-90.0 + 30 * j, -60.0 + 30 * j});
  }
  const std::string cfg = xios_test::write_config(
      dir,
      context(kHourly,
              R"(<domain id="dom" ni_glo="12" nj_glo="6" bounds_lon=")" + blon +
                  R"(" bounds_lat=")" + blat + R"("/>)",
              R"(<field id="t2" grid_ref="g2"/>)",
              R"(<file id="out" name=")" + dir +
                  R"(/out" output_freq="1ts" type="one_file"><field field_ref="t2"/></file>)"));
  expect_no_errors(xios_test::run(run_of(cfg, servers, 1, [](auto& c, const Block& b, int s) {
    c.send_field("t2", xios_test::field_values(0, s, 1, b));
  })));
  if (is_reader()) {
    const std::string path = dir + "/out.nc";
    EXPECT_EQ(xios_test::text_att(path, "lon", "bounds"), "bounds_lon");
    EXPECT_EQ(xios_test::text_att(path, "lat", "bounds"), "bounds_lat");
    EXPECT_EQ(xios_test::dim_len(path, "nvertex"), 2);
    EXPECT_EQ(xios_test::read_var(path, "bounds_lon"), expect_lon);
    EXPECT_EQ(xios_test::read_var(path, "bounds_lat"), expect_lat);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A domain of 2 rows over up to 2 server processes x 3 receiving endpoints:
// the endpoints without rows receive nothing but empty markers, a process
// without rows writes no multiple_file part for it and takes part in the
// one_file writes with nothing (before: refused at close_definition).
TEST(XiosFiles, FewerRowsThanServerEndpoints) {
  if (xios_test::servers(1) == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  const std::string dir = xios_test::scratch_dir("few_rows");
  const int servers = xios_test::servers(2);
  // The strip's grid (the shared context has g2/g3 on "dom").
  std::string text = context(
      kHourly,
      R"(<domain id="dom" ni_glo="12" nj_glo="6"/><domain id="strip" ni_glo="5" nj_glo="2"/>)",
      R"(<field id="t2" grid_ref="g2"/><field id="s" grid_ref="gs"/>)",
      R"(<file id="shared" name=")" + dir +
          R"(/shared" output_freq="1ts" type="one_file"><field field_ref="s"/><field field_ref="t2"/></file>
                       <file id="parts" name=")" +
          dir + R"(/parts" output_freq="1ts"><field field_ref="s"/></file>)");
  text.replace(text.find("</grid_definition>"), 0, R"(<grid id="gs" domain_ref="strip"/>)");
  const std::string cfg = xios_test::write_config(dir, text);
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = servers;
  spec.mode = Mode::kEndpoints;
  spec.server_threads = 3;
  spec.model = [](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = xios_test::uneven_block(comm, kNi, kNj);
    // The strip: every row to client 0 (the others hold none of it).
    const Block strip = comm.rank() == 0 ? Block{0, 5, 0, 2} : Block{0, 0, 0, 0};
    c.set_domain_block("dom", b);
    c.set_domain_block("strip", strip);
    xios_test::close_and_step(c, 2, [&](int s) {
      c.send_field("t2", xios_test::field_values(0, s, 1, b));
      c.send_field("s", xios_test::field_values(5, s, 1, strip));
    });
  };
  expect_no_errors(xios_test::run(spec));
  if (is_reader()) {
    std::vector<double> strip;
    for (int s = 1; s <= 2; ++s) {
      const auto one = xios_test::field_values(5, s, 1, Block{0, 5, 0, 2});
      strip.insert(strip.end(), one.begin(), one.end());
    }
    EXPECT_EQ(xios_test::read_var(dir + "/shared.nc", "s"), strip);
    std::vector<double> t2;
    for (int s = 1; s <= 2; ++s) {
      const auto one = whole(0, s, 1);
      t2.insert(t2.end(), one.begin(), one.end());
    }
    EXPECT_EQ(xios_test::read_var(dir + "/shared.nc", "t2"), t2);
    // multiple_file: server process 0 holds both rows; process 1 none (no file).
    const std::string first = dir + (servers > 1 ? "/parts_0.nc" : "/parts.nc");
    EXPECT_EQ(xios_test::read_var(first, "s"), strip);
    if (servers > 1) {
      EXPECT_FALSE(xios_test::file_exists(dir + "/parts_1.nc"));
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
