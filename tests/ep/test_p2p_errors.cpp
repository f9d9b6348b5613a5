// Error cases: every misuse throws ep::Error with the right kind() and a
// what() naming the call and the offending value, and leaves the
// communicator usable.
//
// Not tested here: "MPI initialised below MPI_THREAD_MULTIPLE" (ErrorKind::
// kThreadLevel). MPI can be initialised only once per process and the test
// main initialises it with MPI_THREAD_MULTIPLE, so create_endpoints can never
// see a lower level in this process; that check needs a separate program
// that calls MPI_Init_thread with MPI_THREAD_FUNNELED.
//
// Not tested either: an invalid datatype (MPI_DATATYPE_NULL). Whether it is
// caught before MPI sees it depends on MPI's error handler, and under the
// default MPI_ERRORS_ARE_FATAL a miss would abort the whole test program.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

using ep::ErrorKind;
using ep_p2p::expect_ep_error;
using std::to_string;

constexpr int kEagerInts = static_cast<int>(ep::kDefaultEagerThreshold / sizeof(int));

/// A ring of endpoints: this one sends to `to` and receives from `from` with `tag`.
struct Ring {
  int to, from, tag;
};

/// The two rings the truncation tests run over: between threads of one
/// process (tag `intra_tag`) and between processes (`inter_tag`).
std::array<Ring, 2> truncation_rings(const ep::Communicator& c, int intra_tag, int inter_tag) {
  return {Ring{ep_p2p::intra_next(c), ep_p2p::intra_prev(c), intra_tag},
          Ring{ep_p2p::inter_next(c), ep_p2p::inter_prev(c), inter_tag}};
}

/// The error names the caller's EP rank; an argument error carries no MPI
/// code (a truncation may carry MPI_ERR_TRUNCATE: `argument_error` false).
void expect_caller(const std::optional<ep::Error>& e, const ep::Communicator& c,
                   bool argument_error = true) {
  if (!e) return;
  EXPECT_EQ(e->ep_rank(), c.rank()) << e->what();
  if (argument_error) {
    EXPECT_EQ(e->mpi_code(), MPI_SUCCESS) << e->what();
  }
  EXPECT_NE(std::string(e->what()).find("ep rank " + to_string(c.rank())), std::string::npos)
      << e->what();
}

/// A ring exchange that must still work after the errors.
void expect_ring_still_works(const ep::Communicator& c) {
  const auto [r, n, right, left] = ep_test::ring_of(c);
  int out = ep_p2p::pattern(r, right, 0, 77);
  int in = -1;
  const ep::Status st = c.sendrecv(&out, 1, MPI_INT, right, 1, &in, 1, MPI_INT, left, 1);
  EXPECT_EQ(st.source, left);
  EXPECT_EQ(in, ep_p2p::pattern(left, r, 0, 77));
}

