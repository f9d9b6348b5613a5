// ep::ibarrier, ep::ibcast, ep::iallreduce and ep::ialltoallv: results
// against closed forms (and, for floating-point sums, bit for bit against the
// blocking allreduce), on the shape's layout, an uneven one and a reversed
// split (see alltoall_test_helpers.hpp); calls that return while other
// endpoints have not even started (a blocking implementation deadlocks
// there); several collectives outstanding at once with point-to-point
// traffic among them, completed in different orders by different endpoints
// (wait_all backwards, test_some loops, wait_any); nonblocking collectives
// interleaved with blocking ones.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "alltoall_test_helpers.hpp"
#include "ep/ep.hpp"
#include "ep_test.hpp"

namespace {

using ep_a2a::on_every_layout;
using ep_a2a::Type;
using ep_a2a::value;

constexpr int kUntouched = -7;
constexpr int kLateTag = 11;
constexpr int kRingTag = 12;

void relax() { std::this_thread::yield(); }

// Waits for `request` with a test loop.
ep::Status test_until_done(ep::Request& request) {
  ep::Status status;
  while (!ep::test(request, &status)) relax();
  return status;
}

// Makes EP rank `late` start its next collective only after every other
// endpoint has sent it a message, which they do after starting theirs: a
// collective call that waited for the late endpoint would deadlock here.
void others_first(const ep::Communicator& c, int late) {
  if (c.rank() != late) return;
  for (int i = 0; i < c.size() - 1; ++i) {
    int token = 0;
    c.recv(&token, 1, MPI_INT, ep::kAnySource, kLateTag);
  }
}
void release_late(const ep::Communicator& c, int late) {
  if (c.rank() == late) return;
  const int token = c.rank();
  c.send(&token, 1, MPI_INT, late, kLateTag);
}

// ---- ibarrier -----------------------------------------------------------

TEST(Ibarrier, ReturnsBeforeTheLastEndpointArrives) {
  on_every_layout([](const ep::Communicator& c) {
    const int late = c.size() - 1;
    others_first(c, late);
    ep::Request request = ep::ibarrier(c);
    if (c.rank() != late) {
      // The late endpoint is still waiting for our message: no barrier yet.
      EXPECT_FALSE(ep::test(request)) << "ibarrier completed before every endpoint called it";
    }
    release_late(c, late);
    ep::wait(request);
    EXPECT_TRUE(request.is_null());
  });
}

TEST(Ibarrier, ManyInFlightCompletedBackwards) {
  on_every_layout([](const ep::Communicator& c) {
    std::vector<ep::Request> requests;
    for (int i = 0; i < 40; ++i) requests.push_back(ep::ibarrier(c));
    for (auto it = requests.rbegin(); it != requests.rend(); ++it) ep::wait(*it);
  });
}

// ---- ibcast ---------------------------------------------------------------

TEST(Ibcast, EveryRootSmallAndLarge) {
  on_every_layout([](const ep::Communicator& c) {
    for (const int count : {0, 5, 20000}) {
      for (int root = 0; root < c.size(); ++root) {
        std::vector<int> buf(static_cast<std::size_t>(count) + 1, kUntouched);
        if (c.rank() == root) {
          for (int i = 0; i < count; ++i) buf[static_cast<std::size_t>(i)] = value(root, 0, i);
        }
        ep::Request request = ep::ibcast(c, buf.data(), count, MPI_INT, root);
        test_until_done(request);
        int bad = 0;
        for (int i = 0; i < count; ++i)
          bad += buf[static_cast<std::size_t>(i)] != value(root, 0, i);
        EXPECT_EQ(bad, 0) << "count " << count << ", root " << root;
        EXPECT_EQ(buf[static_cast<std::size_t>(count)], kUntouched);
      }
    }
  });
}

TEST(Ibcast, LateRootAndStridedReceivers) {
  // The root (the last rank) starts last; the others receive into a vector
  // type (every other int) while the root sends contiguous pairs.
  const Type every_other(ep_a2a::int_vector(2, 1, 2));  // 2 ints, extent 3
  on_every_layout([&](const ep::Communicator& c) {
    const int root = c.size() - 1;
    constexpr int kPairs = 3000;
    others_first(c, root);
    std::vector<int> buf;
    ep::Request request;
    if (c.rank() == root) {
      buf.resize(2 * kPairs);
      for (int i = 0; i < 2 * kPairs; ++i) buf[static_cast<std::size_t>(i)] = value(root, 1, i);
      request = ep::ibcast(c, buf.data(), 2 * kPairs, MPI_INT, root);
    } else {
      buf.assign(3 * kPairs, kUntouched);
      request = ep::ibcast(c, buf.data(), kPairs, every_other, root);
    }
    release_late(c, root);
    ep::wait(request);
    if (c.rank() == root) return;
    int bad = 0;
    for (int e = 0; e < kPairs; ++e) {
      bad += buf[static_cast<std::size_t>(3 * e)] != value(root, 1, 2 * e);
      bad += buf[static_cast<std::size_t>(3 * e + 1)] != kUntouched;
      bad += buf[static_cast<std::size_t>(3 * e + 2)] != value(root, 1, 2 * e + 1);
    }
    EXPECT_EQ(bad, 0);
  });
}

// ---- iallreduce -----------------------------------------------------------

TEST(Iallreduce, IntegerSumClosedFormAndInPlace) {
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    const int late = 0;
    for (const int count : {1, 1000, 50000}) {
      std::vector<int> mine(static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i)
        mine[static_cast<std::size_t>(i)] = (c.rank() + 1) * (i % 100 + 1);
      std::vector<int> out(static_cast<std::size_t>(count), kUntouched);
      std::vector<int> in_place = mine;
      others_first(c, late);
      ep::Request sum = ep::iallreduce(c, mine.data(), out.data(), count, MPI_INT, MPI_SUM);
      ep::Request sum_in_place =
          ep::iallreduce(c, MPI_IN_PLACE, in_place.data(), count, MPI_INT, MPI_SUM);
      release_late(c, late);
      ep::wait(sum_in_place);
      ep::wait(sum);
      int bad = 0;
      for (int i = 0; i < count; ++i) {
        const int expected = (i % 100 + 1) * n * (n + 1) / 2;
        bad += out[static_cast<std::size_t>(i)] != expected;
        bad += in_place[static_cast<std::size_t>(i)] != expected;
      }
      EXPECT_EQ(bad, 0) << "count " << count;
    }
  });
}

