// Floods: the endpoint layer stays bounded in work and memory when messages
// pile up faster than they are received.
//
// - One drain call routes at most kDrainBudget messages, so a thread that
//   drains while it waits for its own request gets back to it however many
//   messages other endpoints are sent meanwhile.
// - Every message of a flood arrives, in order, whatever path it took.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p/inter_process.hpp"
#include "p2p/test_hooks.hpp"

namespace {

namespace hooks = ep::detail::testing;

constexpr int kTag = 21;

// Every endpoint of the last process sends `per_sender` numbered messages to
// ep rank 0 before process 0 looks at its queue (it sleeps first), so that
// they pile up in MPI; ep rank 0 then receives them, from each sender in
// order. The other endpoints of process 0 wait in a barrier meanwhile, and
// drain there too.
TEST(P2pFlood, OneDrainCallRoutesABoundedNumberOfMessages) {
  constexpr int kPerSender = 1500;
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    const int last_process = ep_test::world_size() - 1;
    const bool sender = ep_test::world_rank() == last_process && me != 0;
    if (c.local_thread() == 0) hooks::reset_max_drain_routed();
    ep::barrier(c);
    if (ep_test::world_rank() == 0 && c.local_thread() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    std::vector<int> senders;
    for (int r = 0; r < n; ++r) {
      if (r != 0 && c.rank_map().locate(r).process == last_process) senders.push_back(r);
    }
    if (sender) {
      std::vector<int> numbers(kPerSender);
      std::vector<ep::Request> sends;
      sends.reserve(kPerSender);
      for (int i = 0; i < kPerSender; ++i) {
        numbers[static_cast<std::size_t>(i)] = i;
        sends.push_back(c.isend(&numbers[static_cast<std::size_t>(i)], 1, MPI_INT, 0, kTag));
      }
      ep::wait_all(sends);
    }
    if (me == 0) {
      for (int from : senders) {
        int wrong = 0;
        for (int i = 0; i < kPerSender; ++i) {
          int got = -1;
          c.recv(&got, 1, MPI_INT, from, kTag);
          if (got != i && wrong++ < 5) {
            ADD_FAILURE() << "message " << i << " from ep rank " << from << " carried " << got;
          }
        }
      }
    }
    ep::barrier(c);
    if (c.local_thread() == 0) {
      const int most = hooks::max_drain_routed();
      EXPECT_LE(most, ep::detail::kDrainBudget) << "one drain call routed " << most << " messages";
      if (ep_test::world_size() > 1 && !senders.empty() && ep_test::world_rank() == 0) {
        // The flood did go through the drain (the test tests something).
        EXPECT_GT(most, 1);
      }
    }
  });
}

}  // namespace
