// dup, split, compare and free on endpoint communicators, and the object
// the endpoints of one process share (share_in_process).
//
// Every split is checked against ranks computed here from the colour and key
// rule, then used: a ring of messages carrying the old ranks (so a wrong
// numbering or routing shows up as a wrong value or source) and an allreduce
// of the old ranks against its closed form. The layouts cover one process,
// processes with equal thread counts, and (the Uneven tests) process 0 with
// every thread and the others with one endpoint.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <atomic>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

using ep::ErrorKind;
using ep_p2p::expect_ep_error;
using std::to_string;

/// Process 0 with every thread, the others with one endpoint.
int uneven_threads() { return ep_test::world_rank() == 0 ? omp_get_max_threads() : 1; }

/// The rank map, the parent and the handle agree with each other.
void expect_consistent(const ep::Communicator& s) {
  const ep::RankMap& map = s.rank_map();
  EXPECT_EQ(map.ep_rank(s.process_rank(), s.local_thread()), s.rank());
  EXPECT_EQ(map.endpoints_of(s.process_rank()), s.local_size());
  int process_rank = -1;
  int processes = -1;
  EXPECT_EQ(MPI_Comm_rank(s.parent(), &process_rank), MPI_SUCCESS);
  EXPECT_EQ(MPI_Comm_size(s.parent(), &processes), MPI_SUCCESS);
  EXPECT_EQ(process_rank, s.process_rank());
  EXPECT_EQ(processes, map.num_processes());
}

/// A ring over `s`: each endpoint sends `value_of(its rank)` to the right and
/// checks what comes from the left.
template <class ValueOf>
void expect_ring(const ep::Communicator& s, ValueOf value_of) {
  const auto [r, n, right, left] = ep_test::ring_of(s);
  int out = value_of(r);
  int in = -1;
  const ep::Status st = s.sendrecv(&out, 1, MPI_INT, right, 7, &in, 1, MPI_INT, left, 7);
  EXPECT_EQ(st.source, left);
  EXPECT_EQ(in, value_of(left)) << "ring on a communicator of size " << n;
}

long long sum_of(const ep::Communicator& s, long long value) {
  long long total = 0;
  ep::allreduce(s, &value, &total, 1, MPI_LONG_LONG, MPI_SUM);
  return total;
}