TEST(P2PErrors, RankOutOfRange) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    int x = 0;
    const std::string size = to_string(n);
    for (int bad : {n, 12345, -7}) {
      const std::string v = to_string(bad);
      expect_caller(expect_ep_error([&] { c.send(&x, 1, MPI_INT, bad, 0); }, ErrorKind::kRank,
                                    {"send", v}, "send to " + v),
                    c);
      expect_ep_error([&] { c.ssend(&x, 1, MPI_INT, bad, 0); }, ErrorKind::kRank, {"ssend", v},
                      "ssend to " + v);
      expect_ep_error([&] { static_cast<void>(c.isend(&x, 1, MPI_INT, bad, 0)); }, ErrorKind::kRank,
                      {"isend", v}, "isend to " + v);
      expect_ep_error([&] { static_cast<void>(c.issend(&x, 1, MPI_INT, bad, 0)); },
                      ErrorKind::kRank, {"issend", v}, "issend to " + v);
      expect_caller(expect_ep_error([&] { c.recv(&x, 1, MPI_INT, bad, 0); }, ErrorKind::kRank,
                                    {"recv", v}, "recv from " + v),
                    c);
      expect_ep_error([&] { static_cast<void>(c.irecv(&x, 1, MPI_INT, bad, 0)); }, ErrorKind::kRank,
                      {"irecv", v}, "irecv from " + v);
      expect_ep_error([&] { c.probe(bad, 0); }, ErrorKind::kRank, {"probe", v}, "probe " + v);
      expect_ep_error([&] { static_cast<void>(c.iprobe(bad, 0)); }, ErrorKind::kRank, {"iprobe", v},
                      "iprobe " + v);
      expect_ep_error([&] { static_cast<void>(c.mprobe(bad, 0)); }, ErrorKind::kRank, {"mprobe", v},
                      "mprobe " + v);
      expect_ep_error([&] { static_cast<void>(c.improbe(bad, 0)); }, ErrorKind::kRank,
                      {"improbe", v}, "improbe " + v);
      int y = 0;
      expect_ep_error([&] { c.sendrecv(&x, 1, MPI_INT, bad, 0, &y, 1, MPI_INT, c.rank(), 0); },
                      ErrorKind::kRank, {"sendrecv", v}, "sendrecv to " + v);
      expect_ep_error([&] { c.sendrecv(&x, 1, MPI_INT, c.rank(), 0, &y, 1, MPI_INT, bad, 0); },
                      ErrorKind::kRank, {"sendrecv", v}, "sendrecv from " + v);
    }
    // MPI_ANY_SOURCE is a receive-side wildcard only.
    expect_ep_error([&] { c.send(&x, 1, MPI_INT, ep::kAnySource, 0); }, ErrorKind::kRank, {"send"},
                    "send to MPI_ANY_SOURCE");
    expect_ring_still_works(c);
  });
}

TEST(P2PErrors, TagOutOfRange) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int right = (c.rank() + 1) % c.size();
    int x = 0;
    for (int bad : {ep::kMaxUserTag + 1, -5, 40000}) {
      const std::string v = to_string(bad);
      expect_caller(expect_ep_error([&] { c.send(&x, 1, MPI_INT, right, bad); }, ErrorKind::kTag,
                                    {"send", v}, "send with tag " + v),
                    c);
      expect_ep_error([&] { c.ssend(&x, 1, MPI_INT, right, bad); }, ErrorKind::kTag, {"ssend", v},
                      "ssend with tag " + v);
      expect_ep_error([&] { static_cast<void>(c.isend(&x, 1, MPI_INT, right, bad)); },
                      ErrorKind::kTag, {"isend", v}, "isend with tag " + v);
      expect_ep_error([&] { static_cast<void>(c.issend(&x, 1, MPI_INT, right, bad)); },
                      ErrorKind::kTag, {"issend", v}, "issend with tag " + v);
      expect_caller(expect_ep_error([&] { c.recv(&x, 1, MPI_INT, right, bad); }, ErrorKind::kTag,
                                    {"recv", v}, "recv with tag " + v),
                    c);
      expect_ep_error([&] { static_cast<void>(c.irecv(&x, 1, MPI_INT, right, bad)); },
                      ErrorKind::kTag, {"irecv", v}, "irecv with tag " + v);
      expect_ep_error([&] { c.probe(right, bad); }, ErrorKind::kTag, {"probe", v},
                      "probe with tag " + v);
      expect_ep_error([&] { static_cast<void>(c.iprobe(right, bad)); }, ErrorKind::kTag,
                      {"iprobe", v}, "iprobe with tag " + v);
    }
    // MPI_ANY_TAG is a receive-side wildcard only.
    expect_ep_error([&] { c.send(&x, 1, MPI_INT, right, ep::kAnyTag); }, ErrorKind::kTag, {"send"},
                    "send with MPI_ANY_TAG");
    // The largest user tag works.
    int in = -1;
    const int left = (c.rank() - 1 + c.size()) % c.size();
    const ep::Status st = c.sendrecv(&x, 1, MPI_INT, right, ep::kMaxUserTag - 1, &in, 1, MPI_INT,
                                     left, ep::kMaxUserTag - 1);
    EXPECT_EQ(st.tag, ep::kMaxUserTag - 1);
    expect_ring_still_works(c);
  });
}

