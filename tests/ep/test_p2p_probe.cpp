// Wildcard receives (MPI_ANY_SOURCE, MPI_ANY_TAG) across threads and
// processes, probe/iprobe, and the matching probes mprobe/improbe with
// mrecv/imrecv.
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

/// Element count of the message a sender `s` sends as its `i`-th: mostly
/// small, a few above the eager threshold.
int elems_of(int s, int i) { return i == 3 ? kEagerInts + 100 + s : 1 + (s * 3 + i) % 7; }

/// The sources a wildcard receiver has heard from, each expected exactly once.
class SourceTally {
 public:
  explicit SourceTally(int n) : seen_(static_cast<std::size_t>(n), 0) {}
  /// Counts `source`; false (and a test failure naming `call`) when it is no rank.
  bool count(int source, const char* call) {
    if (source < 0 || source >= static_cast<int>(seen_.size())) {
      ADD_FAILURE() << call << ": status.source " << source;
      return false;
    }
    ++seen_[static_cast<std::size_t>(source)];
    return true;
  }
  void expect_each_once() const {
    for (std::size_t s = 0; s < seen_.size(); ++s) EXPECT_EQ(seen_[s], 1) << "source " << s;
  }

 private:
  std::vector<int> seen_;
};

// Every other endpoint sends kPerSource messages with different tags to one
// root, which receives them all with MPI_ANY_SOURCE / MPI_ANY_TAG. Each source
// must be seen kPerSource times, in its own sending order, with the right
// status. Done with ep 0 as root, then the last ep (another process when
// there are several).
TEST(P2PWildcard, AllToOneAnySourceAnyTag) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    constexpr int kPerSource = 5;
    const int n = c.size();
    const int r = c.rank();
    auto tag_of = [](int phase, int s, int i) { return 100 * (phase + 1) + (s * 7 + i) % 50; };
    for (int phase = 0; phase < 2; ++phase) {
      const int root = phase == 0 ? 0 : n - 1;
      if (phase == 1 && root == 0) break;
      if (r != root) {
        std::vector<std::vector<int>> out;
        std::vector<ep::Request> sends;
        for (int i = 0; i < kPerSource; ++i) {
          out.push_back(make_pattern(r, root, elems_of(r, i), i));
          sends.push_back(
              c.isend(out.back().data(), elems_of(r, i), MPI_INT, root, tag_of(phase, r, i)));
        }
        ep::wait_all(sends);
        continue;
      }
      std::vector<int> next(static_cast<std::size_t>(n), 0);  // next message index per source
      std::vector<int> in(static_cast<std::size_t>(kEagerInts + 200 + n));
      for (int k = 0; k < (n - 1) * kPerSource; ++k) {
        const ep::Status st =
            c.recv(in.data(), static_cast<int>(in.size()), MPI_INT, ep::kAnySource, ep::kAnyTag);
        if (st.source < 0 || st.source >= n || st.source == root) {
          ADD_FAILURE() << "status.source " << st.source;
          continue;
        }
        const int s = st.source;
        const int i = next[static_cast<std::size_t>(s)]++;
        if (i >= kPerSource) {
          ADD_FAILURE() << "more than " << kPerSource << " messages from ep " << s;
          continue;
        }
        EXPECT_EQ(st.tag, tag_of(phase, s, i)) << "message " << i << " of ep " << s;
        EXPECT_EQ(st.count(MPI_INT), elems_of(s, i)) << "message " << i << " of ep " << s;
        EXPECT_EQ(count_mismatches(in.data(), elems_of(s, i), s, root, i), 0)
            << "message " << i << " of ep " << s << " (out of order?)";
      }
      for (int s = 0; s < n; ++s) {
        EXPECT_EQ(next[static_cast<std::size_t>(s)], s == root ? 0 : kPerSource) << "source " << s;
      }
    }
  });
}

