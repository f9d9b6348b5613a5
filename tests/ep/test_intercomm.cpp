// Endpoint intercommunicators between groups of different sizes.
//
// Two layouts, both on disjoint processes as intercommunicators require:
// - clients and servers: process 0 runs every thread (the model's clients),
//   the other processes one endpoint each (single-threaded servers);
// - parity: even processes against odd processes, with the local leader on
//   the last rank of each group.
// Across each: point-to-point both ways (specific and wildcard sources,
// synchronous sends, matched probes, a large message), barrier, bcast with
// MPI_ROOT / MPI_PROC_NULL, allreduce (sum and a non-commutative user op, so
// the remote group's rank order shows), merge with both `high` orders and
// with equal `high`. One-process shapes check the argument errors only.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

using ep::ErrorKind;
using ep_p2p::expect_ep_error;
using std::to_string;

constexpr int kPeerTag = 4242;  // on MPI_COMM_WORLD, between the two leaders only

long long encode(int side, int from, int to) { return side * 1000000LL + from * 1000LL + to; }

// Concatenates decimal digits: a op b = "ab". Associative, not commutative,
// so the result shows the order in which the contributions were combined.
void concat_digits(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const long long*>(in);
  auto* b = static_cast<long long*>(inout);
  for (int i = 0; i < *len; ++i) {
    long long scale = 1;
    for (long long rest = b[i]; rest > 0; rest /= 10) scale *= 10;
    b[i] = a[i] * scale + b[i];
  }
}

// Endpoints of the world communicator `c` whose process satisfies `in_side`.
template <class InSide>
int endpoints_where(const ep::Communicator& c, InSide in_side) {
  int count = 0;
  for (int p = 0; p < c.rank_map().num_processes(); ++p) {
    if (in_side(p)) count += c.rank_map().endpoints_of(p);
  }
  return count;
}

void check_point_to_point(const ep::InterCommunicator& inter, int side) {
  const int me = inter.rank();
  const int nl = inter.size();
  const int nr = inter.remote_size();

  // Every endpoint to every remote endpoint, received by specific source.
  std::vector<long long> out(static_cast<std::size_t>(nr));
  std::vector<ep::Request> sends;
  for (int j = 0; j < nr; ++j) {
    out[static_cast<std::size_t>(j)] = encode(side, me, j);
    sends.push_back(inter.isend(&out[static_cast<std::size_t>(j)], 1, MPI_LONG_LONG, j, 11));
  }
  for (int i = 0; i < nr; ++i) {
    long long in = -1;
    const ep::Status st = inter.recv(&in, 1, MPI_LONG_LONG, i, 11);
    EXPECT_EQ(in, encode(1 - side, i, me));
    EXPECT_EQ(st.source, i);
    EXPECT_EQ(st.tag, 11);
  }
  ep::wait_all(sends);

  // Remote endpoint i sends one synchronous message to my group's rank
  // i % nl; received with wildcards, alternately by recv and mprobe/mrecv.
  const int target = me % nr;
  const long long mine = encode(side, me, target);
  ep::Request sync = inter.issend(&mine, 1, MPI_LONG_LONG, target, 12);
  std::vector<int> expected_sources;
  for (int i = me; i < nr; i += nl) expected_sources.push_back(i);
  std::vector<int> sources;
  for (std::size_t k = 0; k < expected_sources.size(); ++k) {
    long long in = -1;
    ep::Status st;
    if (k % 2 == 0) {
      st = inter.recv(&in, 1, MPI_LONG_LONG, ep::kAnySource, ep::kAnyTag);
    } else {
      ep::Message message = inter.mprobe(ep::kAnySource, 12);
      st = ep::mrecv(&in, 1, MPI_LONG_LONG, message);
    }
    EXPECT_EQ(st.tag, 12);
    EXPECT_EQ(in, encode(1 - side, st.source, me));
    sources.push_back(st.source);
  }
  ep::wait(sync);
  std::sort(sources.begin(), sources.end());
  EXPECT_EQ(sources, expected_sources);
  // Nothing more on this round's tag (the next round may already be arriving).
  EXPECT_FALSE(inter.iprobe(ep::kAnySource, 12).has_value());

  // A large message between the two rank-0 endpoints, both ways at once.
  // The barrier keeps it out of the any-tag receives above: without it a
  // rank-0 endpoint that is done with them may send tag 14 while the remote
  // rank 0 still waits on kAnyTag for a tag-12 message.
  ep::barrier(inter);
  if (me == 0) {
    constexpr int kInts = 1 << 16;
    std::vector<int> big = ep_p2p::make_pattern(side, 1 - side, kInts, 5);
    std::vector<int> got(kInts, -1);
    const ep::Status st =
        inter.sendrecv(big.data(), kInts, MPI_INT, 0, 14, got.data(), kInts, MPI_INT, 0, 14);
    EXPECT_EQ(st.source, 0);
    EXPECT_EQ(st.count(MPI_INT), kInts);
    EXPECT_EQ(ep_p2p::count_mismatches(got, 1 - side, side, 5), 0);
  }
}

