// A failure in a collective's MPI stage reaches every local endpoint: the
// thread that ran the stage rethrows its MPI error, the others throw kMpi
// naming it, nobody hangs, and the next collective works.
//
// The failure is injected through the library's test-only hook
// (Fault::kCollectiveWait, ep/src/p2p/test_hooks.hpp): it fires after the
// MPI request has completed, so every process is through the MPI call and
// only the armed ones fail. Each process's local thread 0 arms it for its
// own process, right before the collective, in program order with the wait
// it breaks (thread 0 runs the MPI stage of every collective below). With
// one process there is no MPI stage, and the test checks that the armed
// failure stays unused.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p/test_hooks.hpp"

namespace {

using ep::detail::testing::Fault;
using ep::detail::testing::inject;
using ep::detail::testing::injections_left;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `collective` on every endpoint with the MPI stage of every process
// failing, checks what each endpoint throws, then that an allreduce over the
// same communicator still gives the right sum.
void failure_reaches_every_endpoint(
    const std::string& name, const std::function<void(const ep::Communicator&)>& collective) {
  ep_test::run_endpoints([&](ep::Communicator& c) {
    const bool remote = ep_test::world_size() > 1;
    ep::barrier(c);  // the previous case is over everywhere before arming
    if (c.local_thread() == 0) inject(Fault::kCollectiveWait, 1);
    try {
      collective(c);
      EXPECT_FALSE(remote) << name << ": the injected MPI failure did not reach ep rank "
                           << c.rank();
    } catch (const ep::Error& e) {
      const std::string what = e.what();
      EXPECT_TRUE(remote) << name << ": one process has no MPI stage to fail: " << what;
      EXPECT_EQ(e.kind(), ep::ErrorKind::kMpi) << what;
      EXPECT_EQ(e.ep_rank(), c.rank()) << what;
      EXPECT_TRUE(contains(what, name)) << what;
      if (c.local_thread() == 0) {
        EXPECT_NE(e.mpi_code(), MPI_SUCCESS) << what;
        EXPECT_TRUE(contains(what, "MPI error")) << what;
      } else {
        EXPECT_TRUE(contains(what, "local thread 0")) << what;
      }
    }
    if (c.local_thread() == 0) {
      EXPECT_EQ(injections_left(Fault::kCollectiveWait), remote ? 0 : 1)
          << name
          << (remote ? ": the armed failure never happened"
                     : ": the armed failure happened without an MPI stage");
      inject(Fault::kCollectiveWait, 0);
    }
    // The team is in step again: the next collective gives the right result.
    const long long mine = c.rank();
    long long sum = -1;
    ep::allreduce(c, &mine, &sum, 1, MPI_LONG_LONG, MPI_SUM);
    EXPECT_EQ(sum, static_cast<long long>(c.size()) * (c.size() - 1) / 2) << name;
  });
}

TEST(CollectiveFaults, Barrier) {
  failure_reaches_every_endpoint("ep::barrier", [](const ep::Communicator& c) { ep::barrier(c); });
}

// Root 0 is local thread 0 of process 0 (process-major numbering), the
// representative of every process.
TEST(CollectiveFaults, SmallBcast) {
  failure_reaches_every_endpoint("ep::bcast", [](const ep::Communicator& c) {
    std::vector<int> data(16, c.rank());
    ep::bcast(c, data.data(), 16, MPI_INT, 0);
  });
}

// Large enough that the other threads copy for themselves (the barrier path).
TEST(CollectiveFaults, LargeBcast) {
  failure_reaches_every_endpoint("ep::bcast", [](const ep::Communicator& c) {
    std::vector<int> data(256 * 1024, c.rank());
    ep::bcast(c, data.data(), static_cast<int>(data.size()), MPI_INT, 0);
  });
}

TEST(CollectiveFaults, SmallAllreduce) {
  failure_reaches_every_endpoint("ep::allreduce", [](const ep::Communicator& c) {
    std::vector<double> in(8, 1.0);
    std::vector<double> out(8, 0.0);
    ep::allreduce(c, in.data(), out.data(), 8, MPI_DOUBLE, MPI_SUM);
  });
}

// Above the one-round size: the threads fold by slices (the mpi_stage path).
TEST(CollectiveFaults, LargeAllreduce) {
  failure_reaches_every_endpoint("ep::allreduce", [](const ep::Communicator& c) {
    std::vector<double> in(16 * 1024, 1.0);
    std::vector<double> out(in.size(), 0.0);
    ep::allreduce(c, in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM);
  });
}

TEST(CollectiveFaults, SmallReduce) {
  failure_reaches_every_endpoint("ep::reduce", [](const ep::Communicator& c) {
    std::vector<int> in(4, 1);
    std::vector<int> out(4, 0);
    ep::reduce(c, in.data(), out.data(), 4, MPI_INT, MPI_SUM, 0);
  });
}

// The leader of process 0 cannot allocate the staging of a blocking alltoall
// between processes (test-only failure while it plans). Its process still
// sends (empty segments) and receives every other process's segment, so
// nobody waits for it: its endpoints throw kNoMemory, every other process's
// find the empty segment malformed (kTruncate), and the next alltoall works.
// Both the one-round exchange (1 int per block) and the staged protocol
// (64 Ki ints per block). At least two endpoints per process: with one, the
// blocks go from the user's buffers, without staging (peer_exchange.hpp).
// With one process there is nothing to plan and the armed failure stays
// unused.
TEST(CollectiveFaults, AlltoallWithoutStagingHangsNobody) {
  ep_test::run_endpoints(
      [](ep::Communicator& c) {
        const bool remote = ep_test::world_size() > 1;
        const bool failing = ep_test::world_rank() == 0;
        for (const int count : {1, 64 * 1024}) {
          const auto total = static_cast<std::size_t>(c.size()) * static_cast<std::size_t>(count);
          std::vector<int> send(total);
          for (std::size_t i = 0; i < total; ++i) {
            send[i] = c.rank() * 1000 + static_cast<int>(i / static_cast<std::size_t>(count));
          }
          std::vector<int> recv(total, -1);
          ep::barrier(c);  // the previous case is over everywhere before arming
          if (c.local_thread() == 0 && failing) inject(Fault::kExchangeStaging, 1);
          try {
            ep::alltoall(c, send.data(), count, MPI_INT, recv.data(), count, MPI_INT);
            EXPECT_FALSE(remote) << "count " << count << ": ep rank " << c.rank()
                                 << " did not learn of the failed staging";
          } catch (const ep::Error& e) {
            const std::string what = e.what();
            EXPECT_TRUE(remote) << what;
            EXPECT_EQ(e.kind(), failing ? ep::ErrorKind::kNoMemory : ep::ErrorKind::kTruncate)
                << "count " << count << ": " << what;
            EXPECT_EQ(e.ep_rank(), c.rank()) << what;
            EXPECT_TRUE(contains(what, "ep::alltoall")) << what;
            if (!failing) {
              EXPECT_TRUE(contains(what, "malformed")) << what;
            }
          }
          if (c.local_thread() == 0 && failing) {
            EXPECT_EQ(injections_left(Fault::kExchangeStaging), remote ? 0 : 1)
                << "count " << count
                << (remote ? ": the armed failure never happened"
                           : ": the armed failure happened without an exchange to plan");
            inject(Fault::kExchangeStaging, 0);
          }
          // The team and the processes are in step again.
          std::fill(recv.begin(), recv.end(), -1);
          ep::alltoall(c, send.data(), count, MPI_INT, recv.data(), count, MPI_INT);
          int bad = 0;
          for (int s = 0; s < c.size(); ++s) {
            const int got = recv[static_cast<std::size_t>(s) * static_cast<std::size_t>(count)];
            if (got != s * 1000 + c.rank()) ++bad;
          }
          EXPECT_EQ(bad, 0) << "count " << count << ": the alltoall after the failure";
        }
      },
      std::max(2, omp_get_max_threads()));
}

}  // namespace
