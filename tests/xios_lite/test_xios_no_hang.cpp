// xios_lite error paths end, each within a time budget, with a message
// naming who was waited for: a client destroyed without finalise (an API
// error, or any exception of the model), an error before close_definition,
// clients that let every error propagate, a path that cannot be written. The
// dead client and the dead server are separate programs (kill_model.cpp).
// Every case ran into ctest's timeout before (rc 124 by hand).
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ep/error.hpp"
#include "ep_test.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 8;
constexpr int kNj = 6;
constexpr int kTimeoutS = 3;
// Every case must end well inside this (the waits it may go through are a
// few timeouts at most; most end at once).
constexpr double kBudgetS = 4.0 * kTimeoutS + 3;

std::string config(const std::string& file_name) {
  return xios_test::one_field_config({"hang",
                                      R"(type="gregorian" start_date="2000-01-01" timestep="1h")",
                                      kNi, kNj, "sst", file_name, kTimeoutS});
}

int total_clients() {
  int threads = omp_get_max_threads();
  MPI_Allreduce(MPI_IN_PLACE, &threads, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return threads - (servers() > 0 ? omp_get_max_threads() : 0);
}

// A run and how long it took (every process).
struct Timed {
  xios_test::Outcome outcome;
  double seconds = 0;
};
Timed timed_run(const xios_test::RunSpec& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  Timed t{xios_test::run(spec), 0};
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

// Collects one text per client.
struct Texts {
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> by_client;
  void add(int client, const std::string& text) {
    const std::lock_guard lock(mutex);
    by_client.emplace_back(client, text);
  }
};

// One client leaves without finalise -- its model throws (`api`: an API
// error it does not catch; else an exception of its own) -- while the others
// go on to finalise, catching every error. Before: the server waited in
// receive_until_finalised with no timeout and the job hung (rc 124).
void one_client_leaves(bool api, Mode client_mode) {
  const std::string dir = xios_test::scratch_dir("leaves");
  const std::string cfg = xios_test::write_config(dir, config(dir + "/out"));
  const int leaver = total_clients() - 1;
  const std::string named =
      "client " + std::to_string(leaver) + " was destroyed without finalise after step 3";
  Texts finals;
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = servers();
  spec.mode = client_mode;
  spec.model = [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
    for (int s = 1; s <= 6; ++s) {
      (void)error_of([&] { c.update_calendar(s); });
      if (comm.rank() == leaver && s == 3) {
        if (api) {
          c.send_field("undefined", xios_test::field_values(0, s, 1, b));  // throws
        }
        throw std::runtime_error("the model failed on client " + std::to_string(leaver));
      }
      (void)error_of([&] { c.send_field("sst", xios_test::field_values(0, s, 1, b)); });
    }
    finals.add(comm.rank(), error_of([&] { (void)c.finalise(); }));
  };
  const Timed t = timed_run(spec);
  EXPECT_LT(t.seconds, kBudgetS);
  for (const auto& [client, text] : finals.by_client) {
    EXPECT_HAS(text, "xios_lite::Client::finalise");
    EXPECT_HAS(text, named);
  }
  for (const std::string& e : t.outcome.client_errors) {
    EXPECT_HAS(e, api ? "field 'undefined' was never defined" : "the model failed");
  }
  if (t.outcome.is_server) {
    EXPECT_HAS(t.outcome.server_error, named);
    // Its records from step 3 on are _FillValue where it held points, and named.
    // (funneled: the leaver's process, whose threads no longer meet).
    EXPECT_HAS(t.outcome.server_error,
               "record 2 (time 2000-01-01 03:00:00): no data from clients [" +
                   std::string(client_mode == Mode::kFunneled ? "" : std::to_string(leaver)));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosNoHang, ClientLeavesAfterAnApiError) { one_client_leaves(true, mode()); }

TEST(XiosNoHang, ClientLeavesAfterAModelError) { one_client_leaves(false, mode()); }

// The same in the funneled mode: a thread destroyed without finalise breaks
// its process's meeting point instead of leaving the others in it.
TEST(XiosNoHang, ThreadLeavesInFunneledMode) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  one_client_leaves(false, Mode::kFunneled);
}

// Every client lets every error propagate (no catch in the model): one
// client's model fails, the servers pass it on, the others fail at their next
// update_calendar. Every process ends.
TEST(XiosNoHang, ErrorsPropagatingEndEveryClient) {
  const std::string dir = xios_test::scratch_dir("propagate");
  const std::string cfg = xios_test::write_config(dir, config(dir + "/out"));
  const int failing = total_clients() - 1;
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
        for (int s = 1; s <= 40; ++s) {
          c.update_calendar(s);
          if (comm.rank() == failing && s == 3) {
            throw std::runtime_error("the model failed");
          }
          c.send_field("sst", xios_test::field_values(0, s, 1, b));
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        (void)c.finalise();
      });
  const Timed t = timed_run(spec);
  EXPECT_LT(t.seconds, kBudgetS);
  if (!t.outcome.is_server) {
    EXPECT_FALSE(t.outcome.client_errors.empty());
  }
  if (t.outcome.is_server) {
    EXPECT_HAS(t.outcome.server_error, "client " + std::to_string(failing) +
                                           " was destroyed without finalise after step 3");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// An error before close_definition (a block of an unknown domain) on the
// last client. Caught (`destroyed` false): the client then calls finalise
// while the others close the definition; every client fails in its call,
// naming the one elsewhere, and the servers stop (the definition failed).
// Before: finalise threw "called before close_definition" and the job hung
// (rc 124). Not caught: the client is destroyed before close_definition, it
// tells the others, who fail in close_definition naming it.
void error_before_close_definition(bool destroyed) {
  const std::string dir = xios_test::scratch_dir("before_close");
  const std::string cfg = xios_test::write_config(dir, config(dir + "/out"));
  const int odd = total_clients() - 1;
  Texts texts;
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        if (comm.rank() == odd && destroyed) {
          c.set_domain_block("nope", b);  // throws: the Client is destroyed
        }
        if (comm.rank() == odd) {
          EXPECT_HAS(error_of([&] { c.set_domain_block("nope", b); }), "unknown domain 'nope'");
          texts.add(comm.rank(), error_of([&] { (void)c.finalise(); }));
          return;
        }
        c.set_domain_block("dom", b);
        texts.add(comm.rank(), error_of([&] { c.close_definition(); }));
      });
  const Timed t = timed_run(spec);
  EXPECT_LT(t.seconds, kBudgetS);
  const std::string elsewhere = destroyed
                                    ? "client " + std::to_string(odd) +
                                          " was destroyed without finalise before close_definition"
                                    : "client " + std::to_string(odd) +
                                          " called finalise while client 0 called close_definition";
  for (const auto& [client, text] : texts.by_client) {
    EXPECT_HAS(text, client == odd ? "xios_lite::Client::finalise"
                                   : "xios_lite::Client::close_definition");
    if (odd > 0) {
      EXPECT_HAS(text, elsewhere);
    }
  }
  if (t.outcome.is_server) {
    EXPECT_HAS(t.outcome.server_error, destroyed ? elsewhere : "the clients' definition failed");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosNoHang, ErrorBeforeCloseDefinition) { error_before_close_definition(false); }

TEST(XiosNoHang, DestroyedBeforeCloseDefinition) { error_before_close_definition(true); }

// A path that cannot be written, clients that let the error escape: each
// one hears it at an update_calendar (never in send_field) or at finalise,
// and every process ends. Before: one run of two hung.
TEST(XiosNoHang, UnwritablePathWithPropagatingErrors) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process (the synchronous mode fails at once)";
  }
  const std::string dir = xios_test::scratch_dir("unwritable_propagate");
  const std::string bad = dir + "/no_such_dir/out";
  const std::string cfg = xios_test::write_config(dir, config(bad));
  Texts texts;
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
        std::string where = "finalise";
        const std::string e = error_of([&] {
          for (int s = 1; s <= 40; ++s) {
            where = "update_calendar";
            c.update_calendar(s);
            where = "send_field";
            c.send_field("sst", xios_test::field_values(0, s, 1, b));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          where = "finalise";
          (void)c.finalise();
        });
        EXPECT_NE(where, "send_field") << e;
        texts.add(comm.rank(), e);
      });
  const Timed t = timed_run(spec);
  EXPECT_LT(t.seconds, kBudgetS);
  for (const auto& [client, text] : texts.by_client) {
    EXPECT_HAS(text, bad);
  }
  if (t.outcome.is_server) {
    EXPECT_HAS(t.outcome.server_error, bad);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
