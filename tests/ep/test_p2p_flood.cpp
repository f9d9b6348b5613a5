// Floods: the endpoint layer stays bounded in work and memory when messages
// pile up faster than they are received.
//
// - One drain call routes at most kDrainBudget messages, so a thread that
//   drains while it waits for its own request gets back to it however many
//   messages other endpoints are sent meanwhile.
// - The unexpected eager copies one endpoint holds stay under the eager cap;
//   past it senders fall back to rendezvous.
// - Every message of a flood arrives, in order, whatever path it took.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
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
  // The receives go through the drain (not straight to MPI): the drain is
  // what this test bounds.
  ep::EndpointOptions drained;
  drained.direct_receive = false;
  ep_test::run_endpoints(
      [](ep::Communicator& c) {
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
          EXPECT_LE(most, ep::detail::kDrainBudget)
              << "one drain call routed " << most << " messages";
          if (ep_test::world_size() > 1 && !senders.empty() && ep_test::world_rank() == 0) {
            // The flood did go through the drain (the test tests something).
            EXPECT_GT(most, 1);
          }
        }
      },
      0, drained);
}

// Local threads 1.. of every process flood local thread 0 with 64-byte
// messages while it sleeps (thread 1 with blocking sends, which wait once
// the cap is reached; the others with isend). Thread 0's queue never holds
// more than the cap in eager copies, reaches it, and every message arrives
// in order; afterwards the queue holds nothing.
TEST(P2pFlood, UnexpectedEagerBytesStayUnderTheCap) {
  constexpr std::size_t kCap = 4096;
  constexpr int kPerSender = 300;
  constexpr int kInts = 16;
  ep::EndpointOptions options;
  options.eager_cap = kCap;
  ep_test::run_endpoints(
      [&](ep::Communicator& c) {
        EXPECT_EQ(c.eager_cap(), kCap);
        const int process = c.rank_map().locate(c.rank()).process;
        const int receiver = c.rank_map().first_rank_of(process);
        const int local = c.local_size();
        if (c.local_thread() > 0) {
          std::vector<std::vector<int>> messages(kPerSender);
          std::vector<ep::Request> sends;
          for (int i = 0; i < kPerSender; ++i) {
            auto& m = messages[static_cast<std::size_t>(i)];
            m.assign(kInts, 0);
            for (int k = 0; k < kInts; ++k) m[static_cast<std::size_t>(k)] = c.rank() * 100000 + i;
            if (c.local_thread() == 1) {
              c.send(m.data(), kInts, MPI_INT, receiver, kTag);
            } else {
              sends.push_back(c.isend(m.data(), kInts, MPI_INT, receiver, kTag));
            }
          }
          ep::wait_all(sends);
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          for (int t = 1; t < local; ++t) {
            const int from = c.rank_map().ep_rank(process, t);
            int wrong = 0;
            for (int i = 0; i < kPerSender; ++i) {
              std::vector<int> got(kInts, -1);
              c.recv(got.data(), kInts, MPI_INT, from, kTag);
              if (got != std::vector<int>(kInts, from * 100000 + i) && wrong++ < 5) {
                ADD_FAILURE() << "message " << i << " from ep rank " << from << " starts with "
                              << got[0];
              }
            }
          }
          const std::size_t most = hooks::eager_high_water(c);
          EXPECT_LE(most, kCap) << "the queue held " << most << " eager bytes";
          if (local > 1) {
            // The flood (far above the cap) filled the queue to the cap.
            EXPECT_GT(most, kCap - kInts * sizeof(int));
          }
          EXPECT_EQ(hooks::eager_bytes(c), 0U);
        }
      },
      0, options);
}

// EP_EAGER_CAP sets the cap of communicators created without the option.
TEST(P2pFlood, EagerCapFromTheEnvironment) {
  ::setenv("EP_EAGER_CAP", "12345", 1);
  ep_test::run_endpoints([](ep::Communicator& c) {
    EXPECT_EQ(c.eager_cap(), 12345U);
    ep::Communicator copy = ep::dup(c);
    EXPECT_EQ(copy.eager_cap(), 12345U) << "dup keeps the cap";
    copy.free();
  });
  ::unsetenv("EP_EAGER_CAP");
  ep_test::run_endpoints(
      [](ep::Communicator& c) { EXPECT_EQ(c.eager_cap(), ep::kDefaultEagerCap); });
}

}  // namespace
