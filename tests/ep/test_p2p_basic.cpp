// Basic point-to-point: ring and all-pairs exchanges with content checks,
// blocking pairs, zero-byte and short messages, ssend/issend,
// sendrecv_replace and MPI_PROC_NULL.
//
// Sizes straddle ep::kDefaultEagerThreshold (16 KiB) so the eager copy and the
// rendezvous of the intra-process path are both used, and every exchange runs
// between threads of one process and between processes in shapes with both.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <optional>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

using ep_p2p::count_mismatches;
using ep_p2p::make_pattern;

constexpr int kEagerInts = static_cast<int>(ep::kDefaultEagerThreshold / sizeof(int));

/// Element counts below, at and above the eager threshold.
const int kSizes[] = {1, 100, kEagerInts - 1, kEagerInts, kEagerInts + 1, 50000};

// A blocking exchange with `partner` in rank order: the lower rank calls
// `send` (its blocking send of the message) first, then receives `in` with
// `tag`; the higher one receives first. The receive's status.
template <class Send>
ep::Status exchange_in_rank_order(ep::Communicator& c, int partner, int tag, std::vector<int>& in,
                                  Send&& send) {
  const int elems = static_cast<int>(in.size());
  if (c.rank() < partner) {
    send();
    return c.recv(in.data(), elems, MPI_INT, partner, tag);
  }
  const ep::Status st = c.recv(in.data(), elems, MPI_INT, partner, tag);
  send();
  return st;
}

void expect_status(const ep::Status& st, int source, int tag, int elems) {
  EXPECT_EQ(st.source, source);
  EXPECT_EQ(st.tag, tag);
  EXPECT_EQ(st.count(MPI_INT), elems);
  EXPECT_EQ(st.bytes, static_cast<std::size_t>(elems) * sizeof(int));
  EXPECT_FALSE(st.cancelled);
  EXPECT_EQ(st.error, MPI_SUCCESS);
}

/// For every size of kSizes, endpoint `r` sends the pattern for `to` (salts
/// counting up from `salt`) and receives from `from` with tag `tag`:
/// exchange(out, in, elems, to, from) moves the data and returns the receive's
/// status, which is checked with the data.
template <class Exchange>
void check_exchanges(int r, int to, int from, int tag, int& salt, Exchange exchange) {
  for (int elems : kSizes) {
    SCOPED_TRACE(testing::Message() << "elements " << elems);
    const std::vector<int> out = make_pattern(r, to, elems, salt);
    std::vector<int> in(static_cast<std::size_t>(elems), -1);
    const ep::Status st = exchange(out, in, elems, to, from);
    expect_status(st, from, tag, elems);
    EXPECT_EQ(count_mismatches(in, from, r, salt), 0);
    ++salt;
  }
}

/// check_exchanges' exchange as one sendrecv on `c` with tag `tag`.
auto sendrecv_with(const ep::Communicator& c, int tag) {
  return [&c, tag](const std::vector<int>& out, std::vector<int>& in, int elems, int to, int from) {
    return c.sendrecv(out.data(), elems, MPI_INT, to, tag, in.data(), elems, MPI_INT, from, tag);
  };
}

TEST(P2PBasic, RingSendrecv) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const auto [r, n, right, left] = ep_test::ring_of(c);
    int salt = 0;
    // With one endpoint this is a sendrecv with itself, which MPI requires to work.
    check_exchanges(r, right, left, 7, salt, sendrecv_with(c, 7));
  });
}

// The same ring on the two paths explicitly: next thread of the same process,
// and same thread of the next process.
TEST(P2PBasic, IntraAndInterProcessRings) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    int salt = 100;
    for (const ep_p2p::Ring& ring : ep_p2p::path_rings(c)) {
      SCOPED_TRACE(testing::Message() << "to " << ring.to << " from " << ring.from);
      check_exchanges(r, ring.to, ring.from, 8, salt, sendrecv_with(c, 8));
    }
  });
}

TEST(P2PBasic, RingIsendIrecv) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const auto [r, n, right, left] = ep_test::ring_of(c);
    int salt = 200;
    check_exchanges(
        r, right, left, 9, salt,
        [&c](const std::vector<int>& out, std::vector<int>& in, int elems, int to, int from) {
          std::vector<ep::Request> reqs;
          reqs.push_back(c.irecv(in.data(), elems, MPI_INT, from, 9));
          reqs.push_back(c.isend(out.data(), elems, MPI_INT, to, 9));
          std::vector<ep::Status> sts(2);
          ep::wait_all(reqs, sts);
          for (const ep::Request& q : reqs) EXPECT_TRUE(q.is_null());
          return sts[0];
        });
  });
}

