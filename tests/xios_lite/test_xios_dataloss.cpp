// Data that used to be lost or misreported, end to end: a write error stays
// in its file (the other files are written whole) and is reported with its
// real cause and the records it truly cost; a clash of names is refused at
// close_definition on every client, before any file exists; the parts of a
// multiple_file set name their dimensions alike; update_calendar(0) before
// the first step does nothing, as in XIOS. Shapes with one process
// have no server: the tests that are about the servers skip there.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ep/error.hpp"
#include "ep/typed.hpp"
#include "ep_test.hpp"
#include "field_data.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 8;
constexpr int kNj = 4;

std::string context(const std::string& domains, const std::string& fields,
                    const std::string& files) {
  ContextXml c;
  c.id = "loss";
  c.domains = domains;
  c.grids = R"(<grid id="g2" domain_ref="dom"/><grid id="gs" domain_ref="strip"/>)";
  c.fields = fields;
  c.files = files;
  return context_config(c);
}

const std::string kDomains =
    R"(<domain id="dom" ni_glo="8" nj_glo="4"/><domain id="strip" ni_glo="5" nj_glo="1"/>)";

// The context of the write error tests: field t on dom in two files written
// every step, `first` (at `first_path`, of `type` when given) and "good"
// beside it in `dir`.
std::string two_files(const std::string& dir, const std::string& first,
                      const std::string& first_path, const std::string& type = "") {
  const std::string attrs = R"(" output_freq="1ts")" +
                            (type.empty() ? std::string() : R"( type=")" + type + R"(")") +
                            R"(><field field_ref="t"/></file>)";
  return context(kDomains, R"(<field id="t" grid_ref="g2" operation="instant"/>)",
                 R"(<file id=")" + first + R"(" name=")" + first_path + attrs +
                     R"(<file id="good" name=")" + dir + "/good" + attrs);
}

// Every client's blocks: its uneven share of dom, and the whole strip on
// client 0. Returns the block of dom.
Block set_blocks(xios_lite::Client& c, const ep::Communicator& comm) {
  const Block b = uneven_block(comm, kNi, kNj);
  c.set_domain_block("dom", b);
  c.set_domain_block("strip", comm.rank() == 0 ? Block{0, 5, 0, 1} : Block{0, 0, 0, 0});
  return b;
}

// The values of steps first..last of field_values(0) over all of dom, record after record.
std::vector<double> records(int first, int last) {
  const Block all{0, kNi, 0, kNj};
  std::vector<double> want;
  for (int s = first; s <= last; ++s) {
    const std::vector<double> one = field_values(0, s, 1, all);
    want.insert(want.end(), one.begin(), one.end());
  }
  return want;
}

