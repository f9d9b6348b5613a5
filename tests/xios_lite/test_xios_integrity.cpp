// xios_lite integrity: a record holds one period's data or is reported
// missing. A field that is due and not sent is an error at the client's next
// call naming the field, the step and the client; every other client hears
// it; its record is _FillValue where the data is missing, and no later
// record shifts. Shapes with one process use the synchronous mode.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "ep/error.hpp"
#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 6;
constexpr int kNj = 8;
constexpr int kSteps = 8;
constexpr double kFill = -999.0;

// configs/test_xios/integrity.xml: "sst" (_FillValue -999) by `operation`
// and "tas" as an instant, written to `dir`/out every `output_freq`.
std::string config(const std::string& dir, const std::string& operation,
                   const std::string& output_freq) {
  return config_file("integrity.xml",
                     {{"DIR", dir}, {"OPERATION", operation}, {"OUTPUT_FREQ", output_freq}});
}

// What each client saw.
struct Seen {
  std::mutex mutex;
  std::vector<std::string> during;  // errors of update_calendar, by client
  std::vector<std::string> at_finalise;
  std::vector<int> here;  // the clients of this process (the others' slots stay empty)
  int clients = 0;
};

// Sends sst and tas at every step but where `skips(rank, step)`; every error
// is caught and the run goes on.
xios_test::RunSpec skipping_run(const std::string& cfg, Seen& seen,
                                std::function<bool(int, int)> skips) {
  xios_test::RunSpec spec =
      xios_test::run_spec(cfg, xios_test::servers(),
                          [&seen, skips](xios_lite::Client& c, const ep::Communicator& comm) {
                            const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
                            std::string during;
                            for (int s = 1; s <= kSteps; ++s) {
                              try {
                                c.update_calendar(s);
                              } catch (const ep::Error& e) {
                                during += std::string(e.what()) + "\n";
                              }
                              if (!skips(comm.rank(), s)) {
                                c.send_field("sst", xios_test::field_values(0, s, 1, b));
                              }
                              c.send_field("tas", xios_test::field_values(1, s, 1, b));
                            }
                            std::string at_finalise;
                            try {
                              (void)c.finalise();
                            } catch (const ep::Error& e) {
                              at_finalise = e.what();
                            }
                            const std::lock_guard lock(seen.mutex);
                            seen.clients = comm.size();
                            seen.during.resize(static_cast<std::size_t>(comm.size()));
                            seen.at_finalise.resize(static_cast<std::size_t>(comm.size()));
                            seen.during[static_cast<std::size_t>(comm.rank())] = during;
                            seen.at_finalise[static_cast<std::size_t>(comm.rank())] = at_finalise;
                            seen.here.push_back(comm.rank());
                          });
  return spec;
}

// The rows of client `rank` in the test's layout.
bool row_of(int rank, int size, int j, int i) {
  const Block b = xios_test::uneven_block(rank, size, kNi, kNj);
  return j >= b.jbegin && j < b.jbegin + b.nj && i >= b.ibegin && i < b.ibegin + b.ni;
}

// The file's sst: every step's values, _FillValue where `missing(step, j, i)`.
void expect_sst(const std::string& dir, const std::function<bool(int, int, int)>& missing) {
  const auto sst = xios_test::read_var(dir + "/out.nc", "sst");
  ASSERT_EQ(sst.size(), static_cast<std::size_t>(kSteps * kNj * kNi));
  std::size_t n = 0;
  for (int s = 1; s <= kSteps; ++s) {
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i, ++n) {
        EXPECT_EQ(sst[n], missing(s, j, i) ? kFill : xios_test::value(0, s, 0, j, i))
            << "step " << s << " j " << j << " i " << i;
      }
    }
  }
}