TEST(Iallreduce, SameBitsAsBlockingAllreduce) {
  on_every_layout([](const ep::Communicator& c) {
    constexpr int kCount = 4097;
    std::vector<double> mine(kCount);
    for (int i = 0; i < kCount; ++i) {
      mine[static_cast<std::size_t>(i)] = 0.1 * (c.rank() + 1) + 1.0e-7 * i + 1.0 / (3 + c.rank());
    }
    for (const bool layout_independent : {false, true}) {
      const ep::ReduceOptions options{layout_independent};
      std::vector<double> blocking(kCount);
      std::vector<double> nonblocking(kCount);
      ep::allreduce(c, mine.data(), blocking.data(), kCount, MPI_DOUBLE, MPI_SUM, options);
      ep::Request request =
          ep::iallreduce(c, mine.data(), nonblocking.data(), kCount, MPI_DOUBLE, MPI_SUM, options);
      ep::wait(request);
      EXPECT_EQ(std::memcmp(blocking.data(), nonblocking.data(), sizeof(double) * kCount), 0)
          << "layout_independent " << layout_independent;
    }
  });
}

// Affine maps x -> m x + a as (m, a) pairs; op(f, g) = f o g, associative and
// not commutative: the result names the rank order it was combined in.
void compose(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* f = static_cast<const long long*>(in);
  auto* g = static_cast<long long*>(inout);
  for (int k = 0; k < *len; ++k) {
    const long long m = f[2 * k] * g[2 * k];
    const long long a = f[2 * k] * g[2 * k + 1] + f[2 * k + 1];
    g[2 * k] = m;
    g[2 * k + 1] = a;
  }
}

