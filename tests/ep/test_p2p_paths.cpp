// The same exchange script gives identical results whichever path carries
// it: with itself, with a thread of the same process (intra-process eager
// copy and rendezvous) and with a thread of another process (MPI).
//
// Every endpoint runs the script three times, against three symmetric
// partners, and records a transcript of everything it observes (statuses,
// sizes, checksums of received data). The data depend only on the script
// step, never on who sends it, so the three transcripts must be equal.
// Each run uses its own tag range, and every wildcard receive names either
// the source or the tag, so runs cannot steal each other's messages.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

constexpr std::size_t kEager = ep::kDefaultEagerThreshold;
const std::size_t kSizes[] = {0, 1, 7, 64, kEager - 1, kEager, kEager + 1, 3 * kEager, 256 * 1024};

std::vector<unsigned char> step_data(int step, std::size_t bytes) {
  std::vector<unsigned char> v(bytes);
  for (std::size_t k = 0; k < bytes; ++k) v[k] = ep_p2p::byte_pattern(1000 + step, step, k);
  return v;
}

std::uint64_t checksum(const void* p, std::size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (std::size_t k = 0; k < bytes; ++k) h = (h ^ b[k]) * 1099511628211ULL;
  return h;
}

std::string line(const char* what, std::size_t step, const ep::Status& st, int tag_base,
                 int partner, std::uint64_t sum) {
  std::ostringstream os;
  os << what << " " << step << ": from_partner " << (st.source == partner) << " tag "
     << st.tag - tag_base << " bytes " << st.bytes << " cancelled " << st.cancelled << " sum "
     << sum;
  return os.str();
}

/// The script, run symmetrically by an endpoint and `partner` (possibly itself).
std::vector<std::string> script(const ep::Communicator& c, int partner, int tag_base) {
  std::vector<std::string> t;
  constexpr int kMax = 256 * 1024;
  std::vector<unsigned char> in(kMax);

  // 1. One message of each size, irecv posted before the isend.
  for (std::size_t i = 0; i < std::size(kSizes); ++i) {
    const std::vector<unsigned char> out = step_data(static_cast<int>(i), kSizes[i]);
    std::vector<ep::Request> reqs;
    reqs.push_back(c.irecv(in.data(), kMax, MPI_BYTE, partner, tag_base + static_cast<int>(i)));
    reqs.push_back(c.isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, partner,
                           tag_base + static_cast<int>(i)));
    std::vector<ep::Status> sts(2);
    ep::wait_all(reqs, sts);
    t.push_back(line("size", i, sts[0], tag_base, partner, checksum(in.data(), sts[0].bytes)));
  }

  // 2. Sends first (unexpected messages), then wildcard receives that name the
  //    tag (any source) or the source (any tag).
  {
    std::vector<std::vector<unsigned char>> outs;
    std::vector<ep::Request> sends;
    for (int j = 0; j < 4; ++j) {
      outs.push_back(step_data(20 + j, j % 2 == 0 ? 100 : 2 * kEager));
      sends.push_back(c.isend(outs.back().data(), static_cast<int>(outs.back().size()), MPI_BYTE,
                              partner, tag_base + 20 + j));
    }
    for (int j : {1, 0}) {
      const ep::Status st = c.recv(in.data(), kMax, MPI_BYTE, ep::kAnySource, tag_base + 20 + j);
      t.push_back(line("any_source", static_cast<std::size_t>(j), st, tag_base, partner,
                       checksum(in.data(), st.bytes)));
    }
    for (int j = 2; j < 4; ++j) {
      const ep::Status st = c.recv(in.data(), kMax, MPI_BYTE, partner, ep::kAnyTag);
      t.push_back(line("any_tag", static_cast<std::size_t>(j), st, tag_base, partner,
                       checksum(in.data(), st.bytes)));
    }
    ep::wait_all(sends);
  }

  // 3. probe then recv, mprobe then mrecv.
  {
    const std::vector<unsigned char> a = step_data(30, 1000);
    const std::vector<unsigned char> b = step_data(31, 50000);
    ep::Request sa = c.isend(a.data(), 1000, MPI_BYTE, partner, tag_base + 30);
    ep::Request sb = c.isend(b.data(), 50000, MPI_BYTE, partner, tag_base + 31);
    const ep::Status pa = c.probe(partner, tag_base + 30);
    t.push_back(line("probe", 30, pa, tag_base, partner, 0));
    ep::Status st = c.recv(in.data(), static_cast<int>(pa.bytes), MPI_BYTE, partner, tag_base + 30);
    t.push_back(line("recv", 30, st, tag_base, partner, checksum(in.data(), st.bytes)));
    ep::Message m = c.mprobe(ep::kAnySource, tag_base + 31);
    t.push_back(line("mprobe", 31, m.status(), tag_base, partner, 0));
    st = ep::mrecv(in.data(), static_cast<int>(m.status().bytes), MPI_BYTE, m);
    t.push_back(line("mrecv", 31, st, tag_base, partner, checksum(in.data(), st.bytes)));
    ep::wait(sa);
    ep::wait(sb);
  }

  // 4. A strided column out, contiguous in (small and above the threshold).
  for (int rows : {10, 3000}) {
    MPI_Datatype column = MPI_DATATYPE_NULL;
    MPI_Type_vector(rows, 1, 3, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    std::vector<double> m(static_cast<std::size_t>(rows) * 3);
    for (std::size_t k = 0; k < m.size(); ++k) m[k] = static_cast<double>(k) * 0.5;
    std::vector<double> col(static_cast<std::size_t>(rows), -1.0);
    std::vector<ep::Request> reqs;
    reqs.push_back(c.irecv(col.data(), rows, MPI_DOUBLE, partner, tag_base + 40));
    reqs.push_back(c.isend(&m[1], 1, column, partner, tag_base + 40));
    std::vector<ep::Status> sts(2);
    ep::wait_all(reqs, sts);
    MPI_Type_free(&column);
    t.push_back(line("column", static_cast<std::size_t>(rows), sts[0], tag_base, partner,
                     checksum(col.data(), col.size() * sizeof(double))));
  }

  // 5. sendrecv_replace, and a synchronous send.
  {
    std::vector<unsigned char> buf = step_data(50, 5 * 4096);
    const ep::Status st = c.sendrecv_replace(buf.data(), static_cast<int>(buf.size()), MPI_BYTE,
                                             partner, tag_base + 50, partner, tag_base + 50);
    t.push_back(line("replace", 50, st, tag_base, partner, checksum(buf.data(), buf.size())));
    const std::vector<unsigned char> out = step_data(51, 3000);
    ep::Request s = c.issend(out.data(), 3000, MPI_BYTE, partner, tag_base + 51);
    const ep::Status rs = c.recv(in.data(), kMax, MPI_BYTE, partner, tag_base + 51);
    ep::wait(s);
    t.push_back(line("issend", 51, rs, tag_base, partner, checksum(in.data(), rs.bytes)));
  }
  return t;
}