// MPI_ANY_TAG from a named source sees that source's tags in sending order;
// MPI_ANY_SOURCE with a named tag picks only that tag, from every source.
TEST(P2PWildcard, AnyTagFromOneSourceAndAnySourceForOneTag) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const auto [r, n, right, left] = ep_test::ring_of(c);

    // Tags 41, 42, 43 to the right neighbour, received with MPI_ANY_TAG.
    std::vector<ep::Request> sends;
    std::vector<std::vector<int>> out;
    out.reserve(3);
    for (int tag = 41; tag <= 43; ++tag) {
      out.push_back(make_pattern(r, right, tag == 42 ? kEagerInts * 2 : 4, tag));
      sends.push_back(
          c.isend(out.back().data(), static_cast<int>(out.back().size()), MPI_INT, right, tag));
    }
    std::vector<int> in(static_cast<std::size_t>(kEagerInts) * 2);
    for (int tag = 41; tag <= 43; ++tag) {
      const ep::Status st = c.recv(in.data(), kEagerInts * 2, MPI_INT, left, ep::kAnyTag);
      EXPECT_EQ(st.source, left);
      EXPECT_EQ(st.tag, tag);
      EXPECT_EQ(count_mismatches(in.data(), st.count(MPI_INT), left, r, tag), 0);
    }
    ep::wait_all(sends);

    // Every endpoint sends tag 60 then tag 61 to the root; the root takes all
    // the 61s first, then all the 60s, each with MPI_ANY_SOURCE.
    const int root = n / 2;
    int msg60 = ep_p2p::pattern(r, root, 0, 60);
    int msg61 = ep_p2p::pattern(r, root, 0, 61);
    ep::Request s60 = c.isend(&msg60, 1, MPI_INT, root, 60);
    ep::Request s61 = c.isend(&msg61, 1, MPI_INT, root, 61);
    if (r == root) {
      for (int tag : {61, 60}) {
        SourceTally seen(n);
        for (int k = 0; k < n; ++k) {
          int v = -1;
          const ep::Status st = c.recv(&v, 1, MPI_INT, ep::kAnySource, tag);
          EXPECT_EQ(st.tag, tag);
          if (!seen.count(st.source, "recv")) continue;
          EXPECT_EQ(v, ep_p2p::pattern(st.source, root, 0, tag));
        }
        seen.expect_each_once();
      }
    }
    ep::wait(s60);
    ep::wait(s61);
  });
}

// probe and iprobe report the size of a pending message without consuming it;
// the receive then uses exactly the probed size.
TEST(P2PProbe, ProbeThenReceiveWithProbedSize) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    auto length_of = [](int s, int k) { return 1 + (s * 1237 + k * 4099) % (3 * kEagerInts); };
    int k = 0;
    for (const ep_p2p::Ring& ring : ep_p2p::path_rings(c)) {
      SCOPED_TRACE(testing::Message() << "from " << ring.from << " to " << r);
      const std::vector<int> out1 = make_pattern(r, ring.to, length_of(r, k), k);
      const std::vector<int> out2 = make_pattern(r, ring.to, length_of(r, k + 1), k + 1);
      ep::Request s1 = c.isend(out1.data(), static_cast<int>(out1.size()), MPI_INT, ring.to, 71);
      ep::Request s2 = c.isend(out2.data(), static_cast<int>(out2.size()), MPI_INT, ring.to, 72);

      // probe (blocking), twice: the message stays queued.
      const ep::Status p1 = c.probe(ring.from, 71);
      const ep::Status p1again = c.probe(ring.from, ep::kAnyTag);
      EXPECT_EQ(p1.source, ring.from);
      EXPECT_EQ(p1.tag, 71);
      EXPECT_EQ(p1.count(MPI_INT), length_of(ring.from, k));
      EXPECT_EQ(p1again.tag, 71) << "probe must not consume the message";
      EXPECT_EQ(p1again.bytes, p1.bytes);
      std::vector<int> in1(static_cast<std::size_t>(p1.count(MPI_INT)), -1);
      const ep::Status r1 = c.recv(in1.data(), p1.count(MPI_INT), MPI_INT, p1.source, p1.tag);
      EXPECT_EQ(r1.bytes, p1.bytes);
      EXPECT_EQ(count_mismatches(in1, ring.from, r, k), 0);

      // iprobe polled until the message is there.
      std::optional<ep::Status> p2;
      while (!(p2 = c.iprobe(ring.from, 72))) ep_p2p::relax();
      EXPECT_EQ(p2->source, ring.from);
      EXPECT_EQ(p2->tag, 72);
      EXPECT_EQ(p2->count(MPI_INT), length_of(ring.from, k + 1));
      std::vector<int> in2(static_cast<std::size_t>(p2->count(MPI_INT)), -1);
      c.recv(in2.data(), p2->count(MPI_INT), MPI_INT, ring.from, 72);
      EXPECT_EQ(count_mismatches(in2, ring.from, r, k + 1), 0);

      ep::wait(s1);
      ep::wait(s2);
      k += 2;
    }
  });
}