void check_bcast(const ep::InterCommunicator& inter, int side) {
  const int me = inter.rank();
  for (int sender = 0; sender < 2; ++sender) {
    // Small from the sending group's last rank, large (past every eager
    // limit) from its rank 0.
    const int count = sender == 0 ? 5 : 5000;
    const auto value = [&](int k) { return sender * 10000.0 + k + 0.5; };
    std::vector<double> data(static_cast<std::size_t>(count), -1.0);
    if (side == sender) {
      const int root = sender == 0 ? inter.size() - 1 : 0;
      if (me == root) {
        for (int k = 0; k < count; ++k) data[static_cast<std::size_t>(k)] = value(k);
      }
      ep::bcast(inter, data.data(), count, MPI_DOUBLE, me == root ? MPI_ROOT : MPI_PROC_NULL);
    } else {
      const int root = sender == 0 ? inter.remote_size() - 1 : 0;
      ep::bcast(inter, data.data(), count, MPI_DOUBLE, root);
      int wrong = 0;
      for (int k = 0; k < count; ++k) wrong += data[static_cast<std::size_t>(k)] != value(k);
      EXPECT_EQ(wrong, 0) << "bcast from side " << sender;
    }
  }
}

void check_allreduce(const ep::InterCommunicator& inter, int side, MPI_Op concat) {
  const int me = inter.rank();
  const int nr = inter.remote_size();
  const long long mine[3] = {side * 1000LL + me + 1, me, 1};
  long long got[3] = {-1, -1, -1};
  ep::allreduce(inter, mine, got, 3, MPI_LONG_LONG, MPI_SUM);
  const long long remote_side = 1 - side;
  EXPECT_EQ(got[0], nr * remote_side * 1000LL + static_cast<long long>(nr) * (nr + 1) / 2);
  EXPECT_EQ(got[1], static_cast<long long>(nr) * (nr - 1) / 2);
  EXPECT_EQ(got[2], nr);

  // The remote ranks' digits (rank % 9 + 1) in rank order; a long long holds
  // 18 of them.
  if (nr > 18 || inter.size() > 18) return;
  const long long digit = me % 9 + 1;
  long long ordered = -1;
  ep::allreduce(inter, &digit, &ordered, 1, MPI_LONG_LONG, concat);
  long long expected = 0;
  for (int i = 0; i < nr; ++i) expected = expected * 10 + i % 9 + 1;
  EXPECT_EQ(ordered, expected);
}

// Merged rank of an endpoint of `side` with group rank `rank`, when side
// `first` comes first and `first_size` is its size.
int merged_rank(int side, int rank, int first, int first_size) {
  return side == first ? rank : first_size + rank;
}

