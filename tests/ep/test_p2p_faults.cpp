// Failures inside the drain: the owner of the receive gets the error, no
// other thread throws or hangs.
//
// A message from another process is taken out of MPI by whichever thread of
// the receiving process drains (a wait, a probe, a team barrier's idle hook)
// and received for the owner of the matching receive. When that MPI_Mrecv or
// MPI_Imrecv fails, when the drain's MPI_Improbe fails, or when a wire tag
// names no endpoint, the failure must reach the receives that needed it,
// never the thread that happened to drain. The failures are injected through
// the library's test-only hooks (ep/src/p2p/test_hooks.hpp); with one
// process there is no drain, and the tests check that the armed failures
// stay unused.
#include <gtest/gtest.h>
#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p/test_hooks.hpp"
#include "p2p_helpers.hpp"

namespace {

using ep::detail::testing::Fault;
using ep::detail::testing::inject;
using ep::detail::testing::injections_left;

constexpr int kTag = 11;

// Every receive of these tests goes through the drain, which they break:
// none goes straight to MPI (EndpointOptions::direct_receive).
ep::EndpointOptions drained_receives() {
  ep::EndpointOptions options;
  options.direct_receive = false;
  return options;
}

// Process 0's first endpoint arms `fault` once for its process (ep::barrier
// then orders the arming before anything the test sends).
void arm_on_process_zero(const ep::Communicator& c, Fault fault) {
  if (ep_test::world_rank() == 0 && c.local_thread() == 0) inject(fault, 1);
  ep::barrier(c);
}

// Disarms after the test; `expect_used`: the armed failure must have happened.
void disarm_on_process_zero(const ep::Communicator& c, Fault fault, bool expect_used) {
  if (ep_test::world_rank() == 0 && c.local_thread() == 0) {
    EXPECT_EQ(injections_left(fault), expect_used ? 0 : 1)
        << (expect_used ? "the armed failure never happened"
                        : "the armed failure happened on a one-process communicator");
    inject(fault, 0);
  }
}

// Every endpoint sends to the next and receives from the previous, checking
// the data: the communicator works.
void ring_works(const ep::Communicator& c, int salt) {
  const int n = c.size();
  const int me = c.rank();
  const int next = (me + 1) % n;
  const int prev = (me + n - 1) % n;
  std::vector<int> out = ep_p2p::make_pattern(me, next, 16, salt);
  std::vector<int> in(16, -1);
  c.sendrecv(out.data(), 16, MPI_INT, next, kTag + 1, in.data(), 16, MPI_INT, prev, kTag + 1);
  EXPECT_EQ(in, ep_p2p::make_pattern(prev, me, 16, salt)) << "ring after the failure";
}

// The receive of ep rank 0 (process 0) from the last ep rank fails in
// MPI_Mrecv (small) or MPI_Imrecv (large), most likely in another thread's
// drain: the message is drained while every endpoint waits in ep::barrier.
// Under the source-header layout a small message is received whole on
// arrival and a large one with MPI_Irecv at the match: there the small case
// sends synchronously, whose data also waits in MPI for the match.
void receive_failure_reaches_owner(int count, const char* mpi_call) {
  ep_test::run_endpoints(
      [&](ep::Communicator& c) {
        const bool header = ep::detail::testing::source_in_header(c);
        const std::string expected_call = header ? "MPI_Irecv" : mpi_call;
        const int n = c.size();
        const int me = c.rank();
        const int victim = 0;
        const int sender = n - 1;
        const bool remote = ep_test::world_size() > 1;
        arm_on_process_zero(c, Fault::kRemoteReceive);

        std::vector<int> buf(static_cast<std::size_t>(count), -1);
        ep::Request receive;
        if (me == victim) receive = c.irecv(buf.data(), count, MPI_INT, sender, kTag);
        ep::barrier(c);  // posted before the message leaves
        if (me == sender) {
          const std::vector<int> data = ep_p2p::make_pattern(sender, victim, count);
          if (header) {
            c.ssend(data.data(), count, MPI_INT, victim, kTag);
          } else {
            c.send(data.data(), count, MPI_INT, victim, kTag);
          }
        }
        ep::barrier(c);  // the threads of process 0 drain the message while they wait here

        if (me == victim) {
          if (remote) {
            const std::optional<ep::Error> e = ep_p2p::expect_ep_error(
                [&] { ep::wait(receive); }, ep::ErrorKind::kMpi,
                {"ep::irecv", expected_call, "from ep rank " + std::to_string(sender), "MPI error"},
                "the injected " + expected_call + " failure at the receive");
            if (e) {
              EXPECT_EQ(e->ep_rank(), victim) << e->what();
              EXPECT_NE(e->mpi_code(), MPI_SUCCESS) << e->what();
            }
            EXPECT_TRUE(receive.is_null());
          } else {
            ep::wait(receive);  // intra-process: no MPI receive to fail
            EXPECT_EQ(buf, ep_p2p::make_pattern(sender, victim, count));
          }
        }
        disarm_on_process_zero(c, Fault::kRemoteReceive, remote);
        ep::barrier(c);
        ring_works(c, count);
      },
      0, drained_receives());
}

TEST(P2pFaults, FailedMrecvReachesTheOwner) { receive_failure_reaches_owner(16, "MPI_Mrecv"); }

TEST(P2pFaults, FailedImrecvReachesTheOwner) {
  // 16 KiB: above the inline-receive size, so the drain starts an MPI_Imrecv.
  receive_failure_reaches_owner(4096, "MPI_Imrecv");
}

// The drain's MPI_Improbe fails on process 0: every receive waiting there
// fails with that error (the message it waits for could never arrive), later
// receives and probes fail at once, and no thread of process 0 throws from a
// barrier's idle hook or hangs.
TEST(P2pFaults, FailedProbeFailsTheWaitingReceives) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "one process never drains MPI";
  ep_test::run_endpoints(
      [](ep::Communicator& c) {
        const int n = c.size();
        const bool on_zero = ep_test::world_rank() == 0;
        arm_on_process_zero(c, Fault::kDrainProbe);
        if (on_zero) {
          // From the last endpoint (another process), which never sends.
          int value = -1;
          ep::Request receive = c.irecv(&value, 1, MPI_INT, n - 1, kTag);
          const std::optional<ep::Error> e = ep_p2p::expect_ep_error(
              [&] { ep::wait(receive); }, ep::ErrorKind::kMpi,
              {"ep::irecv", "MPI_Improbe", "process 0"}, "the receive after a failed drain");
          if (e) {
            EXPECT_EQ(e->ep_rank(), c.rank()) << e->what();
          }
          ep_p2p::expect_ep_error([&] { static_cast<void>(c.iprobe(ep::kAnySource, kTag)); },
                                  ep::ErrorKind::kMpi, {"ep::iprobe", "MPI_Improbe"},
                                  "iprobe after a failed drain");
        }
        disarm_on_process_zero(c, Fault::kDrainProbe, true);
        ep::barrier(c);  // the idle hooks of process 0 drain no more, and throw nothing
      },
      0, drained_receives());
}