int total_clients() {
  int threads = omp_get_max_threads();
  MPI_Allreduce(MPI_IN_PLACE, &threads, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int server_threads = servers() > 0 ? omp_get_max_threads() : 0;  // the last rank's
  return threads - server_threads;
}

// Every client skips sst at step 5: the record of 5 h is _FillValue, every
// other record holds its own step (before: the run ended with rc 0, and
// from then on each record of sst held the next step's values).
TEST(XiosIntegrity, EveryClientSkipsAFieldOnce) {
  const std::string dir = xios_test::scratch_dir("skip_all");
  const std::string cfg = xios_test::write_config(dir, config(dir, "instant", "1ts"));
  Seen seen;
  const auto outcome =
      xios_test::run(skipping_run(cfg, seen, [](int, int step) { return step == 5; }));
  for (const int rank : seen.here) {
    const auto r = static_cast<std::size_t>(rank);
    // At the client's next call, naming the field, the step and the client.
    EXPECT_HAS(seen.during[r], "xios_lite::Client::update_calendar: ep rank " + std::to_string(r) +
                                   ": field 'sst' was due at step 5 and was not sent");
    EXPECT_HAS(seen.at_finalise[r], "field 'sst' was due at step 5");
  }
  if (outcome.is_server) {
    EXPECT_HAS(outcome.server_error, "field 'sst' was due at step 5");
    EXPECT_HAS(outcome.server_error, "variable 'sst', record 4 (time 2000-01-01 05:00:00)");
  }
  if (ep_test::world_rank() == 0) {
    expect_sst(dir, [](int s, int, int) { return s == 5; });
    EXPECT_EQ(xios_test::read_var(dir + "/out.nc", "time"),
              (std::vector<double>{3600, 7200, 10800, 14400, 18000, 21600, 25200, 28800}));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The last client skips sst at step 5: its rows of that record are
// _FillValue, the other rows hold step 5 (never step 6: no stitching), and
// every client hears which client missed what (before: rows stitched from
// two steps and a bare "1 records were incomplete at finalise").
TEST(XiosIntegrity, OneClientSkipsAField) {
  if (servers() == 0) {
    // Synchronous mode: the threads of a process send together (a single
    // thread cannot skip a field); EveryClientSkipsAFieldOnce covers it.
    GTEST_SKIP() << "needs a server process";
  }
  const std::string dir = xios_test::scratch_dir("skip_one");
  const std::string cfg = xios_test::write_config(dir, config(dir, "instant", "1ts"));
  const int last = total_clients() - 1;
  Seen seen;
  const auto outcome = xios_test::run(
      skipping_run(cfg, seen, [last](int rank, int step) { return rank == last && step == 5; }));
  const std::string named = "client " + std::to_string(last) + ": field 'sst' was due at step 5";
  for (const int rank : seen.here) {
    const auto r = static_cast<std::size_t>(rank);
    if (rank == last) {
      EXPECT_HAS(seen.during[r], "ep rank " + std::to_string(r) +
                                     ": field 'sst' was due at step 5 and was not sent");
      EXPECT_HAS(seen.at_finalise[r], "field 'sst' was due at step 5");
    } else {
      // Every other client: at finalise for sure (in server modes also at an
      // update_calendar once the servers passed it on).
      EXPECT_HAS(seen.at_finalise[r], named);
    }
  }
  if (outcome.is_server) {
    EXPECT_HAS(outcome.server_error, named);
    EXPECT_HAS(outcome.server_error,
               "file 'out', variable 'sst', record 4 (time 2000-01-01 "
               "05:00:00): no data from clients [" +
                   std::to_string(last) + "]");
  }
  if (ep_test::world_rank() == 0) {
    expect_sst(dir, [last](int s, int j, int i) { return s == 5 && row_of(last, last + 1, j, i); });
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// An average missing one sample on client 0 is not an average of fewer
// samples: that client's points of the period are _FillValue; update_calendar
// jumping over a step is a missing sample too.
TEST(XiosIntegrity, AverageMissingASampleAndSkippedSteps) {
  const std::string dir = xios_test::scratch_dir("skip_avg");
  const std::string cfg = xios_test::write_config(dir, config(dir, "average", "4ts"));
  std::mutex mutex;
  std::vector<std::string> errors;
  std::vector<int> skipped;  // the clients that skip a sample
  // Client 0 skips a sample (synchronous mode: the threads of process 0,
  // which send together).
  const auto skipper = [](const ep::Communicator& comm) {
    return servers() > 0 ? comm.rank() == 0 : comm.process_rank() == 0;
  };
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
        if (skipper(comm)) {
          const std::lock_guard lock(mutex);
          skipped.push_back(comm.rank());
        }
        const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
        std::string seen;
        for (int s = 1; s <= kSteps; ++s) {
          if (s == 6) {
            continue;  // every client jumps from step 5 to step 7
          }
          try {
            c.update_calendar(s);
          } catch (const ep::Error& e) {
            seen += std::string(e.what()) + "\n";
          }
          if (!(skipper(comm) && s == 2)) {
            c.send_field("sst", xios_test::field_values(0, s, 1, b));
          }
          c.send_field("tas", xios_test::field_values(1, s, 1, b));
        }
        try {
          (void)c.finalise();
        } catch (const ep::Error& e) {
          seen += e.what();
        }
        if (skipper(comm)) {
          EXPECT_HAS(seen, "ep rank " + std::to_string(comm.rank()) +
                               ": field 'sst' was due at step 2 and was not sent");
        }
        EXPECT_HAS(seen, "field 'sst' was due at step 6 and was not sent");
        const std::lock_guard lock(mutex);
        errors.push_back(seen);
      });
  (void)xios_test::run(spec);
  const int size = total_clients();  // collective
  if (ep_test::world_rank() == 0) {
    const auto sst = xios_test::read_var(dir + "/out.nc", "sst");
    ASSERT_EQ(sst.size(), static_cast<std::size_t>(2 * kNj * kNi));
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        // Period 1 (steps 1-4): client 0's points missing, the others the mean.
        double mean = 0;
        for (int s = 1; s <= 4; ++s) mean += xios_test::value(0, s, 0, j, i);
        mean *= 0.25;
        const std::size_t at = static_cast<std::size_t>(j * kNi + i);
        bool missing = false;
        for (int r : skipped) missing = missing || row_of(r, size, j, i);
        EXPECT_EQ(sst[at], missing ? kFill : mean) << j << " " << i;
        // Period 2 (steps 5-8): step 6 skipped by every client.
        EXPECT_EQ(sst[static_cast<std::size_t>(kNj * kNi) + at], kFill) << j << " " << i;
      }
    }
    // tas (instant, end of period): step 4, and step 8 (6 was skipped, not 8).
    const auto tas = xios_test::read_var(dir + "/out.nc", "tas");
    ASSERT_EQ(tas.size(), static_cast<std::size_t>(2 * kNj * kNi));
    EXPECT_EQ(tas[0], xios_test::value(1, 4, 0, 0, 0));
    EXPECT_EQ(tas[static_cast<std::size_t>(kNj * kNi)], xios_test::value(1, 8, 0, 0, 0));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The file of SamplesWhereXiosTakesThem: two periods of 8 steps.
void expect_sampled_as_xios(const std::string& path) {
  constexpr int kPeriodSteps = 8;
  const auto mean_of = [](int f, std::vector<int> steps, int j, int i) {
    double sum = 0;
    for (const int s : steps) sum += xios_test::value(f, s, 0, j, i);
    return sum / static_cast<double>(steps.size());
  };
  const std::size_t n = static_cast<std::size_t>(kNj * kNi);
  const auto qsr = xios_test::read_var(path, "qsr");
  const auto lost = xios_test::read_var(path, "lost");
  const auto even = xios_test::read_var(path, "trd_e");
  const auto odd = xios_test::read_var(path, "trd_o");
  const auto sst = xios_test::read_var(path, "sst");
  const auto tas = xios_test::read_var(path, "tas");
  for (const auto* v : {&qsr, &lost, &even, &odd, &sst, &tas}) ASSERT_EQ(v->size(), 2 * n);
  for (int p = 0; p < 2; ++p) {
    const int o = p * kPeriodSteps;
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        const std::size_t at =
            static_cast<std::size_t>(p) * n + static_cast<std::size_t>(j * kNi + i);
        EXPECT_EQ(qsr[at], mean_of(0, {o + 1, o + 5}, j, i)) << p << " " << j << " " << i;
        EXPECT_EQ(lost[at], p == 0 ? mean_of(1, {1, 5}, j, i) : kFill) << p;
        EXPECT_EQ(even[at], mean_of(2, {o + 2, o + 4, o + 6, o + 8}, j, i)) << p;
        EXPECT_EQ(odd[at], mean_of(2, {o + 1, o + 3, o + 5, o + 7}, j, i)) << p;
        // Sent at every step: sampled at steps 1 and 5 of the period.
        EXPECT_EQ(sst[at], mean_of(3, {o + 1, o + 5}, j, i)) << p;
        // An instant sampled every 4 steps: its period's last sample.
        EXPECT_EQ(tas[at], xios_test::value(4, o + 5, 0, j, i)) << p;
      }
    }
  }
}

// XIOS samples a field of freq_op N steps at the first value sent in each
// slot of N steps from start + freq_offset + one step: NEMO sends its
// surface fields at steps 1, 5, 9, ... (freq_op 4ts), its trends at even
// steps (2ts) and odd steps (2ts, freq_offset -1ts), and none of them is
// due at a step it does not send. A slot with nothing sent is named with
// its steps, and its period is _FillValue.
TEST(XiosIntegrity, SamplesWhereXiosTakesThem) {
  const std::string dir = xios_test::scratch_dir("sampling");
  const std::string cfg = xios_test::write_config(dir, config_file("sampling.xml", {{"DIR", dir}}));
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
        std::string seen;
        for (int s = 1; s <= 16; ++s) {
          try {
            c.update_calendar(s);
          } catch (const ep::Error& e) {
            seen += std::string(e.what()) + "\n";
          }
          if ((s - 1) % 4 == 0) c.send_field("qsr", xios_test::field_values(0, s, 1, b));
          if ((s - 1) % 4 == 0 && s < 13) c.send_field("lost", xios_test::field_values(1, s, 1, b));
          c.send_field(s % 2 == 0 ? "trd_e" : "trd_o", xios_test::field_values(2, s, 1, b));
          c.send_field("sst", xios_test::field_values(3, s, 1, b));
          c.send_field("tas", xios_test::field_values(4, s, 1, b));
        }
        try {
          (void)c.finalise();
        } catch (const ep::Error& e) {
          seen += e.what();
        }
        // Only 'lost', whose last slot (steps 13-16) had nothing.
        EXPECT_HAS(seen, "field 'lost' was due in steps 13-16 and was not sent");
        for (const char* id : {"'qsr'", "'trd_e'", "'trd_o'", "'sst'", "'tas'"}) {
          EXPECT_EQ(seen.find(std::string("field ") + id), std::string::npos) << seen;
        }
      });
  const xios_test::Outcome outcome = xios_test::run(spec);
  for (const auto& e : outcome.client_errors) ADD_FAILURE() << "client: " << e;
  if (!outcome.server_error.empty()) {
    EXPECT_HAS(outcome.server_error, "field 'lost' was due in steps 13-16");
  }
  if (ep_test::world_rank() == 0) expect_sampled_as_xios(dir + "/out.nc");
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