TEST(P2PErrors, NegativeCount) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int right = (c.rank() + 1) % c.size();
    int x = 0;
    const std::string v = "-7";
    expect_caller(expect_ep_error([&] { c.send(&x, -7, MPI_INT, right, 0); }, ErrorKind::kCount,
                                  {"send", v}, "send of -7 elements"),
                  c);
    expect_ep_error([&] { static_cast<void>(c.isend(&x, -7, MPI_INT, right, 0)); },
                    ErrorKind::kCount, {"isend", v}, "isend of -7 elements");
    expect_ep_error([&] { c.recv(&x, -7, MPI_INT, right, 0); }, ErrorKind::kCount, {"recv", v},
                    "recv of -7 elements");
    expect_ep_error([&] { static_cast<void>(c.irecv(&x, -7, MPI_INT, right, 0)); },
                    ErrorKind::kCount, {"irecv", v}, "irecv of -7 elements");
    expect_ring_still_works(c);
  });
}

// A sendrecv whose send half is invalid must throw without leaving its
// receive half posted: a stale receive would later swallow a matching message
// into a buffer the caller no longer expects to be written (and it keeps the
// communicator alive). Deterministic: an eager send to oneself is delivered
// inside send(), so iprobe right after it must see the message unless a stale
// receive took it.
TEST(P2PErrors, FailedSendrecvLeavesNoReceivePosted) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int me = c.rank();
    int x = 1;
    struct Bad {
      int dest, tag, count;
      ErrorKind kind;
      const char* what;
    };
    const Bad cases[] = {{c.size(), 40, 1, ErrorKind::kRank, "bad dest"},
                         {me, ep::kMaxUserTag + 1, 1, ErrorKind::kTag, "bad send tag"},
                         {me, 40, -2, ErrorKind::kCount, "bad send count"}};
    int tag = 40;
    for (const Bad& bad : cases) {
      SCOPED_TRACE(bad.what);
      int stale = -1;
      expect_ep_error(
          [&] {
            c.sendrecv(&x, bad.count, MPI_INT, bad.dest, bad.tag == 40 ? tag : bad.tag, &stale, 1,
                       MPI_INT, me, tag);
          },
          bad.kind, {"sendrecv"}, std::string("sendrecv with ") + bad.what);
      const int z = 4242;
      c.send(&z, 1, MPI_INT, me, tag);
      const std::optional<ep::Status> p = c.iprobe(me, tag);
      EXPECT_TRUE(p.has_value()) << "the receive half of the failed sendrecv is still posted "
                                    "and took the next matching message";
      EXPECT_EQ(stale, -1) << "the failed sendrecv's receive buffer was written";
      if (p) {
        int in = -1;
        c.recv(&in, 1, MPI_INT, me, tag);
        EXPECT_EQ(in, z);
      }
      ++tag;
    }
  });
}

// The same when the message the receive half would match is already queued:
// a sendrecv that throws for its send arguments must not have consumed it.
TEST(P2PErrors, FailedSendrecvConsumesNothing) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int me = c.rank();
    int x = 1;
    for (int big : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "large " << big);
      const int elems = big != 0 ? 3 * kEagerInts : 2;
      const int tag = 50 + big;
      const std::vector<int> out = ep_p2p::make_pattern(me, me, elems, tag);
      ep::Request queued = c.isend(out.data(), elems, MPI_INT, me, tag);  // to myself, queued
      std::vector<int> stale(static_cast<std::size_t>(elems), -1);
      expect_ep_error(
          [&] { c.sendrecv(&x, 1, MPI_INT, c.size(), tag, stale.data(), elems, MPI_INT, me, tag); },
          ErrorKind::kRank, {"sendrecv"}, "sendrecv to a bad dest");
      EXPECT_EQ(stale.front(), -1) << "the failed sendrecv received the queued message";
      const std::optional<ep::Status> p = c.iprobe(me, tag);
      EXPECT_TRUE(p.has_value()) << "the failed sendrecv consumed the queued message";
      if (p) {
        std::vector<int> in(static_cast<std::size_t>(elems), -1);
        c.recv(in.data(), elems, MPI_INT, me, tag);
        EXPECT_EQ(ep_p2p::count_mismatches(in, me, me, tag), 0);
      }
      ep::wait(queued);
    }
  });
}

bool mentions_size(const std::optional<ep::Error>& e, int elems) {
  if (!e) return true;  // already reported
  const std::string what = e->what();
  return what.find(to_string(elems * static_cast<int>(sizeof(int)))) != std::string::npos ||
         what.find(to_string(elems)) != std::string::npos;
}