void check_reversed_split(ep::Communicator& c) {
  const int n = c.size();
  const int r = c.rank();
  ep::Communicator s = ep::split(c, 0, n - 1 - r);
  EXPECT_FALSE(s.is_null());
  if (s.is_null()) return;
  EXPECT_EQ(s.size(), n);
  EXPECT_EQ(s.rank(), n - 1 - r);
  expect_consistent(s);
  // Whole processes keep their endpoints together, so the new numbering is
  // process-major again (the collectives' fast path).
  EXPECT_TRUE(s.rank_map().process_major());
  expect_ring(s, [n](int new_rank) { return n - 1 - new_rank; });  // carries the old rank
  EXPECT_EQ(sum_of(s, r), static_cast<long long>(n) * (n - 1) / 2);
  EXPECT_EQ(ep::compare(c, s), n == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
  s.free();
}

void check_parity_split(ep::Communicator& c) {
  const int n = c.size();
  const int r = c.rank();
  const int color = r % 2;
  ep::Communicator s = ep::split(c, color, r);
  EXPECT_FALSE(s.is_null());
  if (s.is_null()) return;
  EXPECT_EQ(s.size(), (n + 1 - color) / 2);
  EXPECT_EQ(s.rank(), r / 2);
  expect_consistent(s);
  // Local thread indices follow the new ranks among this process's endpoints
  // of the same colour (the keys keep the old order here).
  const ep::RankMap& old_map = c.rank_map();
  int before = 0;
  int same_color = 0;
  for (int t = 0; t < c.local_size(); ++t) {
    if (old_map.ep_rank(c.process_rank(), t) % 2 != color) continue;
    ++same_color;
    if (t < c.local_thread()) ++before;
  }
  EXPECT_EQ(s.local_thread(), before);
  EXPECT_EQ(s.local_size(), same_color);
  expect_ring(s, [color](int new_rank) { return 2 * new_rank + color; });
  long long expected = 0;
  for (int k = color; k < n; k += 2) expected += k;
  EXPECT_EQ(sum_of(s, r), expected);
  EXPECT_EQ(ep::compare(s, s), MPI_IDENT);
  if (n > 1) {
    EXPECT_EQ(ep::compare(c, s), MPI_UNEQUAL);
  }
  s.free();
}

TEST(CommSplit, ReversedKeysReverseTheRanks) { ep_test::run_endpoints(check_reversed_split); }

TEST(CommSplit, ReversedKeysWithUnevenProcesses) {
  ep_test::run_endpoints(check_reversed_split, uneven_threads());
}

TEST(CommSplit, ColoursMixThreadsOfOneProcess) { ep_test::run_endpoints(check_parity_split); }

TEST(CommSplit, ColoursMixThreadsWithUnevenProcesses) {
  ep_test::run_endpoints(check_parity_split, uneven_threads());
}

TEST(CommSplit, ColourByThreadOrdersProcessesByKey) {
  // One colour per thread index: every process has exactly one endpoint in
  // each colour; negative keys reverse the process order.
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int processes = c.rank_map().num_processes();
    ep::Communicator s = ep::split(c, c.local_thread(), -c.rank());
    EXPECT_FALSE(s.is_null());
    if (s.is_null()) return;
    EXPECT_EQ(s.size(), processes);
    EXPECT_EQ(s.rank(), processes - 1 - c.process_rank());
    EXPECT_EQ(s.local_size(), 1);
    EXPECT_EQ(s.local_thread(), 0);
    expect_consistent(s);
    const int thread = c.local_thread();
    const ep::RankMap& old_map = c.rank_map();
    expect_ring(s, [&](int new_rank) {
      return old_map.ep_rank(processes - 1 - new_rank, thread);  // the old rank
    });
    EXPECT_EQ(sum_of(s, c.process_rank()), static_cast<long long>(processes) * (processes - 1) / 2);
    s.free();
  });
}

TEST(CommSplit, UndefinedGivesANullHandle) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    const int color = r % 3 == 1 ? MPI_UNDEFINED : r % 3;
    ep::Communicator s = ep::split(c, color, 0);
    if (color == MPI_UNDEFINED) {
      EXPECT_TRUE(s.is_null());
      expect_ep_error([&] { static_cast<void>(s.size()); }, ErrorKind::kFreedComm, {"null"},
                      "size of the null handle");
      return;
    }
    EXPECT_FALSE(s.is_null());
    if (s.is_null()) return;
    int size = 0;
    int rank = 0;
    long long expected = 0;
    for (int k = 0; k < n; ++k) {
      if (k % 3 != color) continue;
      if (k < r) ++rank;
      ++size;
      expected += k;
    }
    EXPECT_EQ(s.size(), size);
    EXPECT_EQ(s.rank(), rank);  // equal keys: the old order
    expect_consistent(s);
    EXPECT_EQ(sum_of(s, r), expected);
    s.free();
  });
}

TEST(CommSplit, SplitOfASplit) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    ep::Communicator s = ep::split(c, r % 2, r);
    ep::Communicator t = ep::split(s, 0, -s.rank());
    EXPECT_EQ(t.size(), s.size());
    EXPECT_EQ(t.rank(), s.size() - 1 - s.rank());
    expect_consistent(t);
    const int color = r % 2;
    const int m = s.size();
    expect_ring(t, [=](int new_rank) { return 2 * (m - 1 - new_rank) + color; });
    EXPECT_EQ(ep::compare(s, t), m == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
    t.free();
    s.free();
  });
}

