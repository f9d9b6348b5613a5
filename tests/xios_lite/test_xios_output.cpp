// xios_lite end to end: a small model on endpoints, servers on the last
// ranks, the files read back with NetCDF-C and compared exactly.
//
// Shapes: with one process there is no room for a server, so the
// server-mode tests run the synchronous mode there instead.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <utility>

#include "ep/collectives.hpp"
#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 12;
constexpr int kNj = 6;
constexpr int kLevels = 3;

struct FileSpec {
  std::string attrs;   // attributes of <file>
  std::string fields;  // <field field_ref=.../> lines
};

std::string config(
    const std::string& dir, const std::vector<FileSpec>& files,
    const std::string& calendar = R"(type="gregorian" start_date="2000-01-01" timestep="1h")") {
  std::string xml = R"(<xios_lite><context id="test">
  <calendar )" + calendar +
                    R"(/>
  <options finalise_timeout="30"/>
  <domain_definition><domain id="dom" ni_glo=")" +
                    std::to_string(kNi) + R"(" nj_glo=")" + std::to_string(kNj) +
                    R"("/></domain_definition>
  <axis_definition><axis id="lev" n_glo="3" value="1000 850 500" units="hPa" positive="down"/></axis_definition>
  <grid_definition><grid id="g2" domain_ref="dom"/><grid id="g3" domain_ref="dom" axis_ref="lev"/></grid_definition>
  <field_definition>
    <field_group id="sfc" grid_ref="g2" units="K">
      <field id="t2" standard_name="air_temperature" long_name="2 m temperature"/>
      <field id="x" long_name="test field"/>
    </field_group>
    <field id="t3" grid_ref="g3" units="K" standard_name="air_temperature"/>
    <field id="orog" grid_ref="g2" operation="once" units="m"/>
  </field_definition>
  <file_definition>
)";
  for (std::size_t n = 0; n < files.size(); ++n) {
    xml += "    <file id=\"f" + std::to_string(n) + "\" " + files[n].attrs + ">" + files[n].fields +
           "</file>\n";
  }
  (void)dir;
  return xml + "  </file_definition>\n</context></xios_lite>\n";
}

// Sends t2 and t3 (and `x` when asked) for steps 1..steps; returns the finalise report.
xios_lite::Report simple_model(xios_lite::Client& c, const ep::Communicator& comm, int steps,
                               bool send_x) {
  const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
  for (int s = 1; s <= steps; ++s) {
    c.update_calendar(s);
    c.send_field("t2", xios_test::field_values(0, s, 1, b));
    c.send_field("t3", xios_test::field_values(1, s, kLevels, b));
    if (send_x) {
      c.send_field("x", xios_test::field_values(2, s, 1, b));
    }
  }
  return c.finalise();
}

// A run of simple_model for `steps` steps without the x field.
xios_test::RunSpec simple_run(const std::string& cfg, int servers, Mode mode, int steps) {
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, servers, [steps](xios_lite::Client& c, const ep::Communicator& comm) {
        (void)simple_model(c, comm, steps, false);
      });
  spec.mode = mode;
  return spec;
}

// The expected contents of a (record, level, j, i) variable of `steps` instant records.
std::vector<double> expected_instant(int f, int steps, int nk, int j0, int nj) {
  std::vector<double> v;
  for (int s = 1; s <= steps; ++s) {
    for (int k = 0; k < nk; ++k) {
      for (int j = j0; j < j0 + nj; ++j) {
        for (int i = 0; i < kNi; ++i) {
          v.push_back(value(f, s, k, j, i));
        }
      }
    }
  }
  return v;
}