/// What the script must observe, computed without communication.
std::vector<std::string> expected_script(int tag_base) {
  std::vector<std::string> t;
  auto add = [&](const char* what, std::size_t step, int tag, std::size_t bytes,
                 std::uint64_t sum) {
    ep::Status st;
    st.source = 0;
    st.tag = tag_base + tag;
    st.bytes = bytes;
    t.push_back(line(what, step, st, tag_base, 0, sum));
  };
  auto sum_of = [](int step, std::size_t bytes) {
    const std::vector<unsigned char> v = step_data(step, bytes);
    return checksum(v.data(), v.size());
  };
  for (std::size_t i = 0; i < std::size(kSizes); ++i) {
    add("size", i, static_cast<int>(i), kSizes[i], sum_of(static_cast<int>(i), kSizes[i]));
  }
  for (int j : {1, 0}) {
    const std::size_t b = j % 2 == 0 ? 100 : 2 * kEager;
    add("any_source", static_cast<std::size_t>(j), 20 + j, b, sum_of(20 + j, b));
  }
  for (int j = 2; j < 4; ++j) {
    const std::size_t b = j % 2 == 0 ? 100 : 2 * kEager;
    add("any_tag", static_cast<std::size_t>(j), 20 + j, b, sum_of(20 + j, b));
  }
  add("probe", 30, 30, 1000, 0);
  add("recv", 30, 30, 1000, sum_of(30, 1000));
  add("mprobe", 31, 31, 50000, 0);
  add("mrecv", 31, 31, 50000, sum_of(31, 50000));
  for (int rows : {10, 3000}) {
    std::vector<double> col(static_cast<std::size_t>(rows));
    for (int i = 0; i < rows; ++i) col[static_cast<std::size_t>(i)] = (3.0 * i + 1) * 0.5;
    add("column", static_cast<std::size_t>(rows), 40, col.size() * sizeof(double),
        checksum(col.data(), col.size() * sizeof(double)));
  }
  add("replace", 50, 50, 5 * 4096, sum_of(50, 5 * 4096));
  add("issend", 51, 51, 3000, sum_of(51, 3000));
  return t;
}