// The steps of a model that goes on after a write error: it steps until
// every client has heard of the error (at an update_calendar), then two
// more, so that data reaches the servers after they know of it. Returns
// the steps made (the same on every client) and what this client heard
// first, then at finalise.
struct StepsAfterError {
  int steps = 0;
  std::string first;
  std::string at_finalise;
};
StepsAfterError step_past_the_error(xios_lite::Client& c, const ep::Communicator& comm,
                                    const Block& b) {
  constexpr int kMaxSteps = 400;  // about 2 s: the error is heard within a few steps
  StepsAfterError out;
  int after = 0;
  while (after < 2 && out.steps < kMaxSteps) {
    ++out.steps;
    // The error is raised once, at an update_calendar (the step has begun
    // all the same); the run goes on.
    const std::string e = error_of([&] { c.update_calendar(out.steps); });
    c.send_field("t", field_values(0, out.steps, 1, b));
    out.first = out.first.empty() ? e : out.first;
    if (ep::allreduce(comm, out.first.empty() ? 0 : 1, MPI_MIN) == 1) {
      ++after;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  out.at_finalise = error_of([&] { (void)c.finalise(); });
  return out;
}

// What a report says of `file`'s records first..last, lost after its write error.
std::string lost(const std::string& file, int first, int last) {
  return "file '" + file + "': " + std::to_string(last - first + 1) +
         " record(s) not written after its write error (records " + std::to_string(first) + " to " +
         std::to_string(last) + ")";
}

// The records of `path`'s variable t are steps 1..steps of field_values(0).
void expect_every_step(const std::string& path, int steps) {
  EXPECT_EQ(static_cast<int>(dim_len(path, "time")), steps) << path;
  EXPECT_EQ(read_var(path, "t"), records(1, steps)) << path;
}

// XIOS_LITE_TEST_WRITE_FAILURE set on every process for the duration of
// one run (output_files.hpp: the writer it names fails after that record).
class InjectedWriteFailure {
 public:
  explicit InjectedWriteFailure(const std::string& what) {
    setenv("XIOS_LITE_TEST_WRITE_FAILURE", what.c_str(), 1);
  }
  ~InjectedWriteFailure() { unsetenv("XIOS_LITE_TEST_WRITE_FAILURE"); }
  InjectedWriteFailure(const InjectedWriteFailure&) = delete;
  InjectedWriteFailure& operator=(const InjectedWriteFailure&) = delete;
};

// A run of `cfg` (n_servers servers) whose model steps past a write error
// (step_past_the_error), with the failure `inject` (XIOS_LITE_TEST_WRITE_FAILURE)
// when not empty. Collective over MPI_COMM_WORLD.
struct PastTheError {
  Outcome outcome;
  std::vector<StepsAfterError> seen;  // one per client of this process
  int steps = 0;                      // the steps made, the most of every client
};
PastTheError run_past_the_error(const std::string& cfg, int n_servers,
                                const std::string& inject = "") {
  PastTheError out;
  std::mutex mutex;
  RunSpec spec = run_spec(cfg, n_servers, [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = set_blocks(c, comm);
    c.close_definition();
    const StepsAfterError s = step_past_the_error(c, comm, b);
    const std::lock_guard lock(mutex);
    out.seen.push_back(s);
  });
  if (inject.empty()) {
    out.outcome = run(spec);
  } else {
    const InjectedWriteFailure failure(inject);
    out.outcome = run(spec);
  }
  for (const StepsAfterError& s : out.seen) out.steps = std::max(out.steps, s.steps);
  MPI_Allreduce(MPI_IN_PLACE, &out.steps, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

// On a server process: its report of a failed file (a kIo error) names
// `cause` and the records of `file` from `first_lost` on that it did not
// write, and no record was written with _FillValue (the good file lost
// nothing).
void expect_write_error_report(const PastTheError& r, const std::string& cause,
                               const std::string& file, int first_lost) {
  if (!r.outcome.is_server) return;
  EXPECT_HAS(r.outcome.server_error, cause);
  EXPECT_HAS(r.outcome.server_error, lost(file, first_lost, r.steps - 1));
  EXPECT_EQ(r.outcome.server_error.find("_FillValue"), std::string::npos) << r.outcome.server_error;
  EXPECT_EQ(r.outcome.server_error_kind, ep::ErrorKind::kIo) << r.outcome.server_error;
}

// One file in a missing directory, one beside it: the good file holds every
// record, those sent after the servers knew of the error too (before: the
// servers dropped every file's data once one file had failed, so records
// of the good file went missing or were written with _FillValue, and the
// report's count of lost records depended on timing); the servers say why
// the other failed as the operating system says it, and list the records
// of that file only: every one.
TEST(XiosDataLoss, WriteErrorStaysInItsFile) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process (the synchronous mode: SynchronousWriteError...)";
  }
  const std::string dir = scratch_dir("write_error_file");
  const std::string bad = dir + "/no_such_dir/bad";
  const PastTheError r =
      run_past_the_error(write_config(dir, two_files(dir, "bad", bad)), servers());
  for (const StepsAfterError& s : r.seen) {
    EXPECT_HAS(s.first + " | " + s.at_finalise, "nc_create");
    EXPECT_HAS(s.first, "No such file or directory");
    EXPECT_HAS(s.at_finalise, "No such file or directory");
  }
  expect_write_error_report(r, "No such file or directory (directory '" + dir + "/no_such_dir/')",
                            "bad", 0);
  if (is_reader()) {
    expect_every_step(dir + "/good.nc", r.steps);
    EXPECT_FALSE(file_exists(bad + ".nc"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The records of `path`'s variable t begin with steps 1..steps of field_values(0).
void expect_first_steps(const std::string& path, int steps) {
  const std::vector<double> want = records(1, steps);
  std::vector<double> t = read_var(path, "t");
  ASSERT_GE(t.size(), want.size()) << path;  // the reader alone: no collective follows here
  t.resize(want.size());
  EXPECT_EQ(t, want) << path;
}

// The synchronous mode (the clients write, no server): a file in a missing
// directory fails alone, the other file gets every record, every client
// hears the cause at update_calendar and again at finalise with the
// records lost, all of them (before: the failed write was thrown out of
// the middle of a step, whose other records were never written, and the
// lost records were not reported).
TEST(XiosDataLoss, SynchronousWriteErrorStaysInItsFile) {
  const std::string dir = scratch_dir("sync_write_error");
  const std::string bad = dir + "/no_such_dir/bad";
  const PastTheError r = run_past_the_error(write_config(dir, two_files(dir, "bad", bad)), 0);
  for (const StepsAfterError& s : r.seen) {
    EXPECT_HAS(s.first, "nc_create_par");
    EXPECT_HAS(s.first, "No such file or directory (directory '" + dir + "/no_such_dir/')");
    EXPECT_HAS(s.at_finalise, "No such file or directory");
    EXPECT_HAS(s.at_finalise, lost("bad", 0, s.steps - 1));
    EXPECT_EQ(s.at_finalise.find("'good'"), std::string::npos) << s.at_finalise;
  }
  if (is_reader()) {
    expect_every_step(dir + "/good.nc", r.steps);
    EXPECT_FALSE(file_exists(bad + ".nc"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The synchronous mode, a write that fails on one client process only
// (the second, after record 1): every process stops that file together
// (before: the failing process left the file while the others went on
// into its next collective write), every client hears the failing
// process's cause, the records lost are 1 on, and the other file is whole.
TEST(XiosDataLoss, SynchronousWriteErrorOnOneProcess) {
  if (ep_test::world_size() < 2) {
    GTEST_SKIP() << "needs two client processes";
  }
  const std::string dir = scratch_dir("sync_one_process");
  const std::string cfg = write_config(dir, two_files(dir, "shared", dir + "/shared"));
  const PastTheError r = run_past_the_error(cfg, 0, "shared:1:1");
  for (const StepsAfterError& s : r.seen) {
    for (const std::string& e : {s.first, s.at_finalise}) {
      EXPECT_HAS(e, "file '" + dir + "/shared.nc': Input/output error");
      EXPECT_HAS(e, "XIOS_LITE_TEST_WRITE_FAILURE after record 1");
    }
    EXPECT_HAS(s.at_finalise, lost("shared", 1, s.steps - 1));
  }
  if (is_reader()) {
    expect_every_step(dir + "/good.nc", r.steps);
    expect_first_steps(dir + "/shared.nc", 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A one_file file written by two server processes fails on the second
// only, after record 1: both stop it together, nothing hangs (before: the
// first server went on into the file's next collective write alone), both
// report the cause and the same records lost (1 on), every client hears
// it, and the other file is whole.
TEST(XiosDataLoss, OneFileWriteErrorOnOneServer) {
  if (servers(2) < 2) {
    GTEST_SKIP() << "needs two server processes";
  }
  const std::string dir = scratch_dir("one_file_one_server");
  const std::string cfg = write_config(dir, two_files(dir, "shared", dir + "/shared", "one_file"));
  const PastTheError r = run_past_the_error(cfg, 2, "shared:1:1");
  for (const StepsAfterError& s : r.seen) {
    EXPECT_HAS(s.first, "Input/output error");
    EXPECT_HAS(s.at_finalise, "Input/output error");
    EXPECT_HAS(s.at_finalise, "XIOS_LITE_TEST_WRITE_FAILURE after record 1");
  }
  // Each server's own report: the cause, and the records it did not write.
  expect_write_error_report(r, "file '" + dir + "/shared.nc': Input/output error", "shared", 1);
  if (is_reader()) {
    expect_every_step(dir + "/good.nc", r.steps);
    expect_first_steps(dir + "/shared.nc", 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A variable named like a coordinate of its file, with the domain sized by
// the model: every client's close_definition fails naming both places, and
// no file is created.
TEST(XiosDataLoss, NameClashFailsAtCloseDefinitionOnEveryClient) {
  const std::string dir = scratch_dir("name_clash");
  const std::string text = context(
      R"(<domain id="dom"/><domain id="strip" ni_glo="5" nj_glo="1"/>)",
      R"(<field id="t" grid_ref="g2" operation="average"/>)",
      R"(<file id="out" name=")" + dir +
          R"(/out" output_freq="2ts"><field field_ref="t"/><field field_ref="t" name="time"/></file>)");
  const std::string cfg = write_config(dir, text);
  std::mutex mutex;
  std::vector<std::string> seen;
  RunSpec spec = run_spec(cfg, servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = uneven_block(comm, kNi, kNj);
    xios_lite::DomainAttributes a;
    a.ni_glo = kNi;
    a.nj_glo = kNj;
    c.set_domain_attr("dom", a);
    c.set_domain_block("dom", b);
    c.set_domain_block("strip", comm.rank() == 0 ? Block{0, 5, 0, 1} : Block{0, 0, 0, 0});
    const std::string e = error_of([&] { c.close_definition(); });
    const std::lock_guard lock(mutex);
    seen.push_back(e);
  });
  (void)run(spec);
  int clients = 0;
  for (const std::string& e : seen) {
    ++clients;
    EXPECT_HAS(e, "close_definition");
    EXPECT_HAS(e,
               "iodef.xml:7: <field> attribute name: name 'time' of variable 'time' in file 'out'");
    EXPECT_HAS(e, "iodef.xml:7: <file id=\"out\">) is already the name of the time axis");
  }
  int all = 0;
  MPI_Allreduce(&clients, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(all, 0);
  if (is_reader()) {
    EXPECT_FALSE(file_exists(dir + "/out.nc"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Two domains in a multiple_file file over two server processes, the strip
// held by the first alone: the second process's part names its dimensions
// as the first's ("lat_dom", not "lat").
TEST(XiosDataLoss, MultipleFilePartsNameDimensionsAlike) {
  if (servers(2) < 2) {
    GTEST_SKIP() << "needs two server processes";
  }
  const std::string dir = scratch_dir("parts_names");
  const std::string text = context(
      kDomains,
      R"(<field id="t" grid_ref="g2" operation="instant"/><field id="s" grid_ref="gs" operation="instant"/>)",
      R"(<file id="parts" name=")" + dir +
          R"(/parts" output_freq="1ts"><field field_ref="t"/><field field_ref="s"/></file>)");
  const std::string cfg = write_config(dir, text);
  RunSpec spec = run_spec(cfg, 2, [](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = uneven_block(comm, kNi, kNj);
    const Block strip = comm.rank() == 0 ? Block{0, 5, 0, 1} : Block{0, 0, 0, 0};
    c.set_domain_block("dom", b);
    c.set_domain_block("strip", strip);
    close_and_step(c, 2, [&](int s) {
      c.send_field("t", field_values(0, s, 1, b));
      c.send_field("s", field_values(5, s, 1, strip));
    });
  });
  expect_no_errors(run(spec));
  if (is_reader()) {
    const std::vector<std::string> dims = {"time", "lat_dom", "lon_dom"};
    EXPECT_EQ(var_dims(dir + "/parts_0.nc", "t"), dims);
    EXPECT_EQ(var_dims(dir + "/parts_1.nc", "t"), dims);
    EXPECT_EQ(var_dims(dir + "/parts_0.nc", "s"),
              (std::vector<std::string>{"time", "lat_strip", "lon_strip"}));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The report's bytes_written counts the values in their type: a prec="4"
// variable 4 bytes per value, a zoom its window (before: 8 bytes per
// value of the whole record, whatever the variable).
TEST(XiosDataLoss, BytesWrittenFollowPrecAndWindow) {
  if (servers() == 0) {
    GTEST_SKIP() << "the servers' report (the synchronous mode reports no bytes written)";
  }
  const std::string dir = scratch_dir("bytes_written");
  std::string text = context(
      kDomains, R"(<field id="t" grid_ref="g2" operation="instant"/>)",
      R"(<file id="out" name=")" + dir +
          R"(/out" output_freq="1ts"><field field_ref="t" name="t8"/><field field_ref="t" name="t4" prec="4"/><field field_ref="t" name="tz" grid_ref="gz"/></file>)");
  text.replace(
      text.find("</domain_definition>"), 0,
      R"(<domain id="box" domain_ref="dom"><zoom_domain ibegin="1" ni="3" jbegin="1" nj="2"/></domain>)");
  text.replace(text.find("</grid_definition>"), 0, R"(<grid id="gz" domain_ref="box"/>)");
  const std::string cfg = write_config(dir, text);
  std::mutex mutex;
  std::vector<double> totals;
  RunSpec spec = run_spec(cfg, servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = set_blocks(c, comm);
    c.close_definition();
    for (int s = 1; s <= 2; ++s) {
      c.update_calendar(s);
      c.send_field("t", field_values(0, s, 1, b));
    }
    const xios_lite::Report r = c.finalise();
    double total = 0;
    for (const auto& server : r.servers) total += server.bytes_written;
    const std::lock_guard lock(mutex);
    totals.push_back(total);
  });
  expect_no_errors(run(spec));
  // 2 records of 32 values in double and in float, and of the 3 x 2 window in double.
  for (const double t : totals) {
    EXPECT_EQ(t, 2.0 * (kNi * kNj * 8 + kNi * kNj * 4 + 3 * 2 * 8));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// update_calendar(0) right after close_definition (NEMO's first call): it
// does nothing, as XIOS's calendar is already at its start date; the steps
// after it are written as without it. A step that does not grow afterwards
// is still refused, naming the step and the previous one.
TEST(XiosDataLoss, UpdateCalendarZeroBeforeTheFirstStep) {
  const std::string dir = scratch_dir("calendar_zero");
  const std::string text = context(kDomains, R"(<field id="t" grid_ref="g2" operation="instant"/>)",
                                   R"(<file id="out" name=")" + dir +
                                       R"(/out" output_freq="1ts"><field field_ref="t"/></file>)");
  const std::string cfg = write_config(dir, text);
  std::mutex mutex;
  std::vector<std::vector<std::string>> seen;
  RunSpec spec = run_spec(cfg, servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = set_blocks(c, comm);
    c.close_definition();
    std::vector<std::string> e;
    e.push_back(error_of([&] { c.update_calendar(0); }));
    e.push_back(error_of([&] { c.update_calendar(0); }));
    for (int s = 1; s <= 2; ++s) {
      c.update_calendar(s);
      c.send_field("t", field_values(0, s, 1, b));
    }
    e.push_back(error_of([&] { c.update_calendar(0); }));
    e.push_back(error_of([&] { c.update_calendar(2); }));
    (void)c.finalise();
    const std::lock_guard lock(mutex);
    seen.push_back(e);
  });
  expect_no_errors(run(spec));
  for (const std::vector<std::string>& e : seen) {
    EXPECT_EQ(e[0], "");
    EXPECT_EQ(e[1], "");
    EXPECT_HAS(e[2], "update_calendar");
    EXPECT_HAS(e[2], "step 0 goes backwards (the previous step was 2)");
    EXPECT_HAS(e[3], "step 2 goes backwards (the previous step was 2)");
  }
  if (is_reader()) {
    EXPECT_EQ(read_var(dir + "/out.nc", "t"), records(1, 2));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
