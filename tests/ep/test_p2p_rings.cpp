// The rings of the intra-process path (ep/src/p2p/local_ring.hpp): every
// message between two endpoints of one process goes through the ring of
// its pair, inline when small, as a pointer to an envelope otherwise, and
// into the ring's overflow when the ring is full.
//
// - LocalRing on its own: messages of every size around the line and ring
//   boundaries come out whole and in order, a full ring refuses and takes
//   messages again once read, and data left from an earlier lap never poses
//   as a new message.
// - Through the API, between the threads of a process: order across inline
//   messages, envelopes, rendezvous, synchronous sends and the overflow,
//   with every kind of receive (blocking, posted before and after the send,
//   specific and wildcard source and tag); probes and matched probes over
//   ring messages; cancel; truncation; and waiters that park being woken by
//   the message they wait for.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p/local_ring.hpp"
#include "p2p/matching_engine.hpp"
#include "p2p/test_hooks.hpp"
#include "p2p_helpers.hpp"

namespace {

using ep::detail::LocalRing;

std::byte byte_of(int seq, std::size_t k) {
  return static_cast<std::byte>((static_cast<std::size_t>(seq) * 131U + k * 7U + 1U) & 0xFFU);
}

void fill(std::byte* data, std::size_t bytes, int seq) {
  for (std::size_t k = 0; k < bytes; ++k) data[k] = byte_of(seq, k);
}

bool holds(const std::byte* data, std::size_t bytes, int seq) {
  for (std::size_t k = 0; k < bytes; ++k) {
    if (data[k] != byte_of(seq, k)) return false;
  }
  return true;
}

// Writes an inline message of `bytes` numbered `seq` (tag = seq); false when full.
bool write(LocalRing& ring, std::size_t bytes, int seq) {
  std::byte* room = ring.try_reserve_inline(bytes);
  if (room == nullptr) return false;
  fill(room, bytes, seq);
  ring.commit_inline(seq, bytes);
  return true;
}

// Reads the oldest message, which must be inline message `seq` of `bytes`.
void read_expecting(LocalRing& ring, std::size_t bytes, int seq) {
  const LocalRing::Entry entry = ring.front();
  ASSERT_EQ(entry.kind, LocalRing::Entry::Kind::kInline) << "message " << seq;
  EXPECT_EQ(entry.tag, seq);
  ASSERT_EQ(entry.bytes, bytes) << "message " << seq;
  EXPECT_TRUE(holds(entry.data, bytes, seq)) << "message " << seq << " of " << bytes << " bytes";
  ring.pop_inline(entry);
}

// Sizes around every boundary a message meets: the first line, whole
// lines, and the largest inline message.
std::vector<std::size_t> boundary_sizes(const LocalRing& ring) {
  std::vector<std::size_t> sizes{0, 1, 8, 47, 48, 49, 100, 111, 112, 113, 175, 176, 177, 1000};
  for (std::size_t s : {ring.max_inline_bytes() - 1, ring.max_inline_bytes()}) sizes.push_back(s);
  return sizes;
}

// Messages of every boundary size, with 0 to 5 of them waiting at a time,
// over many laps of a small ring: each comes out whole, in order, never
// split by the end of the ring.
TEST(LocalRingUnit, MessagesOfEverySizeComeOutWholeAndInOrder) {
  LocalRing ring(64, 0, 0);
  const std::vector<std::size_t> sizes = boundary_sizes(ring);
  int written = 0;
  int read = 0;
  std::vector<std::size_t> waiting;  // sizes of the messages in the ring, oldest first
  for (int step = 0; step < 3000; ++step) {
    const int backlog = step % 6;
    while (static_cast<int>(waiting.size()) < backlog) {
      const std::size_t bytes = sizes[static_cast<std::size_t>(written * 7 + step) % sizes.size()];
      if (!write(ring, bytes, written)) break;
      waiting.push_back(bytes);
      ++written;
    }
    while (static_cast<int>(waiting.size()) > backlog / 2) {
      read_expecting(ring, waiting.front(), read);
      waiting.erase(waiting.begin());
      ++read;
    }
  }
  while (!waiting.empty()) {
    read_expecting(ring, waiting.front(), read++);
    waiting.erase(waiting.begin());
  }
  EXPECT_EQ(ring.front().kind, LocalRing::Entry::Kind::kNone);
  EXPECT_GT(written, 64 * 20) << "the test went round the ring many times";
}

// A full ring refuses a message, takes it again once the receiver has read
// one, and envelopes take one line each.
TEST(LocalRingUnit, FullRingRefusesUntilRead) {
  LocalRing ring(64, 0, 0);
  int written = 0;
  while (write(ring, 100, written)) ++written;  // 100 bytes: 2 lines
  EXPECT_EQ(written, 32);
  read_expecting(ring, 100, 0);
  EXPECT_TRUE(write(ring, 100, written));
  auto envelope = ep::detail::make_envelope();
  envelope->tag = 7;
  ep::detail::Envelope* raw = envelope.get();
  raw->pinned = std::move(envelope);
  EXPECT_FALSE(ring.try_write_envelope(raw, 7)) << "the ring is full";
  read_expecting(ring, 100, 1);
  EXPECT_TRUE(ring.try_write_envelope(raw, 7));
  for (int seq = 2; seq <= written; ++seq) read_expecting(ring, 100, seq);
  const LocalRing::Entry entry = ring.front();
  ASSERT_EQ(entry.kind, LocalRing::Entry::Kind::kEnvelope);
  EXPECT_EQ(entry.tag, 7);
  EXPECT_EQ(entry.envelope, raw);
  const std::shared_ptr<ep::detail::Envelope> taken = ring.pop_envelope(entry);
  EXPECT_EQ(taken.get(), raw);
  EXPECT_EQ(ring.front().kind, LocalRing::Entry::Kind::kNone);
}

// The data of a message spans several lines, and in a later lap a message
// may start on one of them. A receiver that looks there before the sender
// has written it must see nothing, even when the old data holds exactly
// the stamp that a message starting there would carry (position + 1).
TEST(LocalRingUnit, OldDataNeverPosesAsAMessage) {
  constexpr std::uint64_t kLines = 64;
  LocalRing ring(kLines, 0, 0);
  // Message 0: five lines at positions 0..4. The first 8 bytes of line i
  // (i = 1..4) are data bytes 48 + 64 (i - 1) onwards; they hold the stamp
  // of position kLines + i, where the next lap passes.
  constexpr std::size_t kBytes = LocalRing::kFirstLineBytes + 4 * LocalRing::kLineBytes;
  std::byte* room = ring.try_reserve_inline(kBytes);
  ASSERT_NE(room, nullptr);
  std::memset(room, 0, kBytes);
  for (std::uint64_t i = 1; i <= 4; ++i) {
    const std::uint64_t stamp = kLines + i + 1;
    std::memcpy(room + LocalRing::kFirstLineBytes + (i - 1) * LocalRing::kLineBytes, &stamp,
                sizeof stamp);
  }
  ring.commit_inline(0, kBytes);
  const LocalRing::Entry first = ring.front();
  ASSERT_EQ(first.kind, LocalRing::Entry::Kind::kInline);
  ring.pop_inline(first);
  // One-line messages up to the end of the first lap (positions 5..63),
  // then one of two lines at positions 64 and 65.
  for (int seq = 1; seq <= 59; ++seq) {
    ASSERT_TRUE(write(ring, 8, seq));
    read_expecting(ring, 8, seq);
  }
  ASSERT_TRUE(write(ring, 60, 60));
  read_expecting(ring, 60, 60);
  // The receiver now looks at position 66, whose line last held data of
  // message 0 with the stamp 67 in it.
  EXPECT_FALSE(ring.ready());
  EXPECT_EQ(ring.front().kind, LocalRing::Entry::Kind::kNone);
  ASSERT_TRUE(write(ring, 8, 61));
  read_expecting(ring, 8, 61);
}

// ---------------------------------------------------------------------------
// Through the API.

constexpr int kHeaderInts = 2;  // sequence number, sender

// What sender `from` sends as message `seq`: sizes that take every path of
// a ring (inline in one line or several, an envelope with an eager copy,
// a rendezvous) and a synchronous send now and then.
struct Plan {
  [[nodiscard]] static int ints_of(int seq) {
    if (seq % 97 == 50) return 6000;  // 24000 B: rendezvous
    if (seq % 31 == 7) return 2400;   // 9600 B: an eager envelope (past the ring's inline size)
    if (seq % 5 == 1) return 200;     // 800 B: inline over several lines
    return kHeaderInts + seq % 9;     // 8..40 B: one line
  }
  [[nodiscard]] static bool synchronous(int seq) { return seq % 53 == 3; }
  [[nodiscard]] static int tag_of(int seq) { return seq % 3; }
};

std::vector<int> message(int from, int seq) {
  std::vector<int> m = ep_p2p::make_pattern(from, seq, Plan::ints_of(seq), seq);
  m[0] = seq;
  m[1] = from;
  return m;
}

// Sends messages first .. first + count - 1 of the plan to `dest` as
// nonblocking sends (synchronous now and then); returns their requests and
// keeps their buffers in `out`.
std::vector<ep::Request> send_window(const ep::Communicator& c, int dest, int first, int count,
                                     std::vector<std::vector<int>>& out) {
  std::vector<ep::Request> sends;
  for (int seq = first; seq < first + count; ++seq) {
    out.push_back(message(c.rank(), seq));
    const auto& m = out.back();
    const int ints = static_cast<int>(m.size());
    sends.push_back(Plan::synchronous(seq)
                        ? c.issend(m.data(), ints, MPI_INT, dest, Plan::tag_of(seq))
                        : c.isend(m.data(), ints, MPI_INT, dest, Plan::tag_of(seq)));
  }
  return sends;
}

// Receives the plan's messages from `senders`, checking that each sender's
// come in order and whole, in windows that change how: blocking receives
// naming the source, receives posted in a window and waited for together
// or last first (so later receives match while earlier ones wait), naming
// the tag or not; and wildcard windows (any source, any tag) that take the
// senders' messages in whatever interleaving they come.
class Receiver {
 public:
  Receiver(const ep::Communicator& c, std::vector<int> senders)
      : c_(c), senders_(std::move(senders)), next_(senders_.size(), 0), bad_(senders_.size(), 0) {}