TEST(XiosOutput, RoundTripAndCfAttributes) {
  const std::string dir = xios_test::scratch_dir("roundtrip");
  const int servers = xios_test::servers(1);
  const std::string cfg = xios_test::write_config(
      dir, config(dir, {{"name=\"" + dir + "/out\" output_freq=\"1ts\" type=\"one_file\"",
                         R"(<field field_ref="t2"/><field field_ref="t3"/>)"}}));
  expect_no_errors(xios_test::run(simple_run(cfg, servers, mode_for(servers), 3)));
  if (is_reader()) {
    const std::string path = dir + "/out.nc";
    EXPECT_EQ(xios_test::read_var(path, "t2"), expected_instant(0, 3, 1, 0, kNj));
    EXPECT_EQ(xios_test::read_var(path, "t3"), expected_instant(1, 3, kLevels, 0, kNj));
    EXPECT_EQ(xios_test::read_var(path, "time"), (std::vector<double>{3600, 7200, 10800}));
    EXPECT_EQ(xios_test::read_var(path, "lev"), (std::vector<double>{1000, 850, 500}));
    EXPECT_NE(xios_test::text_att(path, "", "history"), "");
    xios_test::expect_text_atts(path, {{"", "Conventions", "CF-1.8"},
                                       {"", "title", "test"},
                                       {"time", "units", "seconds since 2000-01-01 00:00:00"},
                                       {"time", "calendar", "gregorian"},
                                       {"lat", "units", "degrees_north"},
                                       {"lon", "units", "degrees_east"},
                                       {"lev", "units", "hPa"},
                                       {"lev", "positive", "down"},
                                       {"t2", "standard_name", "air_temperature"},
                                       {"t2", "long_name", "2 m temperature"},
                                       {"t2", "units", "K"},
                                       {"t2", "cell_methods", "time: point"}});
    EXPECT_EQ(xios_test::dim_len(path, "axis_nbounds"), -1);  // instant only: no time bounds
    EXPECT_EQ(xios_test::read_var(path, "lat").size(), static_cast<std::size_t>(kNj));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosOutput, TemporalOperationsMatchTheTest) {
  const std::string dir = xios_test::scratch_dir("temporal");
  const int servers = xios_test::servers(1);
  const std::string cfg = xios_test::write_config(
      dir, config(dir, {{"name=\"" + dir + "/ops\" output_freq=\"3ts\" compression_level=\"4\"",
                         R"(<field field_ref="x" name="x_avg" operation="average"/>
                            <field field_ref="x" name="x_min" operation="minimum"/>
                            <field field_ref="x" name="x_max" operation="maximum"/>
                            <field field_ref="x" name="x_sum" operation="accumulate"/>
                            <field field_ref="x" name="x_inst" operation="instant"/>
                            <field field_ref="orog"/>)"}}));
  // Values that go up and down between steps.
  auto sample = [](long s, int j, int i) {
    return static_cast<double>((s * 7) % 5) * 1.5 + j * 0.5 - i;
  };
  const auto model = [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
    for (int s = 1; s <= 6; ++s) {
      c.update_calendar(s);
      c.send_field(
          "x", xios_test::block_values(b, 1, [&](int, int j, int i) { return sample(s, j, i); }));
      if (s == 1) {
        c.send_field("orog", xios_test::field_values(3, 0, 1, b));
      }
    }
    (void)c.finalise();
  };
  expect_no_errors(xios_test::run(xios_test::run_spec(cfg, servers, model)));
  if (is_reader()) {
    const std::string path = dir + "/ops.nc";
    std::vector<double> avg, mn, mx, sum, inst;
    for (int r = 0; r < 2; ++r) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) {
          double a = sample(3 * r + 1, j, i);
          double lo = a;
          double hi = a;
          for (int s = 3 * r + 2; s <= 3 * r + 3; ++s) {
            a += sample(s, j, i);
            lo = std::min(lo, sample(s, j, i));
            hi = std::max(hi, sample(s, j, i));
          }
          sum.push_back(a);
          avg.push_back(a * (1.0 / 3));
          mn.push_back(lo);
          mx.push_back(hi);
          inst.push_back(sample(3 * r + 3, j, i));
        }
      }
    }
    EXPECT_EQ(xios_test::read_var(path, "x_avg"), avg);
    EXPECT_EQ(xios_test::read_var(path, "x_min"), mn);
    EXPECT_EQ(xios_test::read_var(path, "x_max"), mx);
    EXPECT_EQ(xios_test::read_var(path, "x_sum"), sum);
    EXPECT_EQ(xios_test::read_var(path, "x_inst"), inst);
    std::vector<double> orog;  // `once`: the values of step 1, no time dimension
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        orog.push_back(value(3, 0, 0, j, i));
      }
    }
    EXPECT_EQ(xios_test::read_var(path, "orog"), orog);
    EXPECT_EQ(xios_test::read_var(path, "time"), (std::vector<double>{5400, 16200}));
    EXPECT_EQ(xios_test::read_var(path, "time_bounds"),
              (std::vector<double>{0, 10800, 10800, 21600}));
    xios_test::expect_text_atts(path, {{"time", "bounds", "time_bounds"},
                                       {"x_avg", "cell_methods", "time: mean"},
                                       {"x_min", "cell_methods", "time: minimum"},
                                       {"x_max", "cell_methods", "time: maximum"},
                                       {"x_sum", "cell_methods", "time: sum"}});
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Several servers split the domain: the shared file holds it whole, each
// multiple_file part holds its server process's rows. A server process may
// run several receiving endpoints (`server_threads`): the bands of its
// endpoints make one part, and the clients hear from every endpoint.
void check_several_servers(const std::string& tag, int server_threads) {
  const std::string dir = xios_test::scratch_dir(tag);
  const int servers = xios_test::servers(2);
  const std::string cfg = xios_test::write_config(
      dir, config(dir, {{"name=\"" + dir + "/shared\" output_freq=\"1ts\" type=\"one_file\"",
                         R"(<field field_ref="t2"/><field field_ref="t3"/>)"},
                        {"name=\"" + dir + "/parts\" output_freq=\"1ts\" type=\"multiple_file\"",
                         R"(<field field_ref="t3"/>)"}}));
  xios_lite::Report report;  // client EP rank 0's, on world rank 0
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, servers, [&report](xios_lite::Client& c, const ep::Communicator& comm) {
        xios_lite::Report r = simple_model(c, comm, 2, false);
        if (comm.rank() == 0) report = std::move(r);
      });
  spec.mode = Mode::kEndpoints;
  spec.server_threads = server_threads;
  expect_no_errors(xios_test::run(spec));
  if (is_reader()) {
    // Every receiving endpoint acknowledged; the writers' bytes are counted once.
    EXPECT_EQ(report.servers.size(), static_cast<std::size_t>(servers * server_threads));
    double written = 0;
    for (const xios_lite::ServerReport& r : report.servers) {
      EXPECT_GT(r.bytes_received, 0) << "server endpoint " << r.server;
      written += r.bytes_written;
    }
    const double points = 2.0 * kNi * kNj * (1 + 2 * kLevels);  // 2 steps: t2, t3 shared, t3 parts
    EXPECT_EQ(written, points * sizeof(double));
    const std::string shared = dir + "/shared.nc";
    EXPECT_EQ(xios_test::read_var(shared, "t2"), expected_instant(0, 2, 1, 0, kNj));
    EXPECT_EQ(xios_test::read_var(shared, "t3"), expected_instant(1, 2, kLevels, 0, kNj));
    int j0 = 0;
    for (int s = 0; s < servers; ++s) {
      std::string part = dir + "/parts";
      if (servers > 1) {
        part.append(1, '_').append(std::to_string(s));  // not "_" + ...: GCC 12 -Wrestrict
      }
      part.append(".nc");
      const long nj = xios_test::dim_len(part, "lat");
      EXPECT_GT(nj, 0) << part;
      EXPECT_EQ(xios_test::read_var(part, "t3"),
                expected_instant(1, 2, kLevels, j0, static_cast<int>(nj)))
          << part;
      j0 += static_cast<int>(nj);
    }
    EXPECT_EQ(j0, kNj);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosOutput, SeveralServersOneFileAndMultipleFile) {
  if (xios_test::servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  check_several_servers("servers", 1);
}

// Three receiving endpoints per server process (an odd count; 6 rows of
// the domain over up to 2 x 3 endpoints).
TEST(XiosOutput, ServerProcessesRunSeveralEndpoints) {
  if (xios_test::servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  check_several_servers("server_threads", 3);
}

// The same model in the ep, funneled and synchronous modes writes the same numbers.
TEST(XiosOutput, ModesWriteIdenticalData) {
  const std::string dir = xios_test::scratch_dir("modes");
  std::vector<std::pair<Mode, std::string>> modes{{Mode::kSynchronous, "sync"}};
  if (xios_test::servers() > 0) {
    modes.insert(modes.begin(), {{Mode::kEndpoints, "ep"}, {Mode::kFunneled, "funneled"}});
  }
  for (const auto& [mode, name] : modes) {
    const std::string cfg = dir + "/" + name + ".xml";
    xios_test::write_file(
        cfg,
        config(dir, {{"name=\"" + dir + "/" + name + "\" output_freq=\"2ts\" type=\"one_file\"",
                      R"(<field field_ref="t3" operation="average"/><field field_ref="t2"/>)"}}));
    expect_no_errors(xios_test::run(simple_run(cfg, mode == Mode::kSynchronous ? 0 : 1, mode, 4)));
  }
  if (is_reader()) {
    const auto ref_t3 = xios_test::read_var(dir + "/" + modes[0].second + ".nc", "t3");
    const auto ref_t2 = xios_test::read_var(dir + "/" + modes[0].second + ".nc", "t2");
    EXPECT_EQ(ref_t3.size(), static_cast<std::size_t>(2 * kLevels * kNj * kNi));
    EXPECT_EQ(ref_t2, [] {
      auto all = expected_instant(0, 4, 1, 0, kNj);
      std::vector<double> even;  // instant at steps 2 and 4
      even.insert(even.end(), all.begin() + kNj * kNi, all.begin() + 2 * kNj * kNi);
      even.insert(even.end(), all.begin() + 3 * kNj * kNi, all.end());
      return even;
    }());
    for (std::size_t m = 1; m < modes.size(); ++m) {
      EXPECT_EQ(xios_test::read_var(dir + "/" + modes[m].second + ".nc", "t3"), ref_t3)
          << modes[m].second;
      EXPECT_EQ(xios_test::read_var(dir + "/" + modes[m].second + ".nc", "t2"), ref_t2)
          << modes[m].second;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Client processes with different thread counts (one with a single
// endpoint), in ep and funneled modes, with uneven blocks.
TEST(XiosOutput, MixedThreadCountsUnevenBlocks) {
  const std::string dir = xios_test::scratch_dir("mixed");
  const int servers = xios_test::servers(1);
  const std::vector<Mode> modes = servers > 0 ? std::vector<Mode>{Mode::kEndpoints, Mode::kFunneled}
                                              : std::vector<Mode>{Mode::kSynchronous};
  for (const Mode mode : modes) {
    const std::string name = xios_lite::to_string(mode);
    const std::string cfg = dir + "/" + name + ".xml";
    xios_test::write_file(
        cfg,
        config(dir, {{"name=\"" + dir + "/" + name + "\" output_freq=\"1ts\" type=\"one_file\"",
                      R"(<field field_ref="t3"/>)"}}));
    xios_test::RunSpec spec = simple_run(cfg, servers, mode, 2);
    spec.threads = [](int p) { return p % 2 == 0 ? 0 : 1; };  // OMP_NUM_THREADS, then 1
    spec.progress_thread =
        mode != Mode::kFunneled;  // sends also complete without the progress thread
    expect_no_errors(xios_test::run(spec));
    if (is_reader()) {
      EXPECT_EQ(xios_test::read_var(dir + "/" + name + ".nc", "t3"),
                expected_instant(1, 2, kLevels, 0, kNj))
          << name;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// split_freq: 6-hourly records, a new file every day, named by its period.
TEST(XiosOutput, SplitFreqFileNamesAndRecords) {
  const std::string dir = xios_test::scratch_dir("split");
  const int servers = xios_test::servers(1);
  const std::string cfg = xios_test::write_config(
      dir,
      config(dir,
             {{"name=\"" + dir + "/daily\" output_freq=\"6h\" split_freq=\"1d\" sync_freq=\"12h\"",
               R"(<field field_ref="t2"/>)"}},
             R"(type="noleap" start_date="2000-02-27 00:00:00" timestep="6h")"));
  expect_no_errors(xios_test::run(simple_run(cfg, servers, mode_for(servers), 10)));
  if (is_reader()) {
    const std::vector<std::string> names{"daily_20000227-20000228.nc", "daily_20000228-20000301.nc",
                                         "daily_20000301-20000302.nc"};
    const std::vector<long> records{4, 4, 2};
    auto all = expected_instant(0, 10, 1, 0, kNj);
    std::size_t at = 0;
    for (std::size_t f = 0; f < names.size(); ++f) {
      const std::string path = dir + "/" + names[f];
      EXPECT_TRUE(xios_test::file_exists(path)) << path;
      EXPECT_EQ(xios_test::dim_len(path, "time"), records[f]) << path;
      const std::size_t n = static_cast<std::size_t>(records[f]) * kNj * kNi;
      if (at + n <= all.size()) {
        EXPECT_EQ(xios_test::read_var(path, "t2"),
                  std::vector<double>(all.begin() + static_cast<long>(at),
                                      all.begin() + static_cast<long>(at + n)))
            << path;
      }
      at += n;
      const auto time = xios_test::read_var(path, "time");
      if (!time.empty()) {
        EXPECT_EQ(time.front(), 21600.0 * (static_cast<double>(f) * 4 + 1)) << path;
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The finalise report: every client, every server, the bytes that went
// through, and the same as JSON.
TEST(XiosOutput, ReportsAtFinalise) {
  const std::string dir = xios_test::scratch_dir("report");
  const int servers = xios_test::servers(2);
  std::string xml =
      config(dir, {{"name=\"" + dir + "/rep\" output_freq=\"1ts\"", R"(<field field_ref="t3"/>)"}});
  const std::string from = R"(<options finalise_timeout="30"/>)";
  xml.replace(xml.find(from), from.size(),
              R"(<options finalise_timeout="30" report_json=")" + dir + R"(/report.json"/>)");
  const std::string cfg = xios_test::write_config(dir, xml);
  std::mutex mutex;
  xios_lite::Report report;
  int endpoints = 0;
  const auto model = [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
    for (int s = 1; s <= 3; ++s) {
      c.update_calendar(s);
      c.send_field("t3", xios_test::field_values(1, s, kLevels, b));
    }
    const xios_lite::Report r = c.finalise();
    const std::lock_guard lock(mutex);
    endpoints = comm.size();
    if (comm.rank() == 0) {
      report = r;
    }
  };
  expect_no_errors(xios_test::run(xios_test::run_spec(cfg, servers, model)));
  if (is_reader()) {
    const double data_bytes = 3.0 * kLevels * kNj * kNi * sizeof(double);
    EXPECT_EQ(report.mode, servers > 0 ? "ep" : "synchronous");
    EXPECT_EQ(static_cast<int>(report.clients.size()), endpoints);
    EXPECT_EQ(static_cast<int>(report.servers.size()), servers);
    double sent = 0;
    for (const auto& c : report.clients) {
      EXPECT_GE(c.total_s, c.in_calls_s);
      EXPECT_GE(c.in_calls_s, c.blocked_s);
      EXPECT_GE(c.blocked_ratio(), 0.0);
      sent += c.bytes_sent;
    }
    EXPECT_GE(sent, data_bytes);  // data plus event headers
    double written = 0;
    for (const auto& s : report.servers) {
      EXPECT_GT(s.bytes_received, 0.0);
      EXPECT_GT(s.peak_record_bytes, 0.0);
      EXPECT_GT(s.peak_rss_bytes, 0.0);
      EXPECT_GE(s.busy_s + s.idle_s, 0.0);
      written += s.bytes_written;
    }
    if (servers > 0) {
      EXPECT_EQ(written, data_bytes);
    }
    std::ifstream in(dir + "/report.json");
    const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(json.find("\"clients\": ["), std::string::npos) << json;
    EXPECT_NE(json.find("\"blocked_ratio\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"servers\": ["), std::string::npos) << json;
    if (servers > 0) {
      EXPECT_NE(json.find("\"MBps\""), std::string::npos) << json;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
}  // namespace