TEST(P2PPaths, SameScriptSameResultsOnEveryPath) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int intra = ep_p2p::intra_partner(c);
    const int inter = ep_p2p::inter_partner(c);
    const std::vector<std::string> with_self = script(c, c.rank(), 1000);
    const std::vector<std::string> with_thread = script(c, intra, 2000);
    const std::vector<std::string> with_process = script(c, inter, 3000);
    EXPECT_EQ(with_self, expected_script(1000)) << "partner: itself";
    EXPECT_EQ(with_thread, with_self) << "partner " << intra << " (same process)";
    EXPECT_EQ(with_process, with_self)
        << "partner " << inter
        << (ep_p2p::same_process(c, inter) ? " (same process: no second process here)"
                                           : " (other process)");
  });
}

// The same with a 1-byte eager threshold, so every intra-process message
// longer than one byte goes through the rendezvous.
TEST(P2PPaths, SameResultsWithTinyEagerThreshold) {
  ep_test::run_endpoints_with_eager_threshold(1, [](ep::Communicator& c) {
    const std::vector<std::string> with_self = script(c, c.rank(), 1000);
    EXPECT_EQ(with_self, expected_script(1000));
    EXPECT_EQ(script(c, ep_p2p::intra_partner(c), 2000), with_self);
    EXPECT_EQ(script(c, ep_p2p::inter_partner(c), 3000), with_self);
  });
}

// A send to a thread of the same process that waits for its match
// (rendezvous, synchronous) completes while its receiver computes, as MPI's
// progress rule asks: the receives are posted, and the waiting sender takes
// the receiver's arrivals in itself (p2p/matching_engine.hpp). The sender
// first leaves an unreceived eager message on the receiver's arrival stack,
// so that the two waiting sends queue behind it instead of matching at once.
// The receiver looks at the library again only once the sends have
// returned, or after 30 s, when the test fails instead of hanging.
TEST(P2PPaths, WaitingIntraSendsNeedNoPollingReceiver) {
  constexpr int kMaxThreads = 256;
  static std::array<std::atomic<int>, kMaxThreads> posted{};
  static std::array<std::atomic<int>, kMaxThreads> returned{};
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int partner = ep_p2p::intra_partner(c);
    const std::size_t large = 3 * kEager;
    const std::vector<unsigned char> big = step_data(1, large);
    const std::vector<unsigned char> small = step_data(2, 64);
    const std::vector<unsigned char> first = step_data(3, 8);
    const int receiver_thread = c.rank_map().locate(partner).thread;
    if (partner == c.rank()) {
      // No partner thread: the same calls to itself, its receives posted.
      std::vector<unsigned char> in_big(large), in_small(64), in_first(8);
      ep::Request rb = c.irecv(in_big.data(), static_cast<int>(large), MPI_BYTE, c.rank(), 1);
      ep::Request rs = c.irecv(in_small.data(), 64, MPI_BYTE, c.rank(), 2);
      c.send(first.data(), 8, MPI_BYTE, c.rank(), 3);
      c.send(big.data(), static_cast<int>(large), MPI_BYTE, c.rank(), 1);
      c.ssend(small.data(), 64, MPI_BYTE, c.rank(), 2);
      ep::wait(rb);
      ep::wait(rs);
      c.recv(in_first.data(), 8, MPI_BYTE, c.rank(), 3);
      EXPECT_EQ(in_big, big);
      EXPECT_EQ(in_small, small);
      EXPECT_EQ(in_first, first);
      return;
    }
    if (c.local_thread() % 2 == 0) {  // the sender
      while (posted[static_cast<std::size_t>(receiver_thread)].load() == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      c.send(first.data(), 8, MPI_BYTE, partner, 3);  // eager, unreceived for now
      c.send(big.data(), static_cast<int>(large), MPI_BYTE, partner, 1);  // rendezvous
      c.ssend(small.data(), 64, MPI_BYTE, partner, 2);
      returned[static_cast<std::size_t>(receiver_thread)].store(1);
      return;
    }
    std::vector<unsigned char> in_big(large), in_small(64), in_first(8);
    ep::Request rb = c.irecv(in_big.data(), static_cast<int>(large), MPI_BYTE, partner, 1);
    ep::Request rs = c.irecv(in_small.data(), 64, MPI_BYTE, partner, 2);
    const auto me = static_cast<std::size_t>(c.local_thread());
    posted[me].store(1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (returned[me].load() == 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // computing
    }
    EXPECT_EQ(returned[me].load(), 1)
        << "the sends of ep rank " << partner << " waited for this receiver to poll";
    ep::wait(rb);
    ep::wait(rs);
    c.recv(in_first.data(), 8, MPI_BYTE, partner, 3);
    EXPECT_EQ(in_big, big);
    EXPECT_EQ(in_small, small);
    EXPECT_EQ(in_first, first);
  });
}

}  // namespace