  // Receives `count` messages (no more than the senders have left).
  void receive(int count, int messages_per_sender) {
    while (count > 0) {
      const int kind = window_++ % 5;
      if (kind >= 3) {
        const int m = std::min(count, kWindow);
        window(m, ep::kAnySource, kind == 3);
        count -= m;
        continue;
      }
      // The sender with the most messages left.
      std::size_t s = 0;
      for (std::size_t i = 1; i < senders_.size(); ++i) {
        if (next_[i] < next_[s]) s = i;
      }
      const int m = std::min({count, kWindow, messages_per_sender - next_[s]});
      window(m, senders_[s], kind == 0);
      count -= m;
    }
  }

  void report() const {
    for (std::size_t s = 0; s < senders_.size(); ++s) {
      EXPECT_EQ(bad_[s], 0) << "from ep " << senders_[s] << ":\n" << first_[s].str();
    }
  }

 private:
  static constexpr int kWindow = 16;
  static constexpr int kMostInts = 6000;

  void window(int m, int source, bool blocking) {
    std::vector<std::vector<int>> in(static_cast<std::size_t>(m), std::vector<int>(kMostInts));
    std::vector<ep::Status> statuses(static_cast<std::size_t>(m));
    auto tag_for = [&](int j) {
      if (source == ep::kAnySource || j % 2 == 0) return ep::kAnyTag;
      return Plan::tag_of(next_[index_of(source)] + j);
    };
    if (blocking) {
      for (int j = 0; j < m; ++j) {
        statuses[static_cast<std::size_t>(j)] =
            c_.recv(in[static_cast<std::size_t>(j)].data(), kMostInts, MPI_INT, source, tag_for(j));
        if (source == ep::kAnySource)
          check(in[static_cast<std::size_t>(j)], statuses[static_cast<std::size_t>(j)]);
      }
    } else {
      std::vector<ep::Request> receives(static_cast<std::size_t>(m));
      for (int j = 0; j < m; ++j) {
        receives[static_cast<std::size_t>(j)] = c_.irecv(in[static_cast<std::size_t>(j)].data(),
                                                         kMostInts, MPI_INT, source, tag_for(j));
      }
      if (window_ % 2 == 0) {
        ep::wait_all(receives, statuses);
      } else {
        for (int j = m - 1; j >= 0; --j) {
          statuses[static_cast<std::size_t>(j)] = ep::wait(receives[static_cast<std::size_t>(j)]);
        }
      }
      if (source == ep::kAnySource) {
        for (int j = 0; j < m; ++j)
          check(in[static_cast<std::size_t>(j)], statuses[static_cast<std::size_t>(j)]);
      }
    }
    if (source != ep::kAnySource) {
      for (int j = 0; j < m; ++j)
        check(in[static_cast<std::size_t>(j)], statuses[static_cast<std::size_t>(j)]);
    }
  }