TEST(Iallreduce, NonCommutativeUserOpInRankOrder) {
  MPI_Datatype pair_type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_LONG_LONG, &pair_type);
  const Type pair(pair_type);
  MPI_Op op = MPI_OP_NULL;
  MPI_Op_create(&compose, 0, &op);
  on_every_layout([&](const ep::Communicator& c) {
    constexpr int kMaps = 300;
    const auto map_of = [](int rank, int k) {
      return std::vector<long long>{1 + (rank + k) % 2, rank + 3LL * k + 1};
    };
    std::vector<long long> mine(2 * kMaps);
    for (int k = 0; k < kMaps; ++k) {
      const std::vector<long long> f = map_of(c.rank(), k);
      mine[static_cast<std::size_t>(2 * k)] = f[0];
      mine[static_cast<std::size_t>(2 * k + 1)] = f[1];
    }
    std::vector<long long> out(2 * kMaps, -1);
    ep::Request request = ep::iallreduce(c, mine.data(), out.data(), kMaps, pair, op);
    test_until_done(request);
    int bad = 0;
    for (int k = 0; k < kMaps; ++k) {
      std::vector<long long> acc = map_of(0, k);  // acc = f0 o f1 o ... o fr
      for (int r = 1; r < c.size(); ++r) {
        const std::vector<long long> g = map_of(r, k);
        acc = {acc[0] * g[0], acc[0] * g[1] + acc[1]};
      }
      bad += out[static_cast<std::size_t>(2 * k)] != acc[0];
      bad += out[static_cast<std::size_t>(2 * k + 1)] != acc[1];
    }
    EXPECT_EQ(bad, 0);
  });
  MPI_Op_free(&op);
}

// ---- ialltoallv -------------------------------------------------------------

int v_count(int src, int dst, int scale) { return ((src * 3 + dst * 5) % 4) * scale; }

struct Exchange {
  std::vector<int> send, recv, scounts, sdispls, rcounts, rdispls, expected;
};

// An alltoallv with v_count() blocks, receive blocks one int apart.
Exchange make_exchange(const ep::Communicator& c, int scale, int salt) {
  const int n = c.size();
  const int me = c.rank();
  Exchange x;
  const auto un = static_cast<std::size_t>(n);
  x.scounts.resize(un);
  x.sdispls.resize(un);
  x.rcounts.resize(un);
  x.rdispls.resize(un);
  int sent = 0;
  int received = 0;
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    x.scounts[ju] = v_count(me, j, scale);
    x.sdispls[ju] = sent;
    sent += x.scounts[ju];
    x.rcounts[ju] = v_count(j, me, scale);
    x.rdispls[ju] = received + 1;
    received += x.rcounts[ju] + 1;
  }
  x.send.resize(static_cast<std::size_t>(sent));
  x.recv.assign(static_cast<std::size_t>(received + 1), kUntouched);
  x.expected = x.recv;
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    for (int i = 0; i < x.scounts[ju]; ++i) {
      x.send[static_cast<std::size_t>(x.sdispls[ju] + i)] = value(me, j, i, salt);
    }
    for (int i = 0; i < x.rcounts[ju]; ++i) {
      x.expected[static_cast<std::size_t>(x.rdispls[ju] + i)] = value(j, me, i, salt);
    }
  }
  return x;
}

ep::Request start(const ep::Communicator& c, Exchange& x) {
  return ep::ialltoallv(c, x.send.data(), x.scounts, x.sdispls, MPI_INT, x.recv.data(), x.rcounts,
                        x.rdispls, MPI_INT);
}

TEST(Ialltoallv, ClosedFormSmallLargeAndEmpty) {
  on_every_layout([](const ep::Communicator& c) {
    for (const int scale : {0, 1, 5000}) {
      Exchange x = make_exchange(c, scale, 1);
      others_first(c, 0);
      ep::Request request = start(c, x);
      release_late(c, 0);
      test_until_done(request);
      EXPECT_EQ(x.recv, x.expected) << "scale " << scale;
    }
  });
}