// Every endpoint sends a distinct message to every endpoint, itself included.
TEST(P2PBasic, AllPairsNonblocking) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    for (int elems : {3, 5000}) {  // 5000 ints = 20000 B: above the eager threshold
      SCOPED_TRACE(testing::Message() << "elements " << elems);
      const int salt = elems;
      std::vector<std::vector<int>> in(static_cast<std::size_t>(n),
                                       std::vector<int>(static_cast<std::size_t>(elems), -1));
      std::vector<std::vector<int>> out;
      for (int d = 0; d < n; ++d) out.push_back(make_pattern(r, d, elems, salt));
      std::vector<ep::Request> reqs;
      for (int s = 0; s < n; ++s) {
        reqs.push_back(c.irecv(in[static_cast<std::size_t>(s)].data(), elems, MPI_INT, s, 10));
      }
      for (int d = 0; d < n; ++d) {
        reqs.push_back(c.isend(out[static_cast<std::size_t>(d)].data(), elems, MPI_INT, d, 10));
      }
      std::vector<ep::Status> sts(reqs.size());
      ep::wait_all(reqs, sts);
      for (int s = 0; s < n; ++s) {
        expect_status(sts[static_cast<std::size_t>(s)], s, 10, elems);
        EXPECT_EQ(count_mismatches(in[static_cast<std::size_t>(s)], s, r, salt), 0);
      }
    }
  });
}

// Pairwise-exchange schedule with blocking sendrecv: in step k an endpoint
// sends to rank + k and receives from rank - k (step 0 is itself).
TEST(P2PBasic, AllPairsSendrecvSchedule) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    for (int elems : {2, 6000}) {
      for (int k = 0; k < n; ++k) {
        const int to = (r + k) % n;
        const int from = (r - k + n) % n;
        SCOPED_TRACE(testing::Message() << "elements " << elems << " step " << k);
        const std::vector<int> out = make_pattern(r, to, elems, k);
        std::vector<int> in(static_cast<std::size_t>(elems), -1);
        const ep::Status st =
            c.sendrecv(out.data(), elems, MPI_INT, to, k, in.data(), elems, MPI_INT, from, k);
        expect_status(st, from, k, elems);
        EXPECT_EQ(count_mismatches(in, from, r, k), 0);
      }
    }
  });
}

// Blocking send and recv between symmetric partners (the lower rank sends
// first); both partners of a pair in one process, or in two processes.
TEST(P2PBasic, BlockingSendRecvPairs) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    for (int partner : {ep_p2p::intra_partner(c), ep_p2p::inter_partner(c)}) {
      if (partner == r) continue;  // a blocking send to oneself is unsafe MPI
      for (int elems : kSizes) {
        SCOPED_TRACE(testing::Message() << "partner " << partner << " elements " << elems);
        const std::vector<int> out = make_pattern(r, partner, elems, 3);
        std::vector<int> in(static_cast<std::size_t>(elems), -1);
        const ep::Status st = exchange_in_rank_order(
            c, partner, 11, in, [&] { c.send(out.data(), elems, MPI_INT, partner, 11); });
        expect_status(st, partner, 11, elems);
        EXPECT_EQ(count_mismatches(in, partner, r, 3), 0);
      }
    }
  });
}

// Zero-byte messages and messages shorter than the receive buffer.
TEST(P2PBasic, ZeroByteAndShortMessages) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const auto [r, n, right, left] = ep_test::ring_of(c);

    // Zero elements with null buffers, then zero elements into a real buffer.
    ep::Status st = c.sendrecv(nullptr, 0, MPI_INT, right, 12, nullptr, 0, MPI_INT, left, 12);
    EXPECT_EQ(st.source, left);
    EXPECT_EQ(st.tag, 12);
    EXPECT_EQ(st.bytes, 0U);
    EXPECT_EQ(st.count(MPI_INT), 0);
    std::vector<int> big(100, -7);
    st = c.sendrecv(nullptr, 0, MPI_INT, right, 13, big.data(), 100, MPI_INT, left, 13);
    EXPECT_EQ(st.count(MPI_INT), 0);
    EXPECT_EQ(big[0], -7);

    // A short message into a long buffer: count says how much arrived, the rest is untouched.
    for (int elems : {5, kEagerInts + 10}) {
      const std::vector<int> out = make_pattern(r, right, elems, 4);
      std::vector<int> in(static_cast<std::size_t>(elems) * 2, -7);
      st = c.sendrecv(out.data(), elems, MPI_INT, right, 14, in.data(), elems * 2, MPI_INT, left,
                      14);
      expect_status(st, left, 14, elems);
      EXPECT_EQ(count_mismatches(in.data(), elems, left, r, 4), 0);
      EXPECT_EQ(in[static_cast<std::size_t>(elems)], -7);
      EXPECT_EQ(in.back(), -7);
    }
  });
}