// How a test receives into a buffer too small for its message.
enum class ShortReceive { kRecv, kWait, kTest, kAnySource, kMrecv };

// Every way, in the enumerators' order, and the name failures give it.
constexpr std::array kShortReceives{ShortReceive::kRecv, ShortReceive::kWait, ShortReceive::kTest,
                                    ShortReceive::kAnySource, ShortReceive::kMrecv};
constexpr std::array kShortReceiveNames{"recv", "irecv + wait", "irecv + test",
                                        "recv(MPI_ANY_SOURCE)", "mprobe + mrecv"};
static_assert(kShortReceiveNames.size() == kShortReceives.size());

const char* name_of(ShortReceive how) { return kShortReceiveNames[static_cast<std::size_t>(how)]; }

// Receives the message from `from` with `tag` into `room` ints at `small`
// the way `how` says; returns the error it threw.
std::optional<ep::Error> receive_short(const ep::Communicator& c, ShortReceive how, int from,
                                       int tag, int* small, int room) {
  const std::string context = std::string(name_of(how)) + " into a short buffer";
  switch (how) {
    case ShortReceive::kRecv:
      return expect_ep_error([&] { c.recv(small, room, MPI_INT, from, tag); }, ErrorKind::kTruncate,
                             {"recv", "consumed"}, context);
    case ShortReceive::kWait: {
      ep::Request q = c.irecv(small, room, MPI_INT, from, tag);
      return expect_ep_error([&] { ep::wait(q); }, ErrorKind::kTruncate, {"irecv", "consumed"},
                             context);
    }
    case ShortReceive::kTest: {
      ep::Request q = c.irecv(small, room, MPI_INT, from, tag);
      return expect_ep_error(
          [&] {
            while (!ep::test(q)) ep_p2p::relax();
          },
          ErrorKind::kTruncate, {"irecv", "consumed"}, context);
    }
    case ShortReceive::kAnySource:
      return expect_ep_error([&] { c.recv(small, room, MPI_INT, ep::kAnySource, tag); },
                             ErrorKind::kTruncate, {"recv", "consumed"}, context);
    case ShortReceive::kMrecv: {
      ep::Message m = c.mprobe(from, tag);
      auto e = expect_ep_error([&] { ep::mrecv(small, room, MPI_INT, m); }, ErrorKind::kTruncate,
                               {"mrecv", "consumed"}, context);
      EXPECT_TRUE(m.is_null()) << "a truncated mrecv must consume the message";
      return e;
    }
  }
  return std::nullopt;
}

// A receive buffer too small for the matched message: as in MPI, the
// message is received, truncated to the buffer (its first part lands there,
// nothing past it is written), and the receive fails with kTruncate saying
// that the message is consumed; the send completes, and the next message of
// the same stream goes whole to the next receive. One rule on every path:
// between threads (eager and rendezvous sizes), between processes through
// the endpoint's queue (with direct receives off, and whenever the drain
// got there first) and straight to MPI (on, the default with Open MPI:
// TruncatedDirectReceiveConsumesTheMessage posts them before the sends).
void expect_truncation_consumes(const ep::EndpointOptions& options) {
  ep_test::run_endpoints(
      [](ep::Communicator& c) {
        const int r = c.rank();
        for (const Ring& ring : truncation_rings(c, 600, 700)) {
          int tag = ring.tag;
          for (int elems : {10, 3 * kEagerInts}) {
            for (const ShortReceive how : kShortReceives) {
              SCOPED_TRACE(testing::Message()
                           << "from " << ring.from << ", " << elems << " ints, " << name_of(how));
              const std::vector<int> out = ep_p2p::make_pattern(r, ring.to, elems, tag);
              const std::vector<int> next = ep_p2p::make_pattern(r, ring.to, 4, tag + 1);
              ep::Request s1 = c.isend(out.data(), elems, MPI_INT, ring.to, tag);
              ep::Request s2 = c.isend(next.data(), 4, MPI_INT, ring.to, tag);
              // The receive buffer is the first elems / 2 ints; the one after it
              // must stay untouched.
              std::vector<int> small(static_cast<std::size_t>(elems / 2) + 1, -1);
              const auto e = receive_short(c, how, ring.from, tag, small.data(), elems / 2);
              expect_caller(e, c, /*argument_error=*/false);
              EXPECT_TRUE(mentions_size(e, elems))
                  << (e ? e->what() : "") << " does not give the message size";
              EXPECT_EQ(ep_p2p::count_mismatches(small.data(), elems / 2, ring.from, r, tag), 0)
                  << "the first part of the truncated message is not in the buffer";
              EXPECT_EQ(small.back(), -1) << "written past the receive buffer";
              std::vector<int> in(4, -1);
              const ep::Status st = c.recv(in.data(), 4, MPI_INT, ring.from, tag);
              EXPECT_EQ(st.count(MPI_INT), 4) << "the truncated message was not consumed";
              EXPECT_EQ(in, ep_p2p::make_pattern(ring.from, r, 4, tag + 1));
              ep::wait(s1);
              ep::wait(s2);
              tag += 2;
            }
          }
        }
        expect_ring_still_works(c);
      },
      0, options);
}