// `whole` holds exactly the endpoints of both groups; `whole_order_side0_first`
// says whether its rank order is side 0's endpoints, then side 1's.
void check_merge(const ep::InterCommunicator& inter, int side, const ep::Communicator& whole,
                 bool whole_order_side0_first) {
  const int me = inter.rank();
  const int sizes[2] = {side == 0 ? inter.size() : inter.remote_size(),
                        side == 0 ? inter.remote_size() : inter.size()};
  const int total = sizes[0] + sizes[1];
  // high = false comes first: side 0 first, then side 1 first.
  for (int first = 0; first < 2; ++first) {
    ep::Communicator merged = ep::merge(inter, side != first);
    EXPECT_EQ(merged.size(), total);
    const int expected = merged_rank(side, me, first, sizes[first]);
    EXPECT_EQ(merged.rank(), expected);
    EXPECT_EQ(merged.rank_map().ep_rank(merged.process_rank(), merged.local_thread()),
              merged.rank());
    // A ring over the merged communicator carrying (side, group rank).
    const int right = (merged.rank() + 1) % total;
    const int left = (merged.rank() - 1 + total) % total;
    const int out = side * 1000 + me;
    int in = -1;
    merged.sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3);
    const int second = 1 - first;
    const int left_side = left < sizes[first] ? first : second;
    const int left_rank = left < sizes[first] ? left : left - sizes[first];
    EXPECT_EQ(in, left_side * 1000 + left_rank);
    long long rank_sum = 0;
    const long long my_rank = merged.rank();
    ep::allreduce(merged, &my_rank, &rank_sum, 1, MPI_LONG_LONG, MPI_SUM);
    EXPECT_EQ(rank_sum, static_cast<long long>(total) * (total - 1) / 2);
    // The same endpoints as `whole`, in its order or in another.
    EXPECT_EQ(ep::compare(merged, whole),
              first == 0 && whole_order_side0_first ? MPI_CONGRUENT : MPI_SIMILAR);
    merged.free();
  }
  // Equal `high`: either order, but the same on both sides.
  ep::Communicator merged = ep::merge(inter, true);
  EXPECT_EQ(merged.size(), total);
  const int zero_first = merged.rank() == merged_rank(side, me, 0, sizes[0]) ? 1 : 0;
  const int one_first = merged.rank() == merged_rank(side, me, 1, sizes[1]) ? 1 : 0;
  EXPECT_EQ(zero_first + one_first, 1) << "rank " << merged.rank() << " fits neither order";
  int votes[2] = {zero_first, -zero_first};
  int agreed[2] = {0, 0};
  ep::allreduce(merged, votes, agreed, 2, MPI_INT, MPI_MIN);
  EXPECT_EQ(agreed[0], -agreed[1]) << "the two sides merged in different orders";
  merged.free();
}

void exercise(const ep::InterCommunicator& inter, int side, int local_size, int remote_size,
              MPI_Op concat, const ep::Communicator& whole, bool whole_order_side0_first) {
  EXPECT_TRUE(inter.is_inter());
  EXPECT_TRUE(ep::is_inter(inter));
  EXPECT_EQ(inter.size(), local_size);
  EXPECT_EQ(inter.remote_size(), remote_size);
  check_point_to_point(inter, side);
  ep::barrier(inter);
  check_bcast(inter, side);
  check_allreduce(inter, side, concat);
  ep::barrier(inter);
  check_merge(inter, side, whole, whole_order_side0_first);
}

class Intercomm : public ::testing::Test {
 protected:
  void SetUp() override { MPI_Op_create(concat_digits, 0, &concat_); }
  void TearDown() override { MPI_Op_free(&concat_); }
  MPI_Op concat_ = MPI_OP_NULL;
};

TEST_F(Intercomm, ClientThreadsAndSingleThreadedServers) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "needs two processes for disjoint groups";
  const int threads = ep_test::world_rank() == 0 ? omp_get_max_threads() : 1;
  const MPI_Op concat = concat_;
  ep_test::run_endpoints(
      [concat](ep::Communicator& c) {
        const int side = c.process_rank() == 0 ? 0 : 1;
        const int clients = c.rank_map().endpoints_of(0);
        const int servers = c.size() - clients;
        ep::Communicator group = ep::split(c, side, c.rank());
        EXPECT_FALSE(ep::is_inter(group));
        ep::InterCommunicator inter =
            ep::create_intercomm(group, 0, MPI_COMM_WORLD, side == 0 ? 1 : 0, kPeerTag);
        EXPECT_EQ(inter.rank(), group.rank());
        exercise(inter, side, side == 0 ? clients : servers, side == 0 ? servers : clients, concat,
                 c, true);
        inter.free();
        group.free();
      },
      threads);
}