// Synchronous sends between symmetric partners, blocking and nonblocking.
TEST(P2PBasic, SsendAndIssend) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    for (int partner : {ep_p2p::intra_partner(c), ep_p2p::inter_partner(c)}) {
      for (int elems : {4, kEagerInts * 2}) {
        SCOPED_TRACE(testing::Message() << "partner " << partner << " elements " << elems);
        const std::vector<int> out = make_pattern(r, partner, elems, 5);
        std::vector<int> in(static_cast<std::size_t>(elems), -1);
        ep::Status st;
        if (partner == r) {
          ep::Request q = c.issend(out.data(), elems, MPI_INT, r, 15);
          st = c.recv(in.data(), elems, MPI_INT, r, 15);
          ep::wait(q);
        } else {
          st = exchange_in_rank_order(c, partner, 15, in,
                                      [&] { c.ssend(out.data(), elems, MPI_INT, partner, 15); });
        }
        expect_status(st, partner, 15, elems);
        EXPECT_EQ(count_mismatches(in, partner, r, 5), 0);

        // Both partners issend at once, then receive: needs no buffering.
        std::vector<int> in2(static_cast<std::size_t>(elems), -1);
        ep::Request q = c.issend(out.data(), elems, MPI_INT, partner, 16);
        st = c.recv(in2.data(), elems, MPI_INT, partner, 16);
        ep::wait(q);
        expect_status(st, partner, 16, elems);
        EXPECT_EQ(count_mismatches(in2, partner, r, 5), 0);
      }
    }
  });
}

// An issend to a thread of the same process cannot complete before the
// receiver starts the matching receive: the receiver only posts it after a
// "go" message that the sender sends after testing. Only checked inside one
// process: between processes the destination's drainer may match the MPI
// message (and so complete MPI_Issend) before the user posts the receive,
// which ep documents for ssend (see communicator.hpp).
TEST(P2PBasic, IssendWaitsForTheReceiverWithinAProcess) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    const int partner = ep_p2p::intra_partner(c);
    if (partner == r) return;
    for (int elems : {1, kEagerInts * 2}) {
      SCOPED_TRACE(testing::Message() << "elements " << elems);
      if (r < partner) {
        const std::vector<int> out = make_pattern(r, partner, elems, 6);
        ep::Request q = c.issend(out.data(), elems, MPI_INT, partner, 17);
        for (int i = 0; i < 100; ++i) {
          EXPECT_FALSE(ep::test(q)) << "issend completed before the receive was posted";
          ep_p2p::relax();
        }
        const int go = 1;
        c.send(&go, 1, MPI_INT, partner, 18);
        ep::wait(q);
      } else {
        int go = 0;
        c.recv(&go, 1, MPI_INT, partner, 18);
        std::vector<int> in(static_cast<std::size_t>(elems), -1);
        const ep::Status st = c.recv(in.data(), elems, MPI_INT, partner, 17);
        expect_status(st, partner, 17, elems);
        EXPECT_EQ(count_mismatches(in, partner, r, 6), 0);
      }
    }
  });
}

TEST(P2PBasic, SendrecvReplaceRing) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const auto [r, n, right, left] = ep_test::ring_of(c);
    for (int elems : kSizes) {
      SCOPED_TRACE(testing::Message() << "elements " << elems);
      std::vector<int> buf = make_pattern(r, right, elems, 7);
      const ep::Status st = c.sendrecv_replace(buf.data(), elems, MPI_INT, right, 19, left, 19);
      expect_status(st, left, 19, elems);
      EXPECT_EQ(count_mismatches(buf, left, r, 7), 0);
    }
    // Also on the explicit intra- and inter-process rings.
    for (int elems : {3, kEagerInts * 3}) {
      std::vector<int> a = make_pattern(r, ep_p2p::intra_next(c), elems, 8);
      c.sendrecv_replace(a.data(), elems, MPI_INT, ep_p2p::intra_next(c), 20, ep_p2p::intra_prev(c),
                         20);
      EXPECT_EQ(count_mismatches(a, ep_p2p::intra_prev(c), r, 8), 0);
      std::vector<int> b = make_pattern(r, ep_p2p::inter_next(c), elems, 9);
      c.sendrecv_replace(b.data(), elems, MPI_INT, ep_p2p::inter_next(c), 20, ep_p2p::inter_prev(c),
                         20);
      EXPECT_EQ(count_mismatches(b, ep_p2p::inter_prev(c), r, 9), 0);
    }
  });
}