  [[nodiscard]] std::size_t index_of(int sender) const {
    return static_cast<std::size_t>(std::find(senders_.begin(), senders_.end(), sender) -
                                    senders_.begin());
  }

  // The message must be the next one of its sender (its header says who).
  void check(const std::vector<int>& got, const ep::Status& status) {
    const std::size_t s = index_of(got[1]);
    if (s == senders_.size()) {
      if (unknown_++ == 0) ADD_FAILURE() << "a message names sender " << got[1];
      return;
    }
    const int seq = next_[s]++;
    const std::vector<int> want = message(senders_[s], seq);
    const int count = status.count(MPI_INT);
    if (status.source != senders_[s] || status.tag != Plan::tag_of(seq) ||
        count != static_cast<int>(want.size()) ||
        !std::equal(want.begin(), want.end(), got.begin())) {
      if (bad_[s]++ < 5) {
        first_[s] << "  expected message " << seq << ", got source " << status.source << " tag "
                  << status.tag << " count " << count << " sequence number " << got[0] << "\n";
      }
    }
  }

  const ep::Communicator& c_;
  std::vector<int> senders_;
  std::vector<int> next_;
  std::vector<int> bad_;
  std::vector<std::ostringstream> first_ = std::vector<std::ostringstream>(senders_.size());
  int unknown_ = 0;
  int window_ = 0;
};

// Each endpoint streams to the next one of its process and receives from the
// previous one, a window at a time: inline messages of one and several
// lines, eager envelopes, rendezvous and synchronous sends in one stream,
// every kind of receive.
TEST(P2pRings, EveryPathKeepsTheOrderOfAPair) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    constexpr int kMessages = 1500;
    constexpr int kWindow = 16;
    Receiver receiver(c, {ep_p2p::intra_prev(c)});
    for (int first = 0; first < kMessages; first += kWindow) {
      const int count = std::min(kWindow, kMessages - first);
      std::vector<std::vector<int>> out;
      std::vector<ep::Request> sends = send_window(c, ep_p2p::intra_next(c), first, count, out);
      receiver.receive(count, kMessages);
      ep::wait_all(sends);
    }
    receiver.report();
  });
}