TEST_F(Intercomm, EvenAgainstOddProcesses) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "needs two processes for disjoint groups";
  const MPI_Op concat = concat_;
  ep_test::run_endpoints([concat](ep::Communicator& c) {
    const int processes = c.rank_map().num_processes();
    const int side = c.process_rank() % 2;
    const int evens = endpoints_where(c, [](int p) { return p % 2 == 0; });
    const int odds = c.size() - evens;
    ep::Communicator group = ep::split(c, side, c.rank());
    // The leaders are the groups' last ranks, on the last process of each parity.
    int remote_leader = processes - 1;
    if (remote_leader % 2 == side) --remote_leader;
    ep::InterCommunicator inter =
        ep::create_intercomm(group, group.size() - 1, MPI_COMM_WORLD, remote_leader, kPeerTag + 1);
    exercise(inter, side, side == 0 ? evens : odds, side == 0 ? odds : evens, concat, c,
             processes == 2);
    inter.free();
    group.free();
  });
}

TEST(IntercommErrors, BadLeaders) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    const int world = ep_test::world_size();
    const auto create = [&](int local_leader, MPI_Comm peer, int remote_leader, int tag) {
      static_cast<void>(ep::create_intercomm(c, local_leader, peer, remote_leader, tag));
    };
    const std::string me = "ep rank " + to_string(r);
    expect_ep_error([&] { create(n, MPI_COMM_WORLD, 0, 1); }, ErrorKind::kRank,
                    {"ep::create_intercomm", me, "local_leader " + to_string(n)},
                    "local_leader past the end");
    expect_ep_error([&] { create(-1, MPI_COMM_WORLD, 0, 1); }, ErrorKind::kRank,
                    {"local_leader -1"}, "negative local_leader");
    if (n > 1) {
      expect_ep_error([&] { create(r % 2, MPI_COMM_WORLD, 0, 1); }, ErrorKind::kArgument,
                      {"local_leader differs"}, "local_leader differing between endpoints");
    }
    // The whole world is the local group here, so every process is inside it.
    expect_ep_error([&] { create(0, MPI_COMM_WORLD, world - 1, 1); }, ErrorKind::kRank,
                    {"remote_leader " + to_string(world - 1), "local group"},
                    "remote leader inside the local group");
    expect_ep_error([&] { create(0, MPI_COMM_WORLD, world + 2, 1); }, ErrorKind::kRank,
                    {"remote_leader " + to_string(world + 2), "out of range"},
                    "remote leader out of range");
    expect_ep_error([&] { create(n - 1, MPI_COMM_WORLD, -1, 1); }, ErrorKind::kRank,
                    {"remote_leader -1"}, "negative remote leader");
    expect_ep_error([&] { create(0, MPI_COMM_WORLD, 0, -3); }, ErrorKind::kTag, {"tag -3"},
                    "negative tag");
    expect_ep_error([&] { create(0, MPI_COMM_NULL, 0, 1); }, ErrorKind::kArgument,
                    {"MPI_COMM_NULL"}, "null peer communicator");
    // Every endpoint failed alike, so the communicator is still in step.
    ep::barrier(c);
    ep_p2p::message_barrier(c);
  });
}

TEST(IntercommErrors, GroupsSharingAProcess) {
  // Process 1 has endpoints in both groups: group 0 is process 0 and thread 0
  // of process 1, group 1 the rest of process 1 and the processes after it.
  if (ep_test::world_size() < 3 || omp_get_max_threads() < 2) {
    GTEST_SKIP() << "needs three processes with two threads";
  }
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int p = c.process_rank();
    const int side = p == 0 || (p == 1 && c.local_thread() == 0) ? 0 : 1;
    ep::Communicator group = ep::split(c, side, c.rank());
    // Group 1's leader is its first endpoint on process 2, behind process 1's other threads.
    const int local_leader = side == 0 ? 0 : c.rank_map().endpoints_of(1) - 1;
    const int remote_leader = side == 0 ? 2 : 0;
    expect_ep_error(
        [&] {
          static_cast<void>(ep::create_intercomm(group, local_leader, MPI_COMM_WORLD, remote_leader,
                                                 kPeerTag + 2));
        },
        ErrorKind::kArgument, {"MPI_COMM_WORLD rank 1", "disjoint"}, "overlapping groups");
    ep::barrier(group);
    group.free();
  });
}