TEST(Ialltoallv, InPlaceAndVectorTypes) {
  const Type spaced(ep_a2a::int_vector(2, 1, 3));  // 2 ints, extent 4
  on_every_layout([&](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    const auto un = static_cast<std::size_t>(n);
    // In place, symmetric counts (a sends to b what b expects from a).
    std::vector<int> counts(un), displs(un);
    int total = 0;
    for (int j = 0; j < n; ++j) {
      counts[static_cast<std::size_t>(j)] = ((me + j) % 3) * 700;
      displs[static_cast<std::size_t>(j)] = total;
      total += counts[static_cast<std::size_t>(j)];
    }
    std::vector<int> buf(static_cast<std::size_t>(total));
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < counts[static_cast<std::size_t>(j)]; ++i) {
        buf[static_cast<std::size_t>(displs[static_cast<std::size_t>(j)] + i)] = value(me, j, i, 2);
      }
    }
    ep::Request in_place = ep::ialltoallv(c, MPI_IN_PLACE, {}, {}, MPI_DATATYPE_NULL, buf.data(),
                                          counts, displs, MPI_INT);
    // Strided sends: element e of the block to j carries ints 2e and 2e+1.
    std::vector<int> scounts(un), sdispls(un), rcounts(un), rdispls(un);
    int send_elems = 0;
    int recv_ints = 0;
    for (int j = 0; j < n; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      scounts[ju] = v_count(me, j, 300);
      sdispls[ju] = send_elems;
      send_elems += scounts[ju];
      rcounts[ju] = 2 * v_count(j, me, 300);
      rdispls[ju] = recv_ints;
      recv_ints += rcounts[ju];
    }
    std::vector<int> send(static_cast<std::size_t>(4 * send_elems + 1), kUntouched);
    for (int j = 0; j < n; ++j) {
      for (int e = 0; e < scounts[static_cast<std::size_t>(j)]; ++e) {
        const auto at = static_cast<std::size_t>(4 * (sdispls[static_cast<std::size_t>(j)] + e));
        send[at] = value(me, j, 2 * e, 3);
        send[at + 3] = value(me, j, 2 * e + 1, 3);
      }
    }
    std::vector<int> recv(static_cast<std::size_t>(recv_ints), kUntouched);
    ep::Request strided = ep::ialltoallv(c, send.data(), scounts, sdispls, spaced, recv.data(),
                                         rcounts, rdispls, MPI_INT);
    std::vector<ep::Request> both{in_place, strided};
    ep::wait_all(both);
    for (int s = 0; s < n; ++s) {
      const auto su = static_cast<std::size_t>(s);
      int bad = 0;
      for (int i = 0; i < counts[su]; ++i) {
        bad += buf[static_cast<std::size_t>(displs[su] + i)] != value(s, me, i, 2);
      }
      for (int i = 0; i < rcounts[su]; ++i) {
        bad += recv[static_cast<std::size_t>(rdispls[su] + i)] != value(s, me, i, 3);
      }
      EXPECT_EQ(bad, 0) << "blocks from ep " << s;
    }
  });
}

// ---- several at once --------------------------------------------------------

TEST(NonblockingCollectives, SeveralOutstandingWithPointToPointCompletedInDifferentOrders) {
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    for (int round = 0; round < 6; ++round) {
      const int root = (round * 5) % n;
      std::vector<int> bcast_buf(1000, kUntouched);
      if (me == root) {
        for (int i = 0; i < 1000; ++i)
          bcast_buf[static_cast<std::size_t>(i)] = value(root, round, i);
      }
      std::vector<double> sum_in(3000, me + 1.0);
      std::vector<double> sum_out(3000, -1.0);
      int max_in_place = me * 10 + round;
      Exchange x = make_exchange(c, 1 + round % 3 * 400, round);
      const int ring_out = value(me, (me + 1) % n, round);
      int ring_in = kUntouched;

      std::vector<ep::Request> requests;
      requests.push_back(ep::ibarrier(c));
      requests.push_back(c.irecv(&ring_in, 1, MPI_INT, (me + n - 1) % n, kRingTag));
      requests.push_back(ep::ibcast(c, bcast_buf.data(), 1000, MPI_INT, root));
      requests.push_back(
          ep::iallreduce(c, sum_in.data(), sum_out.data(), 3000, MPI_DOUBLE, MPI_SUM));
      requests.push_back(c.isend(&ring_out, 1, MPI_INT, (me + 1) % n, kRingTag));
      requests.push_back(start(c, x));
      requests.push_back(ep::iallreduce(c, MPI_IN_PLACE, &max_in_place, 1, MPI_INT, MPI_MAX));

      switch ((me + round) % 3) {
        case 0: {  // wait_all, last started first
          std::reverse(requests.begin(), requests.end());
          ep::wait_all(requests);
          break;
        }
        case 1: {  // test_some loop
          std::size_t done = 0;
          while (done < requests.size()) {
            done += ep::test_some(requests).size();
            relax();
          }
          break;
        }
        default: {  // the last one alone, then wait_any
          ep::wait(requests.back());
          while (ep::wait_any(requests) != MPI_UNDEFINED) {
          }
          break;
        }
      }
      for (const ep::Request& r : requests) EXPECT_TRUE(r.is_null());
      int bad = 0;
      for (int i = 0; i < 1000; ++i)
        bad += bcast_buf[static_cast<std::size_t>(i)] != value(root, round, i);
      const double expected_sum = n * (n + 1) / 2.0;  // exact in double
      for (const double v : sum_out) bad += v != expected_sum;
      EXPECT_EQ(bad, 0) << "round " << round;
      EXPECT_EQ(max_in_place, (n - 1) * 10 + round);
      EXPECT_EQ(ring_in, value((me + n - 1) % n, me, round));
      EXPECT_EQ(x.recv, x.expected) << "round " << round;
    }
  });
}