TEST(P2PErrors, TruncationConsumesTheMessage) { expect_truncation_consumes({}); }

TEST(P2PErrors, QueuedTruncationConsumesTheMessage) {
  ep::EndpointOptions queued;
  queued.direct_receive = false;
  expect_truncation_consumes(queued);
}

// A receive from one endpoint of another process with a specific tag goes
// straight to MPI (direct receives, on by default with Open MPI). Posted
// before anything is sent, it is direct whatever the other threads drain;
// a too small buffer then follows the same rule as every other receive.
TEST(P2PErrors, TruncatedDirectReceiveConsumesTheMessage) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "direct receives need a second process";
#if !defined(OPEN_MPI)
  GTEST_SKIP() << "this MPI aborts on a truncated MPI_Irecv (EndpointOptions::direct_receive)";
#endif
  ep::EndpointOptions direct;
  direct.direct_receive = true;  // whatever EP_DIRECT_RECEIVE says
  std::atomic<bool> wire_names_the_sender{true};
  ep_test::run_endpoints(
      [&](ep::Communicator& c) {
        if (!c.direct_receive()) wire_names_the_sender = false;
      },
      0, direct);
  if (!wire_names_the_sender) {
    GTEST_SKIP() << "the tag layout carries the sender in a header (EP_TAG_CHANNELS): no "
                    "receive goes straight to MPI";
  }
  if (std::getenv("EP_DIRECT_RECEIVE") == nullptr) {
    ep_test::run_endpoints([](ep::Communicator& c) {
      EXPECT_TRUE(c.direct_receive()) << "direct receives are on by default with Open MPI";
    });
  }
  ep_test::run_endpoints(
      [](ep::Communicator& c) {
        const int r = c.rank();
        const int to = ep_p2p::inter_next(c);
        const int from = ep_p2p::inter_prev(c);
        int tag = 640;
        for (int elems : {10, 3 * kEagerInts}) {
          SCOPED_TRACE(testing::Message() << "from " << from << ", " << elems << " ints");
          std::vector<int> small(static_cast<std::size_t>(elems / 2), -1);
          ep::Request q = c.irecv(small.data(), elems / 2, MPI_INT, from, tag);
          ep::barrier(c);  // every such receive is posted before any message leaves
          const std::vector<int> out = ep_p2p::make_pattern(r, to, elems, tag);
          const std::vector<int> next = ep_p2p::make_pattern(r, to, 4, tag + 1);
          ep::Request s1 = c.isend(out.data(), elems, MPI_INT, to, tag);
          ep::Request s2 = c.isend(next.data(), 4, MPI_INT, to, tag);
          auto e = expect_ep_error([&] { ep::wait(q); }, ErrorKind::kTruncate, {"recv", "consumed"},
                                   "wait on a direct irecv into a short buffer");
          expect_caller(e, c, /*argument_error=*/false);
          EXPECT_EQ(ep_p2p::count_mismatches(small, from, r, tag), 0)
              << "the first part of the truncated message is not in the buffer";
          std::vector<int> in(4, -1);
          const ep::Status st = c.recv(in.data(), 4, MPI_INT, from, tag);
          EXPECT_EQ(st.count(MPI_INT), 4) << "the truncated message was not consumed";
          EXPECT_EQ(in, ep_p2p::make_pattern(from, r, 4, tag + 1));
          ep::wait(s1);
          ep::wait(s2);
          tag += 2;
        }
        expect_ring_still_works(c);
      },
      0, direct);
}

