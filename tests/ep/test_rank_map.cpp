// Identity of endpoints: rank, size, process rank, local thread, the rank map
// of a live communicator, and the process-major numbering, checked against
// MPI_COMM_WORLD and OpenMP, and by the sources of real messages.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

using ep_p2p::message_barrier;

/// Every endpoint sends its (process, thread) to every endpoint, itself
/// included, and checks that the rank map places each message's source where
/// the sender says it lives.
void check_sources_against_rank_map(const ep::Communicator& c) {
  const int n = c.size();
  const ep::RankMap& map = c.rank_map();
  const int mine[2] = {c.process_rank(), c.local_thread()};
  std::vector<ep::Request> sends;
  sends.reserve(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) sends.push_back(c.isend(mine, 2, MPI_INT, d, 21));

  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    int who[2] = {-1, -1};
    const ep::Status st = c.recv(who, 2, MPI_INT, ep::kAnySource, 21);
    if (st.source < 0 || st.source >= n) {
      ADD_FAILURE() << "status.source " << st.source << " out of [0, " << n << ")";
      continue;
    }
    ++seen[static_cast<std::size_t>(st.source)];
    const ep::Location where = map.locate(st.source);
    EXPECT_EQ(where.process, who[0]) << "message from ep " << st.source;
    EXPECT_EQ(where.thread, who[1]) << "message from ep " << st.source;
    EXPECT_EQ(map.ep_rank(who[0], who[1]), st.source);
  }
  for (int s = 0; s < n; ++s) EXPECT_EQ(seen[static_cast<std::size_t>(s)], 1) << "source " << s;
  ep::wait_all(sends);
}

TEST(EndpointIdentity, RankSizeAndProcessMajorNumbering) {
  const int wr = ep_test::world_rank();
  const int ws = ep_test::world_size();
  ep_test::run_endpoints([&](ep::Communicator& c) {
    const int t = omp_get_thread_num();
    const int threads = omp_get_num_threads();
    EXPECT_FALSE(c.is_null());
    EXPECT_EQ(c.local_thread(), t);
    EXPECT_EQ(c.local_size(), threads);
    EXPECT_EQ(c.process_rank(), wr);
    // Every process runs with the same OMP_NUM_THREADS here.
    EXPECT_EQ(c.size(), ws * threads);
    EXPECT_EQ(c.rank(), wr * threads + t);

    const ep::RankMap& map = c.rank_map();
    EXPECT_EQ(map.size(), c.size());
    EXPECT_EQ(map.num_processes(), ws);
    EXPECT_EQ(map.max_endpoints_per_process(), threads);
    EXPECT_EQ(map.first_rank_of(wr), wr * threads);
    EXPECT_EQ(map.endpoints_of(wr), threads);
    const ep::Location me = map.locate(c.rank());
    EXPECT_EQ(me.process, wr);
    EXPECT_EQ(me.thread, t);
    EXPECT_EQ(map.ep_rank(wr, t), c.rank());
    for (int r = 0; r < c.size(); ++r) {
      EXPECT_EQ(map.ep_rank(map.locate(r)), r);
      EXPECT_EQ(map.locate(r).process, r / threads);
      EXPECT_EQ(map.locate(r).thread, r % threads);
    }

    // Options unset: EP_EAGER_THRESHOLD from the environment, else the default.
    if (std::getenv("EP_EAGER_THRESHOLD") == nullptr) {
      EXPECT_EQ(c.eager_threshold(), ep::kDefaultEagerThreshold);
    }

    int cmp = MPI_UNEQUAL;
    EXPECT_EQ(MPI_Comm_compare(c.parent(), MPI_COMM_WORLD, &cmp), MPI_SUCCESS);
    EXPECT_EQ(cmp, MPI_IDENT);

    check_sources_against_rank_map(c);
  });
}