TEST(IntercommErrors, MisuseAcrossAndAfterFree) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "needs two processes for disjoint groups";
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int side = c.process_rank() % 2;
    ep::Communicator group = ep::split(c, side, c.rank());
    ep::InterCommunicator inter =
        ep::create_intercomm(group, 0, MPI_COMM_WORLD, side == 0 ? 1 : 0, kPeerTag + 3);
    const int nr = inter.remote_size();
    const std::string me = "ep rank " + to_string(inter.rank());
    int x = 0;
    expect_ep_error([&] { inter.send(&x, 1, MPI_INT, nr, 0); }, ErrorKind::kRank,
                    {"ep::send", me, "destination " + to_string(nr), "remote group"},
                    "send past the remote group");
    expect_ep_error([&] { inter.recv(&x, 1, MPI_INT, -7, 0); }, ErrorKind::kRank,
                    {"ep::recv", "source -7"}, "negative source");
    expect_ep_error([&] { static_cast<void>(inter.isend(&x, 1, MPI_INT, 0, 40000)); },
                    ErrorKind::kTag, {"ep::isend", me, "tag 40000"}, "tag out of range");
    expect_ep_error([&] { static_cast<void>(inter.irecv(&x, -1, MPI_INT, 0, 0)); },
                    ErrorKind::kCount, {"ep::irecv", "count -1"}, "negative count");
    expect_ep_error([&] { ep::bcast(inter, &x, 1, MPI_INT, nr); }, ErrorKind::kRank,
                    {"ep::bcast", "root " + to_string(nr)}, "bcast root past the remote group");
    expect_ep_error([&] { ep::allreduce(inter, MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM); },
                    ErrorKind::kArgument, {"ep::allreduce", "MPI_IN_PLACE"},
                    "in-place allreduce on an intercommunicator");
    // Side 0's endpoints disagree on `high` (when it has two): both sides throw.
    const int side0_size = side == 0 ? inter.size() : inter.remote_size();
    if (side0_size > 1) {
      const bool high = side == 0 && inter.rank() % 2 == 1;
      expect_ep_error([&] { static_cast<void>(ep::merge(inter, high)); }, ErrorKind::kArgument,
                      {"ep::merge", side == 0 ? "local group" : "remote group"},
                      "merge with differing high");
    }
    // Still usable after all that.
    ep::barrier(inter);
    ep::Communicator merged = ep::merge(inter, side == 1);
    EXPECT_EQ(merged.size(), inter.size() + nr);
    merged.free();

    inter.free();
    expect_ep_error([&] { inter.send(&x, 1, MPI_INT, 0, 0); }, ErrorKind::kFreedComm,
                    {"ep::send", "freed"}, "send after free");
    expect_ep_error([&] { static_cast<void>(inter.remote_size()); }, ErrorKind::kFreedComm,
                    {"remote_size"}, "remote_size after free");
    expect_ep_error([&] { ep::barrier(inter); }, ErrorKind::kFreedComm, {"ep::barrier"},
                    "barrier after free");
    expect_ep_error([&] { static_cast<void>(ep::merge(inter, false)); }, ErrorKind::kFreedComm,
                    {"ep::merge"}, "merge after free");
    expect_ep_error([&] { inter.free(); }, ErrorKind::kFreedComm, {"free"}, "double free");
    expect_ep_error([] { ep::barrier(ep::InterCommunicator()); }, ErrorKind::kFreedComm,
                    {"null intercommunicator"}, "barrier on a null intercommunicator");
    group.free();
  });
}

}  // namespace