// A wire tag that names no endpoint: the message is received and discarded
// (MPI does not keep it), and the receives of process 0 fail with kTag.
TEST(P2pFaults, UndecodableWireTagFailsTheReceives) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "one process never drains MPI";
  ep_test::run_endpoints(
      [](ep::Communicator& c) {
        const int n = c.size();
        const int me = c.rank();
        const int sender = n - 1;
        const bool on_zero = ep_test::world_rank() == 0;
        arm_on_process_zero(c, Fault::kWireTag);
        int value = -1;
        ep::Request receive;
        if (me == 0) receive = c.irecv(&value, 1, MPI_INT, sender, kTag);
        ep::barrier(c);
        if (me == sender) {
          const int data = 42;
          c.send(&data, 1, MPI_INT, 0, kTag);
        }
        if (me == 0) {
          ep_p2p::expect_ep_error([&] { ep::wait(receive); }, ep::ErrorKind::kTag,
                                  {"ep::irecv", "names no endpoint", "received and discarded"},
                                  "the receive after an undecodable wire tag");
          EXPECT_EQ(value, -1);
        }
        ep::barrier(c);
        if (on_zero) {
          // Later receives on process 0 fail at their first poll, not never.
          int late = -1;
          ep::Request again = c.irecv(&late, 1, MPI_INT, sender, kTag);
          ep_p2p::expect_ep_error([&] { ep::wait(again); }, ep::ErrorKind::kTag,
                                  {"ep::irecv", "names no endpoint"},
                                  "receive after the failed drain");
        }
        disarm_on_process_zero(c, Fault::kWireTag, true);
        ep::barrier(c);
      },
      0, drained_receives());
}

}  // namespace
