// The wait policy (ep/backoff.hpp): what create_endpoints chooses, that a
// bad EP_WAIT_POLICY is refused, and that every exchange and team round
// completes in both modes -- in park mode with waiters that really park
// (long waits), woken by the threads that publish what they wait for.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ep/backoff.hpp"
#include "ep/ep.hpp"
#include "ep_test.hpp"

namespace {

/// Endpoints on this node's processes of MPI_COMM_WORLD, as auto counts them.
int endpoints_on_node(int threads) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int sum = 0;
  MPI_Allreduce(&threads, &sum, 1, MPI_INT, MPI_SUM, node);
  MPI_Comm_free(&node);
  return sum;
}

TEST(WaitPolicy, ExplicitPolicySetsTheProcessMode) {
  ep_test::run_endpoints_per_wait_policy([&](ep::Communicator& c, ep::WaitPolicy policy) {
    EXPECT_EQ(ep::wait_mode(), policy) << c.rank();
  });
}

TEST(WaitPolicy, AutoSpinsExactlyWhenTheNodeFits) {
  const int threads = omp_get_max_threads();  // run_endpoints' default
  const bool fits = endpoints_on_node(threads) <= sysconf(_SC_NPROCESSORS_ONLN);
  ep::EndpointOptions options;
  options.wait_policy = ep::WaitPolicy::kAuto;
  ep_test::run_endpoints(
      [&](ep::Communicator&) {
        EXPECT_EQ(ep::wait_mode(), fits ? ep::WaitPolicy::kSpin : ep::WaitPolicy::kPark);
      },
      0, options);
}

TEST(WaitPolicy, BadEnvironmentValueIsRefusedOnEveryProcess) {
  ASSERT_EQ(setenv("EP_WAIT_POLICY", "sometimes", 1), 0);
  bool threw = false;
  try {
    (void)ep::create_endpoints(MPI_COMM_WORLD, 1);
  } catch (const ep::Error& e) {
    threw = true;
    EXPECT_EQ(e.kind(), ep::ErrorKind::kArgument);
    EXPECT_NE(std::string(e.what()).find("EP_WAIT_POLICY='sometimes'"), std::string::npos)
        << e.what();
  }
  unsetenv("EP_WAIT_POLICY");
  EXPECT_TRUE(threw);
}

// A parked waiter ends its wait once another thread publishes, whether the
// publication comes before it parks, while it registers or while it sleeps.
TEST(WaitPolicy, ParkedWaiterSeesEveryPublication) {
  ep::detail::set_wait_mode(ep::WaitPolicy::kPark);
  for (int round = 0; round < 200; ++round) {
    std::atomic<int> flag{0};
    const int delay_us = (round % 5) * 40;  // before, around and after the first park
    std::thread publisher([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      flag.store(1, std::memory_order_release);
      ep::notify_waiters();
    });
    ep::Backoff backoff;
    long polls = 0;
    while (flag.load(std::memory_order_acquire) == 0) {
      backoff.pause();
      ++polls;
    }
    publisher.join();
    EXPECT_GE(polls, 0);
  }
}

// A waiter that passes its spinning and yielding phases parks, and still
// ends: a ring of endpoints where each waits for its left neighbour's
// message while that neighbour first sleeps long enough for the wait to park.
TEST(WaitPolicy, LongWaitsEndInBothModes) {
  ep_test::run_endpoints_per_wait_policy([&](ep::Communicator& c, ep::WaitPolicy) {
    const int n = c.size();
    const int right = (c.rank() + 1) % n;
    const int left = (c.rank() + n - 1) % n;
    for (int step = 0; step < 3; ++step) {
      int in = -1;
      ep::Request r = c.irecv(&in, 1, MPI_INT, left, step);
      if (c.rank() == step % n) std::this_thread::sleep_for(std::chrono::milliseconds(30));
      const int out = c.rank() * 10 + step;
      c.send(&out, 1, MPI_INT, right, step);
      ep::wait(r);
      EXPECT_EQ(in, left * 10 + step);
      ep::barrier(c);  // a team round whose waiters park behind the sleeper
    }
  });
}

}  // namespace