TEST(CommSplit, BadColourIsAnErrorOnEveryEndpoint) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    // One endpoint (maybe on another process) gives a bad colour: all throw.
    const int color = r == n - 1 ? -5 : 0;
    auto error = expect_ep_error(
        [&] { static_cast<void>(ep::split(c, color, 0)); }, ErrorKind::kArgument,
        {"ep::split", "ep rank " + to_string(n - 1), "colour -5"}, "split with a bad colour");
    if (error) {
      EXPECT_EQ(error->ep_rank(), r);
    }
    expect_ep_error([&] { static_cast<void>(ep::split(c, -1, r)); }, ErrorKind::kArgument,
                    {"colour -1", "MPI_UNDEFINED"}, "split with colour -1 everywhere");
    // The communicator is still usable.
    ep::Communicator s = ep::split(c, 1, r);
    EXPECT_EQ(s.rank(), r);
    expect_ring(s, [](int rank) { return rank; });
    s.free();
  });
}

TEST(CommDup, MessagesOnTheCopyNeverMatchTheOriginal) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const auto [r, n, right, left] = ep_test::ring_of(c);
    ep::Communicator d = ep::dup(c);
    EXPECT_EQ(d.rank(), r);
    EXPECT_EQ(d.size(), n);
    // Same tag on both; the copy's message is sent first, yet a receive on the
    // original (even a wildcard one) must get the original's.
    const int on_copy = 100 + r;
    const int on_original = 200 + r;
    ep::Request first = d.isend(&on_copy, 1, MPI_INT, right, 3);
    ep::Request second = c.isend(&on_original, 1, MPI_INT, right, 3);
    int in = -1;
    ep::Status st = c.recv(&in, 1, MPI_INT, ep::kAnySource, ep::kAnyTag);
    EXPECT_EQ(in, 200 + left);
    EXPECT_EQ(st.source, left);
    st = d.recv(&in, 1, MPI_INT, left, 3);
    EXPECT_EQ(in, 100 + left);
    ep::wait(first);
    ep::wait(second);
    EXPECT_EQ(ep::compare(c, d), MPI_CONGRUENT);
    EXPECT_EQ(ep::compare(d, c), MPI_CONGRUENT);
    d.free();
  });
}

TEST(CommDup, CopyOfASplitOutlivesIt) {
  // A split owns its parent communicator; the copy must have its own.
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    ep::Communicator s = ep::split(c, 0, -r);
    ep::Communicator d = ep::dup(s);
    EXPECT_EQ(ep::compare(s, d), MPI_CONGRUENT);
    s.free();
    expect_consistent(d);
    expect_ring(d, [n = c.size()](int rank) { return n - 1 - rank; });
    d.free();
  });
}

TEST(CommCompare, IdentCongruentSimilarUnequal) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    EXPECT_EQ(ep::compare(c, c), MPI_IDENT);
    ep::Communicator same = ep::split(c, 7, 0);       // same members, same order
    ep::Communicator reversed = ep::split(c, 7, -r);  // same members, reversed
    ep::Communicator half = ep::split(c, r < n / 2 ? 0 : 1, r);
    ep::Communicator copy = ep::dup(c);
    ep::Communicator copy_reversed = ep::split(copy, 0, -r);
    EXPECT_EQ(ep::compare(c, same), MPI_CONGRUENT);
    EXPECT_EQ(ep::compare(same, copy), MPI_CONGRUENT);
    EXPECT_EQ(ep::compare(reversed, copy_reversed), MPI_CONGRUENT);
    EXPECT_EQ(ep::compare(c, reversed), n == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
    EXPECT_EQ(ep::compare(same, reversed), n == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
    EXPECT_EQ(ep::compare(c, half), n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL);
    if (n % 2 == 0) {
      // The same halves under swapped colour values: the colour is no part of
      // the identity.
      ep::Communicator swapped = ep::split(c, r < n / 2 ? 1 : 0, r);
      EXPECT_EQ(ep::compare(half, swapped), MPI_CONGRUENT);
      swapped.free();
      // Same size, other members: a half against a parity class.
      ep::Communicator parity = ep::split(c, r % 2, r);
      if (n > 2) {
        EXPECT_EQ(ep::compare(half, parity), MPI_UNEQUAL);
      }
      parity.free();
    }
    copy_reversed.free();
    copy.free();
    half.free();
    reversed.free();
    same.free();
  });
}