TEST(NonblockingCollectives, InterleavedWithBlockingCollectives) {
  // A nonblocking collective in flight while blocking ones run: the MPI
  // calls underneath must keep the same order on every process.
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    for (int round = 0; round < 5; ++round) {
      int a = c.rank();
      int total = -1;
      ep::Request pending = ep::iallreduce(c, &a, &total, 1, MPI_INT, MPI_SUM);
      ep::barrier(c);
      Exchange x = make_exchange(c, 2, round);
      ep::Request exchange = start(c, x);
      int b = c.rank() + 1;
      int blocking_total = -1;
      ep::allreduce(c, &b, &blocking_total, 1, MPI_INT, MPI_SUM);
      std::vector<int> send(static_cast<std::size_t>(n), c.rank());
      std::vector<int> recv(static_cast<std::size_t>(n), kUntouched);
      ep::alltoall(c, send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT);
      ep::wait(exchange);
      ep::wait(pending);
      EXPECT_EQ(total, n * (n - 1) / 2);
      EXPECT_EQ(blocking_total, n * (n + 1) / 2);
      EXPECT_EQ(x.recv, x.expected);
      for (int s = 0; s < n; ++s) EXPECT_EQ(recv[static_cast<std::size_t>(s)], s);
    }
  });
}

TEST(NonblockingCollectives, PointToPointKeepsFlowingWhileEndpointsWaitOnCollectives) {
  // Large sends around a ring, each to a receive posted before the sender
  // waits; then an ibarrier that every endpoint waits on before its receive.
  // A sender finishes only once its receiver's process has routed the
  // message, which may be while every thread there is already waiting on the
  // barrier: the collective wait must keep routing point-to-point traffic.
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    constexpr int kInts = 200000;
    for (int round = 0; round < 3; ++round) {
      std::vector<int> out(kInts);
      for (int i = 0; i < kInts; ++i)
        out[static_cast<std::size_t>(i)] = value(me, round, i % 50000);
      std::vector<int> in(kInts, kUntouched);
      const int prev = (me + n - 1) % n;
      ep::Request received = c.irecv(in.data(), kInts, MPI_INT, prev, kRingTag);
      ep::Request sent = c.isend(out.data(), kInts, MPI_INT, (me + 1) % n, kRingTag);
      ep::wait(sent);
      ep::Request barrier = ep::ibarrier(c);
      ep::wait(barrier);
      ep::wait(received);
      int bad = 0;
      for (int i = 0; i < kInts; ++i)
        bad += in[static_cast<std::size_t>(i)] != value(prev, round, i % 50000);
      EXPECT_EQ(bad, 0) << "round " << round;
    }
  });
}

TEST(NonblockingCollectives, BadArgumentsThrowFromTheCall) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    int x = 0;
    EXPECT_THROW((void)ep::ibcast(c, &x, 1, MPI_INT, c.size()), ep::Error);
    EXPECT_THROW((void)ep::iallreduce(c, &x, &x, -2, MPI_INT, MPI_SUM), ep::Error);
    EXPECT_THROW((void)ep::iallreduce(c, &x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM), ep::Error);
    const std::vector<int> too_short;
    EXPECT_THROW((void)ep::ialltoallv(c, &x, too_short, too_short, MPI_INT, &x, too_short,
                                      too_short, MPI_INT),
                 ep::Error);
    // Nothing was started: the next collective still matches across endpoints.
    ep::Request r = ep::ibarrier(c);
    ep::wait(r);
  });
}

}  // namespace