// More than 256 endpoints in one process. create_endpoints is collective over
// the parent: one thread of every process calls it (here the main thread,
// outside any endpoint region), all with the same bad count.
TEST(P2PErrors, TooManyEndpoints) {
  const int too_many = ep::kMaxEndpointsPerProcess + 1;
  const auto e = expect_ep_error(
      [&] { static_cast<void>(ep::create_endpoints(MPI_COMM_WORLD, too_many)); },
      ErrorKind::kTooManyEndpoints, {"create_endpoints", "257"}, "create_endpoints(257)");
  if (e) {
    EXPECT_EQ(e->ep_rank(), -1) << "no endpoint exists yet: " << e->what();
  }
  // Zero or negative counts are out of range as well.
  EXPECT_THROW(static_cast<void>(ep::create_endpoints(MPI_COMM_WORLD, 0)), ep::Error);
  EXPECT_THROW(static_cast<void>(ep::create_endpoints(MPI_COMM_WORLD, -3)), ep::Error);
  // The failed calls left no collective half done.
  ep_test::run_endpoints([](ep::Communicator& c) { expect_ring_still_works(c); });
}

// Use of a freed communicator. The test creates its own endpoints (as the
// header's example does), keeps a copy of each handle, and frees them all;
// free is collective over every endpoint, so every thread takes part.
TEST(P2PErrors, UseAfterFree) {
  const int threads = omp_get_max_threads();
  omp_set_dynamic(0);  // the region must have exactly `threads` threads: free is collective
  std::vector<ep::Communicator> eps;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    {
      try {
        eps = ep::create_endpoints(MPI_COMM_WORLD, omp_get_num_threads());
      } catch (const std::exception& e) {
        ADD_FAILURE() << "create_endpoints: " << e.what();
      }
    }  // implicit barrier
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    if (t < eps.size()) {
      ep::Communicator copy = eps[t];
      ep_test::set_current_endpoint(copy.rank());
      const int right = (copy.rank() + 1) % copy.size();
      try {
        eps[t].free();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "free: " << e.what();
      }
      int x = 0;
      expect_ep_error([&] { copy.send(&x, 1, MPI_INT, right, 0); }, ErrorKind::kFreedComm, {"send"},
                      "send on a freed communicator (copy of the handle)");
      expect_ep_error([&] { copy.recv(&x, 1, MPI_INT, right, 0); }, ErrorKind::kFreedComm, {"recv"},
                      "recv on a freed communicator");
      expect_ep_error([&] { static_cast<void>(copy.isend(&x, 1, MPI_INT, right, 0)); },
                      ErrorKind::kFreedComm, {"isend"}, "isend on a freed communicator");
      expect_ep_error([&] { static_cast<void>(copy.irecv(&x, 1, MPI_INT, right, 0)); },
                      ErrorKind::kFreedComm, {"irecv"}, "irecv on a freed communicator");
      expect_ep_error([&] { static_cast<void>(copy.iprobe(ep::kAnySource, 0)); },
                      ErrorKind::kFreedComm, {"iprobe"}, "iprobe on a freed communicator");
      expect_ep_error([&] { copy.free(); }, ErrorKind::kFreedComm, {"free"},
                      "second free through a copy of the handle");
      // The freed handle itself.
      EXPECT_THROW(eps[t].send(&x, 1, MPI_INT, right, 0), ep::Error);
      EXPECT_THROW(eps[t].free(), ep::Error);
      ep_test::set_current_endpoint(-1);
    }
  }
  // A null handle throws on any call.
  const ep::Communicator null;
  EXPECT_TRUE(null.is_null());
  int x = 0;
  EXPECT_THROW(null.send(&x, 1, MPI_INT, 0, 0), ep::Error);
  EXPECT_THROW(static_cast<void>(null.size()), ep::Error);
  EXPECT_THROW(static_cast<void>(null.rank_map()), ep::Error);
  // Communication still works on a fresh communicator.
  ep_test::run_endpoints([](ep::Communicator& c) { expect_ring_still_works(c); });
}

}  // namespace