// A root probes with MPI_ANY_SOURCE and receives from the probed source
// with the probed size: every endpoint's message, whatever its size.
TEST(P2PProbe, AnySourceProbeThenReceiveFromProbedSource) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    auto length_of = [](int s) { return s % 2 == 0 ? 3 + s : kEagerInts + 17 * s; };
    const int root = n - 1;
    const std::vector<int> out = make_pattern(r, root, length_of(r), 73);
    ep::Request send = c.isend(out.data(), length_of(r), MPI_INT, root, 73 + r % 2);
    if (r == root) {
      SourceTally seen(n);
      for (int k = 0; k < n; ++k) {
        const ep::Status p = c.probe(ep::kAnySource, ep::kAnyTag);
        if (!seen.count(p.source, "probe")) continue;
        EXPECT_EQ(p.tag, 73 + p.source % 2);
        EXPECT_EQ(p.count(MPI_INT), length_of(p.source));
        std::vector<int> in(static_cast<std::size_t>(p.count(MPI_INT)), -1);
        const ep::Status st = c.recv(in.data(), p.count(MPI_INT), MPI_INT, p.source, p.tag);
        EXPECT_EQ(st.source, p.source);
        EXPECT_EQ(count_mismatches(in, p.source, root, 73), 0);
      }
      seen.expect_each_once();
    }
    ep::wait(send);
  });
}

// iprobe/improbe report nothing where nothing can be there. Tag 90 is sent
// only after a barrier that every endpoint enters after its first iprobe, and
// tag 91 is never sent at all.
TEST(P2PProbe, IprobeFindsNothingWhenNothingWasSent) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const auto [r, n, right, left] = ep_test::ring_of(c);

    EXPECT_FALSE(c.iprobe(ep::kAnySource, 90).has_value());
    EXPECT_FALSE(c.iprobe(left, 90).has_value());
    EXPECT_FALSE(c.improbe(ep::kAnySource, 90).has_value());
    EXPECT_FALSE(c.iprobe(ep::kAnySource, 91).has_value());
    ep_p2p::message_barrier(c);

    const int out = ep_p2p::pattern(r, right, 0, 90);
    c.send(&out, 1, MPI_INT, right, 90);
    std::optional<ep::Status> p;
    while (!(p = c.iprobe(ep::kAnySource, 90))) ep_p2p::relax();
    EXPECT_EQ(p->source, left);
    EXPECT_FALSE(c.iprobe(ep::kAnySource, 91).has_value()) << "tag 91 is never sent";
    EXPECT_TRUE(c.iprobe(left, 90).has_value()) << "iprobe must not consume the message";
    int in = -1;
    c.recv(&in, 1, MPI_INT, left, 90);
    EXPECT_EQ(in, ep_p2p::pattern(left, r, 0, 90));
    EXPECT_FALSE(c.iprobe(ep::kAnySource, 90).has_value()) << "the only tag-90 message is gone";
    EXPECT_FALSE(c.improbe(ep::kAnySource, 90).has_value());
  });
}