// Local threads 1.. flood local thread 0 while it sleeps: each fills its
// ring, the rest goes to the ring's overflow, and once thread 0 receives,
// each sender's messages still come in order; senders go back to the ring
// once the overflow is empty (a second flood after the first is received).
TEST(P2pRings, OverflowKeepsEverySendersOrder) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    constexpr int kMessages = 1200;  // far more than a ring holds
    const int process = c.process_rank();
    const int receiver_rank = c.rank_map().ep_rank(process, 0);
    std::vector<int> senders;
    for (int t = 1; t < c.local_size(); ++t) senders.push_back(c.rank_map().ep_rank(process, t));
    for (int flood = 0; flood < 2; ++flood) {
      if (c.local_thread() > 0) {
        std::vector<std::vector<int>> out;
        std::vector<ep::Request> sends = send_window(c, receiver_rank, 0, kMessages, out);
        ep::wait_all(sends);
      } else if (!senders.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        Receiver receiver(c, senders);
        receiver.receive(kMessages * static_cast<int>(senders.size()), kMessages);
        receiver.report();
      }
      ep::barrier(c);
    }
  });
}

// Probes see ring messages in order, skip the ones of other tags (which stay
// receivable, in order), never see a message a posted receive takes, and a
// matched probe's message dropped unreceived comes back first in line.
TEST(P2pRings, ProbesOverRingMessages) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int dest = ep_p2p::intra_next(c);
    const int from = ep_p2p::intra_prev(c);
    // Tags 1, 2, 1, 2, ... with sizes of one line, several lines and an envelope.
    constexpr int kMessages = 12;
    auto ints_of = [](int i) { return i % 3 == 0 ? 2 : i % 3 == 1 ? 100 : 2500; };
    std::vector<std::vector<int>> out;
    std::vector<ep::Request> sends;
    for (int i = 0; i < kMessages; ++i) {
      out.push_back(ep_p2p::make_pattern(c.rank(), dest, ints_of(i), i));
      sends.push_back(c.isend(out.back().data(), ints_of(i), MPI_INT, dest, 1 + i % 2));
    }
    ep_p2p::message_barrier(c);  // every message is in its ring, unread
    std::vector<int> in(2500);
    auto receive = [&](int i, int source, int tag) {
      const ep::Status st = c.recv(in.data(), 2500, MPI_INT, source, tag);
      EXPECT_EQ(st.count(MPI_INT), ints_of(i)) << "message " << i;
      EXPECT_EQ(ep_p2p::count_mismatches(in.data(), ints_of(i), from, c.rank(), i), 0)
          << "message " << i;
    };
    // A receive posted before the probes takes message 0 (tag 1): the probe
    // of tag 1 must see message 2, the next one.
    std::vector<int> first(2);
    ep::Request posted = c.irecv(first.data(), 2, MPI_INT, from, 1);
    const ep::Status probed = c.probe(from, 1);
    EXPECT_EQ(probed.count(MPI_INT), ints_of(2)) << "the probe sees message 2";
    ep::wait(posted);
    EXPECT_EQ(ep_p2p::count_mismatches(first, from, c.rank(), 0), 0);
    // Tag 2 next: message 1 (several lines) then message 3 (one line).
    const std::optional<ep::Status> tag2 = c.iprobe(ep::kAnySource, 2);
    ASSERT_TRUE(tag2.has_value());
    EXPECT_EQ(tag2->count(MPI_INT), ints_of(1));
    EXPECT_EQ(tag2->source, from);
    {
      // Matched, then dropped: message 1 goes back first in line.
      ep::Message dropped = c.mprobe(from, 2);
      EXPECT_EQ(dropped.status().count(MPI_INT), ints_of(1));
    }
    ep::Message taken = c.mprobe(from, ep::kAnyTag);  // the oldest of all: message 1 again
    EXPECT_EQ(taken.status().count(MPI_INT), ints_of(1));
    EXPECT_EQ(taken.status().tag, 2);
    const ep::Status st = ep::mrecv(in.data(), 2500, MPI_INT, taken);
    EXPECT_EQ(st.count(MPI_INT), ints_of(1));
    EXPECT_EQ(ep_p2p::count_mismatches(in.data(), ints_of(1), from, c.rank(), 1), 0);
    // The rest in order, by tag.
    for (int i = 2; i < kMessages; ++i) receive(i, from, 1 + i % 2);
    EXPECT_FALSE(c.iprobe(ep::kAnySource, ep::kAnyTag).has_value());
    ep::wait_all(sends);
  });
}

