// xios_lite error cases: each is a clear ep::Error naming the call, the
// rank and the value, raised on every endpoint concerned, and no run hangs.
// Shapes with one process use the synchronous mode (no room for a server).
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ep/error.hpp"
#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 8;
constexpr int kNj = 4;

std::string config(const std::string& file_name, int finalise_timeout_s = 20) {
  return xios_test::one_field_config({"err",
                                      R"(type="360_day" start_date="2000-01-01" timestep="30mi")",
                                      kNi, kNj, "t2", file_name, finalise_timeout_s});
}

TEST(XiosErrors, ApiMisuseIsAClearError) {
  const std::string dir = xios_test::scratch_dir("misuse");
  const std::string cfg = xios_test::write_config(dir, config(dir + "/out"));
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        const auto good = xios_test::field_values(0, 1, 1, b);
        const std::string rank = "ep rank " + std::to_string(comm.rank());
        std::string e = error_of([&] { c.send_field("t2", good); });
        EXPECT_HAS(e, "xios_lite::Client::send_field");
        EXPECT_HAS(e, rank);
        EXPECT_HAS(e, "send before close_definition (field 't2')");
        EXPECT_HAS(error_of([&] { c.set_domain_block("ocean", b); }), "unknown domain 'ocean'");
        EXPECT_HAS(error_of([&] {
                     c.set_domain_block("dom", {0, kNi + 1, 0, 1});
                   }),
                   "outside domain 'dom'");
        c.set_domain_block("dom", b);
        c.close_definition();
        EXPECT_HAS(error_of([&] { c.send_field("t2", good); }), "before the first update_calendar");
        c.update_calendar(1);
        e = error_of([&] { c.send_field("nope", good); });
        EXPECT_HAS(e, "field 'nope' was never defined");
        EXPECT_HAS(e, rank);
        const std::vector<double> wrong(good.size() + 1, 0.0);
        EXPECT_HAS(
            error_of([&] { c.send_field("t2", wrong); }),
            std::to_string(wrong.size()) + " values, expected " + std::to_string(good.size()));
        c.send_field("t2", good);
        EXPECT_HAS(error_of([&] { c.send_field("t2", good); }), "field 't2' sent twice in step 1");
        e = error_of([&] { c.update_calendar(1); });
        EXPECT_HAS(e, "xios_lite::Client::update_calendar");
        EXPECT_HAS(e, "step 1 goes backwards (the previous step was 1)");
        c.update_calendar(2);
        c.send_field("t2", xios_test::field_values(0, 2, 1, b));
        (void)c.finalise();
        EXPECT_HAS(error_of([&] { c.update_calendar(3); }), "called after finalise");
      });
  const auto outcome = xios_test::run(spec);
  for (const auto& e : outcome.client_errors) {
    ADD_FAILURE() << "unexpected: " << e;
  }
  EXPECT_EQ(outcome.server_error, "");
  if (ep_test::world_rank() == 0) {
    // The misuse changed nothing: two good records.
    EXPECT_EQ(xios_test::dim_len(dir + "/out.nc", "time"), 2);
    EXPECT_EQ(xios_test::read_var(dir + "/out.nc", "t2").size(),
              static_cast<std::size_t>(2 * kNi * kNj));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A file in a missing directory: the writer fails, and every client hears
// it at a later call or at finalise, with the path in the message.
TEST(XiosErrors, WriteErrorReachesEveryClient) {
  const std::string dir = xios_test::scratch_dir("unwritable");
  const std::string bad = dir + "/no_such_dir/out";
  const std::string cfg = xios_test::write_config(dir, config(bad));
  std::mutex mutex;
  int endpoints = 0;
  int told = 0;
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
        std::string seen;
        for (int s = 1; s <= 4; ++s) {
          const std::string e = error_of([&] {
            c.update_calendar(s);
            c.send_field("t2", xios_test::field_values(0, s, 1, b));
          });
          seen = seen.empty() ? e : seen;
        }
        const std::string at_finalise = error_of([&] { (void)c.finalise(); });
        seen = seen.empty() ? at_finalise : seen;
        EXPECT_HAS(seen, bad);
        EXPECT_HAS(seen, "nc_create");
        if (servers() > 0) {
          EXPECT_HAS(at_finalise, "xios_lite::Client::finalise");  // and again at finalise
          EXPECT_HAS(at_finalise, bad);
        }
        const std::lock_guard lock(mutex);
        ++endpoints;
        told += seen.find(bad) != std::string::npos ? 1 : 0;
      });
  const auto outcome = xios_test::run(spec);
  EXPECT_EQ(told, endpoints);
  if (outcome.is_server) {
    EXPECT_HAS(outcome.server_error, bad);
    EXPECT_EQ(outcome.server_error_kind, ep::ErrorKind::kIo) << outcome.server_error;
  }
  if (ep_test::world_rank() == 0) {
    EXPECT_FALSE(xios_test::file_exists(bad + ".nc"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Blocks that leave a gap, or overlap: close_definition fails on every
// client with the same message, and the servers stop cleanly.
TEST(XiosErrors, BlocksMustCoverTheDomainOnce) {
  const std::string dir = xios_test::scratch_dir("blocks");
  const std::string cfg = xios_test::write_config(dir, config(dir + "/out"));
  for (const bool overlap : {false, true}) {
    std::mutex mutex;
    std::vector<std::string> messages;
    xios_test::RunSpec spec = xios_test::run_spec(
        cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
          Block b = xios_test::uneven_block(comm, kNi, kNj);
          if (overlap) {
            b = Block{0, kNi, 0,
                      comm.rank() < 2 ? kNj : 0};  // the first two clients both take everything
          } else if (comm.rank() == comm.size() - 1) {
            b.nj -= 1;  // the last client leaves a row out
          }
          c.set_domain_block("dom", b);
          const std::string e = error_of([&] { c.close_definition(); });
          EXPECT_HAS(e, "xios_lite::Client::close_definition");
          const std::lock_guard lock(mutex);
          messages.push_back(e);
        });
    int clients = 0;
    const auto outcome = xios_test::run(spec);
    clients = static_cast<int>(messages.size());
    if (overlap && clients < 2) {
      continue;  // one client cannot overlap itself
    }
    for (const auto& m : messages) {
      EXPECT_HAS(m, overlap ? "blocks overlap: client 0 [i 0+8, j 0+4] and client 1 [i 0+8, j 0+4]"
                            : "of its 32 points (every point needs exactly one client)");
    }
    if (outcome.is_server) {
      EXPECT_HAS(outcome.server_error, "the clients' definition failed");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Every call after a failed close_definition says that the definition was
// refused, with its error (never "after finalise"); finalise then throws
// that error once, and a second finalise is refused as a second call.
TEST(XiosErrors, CallsAfterAFailedCloseDefinitionNameTheRefusal) {
  const std::string dir = xios_test::scratch_dir("refused");
  const std::string cfg = xios_test::write_config(dir, config(dir + "/out"));
  const std::string refusal = "of its 32 points (every point needs exactly one client)";
  std::mutex mutex;
  int endpoints = 0;
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [&](xios_lite::Client& c, const ep::Communicator& comm) {
        Block b = xios_test::uneven_block(comm, kNi, kNj);
        if (comm.rank() == comm.size() - 1) {
          b.nj -= 1;  // the last client leaves a row out
        }
        c.set_domain_block("dom", b);
        EXPECT_HAS(error_of([&] { c.close_definition(); }), refusal);
        const std::string rank = "ep rank " + std::to_string(comm.rank());
        const std::vector<double> values(static_cast<std::size_t>(kNi * kNj), 0.0);
        std::vector<double> room(values.size());
        const auto expect_refused = [&](const char* call, const std::string& e) {
          EXPECT_HAS(e, std::string("xios_lite::Client::") + call);
          EXPECT_HAS(e, rank);
          EXPECT_HAS(e, "called after close_definition failed");
          EXPECT_HAS(e, refusal);
          EXPECT_EQ(e.find("after finalise"), std::string::npos) << e;
        };
        expect_refused("update_calendar", error_of([&] { c.update_calendar(1); }));
        expect_refused("send_field", error_of([&] { c.send_field("t2", values); }));
        expect_refused("recv_field", error_of([&] { c.recv_field("t2", room); }));
        expect_refused("send_shape", error_of([&] { (void)c.send_shape("t2"); }));
        expect_refused("set_domain_block", error_of([&] { c.set_domain_block("dom", b); }));
        expect_refused("close_definition", error_of([&] { c.close_definition(); }));
        std::string e = error_of([&] { (void)c.finalise(); });
        EXPECT_HAS(e, "xios_lite::Client::finalise");
        EXPECT_HAS(e, rank);
        EXPECT_HAS(e, "close_definition failed");
        EXPECT_HAS(e, refusal);
        EXPECT_EQ(e.find("called twice"), std::string::npos) << e;
        e = error_of([&] { (void)c.finalise(); });
        EXPECT_HAS(e, "called twice");
        expect_refused("update_calendar", error_of([&] { c.update_calendar(1); }));
        const std::lock_guard lock(mutex);
        ++endpoints;
      });
  const auto outcome = xios_test::run(spec);
  for (const auto& e : outcome.client_errors) {
    ADD_FAILURE() << "unexpected: " << e;
  }
  if (outcome.is_server) {
    EXPECT_HAS(outcome.server_error, "the clients' definition failed");
  } else {
    EXPECT_GT(endpoints, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A client that finalises long after the others: every server endpoint
// stops waiting for it `finalise_timeout` after its last message (the
// others went on) and names it; the clients that finalised hear it from the
// servers, and the late one gives up waiting for servers that are done.
// Nothing hangs. Two receiving endpoints per server process.
TEST(XiosErrors, FinaliseTimeoutNamesTheMissingClient) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  constexpr int kTimeoutS = 2;
  const std::string dir = xios_test::scratch_dir("finalise_timeout");
  const std::string cfg = xios_test::write_config(dir, config(dir + "/out", kTimeoutS));
  std::mutex mutex;
  std::vector<std::string> client_errors;
  std::string late_error;
  bool have_late = false;
  // The last client endpoint (every client process runs OMP_NUM_THREADS).
  const int late = (ep_test::world_size() - servers()) * omp_get_max_threads() - 1;
  const std::string named = "client " + std::to_string(late) + " is gone";
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = servers();
  spec.mode = mode();
  spec.server_threads = 2;
  spec.model = [&](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = xios_test::define_uneven_block(c, comm, kNi, kNj);
    c.update_calendar(1);
    c.send_field("t2", xios_test::field_values(0, 1, 1, b));
    EXPECT_EQ(comm.size() - 1, late);
    if (comm.rank() == late) {
      // Well past the servers' timeout, counted from its last message
      // (a margin of two timeouts for a loaded machine).
      std::this_thread::sleep_for(std::chrono::seconds(3 * kTimeoutS));
    }
    const std::string e = error_of([&] { (void)c.finalise(); });
    const std::lock_guard lock(mutex);
    have_late = have_late || comm.rank() == late;
    (comm.rank() == late ? late_error : client_errors.emplace_back()) = e;
  };
  const auto start = std::chrono::steady_clock::now();
  const auto outcome = xios_test::run(spec);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& e : client_errors) {
    EXPECT_HAS(e, "xios_lite::Client::finalise");
    EXPECT_HAS(e, named);
  }
  if (have_late) {
    // The late client: the servers are done, it says so within its own timeout.
    EXPECT_HAS(late_error, "xios_lite::Client::finalise");
    EXPECT_HAS(late_error, "timed out");
  }
  if (outcome.is_server) {
    EXPECT_HAS(outcome.server_error, "xios_lite::run_server");
    EXPECT_HAS(outcome.server_error, named);
  }
  // The late client's sleep, then at most its own waits (acknowledgements:
  // 1.5 timeouts + 1 s; the exchange: one timeout), with a margin.
  EXPECT_LT(took, 3 * kTimeoutS + 2.5 * kTimeoutS + 1 + 4);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