TEST(CommFree, UseAfterFreeIsAnError) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    ep::Communicator d = ep::dup(c);
    ep::Communicator s = ep::split(c, 0, r);
    d.free();
    s.free();
    int x = 0;
    for (ep::Communicator* freed : {&d, &s}) {
      const std::string rank = "ep rank " + to_string(r);
      expect_ep_error([&] { static_cast<void>(freed->size()); }, ErrorKind::kFreedComm,
                      {"size", rank, "freed"}, "size after free");
      expect_ep_error([&] { freed->send(&x, 1, MPI_INT, 0, 0); }, ErrorKind::kFreedComm,
                      {"ep::send", rank}, "send after free");
      expect_ep_error([&] { freed->recv(&x, 1, MPI_INT, 0, 0); }, ErrorKind::kFreedComm,
                      {"ep::recv", rank}, "recv after free");
      expect_ep_error([&] { static_cast<void>(ep::dup(*freed)); }, ErrorKind::kFreedComm,
                      {"ep::dup", rank}, "dup after free");
      expect_ep_error([&] { static_cast<void>(ep::split(*freed, 0, 0)); }, ErrorKind::kFreedComm,
                      {"ep::split", rank}, "split after free");
      expect_ep_error([&] { ep::barrier(*freed); }, ErrorKind::kFreedComm, {"ep::barrier"},
                      "barrier after free");
      expect_ep_error([&] { static_cast<void>(ep::compare(c, *freed)); }, ErrorKind::kFreedComm,
                      {"ep::compare"}, "compare after free");
      expect_ep_error([&] { freed->free(); }, ErrorKind::kFreedComm, {"free"}, "double free");
    }
    expect_ep_error([] { static_cast<void>(ep::compare(ep::Communicator(), ep::Communicator())); },
                    ErrorKind::kFreedComm, {"ep::compare", "null"}, "compare of null handles");
    // The original lives on.
    expect_ring(c, [](int rank) { return rank; });
  });
}

// What the endpoints of one process share: who made it, and one mark per
// endpoint that got it.
struct Shared {
  int maker = -1;
  std::atomic<int> holders{0};
};

TEST(ShareInProcess, OneObjectPerProcessMadeByTheLeader) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const std::shared_ptr<Shared> shared = ep::share_in_process<Shared>(c, [&] {
      auto made = std::make_shared<Shared>();
      made->maker = c.local_thread();
      return made;
    });
    ASSERT_NE(shared, nullptr);
    EXPECT_EQ(shared->maker, 0);
    shared->holders.fetch_add(1);
    ep::barrier(c);  // every local endpoint has marked the object it got
    EXPECT_EQ(shared->holders.load(), c.local_size())
        << "the local endpoints did not all get the same object";
    ep::barrier(c);
  });
}

TEST(ShareInProcess, WhatTheMakerThrowsReachesEveryLocalEndpoint) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const std::string rank = "ep rank " + to_string(c.rank());
    expect_ep_error(
        [&] {
          static_cast<void>(ep::share_in_process<Shared>(
              c, []() -> std::shared_ptr<Shared> { throw std::runtime_error("no shared pool"); }));
        },
        ErrorKind::kArgument, {"ep::share_in_process", rank, "no shared pool"}, "make throws");
    expect_ep_error(
        [&] {
          static_cast<void>(ep::share_in_process<Shared>(
              c, []() -> std::shared_ptr<Shared> { throw std::bad_alloc(); }));
        },
        ErrorKind::kNoMemory, {"ep::share_in_process", rank}, "make runs out of memory");
    // The communicator works on.
    expect_ring(c, [](int r) { return r; });
  });
}

}  // namespace