// mprobe takes a message out of matching: a plain receive with the same
// source and tag gets the next message, and only mrecv gets the probed one.
TEST(P2PMprobe, MprobeRemovesTheMessageFromMatching) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    for (const ep_p2p::Ring& ring : ep_p2p::path_rings(c)) {
      for (int big : {0, 1}) {
        SCOPED_TRACE(testing::Message() << "from " << ring.from << ", large " << big);
        const int la = big != 0 ? kEagerInts * 2 : 5;
        const int lb = big != 0 ? kEagerInts + 3 : 9;
        const std::vector<int> a = make_pattern(r, ring.to, la, 1);
        const std::vector<int> b = make_pattern(r, ring.to, lb, 2);
        ep::Request sa = c.isend(a.data(), la, MPI_INT, ring.to, 75);
        ep::Request sb = c.isend(b.data(), lb, MPI_INT, ring.to, 75);

        ep::Message ma = c.mprobe(ring.from, 75);
        EXPECT_FALSE(ma.is_null());
        EXPECT_EQ(ma.status().source, ring.from);
        EXPECT_EQ(ma.status().tag, 75);
        EXPECT_EQ(ma.status().count(MPI_INT), la);

        std::vector<int> inb(static_cast<std::size_t>(lb), -1);
        const ep::Status stb = c.recv(inb.data(), lb, MPI_INT, ring.from, 75);
        EXPECT_EQ(stb.count(MPI_INT), lb) << "recv must skip the mprobed message";
        EXPECT_EQ(count_mismatches(inb, ring.from, r, 2), 0);

        std::vector<int> ina(static_cast<std::size_t>(la), -1);
        const ep::Status sta = ep::mrecv(ina.data(), la, MPI_INT, ma);
        EXPECT_TRUE(ma.is_null()) << "mrecv nulls the message";
        EXPECT_EQ(sta.source, ring.from);
        EXPECT_EQ(sta.tag, 75);
        EXPECT_EQ(sta.count(MPI_INT), la);
        EXPECT_EQ(count_mismatches(ina, ring.from, r, 1), 0);
        ep::wait(sa);
        ep::wait(sb);
      }
    }
  });
}

// A Message dropped without being received goes back to the front of its
// endpoint's queue (docs/ep.md): the next receive gets it, before the message
// sent after it.
TEST(P2PMprobe, DroppedMessageReturnsToTheFront) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    for (const ep_p2p::Ring& ring : ep_p2p::path_rings(c)) {
      for (int big : {0, 1}) {
        SCOPED_TRACE(testing::Message() << "from " << ring.from << ", large " << big);
        const int la = big != 0 ? kEagerInts * 2 : 6;
        const std::vector<int> a = make_pattern(r, ring.to, la, 11);
        const std::vector<int> b = make_pattern(r, ring.to, 3, 12);
        ep::Request sa = c.isend(a.data(), la, MPI_INT, ring.to, 78);
        ep::Request sb = c.isend(b.data(), 3, MPI_INT, ring.to, 78);
        {
          ep::Message dropped = c.mprobe(ring.from, 78);
          EXPECT_EQ(dropped.status().count(MPI_INT), la);
          std::optional<ep::Message> other;
          while (!(other = c.improbe(ring.from, 78))) ep_p2p::relax();
          EXPECT_EQ(other->status().count(MPI_INT), 3) << "improbe must skip the mprobed message";
          // `other` (B) is dropped first, then `dropped` (A): A must end up in front.
        }
        std::vector<int> in(static_cast<std::size_t>(la), -1);
        ep::Status st = c.recv(in.data(), la, MPI_INT, ring.from, 78);
        EXPECT_EQ(st.count(MPI_INT), la) << "the first message must be the dropped first one";
        EXPECT_EQ(count_mismatches(in.data(), st.count(MPI_INT), ring.from, r, 11), 0);
        st = c.recv(in.data(), la, MPI_INT, ring.from, 78);
        EXPECT_EQ(st.count(MPI_INT), 3);
        EXPECT_EQ(count_mismatches(in.data(), 3, ring.from, r, 12), 0);
        ep::wait(sa);
        ep::wait(sb);
      }
    }
  });
}