// Cancel reads the ring first: a message written before the cancel matches
// the receive (which is then not cancelled); a receive nothing matches is
// cancelled, and the other messages in the ring stay receivable, in order.
TEST(P2pRings, CancelAfterTheMessageWasWritten) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int dest = ep_p2p::intra_next(c);
    const int from = ep_p2p::intra_prev(c);
    int matched = -1;
    int never = -1;
    ep::Request early = c.irecv(&matched, 1, MPI_INT, from, 5);
    ep::Request unmatched = c.irecv(&never, 1, MPI_INT, from, 6);
    ep_p2p::message_barrier(c);
    const int values[3] = {c.rank() * 10 + 1, c.rank() * 10 + 2, c.rank() * 10 + 3};
    c.send(&values[0], 1, MPI_INT, dest, 5);
    c.send(&values[1], 1, MPI_INT, dest, 7);
    c.send(&values[2], 1, MPI_INT, dest, 7);
    ep_p2p::message_barrier(c);  // the messages wait in the rings, unread
    ep::cancel(early);
    ep::cancel(unmatched);
    const ep::Status early_status = ep::wait(early);
    EXPECT_FALSE(early_status.cancelled) << "its message was written before the cancel";
    EXPECT_EQ(matched, from * 10 + 1);
    const ep::Status unmatched_status = ep::wait(unmatched);
    EXPECT_TRUE(unmatched_status.cancelled);
    EXPECT_EQ(never, -1);
    int got = 0;
    c.recv(&got, 1, MPI_INT, from, 7);
    EXPECT_EQ(got, from * 10 + 2);
    c.recv(&got, 1, MPI_INT, ep::kAnySource, ep::kAnyTag);
    EXPECT_EQ(got, from * 10 + 3);
  });
}