// Processes contribute different endpoint counts (1, 2, 3, 1, 2, ...).
TEST(EndpointIdentity, UnevenEndpointCountsPerProcess) {
  const int wr = ep_test::world_rank();
  const int ws = ep_test::world_size();
  auto count_of = [](int process) { return 1 + process % 3; };
  std::vector<int> first(static_cast<std::size_t>(ws) + 1, 0);
  for (int p = 0; p < ws; ++p) {
    first[static_cast<std::size_t>(p) + 1] = first[static_cast<std::size_t>(p)] + count_of(p);
  }
  const int total = first.back();
  int widest = 0;
  for (int p = 0; p < ws; ++p) widest = std::max(widest, count_of(p));

  ep_test::run_endpoints(
      [&](ep::Communicator& c) {
        const int t = omp_get_thread_num();
        EXPECT_EQ(c.local_thread(), t);
        EXPECT_EQ(c.local_size(), count_of(wr));
        EXPECT_EQ(c.process_rank(), wr);
        EXPECT_EQ(c.size(), total);
        EXPECT_EQ(c.rank(), first[static_cast<std::size_t>(wr)] + t);
        const ep::RankMap& map = c.rank_map();
        EXPECT_EQ(map.num_processes(), ws);
        EXPECT_EQ(map.max_endpoints_per_process(), widest);
        for (int p = 0; p < ws; ++p) {
          EXPECT_EQ(map.endpoints_of(p), count_of(p));
          EXPECT_EQ(map.first_rank_of(p), first[static_cast<std::size_t>(p)]);
        }
        for (int r = 0; r < total; ++r) EXPECT_EQ(map.ep_rank(map.locate(r)), r);
        check_sources_against_rank_map(c);
        message_barrier(c);
      },
      count_of(wr));
}

// The largest endpoint count per process, 256: thread indices 0 and 255 are
// the extremes of the two 8-bit fields of the wire tag. 256 OpenMP threads
// per process would swamp a 2-core machine, so one thread drives all the
// endpoints here, with nonblocking operations only (each request is still
// completed by the thread that started it), and frees them one after another
// (free only counts down until the last local endpoint).
TEST(EndpointIdentity, MaximumEndpointsPerProcess) {
  constexpr int kMax = ep::kMaxEndpointsPerProcess;
  const int wr = ep_test::world_rank();
  const int ws = ep_test::world_size();
  std::vector<ep::Communicator> eps;
  try {
    eps = ep::create_endpoints(MPI_COMM_WORLD, kMax);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "create_endpoints(MPI_COMM_WORLD, " << kMax << "): " << e.what();
  }
  if (eps.size() != static_cast<std::size_t>(kMax)) {
    ADD_FAILURE() << "got " << eps.size() << " handles";
    return;  // every process fails alike: nobody waits on us
  }
  ep_test::set_current_endpoint(eps[0].rank());
  const ep::RankMap& map = eps[0].rank_map();
  EXPECT_EQ(map.size(), ws * kMax);
  EXPECT_EQ(map.max_endpoints_per_process(), kMax);
  for (int t = 0; t < kMax; ++t) {
    EXPECT_EQ(eps[static_cast<std::size_t>(t)].rank(), wr * kMax + t);
    EXPECT_EQ(eps[static_cast<std::size_t>(t)].local_thread(), t);
  }
  EXPECT_EQ(map.locate(ws * kMax - 1).process, ws - 1);
  EXPECT_EQ(map.locate(ws * kMax - 1).thread, kMax - 1);

  // Endpoint t receives from thread 255 - t of the previous process, with
  // tag 1000 + t, and sends to thread 255 - t of the next process.
  const int next = (wr + 1) % ws;
  const int prev = (wr - 1 + ws) % ws;
  const int some[] = {0, 1, 127, 128, 254, 255};
  std::vector<int> in(kMax, -1);
  std::vector<int> out(kMax);
  std::vector<ep::Request> reqs;
  for (int t : some) {
    const ep::Communicator& c = eps[static_cast<std::size_t>(t)];
    reqs.push_back(c.irecv(&in[static_cast<std::size_t>(t)], 1, MPI_INT,
                           map.ep_rank(prev, kMax - 1 - t), 1000 + t));
  }
  for (int t : some) {
    const ep::Communicator& c = eps[static_cast<std::size_t>(t)];
    const int dest = map.ep_rank(next, kMax - 1 - t);
    out[static_cast<std::size_t>(t)] = ep_p2p::pattern(c.rank(), dest, 0);
    reqs.push_back(
        c.isend(&out[static_cast<std::size_t>(t)], 1, MPI_INT, dest, 1000 + (kMax - 1 - t)));
  }
  std::vector<ep::Status> sts(reqs.size());
  try {
    ep::wait_all(reqs, sts);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wait_all: " << e.what();
  }
  for (std::size_t k = 0; k < std::size(some); ++k) {
    const int t = some[k];
    const int src = map.ep_rank(prev, kMax - 1 - t);
    EXPECT_EQ(sts[k].source, src) << "endpoint thread " << t;
    EXPECT_EQ(sts[k].tag, 1000 + t) << "endpoint thread " << t;
    EXPECT_EQ(in[static_cast<std::size_t>(t)], ep_p2p::pattern(src, wr * kMax + t, 0))
        << "endpoint thread " << t;
  }
  for (ep::Communicator& c : eps) {
    try {
      c.free();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "free: " << e.what();
    }
  }
  ep_test::set_current_endpoint(-1);
}