// A Message dropped while a matching receive is already posted goes to that
// receive (it must not wait in the queue behind a receive that wants it).
TEST(P2PMprobe, DroppedMessageCompletesAPostedReceive) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int r = c.rank();
    for (const int to : {ep_p2p::intra_next(c), ep_p2p::inter_next(c)}) {
      const int from = to == ep_p2p::intra_next(c) ? ep_p2p::intra_prev(c) : ep_p2p::inter_prev(c);
      SCOPED_TRACE(testing::Message() << "from " << from);
      const std::vector<int> out = make_pattern(r, to, 5, 21);
      ep::Request send = c.isend(out.data(), 5, MPI_INT, to, 79);
      std::vector<int> in(5, -1);
      ep::Request receive;
      {
        ep::Message dropped = c.mprobe(from, 79);
        receive = c.irecv(in.data(), 5, MPI_INT, from, 79);
        EXPECT_FALSE(ep::test(receive)) << "the only message is held by the Message";
      }
      const ep::Status st = ep::wait(receive);
      EXPECT_EQ(st.source, from);
      EXPECT_EQ(count_mismatches(in.data(), 5, from, r, 21), 0);
      ep::wait(send);
    }
  });
}

// improbe polled with wildcards, then imrecv with the probed size; every
// endpoint receives one message from each endpoint, itself included.
TEST(P2PMprobe, ImprobeThenImrecvFromEveryone) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    auto length_of = [](int s, int d) { return (s + d) % 3 == 0 ? kEagerInts + s + d : 1 + s + d; };
    std::vector<std::vector<int>> out;
    std::vector<ep::Request> sends;
    for (int d = 0; d < n; ++d) {
      out.push_back(make_pattern(r, d, length_of(r, d), 76));
      sends.push_back(c.isend(out.back().data(), length_of(r, d), MPI_INT, d, 76 + d % 2));
    }
    SourceTally seen(n);
    for (int k = 0; k < n; ++k) {
      std::optional<ep::Message> m;
      while (!(m = c.improbe(ep::kAnySource, ep::kAnyTag))) ep_p2p::relax();
      const ep::Status probed = m->status();
      if (!seen.count(probed.source, "improbe")) continue;
      EXPECT_EQ(probed.tag, 76 + r % 2);
      EXPECT_EQ(probed.count(MPI_INT), length_of(probed.source, r));
      std::vector<int> in(static_cast<std::size_t>(probed.count(MPI_INT)), -1);
      ep::Request q = ep::imrecv(in.data(), probed.count(MPI_INT), MPI_INT, *m);
      EXPECT_TRUE(m->is_null());
      const ep::Status st = ep::wait(q);
      EXPECT_EQ(st.source, probed.source);
      EXPECT_EQ(st.tag, probed.tag);
      EXPECT_EQ(st.bytes, probed.bytes);
      EXPECT_EQ(count_mismatches(in, probed.source, r, 76), 0);
    }
    seen.expect_each_once();
    ep::wait_all(sends);
  });
}

// Blocking mprobe with MPI_ANY_SOURCE at a root, mrecv into the probed size.
TEST(P2PMprobe, AnySourceMprobeAtARoot) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int r = c.rank();
    const int root = 0;
    const int len = r % 2 == 0 ? 2 + r : kEagerInts * 2 + r;
    const std::vector<int> out = make_pattern(r, root, len, 77);
    ep::Request send = c.isend(out.data(), len, MPI_INT, root, 77);
    if (r == root) {
      SourceTally seen(n);
      for (int k = 0; k < n; ++k) {
        ep::Message m = c.mprobe(ep::kAnySource, 77);
        const int s = m.status().source;
        if (!seen.count(s, "mprobe")) continue;
        const int expect_len = s % 2 == 0 ? 2 + s : kEagerInts * 2 + s;
        EXPECT_EQ(m.status().count(MPI_INT), expect_len);
        std::vector<int> in(static_cast<std::size_t>(m.status().count(MPI_INT)), -1);
        ep::mrecv(in.data(), static_cast<int>(in.size()), MPI_INT, m);
        EXPECT_EQ(count_mismatches(in, s, root, 77), 0);
      }
      seen.expect_each_once();
    }
    ep::wait(send);
  });
}

}  // namespace
