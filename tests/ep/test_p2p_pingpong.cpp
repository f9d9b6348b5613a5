// Nonblocking ping-pong, 8 B to 1 MiB, between two threads of one process
// and between two processes; the pong returns every byte incremented so the
// pinger checks the whole round trip.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

constexpr std::size_t kMinBytes = 8;
constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
constexpr int kTag = 400;

std::size_t count_bad(const std::vector<unsigned char>& v, std::size_t bytes, int seed, int it,
                      unsigned char plus) {
  std::size_t bad = 0;
  for (std::size_t k = 0; k < bytes; ++k) {
    if (v[k] != static_cast<unsigned char>(ep_p2p::byte_pattern(seed, it, k) + plus)) ++bad;
  }
  return bad;
}

/// Ping-pong between EP ranks `a` (pinger) and `b`; other endpoints do nothing.
void ping_pong(const ep::Communicator& c, int a, int b) {
  const int r = c.rank();
  if (r != a && r != b) return;
  std::vector<unsigned char> out(kMaxBytes);
  std::vector<unsigned char> in(kMaxBytes);
  for (std::size_t bytes = kMinBytes; bytes <= kMaxBytes; bytes *= 2) {
    const int iterations = bytes <= 64 * 1024 ? 4 : 2;
    const int n = static_cast<int>(bytes);
    const int seed = static_cast<int>(bytes % 251);
    for (int it = 0; it < iterations; ++it) {
      SCOPED_TRACE(testing::Message()
                   << "ping-pong " << a << " <-> " << b << ", " << bytes << " B, iteration " << it);
      if (r == a) {
        for (std::size_t k = 0; k < bytes; ++k) out[k] = ep_p2p::byte_pattern(seed, it, k);
        std::vector<ep::Request> reqs;
        reqs.push_back(c.irecv(in.data(), n, MPI_BYTE, b, kTag));
        reqs.push_back(c.isend(out.data(), n, MPI_BYTE, b, kTag));
        std::vector<ep::Status> sts(2);
        ep::wait_all(reqs, sts);
        EXPECT_EQ(sts[0].source, b);
        EXPECT_EQ(sts[0].bytes, bytes);
        EXPECT_EQ(count_bad(in, bytes, seed, it, 1), 0U);
      } else {
        ep::Request q = c.irecv(in.data(), n, MPI_BYTE, a, kTag);
        const ep::Status st = ep::wait(q);
        EXPECT_EQ(st.source, a);
        EXPECT_EQ(st.bytes, bytes);
        EXPECT_EQ(count_bad(in, bytes, seed, it, 0), 0U);
        for (std::size_t k = 0; k < bytes; ++k) out[k] = static_cast<unsigned char>(in[k] + 1);
        ep::Request s = c.isend(out.data(), n, MPI_BYTE, a, kTag);
        ep::wait(s);
      }
    }
  }
}

TEST(P2PPingPong, TwoThreadsOfOneProcess) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const ep::RankMap& m = c.rank_map();
    if (m.endpoints_of(0) < 2) return;  // shape with one thread per process: nothing to do
    ping_pong(c, m.ep_rank(0, 0), m.ep_rank(0, 1));
  });
}

TEST(P2PPingPong, TwoProcesses) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const ep::RankMap& m = c.rank_map();
    if (m.num_processes() < 2) return;  // one process: nothing to do
    ping_pong(c, m.ep_rank(0, 0), m.ep_rank(1, 0));
  });
}

// Different thread indices on the two sides (the wire tag carries both).
TEST(P2PPingPong, TwoProcessesOtherThreads) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const ep::RankMap& m = c.rank_map();
    const int last = m.num_processes() - 1;
    if (last < 1) return;
    ping_pong(c, m.ep_rank(last, 0), m.ep_rank(0, m.endpoints_of(0) - 1));
  });
}

// Both kinds at once: process 0's threads 0/1 and process 1's threads 0/1
// ping-pong inside their processes while the last threads cross.
TEST(P2PPingPong, IntraAndInterConcurrently) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const ep::RankMap& m = c.rank_map();
    const int p = c.process_rank();
    const int t = c.local_thread();
    const int threads = c.local_size();
    if (threads >= 3 && t < 2) {
      ping_pong(c, m.ep_rank(p, 0), m.ep_rank(p, 1));
    } else if (m.num_processes() >= 2 && t == threads - 1 && p < 2) {
      ping_pong(c, m.ep_rank(0, threads - 1), m.ep_rank(1, threads - 1));
    }
  });
}

}  // namespace