// A message longer than the receive buffer, inline in the ring, received by
// a blocking receive (which never posts) and by a posted one: the part that
// fits arrives, kTruncate names both sizes, and the message is consumed.
TEST(P2pRings, TruncatedInlineMessagesAreConsumed) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int dest = ep_p2p::intra_next(c);
    const int from = ep_p2p::intra_prev(c);
    const std::vector<int> out = ep_p2p::make_pattern(c.rank(), dest, 40);
    for (int i = 0; i < 2; ++i) c.send(out.data(), 40, MPI_INT, dest, 3);
    const int after = c.rank();
    c.send(&after, 1, MPI_INT, dest, 4);
    std::vector<int> in(10, -1);
    for (const bool blocking : {true, false}) {
      SCOPED_TRACE(blocking ? "blocking receive" : "posted receive");
      try {
        if (blocking) {
          c.recv(in.data(), 10, MPI_INT, from, 3);
        } else {
          ep::Request r = c.irecv(in.data(), 10, MPI_INT, from, 3);
          ep::wait(r);
        }
        ADD_FAILURE() << "no kTruncate";
      } catch (const ep::Error& e) {
        EXPECT_EQ(e.kind(), ep::ErrorKind::kTruncate);
        EXPECT_NE(std::string(e.what()).find("160 bytes"), std::string::npos) << e.what();
      }
      EXPECT_EQ(ep_p2p::count_mismatches(in.data(), 10, from, c.rank()), 0);
    }
    int next = -1;
    c.recv(&next, 1, MPI_INT, from, ep::kAnyTag);
    EXPECT_EQ(next, from) << "both truncated messages were consumed";
  });
}