void expect_proc_null_status(const ep::Status& st, const char* what) {
  EXPECT_EQ(st.source, ep::kProcNull) << what;
  EXPECT_EQ(st.tag, ep::kAnyTag) << what;
  EXPECT_EQ(st.count(MPI_INT), 0) << what;
  EXPECT_EQ(st.bytes, 0U) << what;
  EXPECT_FALSE(st.cancelled) << what;
}

// MPI_PROC_NULL: sends are no-ops, receives and probes return at once with
// source MPI_PROC_NULL, tag MPI_ANY_TAG and count 0.
TEST(P2PBasic, ProcNull) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    std::vector<int> buf(10, 42);

    c.send(buf.data(), 10, MPI_INT, ep::kProcNull, 1);
    c.ssend(buf.data(), 10, MPI_INT, ep::kProcNull, 1);
    expect_proc_null_status(c.recv(buf.data(), 10, MPI_INT, ep::kProcNull, 1), "recv");
    expect_proc_null_status(c.recv(buf.data(), 10, MPI_INT, ep::kProcNull, ep::kAnyTag),
                            "recv any tag");
    EXPECT_EQ(buf[0], 42) << "a receive from MPI_PROC_NULL wrote the buffer";

    ep::Request s = c.isend(buf.data(), 10, MPI_INT, ep::kProcNull, 1);
    ep::Request ss = c.issend(buf.data(), 10, MPI_INT, ep::kProcNull, 1);
    ep::Request q = c.irecv(buf.data(), 10, MPI_INT, ep::kProcNull, 1);
    ep::Status st;
    EXPECT_TRUE(ep::test(q, &st)) << "irecv from MPI_PROC_NULL is complete at once";
    expect_proc_null_status(st, "irecv");
    ep::wait(s);
    ep::wait(ss);
    EXPECT_EQ(buf[0], 42);

    expect_proc_null_status(c.probe(ep::kProcNull, 1), "probe");
    const std::optional<ep::Status> ip = c.iprobe(ep::kProcNull, ep::kAnyTag);
    EXPECT_TRUE(ip.has_value()) << "iprobe(MPI_PROC_NULL) reports a message at once";
    if (ip) {
      expect_proc_null_status(*ip, "iprobe");
    }

    ep::Message m = c.mprobe(ep::kProcNull, 1);
    EXPECT_TRUE(m.is_null()) << "mprobe(MPI_PROC_NULL) gives MPI_MESSAGE_NO_PROC";
    expect_proc_null_status(m.status(), "mprobe");
    expect_proc_null_status(ep::mrecv(buf.data(), 10, MPI_INT, m), "mrecv of MESSAGE_NO_PROC");
    std::optional<ep::Message> im = c.improbe(ep::kProcNull, 1);
    EXPECT_TRUE(im.has_value());
    if (im) {
      EXPECT_TRUE(im->is_null());
      ep::Request iq = ep::imrecv(buf.data(), 10, MPI_INT, *im);
      expect_proc_null_status(ep::wait(iq), "imrecv of MESSAGE_NO_PROC");
    }
    EXPECT_EQ(buf[0], 42);

    // A non-periodic shift: the ends talk to MPI_PROC_NULL, the others to real peers.
    const int up = r + 1 < n ? r + 1 : ep::kProcNull;
    const int down = r > 0 ? r - 1 : ep::kProcNull;
    int out = ep_p2p::pattern(r, up, 0, 10);
    int in = -1;
    st = c.sendrecv(&out, 1, MPI_INT, up, 21, &in, 1, MPI_INT, down, 21);
    if (down == ep::kProcNull) {
      expect_proc_null_status(st, "sendrecv from MPI_PROC_NULL");
      EXPECT_EQ(in, -1);
    } else {
      expect_status(st, down, 21, 1);
      EXPECT_EQ(in, ep_p2p::pattern(down, r, 0, 10));
    }
    int rep = ep_p2p::pattern(r, down, 0, 11);
    st = c.sendrecv_replace(&rep, 1, MPI_INT, down, 22, up, 22);
    if (up == ep::kProcNull) {
      expect_proc_null_status(st, "sendrecv_replace from MPI_PROC_NULL");
      EXPECT_EQ(rep, ep_p2p::pattern(r, down, 0, 11)) << "buffer must be left as it was";
    } else {
      EXPECT_EQ(rep, ep_p2p::pattern(up, r, 0, 11));
    }
  });
}

}  // namespace