// Successive communicators reuse nothing of each other.
TEST(EndpointIdentity, SuccessiveCommunicatorsAreIndependent) {
  for (int round = 0; round < 3; ++round) {
    ep_test::run_endpoints([&](ep::Communicator& c) {
      const int n = c.size();
      const int right = (c.rank() + 1) % n;
      const int left = (c.rank() - 1 + n) % n;
      int out = ep_p2p::pattern(c.rank(), right, 0, round);
      int in = -1;
      const ep::Status st = c.sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0);
      EXPECT_EQ(st.source, left);
      EXPECT_EQ(in, ep_p2p::pattern(left, c.rank(), 0, round));
    });
  }
}

// Two endpoint communicators alive at once are independent: the same source,
// destination and tag on both never cross over (each has its own duplicated
// MPI communicators and mailboxes). The second one is created inside the
// parallel region with an orphaned `omp single`, as in the header's example.
TEST(EndpointIdentity, ConcurrentCommunicatorsDoNotCrossTalk) {
  std::vector<ep::Communicator> second;
  ep_test::run_endpoints([&](ep::Communicator& a) {
#pragma omp single
    {
      try {
        second = ep::create_endpoints(MPI_COMM_WORLD, omp_get_num_threads());
      } catch (const std::exception& e) {
        ADD_FAILURE() << "create_endpoints: " << e.what();
      }
    }  // implicit barrier: `second` is ready for every thread
    if (second.size() != static_cast<std::size_t>(omp_get_num_threads())) return;
    ep::Communicator& b = second[static_cast<std::size_t>(omp_get_thread_num())];
    EXPECT_EQ(b.rank(), a.rank());
    EXPECT_EQ(b.size(), a.size());

    const int n = a.size();
    const int right = (a.rank() + 1) % n;
    const int left = (a.rank() - 1 + n) % n;
    int in_a = -1;
    int in_b = -1;
    // Post on A first, then send on B before A: a receive on A that matched
    // B's message would see B's payload.
    ep::Request ra = a.irecv(&in_a, 1, MPI_INT, left, 5);
    const int out_b = ep_p2p::pattern(a.rank(), right, 0, 2);
    const int out_a = ep_p2p::pattern(a.rank(), right, 0, 1);
    b.send(&out_b, 1, MPI_INT, right, 5);
    const ep::Status sb = b.recv(&in_b, 1, MPI_INT, left, 5);
    a.send(&out_a, 1, MPI_INT, right, 5);
    const ep::Status sa = ep::wait(ra);
    EXPECT_EQ(in_a, ep_p2p::pattern(left, a.rank(), 0, 1));
    EXPECT_EQ(in_b, ep_p2p::pattern(left, a.rank(), 0, 2));
    EXPECT_EQ(sa.source, left);
    EXPECT_EQ(sb.source, left);
    b.free();  // collective over the endpoints of B
  });
}

}  // namespace