// Large contiguous rendezvous messages (SharedCopy, from 256 KiB on) are
// copied by the receiver and, while it waits, by the sender, in 64 KiB
// chunks. Each step streams to the next endpoint of the process and checks
// every byte that arrives and every byte around the receive buffer: sizes at
// the threshold, of an odd number of bytes (a short last chunk) and of many
// chunks; receives that truncate to a size still shared and to one copied
// alone; a receive into a strided type (copied alone); the sender waiting
// before the receiver posts and long after the receiver is done; in spin and
// in park mode.
TEST(P2pRings, LargeCopiesSharedWithTheSenderArriveWhole) {
  ep_test::run_endpoints_per_wait_policy([](ep::Communicator& c, ep::WaitPolicy) {
    constexpr std::size_t kKiB = 1024;
    constexpr std::size_t kGuard = 4096;  // bytes on each side of a receive buffer
    const int dest = ep_p2p::intra_next(c);
    const int from = ep_p2p::intra_prev(c);
    enum class Order { kTogether, kReceiverAlone, kPostedFirst };
    struct Case {
      std::size_t bytes;     // sent
      std::size_t capacity;  // received into (bytes, or fewer: truncated)
      Order order;
    };
    const Case cases[] = {
        {256 * kKiB, 256 * kKiB, Order::kTogether},
        {1024 * kKiB + 13, 1024 * kKiB + 13, Order::kTogether},
        {1024 * kKiB + 13, 1024 * kKiB + 13, Order::kReceiverAlone},
        {1024 * kKiB + 13, 1024 * kKiB + 13, Order::kPostedFirst},
        {4096 * kKiB, 4096 * kKiB, Order::kTogether},
        {2048 * kKiB, 300 * kKiB + 5, Order::kTogether},  // truncated, still shared
        {2048 * kKiB, 300 * kKiB + 5, Order::kReceiverAlone},
        {2048 * kKiB, 1000, Order::kTogether},  // truncated, copied alone
    };
    int seq = 0;
    for (const Case& k : cases) {
      ++seq;
      SCOPED_TRACE(testing::Message() << "message " << seq << " of " << k.bytes << " B");
      std::vector<std::byte> out(k.bytes);
      fill(out.data(), k.bytes, seq + c.rank());
      std::vector<std::byte> in(k.capacity + 2 * kGuard, std::byte{0x5A});
      std::byte* const buffer = in.data() + kGuard;
      const auto expect_truncation = [&](const ep::Error& e) {
        EXPECT_EQ(e.kind(), ep::ErrorKind::kTruncate) << e.what();
        EXPECT_LT(k.capacity, k.bytes) << e.what();
      };
      const int count = static_cast<int>(k.bytes);
      const int capacity = static_cast<int>(k.capacity);
      if (k.order == Order::kReceiverAlone) {
        // The receive ends before the sender looks at its send again.
        ep::Request send = c.isend(out.data(), count, MPI_BYTE, dest, seq);
        try {
          c.recv(buffer, capacity, MPI_BYTE, from, seq);
          EXPECT_EQ(k.capacity, k.bytes) << "no kTruncate";
        } catch (const ep::Error& e) {
          expect_truncation(e);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ep::wait(send);
      } else {
        std::vector<ep::Request> both(2);
        if (k.order == Order::kPostedFirst) {
          // Every receive is posted before its message is sent.
          both[1] = c.irecv(buffer, capacity, MPI_BYTE, from, seq);
          ep::barrier(c);
          both[0] = c.isend(out.data(), count, MPI_BYTE, dest, seq);
        } else {
          // Both sides wait on the pair at once: whoever matches, the
          // other may take chunks.
          both[0] = c.isend(out.data(), count, MPI_BYTE, dest, seq);
          both[1] = c.irecv(buffer, capacity, MPI_BYTE, from, seq);
        }
        try {
          ep::wait_all(both);
          EXPECT_EQ(k.capacity, k.bytes) << "no kTruncate";
        } catch (const ep::Error& e) {
          expect_truncation(e);
          for (ep::Request& r : both) {
            if (!r.is_null()) ep::wait(r);
          }
        }
      }
      EXPECT_TRUE(holds(buffer, k.capacity, seq + from)) << "the data that fits";
      const bool untouched = std::all_of(in.begin(), in.begin() + kGuard,
                                         [](std::byte b) { return b == std::byte{0x5A}; }) &&
                             std::all_of(in.end() - kGuard, in.end(),
                                         [](std::byte b) { return b == std::byte{0x5A}; });
      EXPECT_TRUE(untouched) << "bytes written outside the receive buffer";
      // The sender's buffer is its own again: a later message must not see old data.
      fill(out.data(), k.bytes, -1);
    }
    // A strided receive buffer (every other int) for a 1 MiB message.
    constexpr int kInts = 256 * 1024;
    MPI_Datatype strided = MPI_DATATYPE_NULL;
    MPI_Type_vector(kInts, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    const std::vector<int> out = ep_p2p::make_pattern(c.rank(), dest, kInts);
    std::vector<int> in(2 * kInts, -7);
    std::vector<ep::Request> both(2);
    both[0] = c.isend(out.data(), kInts, MPI_INT, dest, 99);
    both[1] = c.irecv(in.data(), 1, strided, from, 99);
    ep::wait_all(both);
    MPI_Type_free(&strided);
    std::vector<int> taken(kInts);
    int gaps = 0;
    for (int i = 0; i < kInts; ++i) {
      taken[static_cast<std::size_t>(i)] = in[2 * static_cast<std::size_t>(i)];
      gaps += in[2 * static_cast<std::size_t>(i) + 1] != -7 ? 1 : 0;
    }
    EXPECT_EQ(ep_p2p::count_mismatches(taken, from, c.rank()), 0);
    EXPECT_EQ(gaps, 0) << "ints written between the strided elements";
  });
}

// In park mode a waiter that nobody notifies sleeps a full park timeout,
// made 5 s here. In each step local thread 0 waits while thread 1 first
// sleeps (so the wait parks), then publishes what it waits for, then sleeps
// 1 s doing nothing that could wake anyone: the wait must end well before
// that, woken by the publication itself. Thread 0 waits as a blocking
// receive (never posted), a posted receive, a rendezvous sender (woken by
// its receiver's copy) and a synchronous sender (woken by the match).
TEST(P2pRings, ParkedWaitersAreWokenByTheirMessage) {
  if (ep_test::world_size() > 1) {
    GTEST_SKIP() << "one process only: another process's messages wake nobody";
  }
  ep::detail::testing::set_park_micros(5'000'000);
  ep::EndpointOptions options;
  options.wait_policy = ep::WaitPolicy::kPark;
  ep_test::run_endpoints(
      [](ep::Communicator& c) {
        if (c.local_size() == 1) return;
        const int waiter = c.rank_map().ep_rank(c.process_rank(), 0);
        const int publisher = c.rank_map().ep_rank(c.process_rank(), 1);
        std::vector<int> big(6000, c.rank());  // 24000 B: a rendezvous
        for (int step = 0; step < 4; ++step) {
          int value = -1;
          if (c.rank() == waiter) {
            const auto start = std::chrono::steady_clock::now();
            switch (step) {
              case 0:
                c.recv(&value, 1, MPI_INT, publisher, step);
                break;
              case 1: {
                ep::Request r = c.irecv(&value, 1, MPI_INT, publisher, step);
                ep::wait(r);
                break;
              }
              case 2: {
                ep::Request r = c.isend(big.data(), 6000, MPI_INT, publisher, step);
                ep::wait(r);
                break;
              }
              default: {
                const int out = 7;
                ep::Request r = c.issend(&out, 1, MPI_INT, publisher, step);
                ep::wait(r);
                break;
              }
            }
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            EXPECT_LT(seconds, 0.9) << "step " << step << ": the waiter was not woken";
            if (step < 2) {
              EXPECT_EQ(value, publisher + step);
            }
          } else if (c.rank() == publisher) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (step < 2) {
              value = publisher + step;
              c.send(&value, 1, MPI_INT, waiter, step);
            } else {
              std::vector<int> in(6000);
              c.recv(in.data(), 6000, MPI_INT, waiter, step);
            }
            std::this_thread::sleep_for(std::chrono::seconds(1));
          }
          ep::barrier(c);
        }
      },
      0, options);
  ep::detail::testing::set_park_micros(0);
}

}  // namespace
