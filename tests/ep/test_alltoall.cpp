// ep::alltoall, ep::alltoallv and ep::alltoallw against closed forms: every
// block carries value(src, dst, i), so each receiver knows what each of its
// blocks must hold. Every test runs on the shape's layout, on an uneven one
// (processes with different endpoint counts) and on a communicator split
// with reversed keys (EP ranks not in process order); sizes span empty
// blocks, small blocks and blocks far above the eager threshold; MPI_IN_PLACE
// and derived (vector) types on either side; mismatched sizes and bad
// arguments raise ep::Error.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <numeric>
#include <optional>
#include <string>
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

// Elements of the block from `src` to `dst` in the alltoallv tests: some
// empty, all different, not symmetric.
int v_count(int src, int dst, int scale) { return ((src * 3 + dst * 5) % 4) * scale; }

// Symmetric counts for in-place alltoallv (what a sends to b is what b
// receives from a, and both read it from the same recvcounts entry).
int sym_count(int a, int b, int scale) { return ((a + b) % 3) * scale; }

// ---- alltoall ---------------------------------------------------------------

void check_alltoall(const ep::Communicator& c, int count, bool in_place) {
  const int n = c.size();
  const int me = c.rank();
  const auto total = static_cast<std::size_t>(n) * static_cast<std::size_t>(count);
  std::vector<int> send(total);
  std::vector<int> recv(total + 1, kUntouched);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < count; ++i) {
      send[static_cast<std::size_t>(j * count + i)] = value(me, j, i);
    }
  }
  if (in_place) {
    std::copy(send.begin(), send.end(), recv.begin());
    ep::alltoall(c, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv.data(), count, MPI_INT);
  } else {
    ep::alltoall(c, send.data(), count, MPI_INT, recv.data(), count, MPI_INT);
  }
  int bad = 0;
  for (int s = 0; s < n; ++s) {
    for (int i = 0; i < count; ++i) {
      const int got = recv[static_cast<std::size_t>(s * count + i)];
      if (got != value(s, me, i) && bad++ == 0) {
        ADD_FAILURE() << "count " << count << (in_place ? " in place" : "") << ": element " << i
                      << " from ep " << s << " is " << got << ", expected " << value(s, me, i);
      }
    }
  }
  EXPECT_EQ(recv[total], kUntouched) << "alltoall wrote past the end of recvbuf";
  EXPECT_EQ(bad, 0);
}

TEST(Alltoall, ClosedFormForEverySize) {
  on_every_layout([](const ep::Communicator& c) {
    for (const int count : {0, 1, 3, 700, 9000}) check_alltoall(c, count, false);
  });
}

TEST(Alltoall, InPlace) {
  on_every_layout([](const ep::Communicator& c) {
    for (const int count : {0, 2, 9000}) check_alltoall(c, count, true);
  });
}

TEST(Alltoall, VectorSendTypeContiguousReceive) {
  // One element of the send type is 3 ints spaced 2 apart (extent 5 ints);
  // the receiver takes them as 3 contiguous ints.
  const Type strided(ep_a2a::int_vector(3, 1, 2));
  on_every_layout([&](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    constexpr int kExtent = 5;
    std::vector<int> send(static_cast<std::size_t>(n * kExtent), kUntouched);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < 3; ++i)
        send[static_cast<std::size_t>(j * kExtent + 2 * i)] = value(me, j, i);
    }
    std::vector<int> recv(static_cast<std::size_t>(n * 3), kUntouched);
    ep::alltoall(c, send.data(), 1, strided, recv.data(), 3, MPI_INT);
    for (int s = 0; s < n; ++s) {
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(recv[static_cast<std::size_t>(s * 3 + i)], value(s, me, i))
            << "element " << i << " from ep " << s;
      }
    }
  });
}

// ---- alltoallv --------------------------------------------------------------

// Buffers of an alltoallv with v_count(): send blocks packed in reverse rank
// order, receive blocks spaced with a gap of `gap` untouched ints.
struct VLayout {
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  int send_total = 0;
  int recv_total = 0;
};

VLayout v_layout(const ep::Communicator& c, int scale, int gap) {
  const int n = c.size();
  const int me = c.rank();
  VLayout l;
  l.scounts.resize(static_cast<std::size_t>(n));
  l.sdispls.resize(static_cast<std::size_t>(n));
  l.rcounts.resize(static_cast<std::size_t>(n));
  l.rdispls.resize(static_cast<std::size_t>(n));
  for (int j = n - 1; j >= 0; --j) {
    l.scounts[static_cast<std::size_t>(j)] = v_count(me, j, scale);
    l.sdispls[static_cast<std::size_t>(j)] = l.send_total;
    l.send_total += v_count(me, j, scale);
  }
  for (int s = 0; s < n; ++s) {
    l.rcounts[static_cast<std::size_t>(s)] = v_count(s, me, scale);
    l.rdispls[static_cast<std::size_t>(s)] = l.recv_total + gap;
    l.recv_total += gap + v_count(s, me, scale);
  }
  l.recv_total += gap;
  return l;
}

TEST(Alltoallv, ClosedFormWithGapsAndEmptyBlocks) {
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    for (const int scale : {1, 3000}) {
      const VLayout l = v_layout(c, scale, 2);
      std::vector<int> send(static_cast<std::size_t>(l.send_total));
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < l.scounts[static_cast<std::size_t>(j)]; ++i) {
          send[static_cast<std::size_t>(l.sdispls[static_cast<std::size_t>(j)] + i)] =
              value(me, j, i, 1);
        }
      }
      std::vector<int> recv(static_cast<std::size_t>(l.recv_total), kUntouched);
      ep::alltoallv(c, send.data(), l.scounts, l.sdispls, MPI_INT, recv.data(), l.rcounts,
                    l.rdispls, MPI_INT);
      std::vector<int> expected(recv.size(), kUntouched);
      for (int s = 0; s < n; ++s) {
        for (int i = 0; i < l.rcounts[static_cast<std::size_t>(s)]; ++i) {
          expected[static_cast<std::size_t>(l.rdispls[static_cast<std::size_t>(s)] + i)] =
              value(s, me, i, 1);
        }
      }
      EXPECT_EQ(recv, expected) << "scale " << scale;
    }
  });
}

TEST(Alltoallv, AllCountsZero) {
  on_every_layout([](const ep::Communicator& c) {
    const std::vector<int> zeros(static_cast<std::size_t>(c.size()), 0);
    int sentinel = kUntouched;
    ep::alltoallv(c, nullptr, zeros, zeros, MPI_INT, &sentinel, zeros, zeros, MPI_INT);
    EXPECT_EQ(sentinel, kUntouched);
  });
}

TEST(Alltoallv, InPlaceSymmetricCounts) {
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    for (const int scale : {1, 4000}) {
      std::vector<int> counts(static_cast<std::size_t>(n));
      std::vector<int> displs(static_cast<std::size_t>(n));
      int total = 1;                      // one untouched int first
      for (int j = n - 1; j >= 0; --j) {  // blocks in reverse order
        counts[static_cast<std::size_t>(j)] = sym_count(me, j, scale);
        displs[static_cast<std::size_t>(j)] = total;
        total += counts[static_cast<std::size_t>(j)] + 1;
      }
      std::vector<int> buf(static_cast<std::size_t>(total), kUntouched);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < counts[static_cast<std::size_t>(j)]; ++i) {
          buf[static_cast<std::size_t>(displs[static_cast<std::size_t>(j)] + i)] =
              value(me, j, i, 2);
        }
      }
      ep::alltoallv(c, MPI_IN_PLACE, {}, {}, MPI_DATATYPE_NULL, buf.data(), counts, displs,
                    MPI_INT);
      std::vector<int> expected(buf.size(), kUntouched);
      for (int s = 0; s < n; ++s) {
        for (int i = 0; i < counts[static_cast<std::size_t>(s)]; ++i) {
          expected[static_cast<std::size_t>(displs[static_cast<std::size_t>(s)] + i)] =
              value(s, me, i, 2);
        }
      }
      EXPECT_EQ(buf, expected) << "scale " << scale;
    }
  });
}

// An alltoallv in which endpoint j sends count(j, k) ints to endpoint k,
// as endpoint `me` of `n` sees it: packed counts and displacements, a send
// buffer holding value(me, k, i, salt) and a receive buffer (the send data
// in place, else untouched values). wrong() counts the received elements
// that are not what their sender sent and reports the first.
struct CountedExchange {
  std::vector<int> scounts, sdispls, rcounts, rdispls, send, recv;

  template <class Count>
  CountedExchange(int n, int me, int salt, bool in_place, Count&& count)
      : scounts(static_cast<std::size_t>(n)),
        sdispls(static_cast<std::size_t>(n)),
        rcounts(static_cast<std::size_t>(n)),
        rdispls(static_cast<std::size_t>(n)) {
    int stotal = 0;
    int rtotal = 0;
    for (int j = 0; j < n; ++j) {
      const auto ji = static_cast<std::size_t>(j);
      scounts[ji] = count(me, j);
      sdispls[ji] = stotal;
      stotal += scounts[ji];
      rcounts[ji] = count(j, me);
      rdispls[ji] = rtotal;
      rtotal += rcounts[ji];
    }
    send.resize(static_cast<std::size_t>(stotal));
    for (int j = 0; j < n; ++j) {
      const auto ji = static_cast<std::size_t>(j);
      for (int i = 0; i < scounts[ji]; ++i) {
        send[static_cast<std::size_t>(sdispls[ji] + i)] = value(me, j, i, salt);
      }
    }
    recv = in_place ? send : std::vector<int>(static_cast<std::size_t>(rtotal), kUntouched);
  }

  void run(const ep::Communicator& c, bool in_place) {
    if (in_place) {
      ep::alltoallv(c, MPI_IN_PLACE, {}, {}, MPI_DATATYPE_NULL, recv.data(), rcounts, rdispls,
                    MPI_INT);
    } else {
      ep::alltoallv(c, send.data(), scounts, sdispls, MPI_INT, recv.data(), rcounts, rdispls,
                    MPI_INT);
    }
  }

  [[nodiscard]] int wrong(int me, int salt, const std::string& where) const {
    int bad = 0;
    for (std::size_t j = 0; j < rcounts.size(); ++j) {
      for (int i = 0; i < rcounts[j]; ++i) {
        const int got = recv[static_cast<std::size_t>(rdispls[j] + i)];
        if (got != value(static_cast<int>(j), me, i, salt) && bad++ == 0) {
          ADD_FAILURE() << where << ": element " << i << " of " << rcounts[j] << " from " << j
                        << " is " << got;
        }
      }
    }
    return bad;
  }
};

// Within one process (each process's endpoints split off) the threads
// stage small blocks and read each other's staging, and read larger ones
// straight from their sender's buffer; in place, when one thread's blocks
// do not fit its staging, every thread must take the other path with it.
// Blocks from one thread far larger than the others' (and all small), in
// place and not, over many rounds with the large sender changing, so the
// paths alternate within one team.
TEST(Alltoallv, StagedAndLargeExchangesWithinAProcess) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    int bad = 0;
    for (int round = 0; round < 24; ++round) {
      const int large = round % 3 == 2 ? -1 : (round / 3) % n;  // -1: every block small
      const bool in_place = round % 2 == 1;
      // Block j -> k has count(j, k) ints: 5000 from the large sender, else 1 + (j + k) % 3;
      // in place the counts must be symmetric, so the large one's blocks go both ways.
      CountedExchange x(n, me, round, in_place, [&](int j, int k) {
        if (j == large || (in_place && k == large)) return 5000;
        return 1 + (j + k) % 3;
      });
      x.run(c, in_place);
      bad += x.wrong(me, round, "round " + std::to_string(round));
    }
    EXPECT_EQ(bad, 0);
  });
}

// Within one process, a sender whose blocks for the other threads fit
// kInlineBytes (2 KiB in all) stages them, a larger one leaves them in its
// send buffer and waits for its readers before it returns, its block to
// itself is copied directly, and in place one that does not fit the
// staging (16 KiB) sends every thread down another path.
// Block sizes (in ints) straddle those limits per sender and per round,
// empty blocks among them; one thread comes late every few rounds; every
// sender overwrites its send buffer as soon as the call returns, so a
// reader still copying from it would see the overwrite.
TEST(Alltoallv, BlocksAroundTheStagingLimitsWithinAProcess) {
  constexpr int kSizes[] = {0,   1,   63,  64,   65,   255,  256,  257,
                            511, 512, 513, 1023, 1024, 1025, 2048, 4100};
  constexpr int kKinds = sizeof kSizes / sizeof kSizes[0];
  ep_test::run_within_each_process([&](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    int bad = 0;
    for (int round = 0; round < 3 * kKinds; ++round) {
      const bool in_place = round % 3 == 2;
      // In place the counts must be symmetric.
      CountedExchange x(n, me, round, in_place, [&](int j, int k) {
        return kSizes[(round + (in_place ? j + k : 3 * j + k)) % kKinds];
      });
      if (round % 4 == 0 && me == (round / 4) % n) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a late thread
      }
      x.run(c, in_place);
      if (!in_place) std::fill(x.send.begin(), x.send.end(), -1);  // the caller's again
      bad += x.wrong(me, round, "round " + std::to_string(round) + (in_place ? " in place" : ""));
    }
    EXPECT_EQ(bad, 0);
  });
}

// Within one process, blocks too large to stage are read from their
// sender's buffer, and the sender may not return before its readers are
// done. Here the first endpoint receives 1 MiB from every other one and
// sends them 4 bytes each, so the others have nothing to copy and would
// return (and overwrite their send buffers) long before it has finished
// reading them, unless they wait for it.
TEST(Alltoallv, SendersWaitForTheirReadersWithinAProcess) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    constexpr int kLarge = 256 * 1024;
    int bad = 0;
    for (int round = 0; round < 6; ++round) {
      CountedExchange x(n, me, round, false,
                        [](int j, int k) { return k == 0 && j != 0 ? kLarge : 1; });
      x.run(c, false);
      std::fill(x.send.begin(), x.send.end(), -1);
      bad += x.wrong(me, round, "round " + std::to_string(round));
    }
    EXPECT_EQ(bad, 0);
  });
}

TEST(Alltoallv, VectorTypesOnBothSides) {
  // Both types carry 2 ints per element (same signature, so counts match):
  // sent from ints 0 and 3 of a 4-int extent, received into ints 0 and 2 of
  // a 3-int extent.
  const Type send_type(ep_a2a::int_vector(2, 1, 3));  // ints at 0 and 3, extent 4
  const Type recv_type(ep_a2a::int_vector(2, 1, 2));  // ints at 0 and 2, extent 3
  on_every_layout([&](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    constexpr int kSendExtent = 4;
    constexpr int kRecvExtent = 3;
    for (const int scale : {1, 1500}) {
      // Counts in elements of the types (2 ints each).
      std::vector<int> scounts(static_cast<std::size_t>(n));
      std::vector<int> sdispls(static_cast<std::size_t>(n));
      std::vector<int> rcounts(static_cast<std::size_t>(n));
      std::vector<int> rdispls(static_cast<std::size_t>(n));
      int send_elems = 0;
      int recv_elems = 0;
      for (int j = 0; j < n; ++j) {
        scounts[static_cast<std::size_t>(j)] = v_count(me, j, scale);
        sdispls[static_cast<std::size_t>(j)] = send_elems;
        send_elems += scounts[static_cast<std::size_t>(j)];
        rcounts[static_cast<std::size_t>(j)] = v_count(j, me, scale);
        rdispls[static_cast<std::size_t>(j)] = recv_elems + 1;  // one element gap
        recv_elems += rcounts[static_cast<std::size_t>(j)] + 1;
      }
      std::vector<int> send(static_cast<std::size_t>(send_elems * kSendExtent + 1), kUntouched);
      for (int j = 0; j < n; ++j) {
        for (int e = 0; e < scounts[static_cast<std::size_t>(j)]; ++e) {
          const int at = (sdispls[static_cast<std::size_t>(j)] + e) * kSendExtent;
          send[static_cast<std::size_t>(at)] = value(me, j, 2 * e, 3);
          send[static_cast<std::size_t>(at + 3)] = value(me, j, 2 * e + 1, 3);
        }
      }
      std::vector<int> recv(static_cast<std::size_t>(recv_elems * kRecvExtent + 1), kUntouched);
      ep::alltoallv(c, send.data(), scounts, sdispls, send_type, recv.data(), rcounts, rdispls,
                    recv_type);
      std::vector<int> expected(recv.size(), kUntouched);
      for (int s = 0; s < n; ++s) {
        for (int e = 0; e < rcounts[static_cast<std::size_t>(s)]; ++e) {
          const int at = (rdispls[static_cast<std::size_t>(s)] + e) * kRecvExtent;
          expected[static_cast<std::size_t>(at)] = value(s, me, 2 * e, 3);
          expected[static_cast<std::size_t>(at + 2)] = value(s, me, 2 * e + 1, 3);
        }
      }
      EXPECT_EQ(recv, expected) << "scale " << scale;
    }
  });
}

// ---- alltoallw --------------------------------------------------------------

// Where int `k` of a block lies from the block's start: contiguous
// (spacing 0), or in elements of 2 ints `spacing` apart (ep_a2a::int_vector(2,
// 1, spacing), extent spacing + 1 ints).
std::size_t int_of_block(int k, int spacing) {
  const int at = spacing == 0 ? k : (k / 2) * (spacing + 1) + (k % 2) * spacing;
  return static_cast<std::size_t>(at);
}

TEST(Alltoallw, PerPeerTypesByteDisplacementsAndNullTypesForEmptyBlocks) {
  // To even EP ranks: contiguous ints. To odd EP ranks: elements of 2 ints
  // spaced 3 apart. Received as contiguous ints from even ranks and as
  // elements of 2 ints spaced 2 apart from odd ones. Blocks of count 0 name
  // MPI_DATATYPE_NULL.
  const Type spaced3(ep_a2a::int_vector(2, 1, 3));  // extent 4 ints
  const Type spaced2(ep_a2a::int_vector(2, 1, 2));  // extent 3 ints
  on_every_layout([&](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    for (const int scale : {1, 2000}) {
      const auto un = static_cast<std::size_t>(n);
      std::vector<int> scounts(un), sdispls(un), rcounts(un), rdispls(un);
      std::vector<MPI_Datatype> stypes(un), rtypes(un);
      // Element counts: ints for MPI_INT, pairs for the vectors.
      std::size_t send_ints = 0;
      std::size_t recv_ints = 1;
      for (int j = 0; j < n; ++j) {
        const auto ju = static_cast<std::size_t>(j);
        const int pairs_out = v_count(me, j, scale);
        const int pairs_in = v_count(j, me, scale);
        const bool odd_dest = j % 2 == 1;
        scounts[ju] = odd_dest ? pairs_out : 2 * pairs_out;
        stypes[ju] =
            pairs_out == 0 ? MPI_DATATYPE_NULL : (odd_dest ? MPI_Datatype(spaced3) : MPI_INT);
        sdispls[ju] = static_cast<int>(send_ints * sizeof(int));
        send_ints += static_cast<std::size_t>(odd_dest ? 4 * pairs_out : 2 * pairs_out);
        const bool odd_source = j % 2 == 1;
        rcounts[ju] = odd_source ? pairs_in : 2 * pairs_in;
        rtypes[ju] =
            pairs_in == 0 ? MPI_DATATYPE_NULL : (odd_source ? MPI_Datatype(spaced2) : MPI_INT);
        rdispls[ju] = static_cast<int>(recv_ints * sizeof(int));
        recv_ints += static_cast<std::size_t>(odd_source ? 3 * pairs_in : 2 * pairs_in) + 1;
      }
      std::vector<int> send(send_ints + 1, kUntouched);
      for (int j = 0; j < n; ++j) {
        const auto ju = static_cast<std::size_t>(j);
        const std::size_t base = static_cast<std::size_t>(sdispls[ju]) / sizeof(int);
        for (int k = 0; k < 2 * v_count(me, j, scale); ++k) {
          send[base + int_of_block(k, j % 2 == 1 ? 3 : 0)] = value(me, j, k, 4);
        }
      }
      std::vector<int> recv(recv_ints, kUntouched);
      ep::alltoallw(c, send.data(), scounts, sdispls, stypes, recv.data(), rcounts, rdispls,
                    rtypes);
      std::vector<int> expected(recv_ints, kUntouched);
      for (int s = 0; s < n; ++s) {
        const auto su = static_cast<std::size_t>(s);
        const std::size_t base = static_cast<std::size_t>(rdispls[su]) / sizeof(int);
        for (int k = 0; k < 2 * v_count(s, me, scale); ++k) {
          expected[base + int_of_block(k, s % 2 == 1 ? 2 : 0)] = value(s, me, k, 4);
        }
      }
      EXPECT_EQ(recv, expected) << "scale " << scale;
    }
  });
}

TEST(Alltoallw, InPlace) {
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    const auto un = static_cast<std::size_t>(n);
    std::vector<int> counts(un), displs(un);
    const std::vector<MPI_Datatype> types(un, MPI_INT);
    int total = 0;
    for (int j = 0; j < n; ++j) {
      counts[static_cast<std::size_t>(j)] = sym_count(me, j, 5);
      displs[static_cast<std::size_t>(j)] = total * static_cast<int>(sizeof(int));
      total += counts[static_cast<std::size_t>(j)];
    }
    std::vector<int> buf(static_cast<std::size_t>(total));
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < counts[static_cast<std::size_t>(j)]; ++i) {
        buf[static_cast<std::size_t>(displs[static_cast<std::size_t>(j)]) / sizeof(int) +
            static_cast<std::size_t>(i)] = value(me, j, i, 5);
      }
    }
    ep::alltoallw(c, MPI_IN_PLACE, {}, {}, {}, buf.data(), counts, displs, types);
    for (int s = 0; s < n; ++s) {
      for (int i = 0; i < counts[static_cast<std::size_t>(s)]; ++i) {
        EXPECT_EQ(buf[static_cast<std::size_t>(displs[static_cast<std::size_t>(s)]) / sizeof(int) +
                      static_cast<std::size_t>(i)],
                  value(s, me, i, 5))
            << "element " << i << " from ep " << s;
      }
    }
  });
}

// ---- repeated calls and errors ------------------------------------------

TEST(Alltoall, BackToBackCallsStayApart) {
  // Successive calls reuse nothing stale: each round carries its own salt.
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    for (int round = 0; round < 20; ++round) {
      const int count = 1 + round % 4;
      std::vector<int> send(static_cast<std::size_t>(n * count));
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < count; ++i)
          send[static_cast<std::size_t>(j * count + i)] = value(me, j, i, round);
      }
      std::vector<int> recv(send.size(), kUntouched);
      ep::alltoall(c, send.data(), count, MPI_INT, recv.data(), count, MPI_INT);
      for (int s = 0; s < n; ++s) {
        for (int i = 0; i < count; ++i) {
          // EXPECT, not ASSERT: an endpoint that returned here would leave
          // the others waiting for it in the next round's alltoall.
          EXPECT_EQ(recv[static_cast<std::size_t>(s * count + i)], value(s, me, i, round))
              << "round " << round << " block " << s << " item " << i;
        }
      }
    }
  });
}

TEST(AlltoallErrors, BadArgumentsOnEveryEndpoint) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    std::vector<int> buf(static_cast<std::size_t>(n) * 4);
    try {
      ep::alltoall(c, buf.data(), -1, MPI_INT, buf.data(), 1, MPI_INT);
      ADD_FAILURE() << "negative sendcount accepted";
    } catch (const ep::Error& e) {
      EXPECT_EQ(e.kind(), ep::ErrorKind::kCount) << e.what();
      EXPECT_NE(std::string(e.what()).find("ep::alltoall"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("-1"), std::string::npos) << e.what();
    }
    const std::vector<int> short_counts(static_cast<std::size_t>(n - 1 > 0 ? n - 1 : 0), 1);
    const std::vector<int> counts(static_cast<std::size_t>(n), 1);
    try {
      ep::alltoallv(c, buf.data(), short_counts, counts, MPI_INT, buf.data(), counts, counts,
                    MPI_INT);
      ADD_FAILURE() << "sendcounts shorter than the communicator accepted";
    } catch (const ep::Error& e) {
      EXPECT_EQ(e.kind(), ep::ErrorKind::kArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("sendcounts"), std::string::npos) << e.what();
    }
    try {
      ep::alltoall(c, buf.data(), 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT);
      ADD_FAILURE() << "recvbuf MPI_IN_PLACE accepted";
    } catch (const ep::Error& e) {
      EXPECT_EQ(e.kind(), ep::ErrorKind::kArgument) << e.what();
    }
  });
}

TEST(AlltoallErrors, ReceiverExpectingMoreThanSentIsReported) {
  // Every endpoint sends 1 int per peer and expects 2: every receiver sees
  // the mismatch (between threads directly, between processes in the size
  // of what arrives), so every endpoint throws, in every layout.
  on_every_layout([](const ep::Communicator& c) {
    const int n = c.size();
    std::vector<int> send(static_cast<std::size_t>(n), 1);
    std::vector<int> recv(static_cast<std::size_t>(n) * 2, 0);
    try {
      ep::alltoall(c, send.data(), 1, MPI_INT, recv.data(), 2, MPI_INT);
      ADD_FAILURE() << "size mismatch not reported";
    } catch (const ep::Error& e) {
      EXPECT_EQ(e.kind(), ep::ErrorKind::kCount) << e.what();
      EXPECT_NE(std::string(e.what()).find("4 bytes"), std::string::npos) << e.what();
    }
  });
}

// Within one process (each process's endpoints split off, in reverse
// order) only the block from the process's last endpoint to its first
// disagrees (4 bytes sent, 8 expected): every endpoint of the process
// throws that error, naming both EP ranks and both sizes, and every other
// block has arrived. alltoall and alltoallv.
TEST(AlltoallErrors, OneMismatchedPairWithinAProcessFailsTheProcess) {
  ep_test::run_endpoints([](ep::Communicator& world) {
    ep::Communicator c = ep::split(world, world.process_rank(), -world.local_thread());
    const int n = c.size();
    const int me = c.rank();
    const int first = 0;
    const int last = n - 1;
    for (const bool vector_form : {false, true}) {
      SCOPED_TRACE(vector_form ? "alltoallv" : "alltoall");
      std::vector<int> send(static_cast<std::size_t>(n) * 2);
      std::vector<int> recv(send.size(), kUntouched);
      std::vector<int> sendcounts(static_cast<std::size_t>(n), 1);
      std::vector<int> recvcounts(static_cast<std::size_t>(n), 1);
      std::vector<int> displs(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) {
        displs[static_cast<std::size_t>(j)] = 2 * j;
        send[static_cast<std::size_t>(2 * j)] = value(me, j, 0);
      }
      if (me == first) recvcounts[static_cast<std::size_t>(last)] = 2;
      try {
        if (vector_form) {
          ep::alltoallv(c, send.data(), sendcounts, displs, MPI_INT, recv.data(), recvcounts,
                        displs, MPI_INT);
        } else {
          // alltoall cannot express one odd block: the first endpoint
          // expects 2 ints from every peer there, so every block to it
          // disagrees, the first of them (from EP rank 0, itself) is named.
          ep::alltoall(c, send.data(), 1, MPI_INT, recv.data(), me == first ? 2 : 1, MPI_INT);
        }
        ADD_FAILURE() << "size mismatch not reported";
      } catch (const ep::Error& e) {
        EXPECT_EQ(e.kind(), ep::ErrorKind::kCount) << e.what();
        const int from = vector_form ? last : first;
        EXPECT_NE(std::string(e.what()).find("block from ep rank " + std::to_string(from) +
                                             " to ep rank " + std::to_string(first) +
                                             " carries 4 bytes but the receiver expects 8"),
                  std::string::npos)
            << e.what();
      }
      if (vector_form) {
        // Every block but the mismatched one is whole; that one got what fits.
        for (int j = 0; j < n; ++j) {
          EXPECT_EQ(recv[static_cast<std::size_t>(2 * j)], value(j, me, 0)) << "from " << j;
        }
      }
    }
    c.free();
  });
}

// The same with blocks of 2 KiB, which their senders leave in their send
// buffers (too large to stage): the first endpoint expects one int fewer
// (kTruncate) or one more (kCount) from the last. Every endpoint of the
// process throws, naming the call, both EP ranks and both sizes; the
// mismatched block got what fits, every other block is whole.
TEST(AlltoallErrors, MismatchedLargeBlockWithinAProcessFailsTheProcess) {
  ep_test::run_endpoints([](ep::Communicator& world) {
    ep::Communicator c = ep::split(world, world.process_rank(), -world.local_thread());
    const int n = c.size();
    const int me = c.rank();
    const int last = n - 1;
    constexpr int kBlock = 512;
    for (const int change : {-1, 1}) {
      SCOPED_TRACE(change < 0 ? "one int fewer expected" : "one int more expected");
      std::vector<int> send(static_cast<std::size_t>(n) * (kBlock + 1));
      std::vector<int> recv(send.size(), kUntouched);
      std::vector<int> sendcounts(static_cast<std::size_t>(n), kBlock);
      std::vector<int> recvcounts(static_cast<std::size_t>(n), kBlock);
      std::vector<int> displs(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) {
        displs[static_cast<std::size_t>(j)] = (kBlock + 1) * j;
        for (int i = 0; i < kBlock; ++i) {
          send[static_cast<std::size_t>((kBlock + 1) * j + i)] = value(me, j, i);
        }
      }
      if (me == 0) recvcounts[static_cast<std::size_t>(last)] += change;
      try {
        ep::alltoallv(c, send.data(), sendcounts, displs, MPI_INT, recv.data(), recvcounts, displs,
                      MPI_INT);
        ADD_FAILURE() << "size mismatch not reported";
      } catch (const ep::Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), change < 0 ? ep::ErrorKind::kTruncate : ep::ErrorKind::kCount) << what;
        EXPECT_NE(what.find("ep::alltoallv"), std::string::npos) << what;
        const std::string expected_text = "block from ep rank " + std::to_string(last) +
                                          " to ep rank 0 carries " + std::to_string(kBlock * 4) +
                                          " bytes but the receiver expects " +
                                          std::to_string((kBlock + change) * 4);
        EXPECT_NE(what.find(expected_text), std::string::npos) << what;
      }
      for (int j = 0; j < n; ++j) {
        const int whole = me == 0 && j == last ? std::min(kBlock, kBlock + change) : kBlock;
        int bad = 0;
        for (int i = 0; i < whole; ++i) {
          if (recv[static_cast<std::size_t>((kBlock + 1) * j + i)] != value(j, me, i)) ++bad;
        }
        EXPECT_EQ(bad, 0) << "block from " << j;
      }
    }
    c.free();
  });
}

// The ep::Error `call` throws (none: nullopt).
template <class Call>
std::optional<ep::Error> thrown_by(Call&& call) {
  try {
    call();
  } catch (const ep::Error& e) {
    return e;
  }
  return std::nullopt;
}

// A block whose two sides disagree is an ep::Error even when the two sides
// are in different processes, in every layout, one endpoint per process
// included (where MPI's own collective would abort the job, or, on MPICH,
// deliver wrong data without a word).
// Every endpoint sends 2 ints to every peer; EP rank 0 expects 1 from the
// last rank (more sent than expected: kTruncate) and the last rank expects
// 3 from rank 0 (less: kCount). The endpoints of the processes that hold
// those two ranks throw; every other endpoint completes with its data.
// `exchange(c, blocks)` makes the call, `name` is what its errors name.
struct VBlocks {
  std::vector<int> send, sendcounts, sdispls;
  std::vector<int> recv, recvcounts, rdispls;
};

template <class Exchange>
void expect_mismatch_across_processes_reported(const char* name, Exchange&& exchange) {
  on_every_layout([&](const ep::Communicator& c) {
    if (c.size() < 2) return;  // the same on every endpoint
    const int n = c.size();
    const int r = c.rank();
    const int last = n - 1;
    constexpr int kRoom = 3;
    auto sent = [](int from, int to, int k) { return from * 1000 + to * 10 + k; };
    VBlocks blocks{std::vector<int>(static_cast<std::size_t>(n) * 2),
                   std::vector<int>(static_cast<std::size_t>(n), 2),
                   std::vector<int>(static_cast<std::size_t>(n)),
                   std::vector<int>(static_cast<std::size_t>(n) * kRoom, -1),
                   std::vector<int>(static_cast<std::size_t>(n), 2),
                   std::vector<int>(static_cast<std::size_t>(n))};
    auto& [send, sendcounts, sdispls, recv, recvcounts, rdispls] = blocks;
    for (int j = 0; j < n; ++j) {
      const auto ji = static_cast<std::size_t>(j);
      sdispls[ji] = 2 * j;
      rdispls[ji] = kRoom * j;
      send[2 * ji] = sent(r, j, 0);
      send[2 * ji + 1] = sent(r, j, 1);
    }
    if (r == 0) recvcounts[static_cast<std::size_t>(last)] = 1;
    if (r == last) recvcounts[0] = 3;
    const std::optional<ep::Error> error = thrown_by([&] { exchange(c, blocks); });
    const int first_process = c.rank_map().locate(0).process;
    const int last_process = c.rank_map().locate(last).process;
    const int mine = c.process_rank();
    if (mine != first_process && mine != last_process) {
      EXPECT_FALSE(error) << "a process without a mismatched block threw: " << error->what();
      for (int j = 0; j < n; ++j) {
        const auto at = static_cast<std::size_t>(kRoom * j);
        EXPECT_EQ(recv[at], sent(j, r, 0)) << "block from ep rank " << j;
        EXPECT_EQ(recv[at + 1], sent(j, r, 1)) << "block from ep rank " << j;
      }
      return;
    }
    if (!error) {
      ADD_FAILURE() << "the mismatched block was not reported on ep rank " << r;
      return;
    }
    const std::string what = error->what();
    EXPECT_NE(what.find(name), std::string::npos) << what;
    if (first_process == last_process) {
      EXPECT_TRUE(error->kind() == ep::ErrorKind::kTruncate ||
                  error->kind() == ep::ErrorKind::kCount)
          << what;
    } else if (mine == first_process) {
      EXPECT_EQ(error->kind(), ep::ErrorKind::kTruncate) << what;
      EXPECT_NE(what.find("ep rank " + std::to_string(last)), std::string::npos) << what;
    } else {
      EXPECT_EQ(error->kind(), ep::ErrorKind::kCount) << what;
      EXPECT_NE(what.find("to ep rank " + std::to_string(last)), std::string::npos) << what;
    }
  });
}

TEST(AlltoallErrors, MismatchAcrossProcessesIsReported) {
  expect_mismatch_across_processes_reported(
      "ep::alltoallv", [](const ep::Communicator& c, VBlocks& b) {
        ep::alltoallv(c, b.send.data(), b.sendcounts, b.sdispls, MPI_INT, b.recv.data(),
                      b.recvcounts, b.rdispls, MPI_INT);
      });
}

// The same through the nonblocking form: its segments are received at the
// size they were sent (a matched probe), so MPI never sees the mismatch
// either, and the request's wait throws it.
TEST(AlltoallErrors, NonblockingMismatchAcrossProcessesIsReported) {
  expect_mismatch_across_processes_reported(
      "ep::ialltoallv", [](const ep::Communicator& c, VBlocks& b) {
        ep::Request request = ep::ialltoallv(c, b.send.data(), b.sendcounts, b.sdispls, MPI_INT,
                                             b.recv.data(), b.recvcounts, b.rdispls, MPI_INT);
        ep::wait(request);
      });
}

// The same blocks through alltoallw (displacements in bytes, one type per
// peer) and ialltoallw.
struct WBlocks {
  std::vector<int> sdispls, rdispls;  // in bytes
  std::vector<MPI_Datatype> types;
  explicit WBlocks(const VBlocks& b)
      : sdispls(b.sdispls), rdispls(b.rdispls), types(b.sendcounts.size(), MPI_INT) {
    for (int& d : sdispls) d *= static_cast<int>(sizeof(int));
    for (int& d : rdispls) d *= static_cast<int>(sizeof(int));
  }
};

TEST(AlltoallErrors, AlltoallwMismatchAcrossProcessesIsReported) {
  expect_mismatch_across_processes_reported(
      "ep::alltoallw", [](const ep::Communicator& c, VBlocks& b) {
        const WBlocks w(b);
        ep::alltoallw(c, b.send.data(), b.sendcounts, w.sdispls, w.types, b.recv.data(),
                      b.recvcounts, w.rdispls, w.types);
      });
  expect_mismatch_across_processes_reported(
      "ep::ialltoallw", [](const ep::Communicator& c, VBlocks& b) {
        const WBlocks w(b);
        ep::Request request = ep::ialltoallw(c, b.send.data(), b.sendcounts, w.sdispls, w.types,
                                             b.recv.data(), b.recvcounts, w.rdispls, w.types);
        ep::wait(request);
      });
}

// The rooted and all-gathering forms: EP rank 0 (the root, or a receiver of
// every block) expects 1 int from the last rank, which sends 2. The error
// belongs to the receiving side: gatherv's root process (every endpoint of
// it, as the block exchange fails its whole process) and scatterv's last
// rank's process throw kTruncate naming the other rank; for allgatherv every
// endpoint of rank 0's process expects the short block, and each of them
// throws (a process's endpoints must agree on the counts). Every other
// endpoint completes with its data. Only mismatches across processes are
// checked here (within a process the copy reports them as before).
// Each case moves blocks of 2 ints, block j at element 2j: `counts` and
// `displs` describe them (the tests shorten one count), `send` is this
// rank's own block {10r, 10r + 1} and `recv` room for one block per rank.
struct RankCase {
  int n, r, last;
  int first_process, last_process, mine;
  std::vector<int> send, counts, displs, recv;
  explicit RankCase(const ep::Communicator& c)
      : n(c.size()),
        r(c.rank()),
        last(c.size() - 1),
        first_process(c.rank_map().locate(0).process),
        last_process(c.rank_map().locate(c.size() - 1).process),
        mine(c.process_rank()),
        send{r * 10, r * 10 + 1},
        counts(static_cast<std::size_t>(n), 2),
        displs(static_cast<std::size_t>(n)),
        recv(static_cast<std::size_t>(n) * 2, -1) {
    for (int j = 0; j < n; ++j) displs[static_cast<std::size_t>(j)] = 2 * j;
  }
  [[nodiscard]] bool across_processes() const { return first_process != last_process; }
};

// Runs `body(c, k)` with a fresh RankCase `k` in every layout where the
// first and the last EP rank live on different processes (a mismatch between
// them crosses MPI). Collective over MPI_COMM_WORLD.
template <class Body>
void on_layouts_across_processes(Body&& body) {
  on_every_layout([&](const ep::Communicator& c) {
    RankCase k(c);
    if (k.across_processes()) body(c, k);
  });
}

// Checks that `error` is there exactly when `expected`, and names `call`
// and `other` (the EP rank at the other end of the bad block).
void expect_reported_if(bool expected, const std::optional<ep::Error>& error, const char* call,
                        int other, int r) {
  if (!expected) {
    EXPECT_FALSE(error) << "ep rank " << r << " threw: " << error->what();
    return;
  }
  if (!error) {
    ADD_FAILURE() << "the mismatched block was not reported on ep rank " << r;
    return;
  }
  const std::string what = error->what();
  EXPECT_EQ(error->kind(), ep::ErrorKind::kTruncate) << what;
  EXPECT_NE(what.find(call), std::string::npos) << what;
  std::string lower = what;  // "ep rank" or "EP rank"
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  EXPECT_NE(lower.find("ep rank " + std::to_string(other)), std::string::npos) << what;
}

template <class Gather>
void expect_gatherv_mismatch_reported(const char* name, Gather&& gather) {
  on_layouts_across_processes([&](const ep::Communicator& c, RankCase& k) {
    k.counts[static_cast<std::size_t>(k.last)] = 1;
    const std::optional<ep::Error> error =
        thrown_by([&] { gather(c, k.send, k.recv, k.counts, k.displs); });
    expect_reported_if(k.mine == k.first_process, error, name, k.last, k.r);
  });
}

TEST(AlltoallErrors, GathervMismatchAcrossProcessesIsReported) {
  expect_gatherv_mismatch_reported(
      "ep::gatherv", [](const ep::Communicator& c, const auto& send, auto& recv, const auto& counts,
                        const auto& displs) {
        ep::gatherv(c, send.data(), 2, MPI_INT, recv.data(), counts, displs, MPI_INT, 0);
      });
  expect_gatherv_mismatch_reported(
      "ep::igatherv", [](const ep::Communicator& c, const auto& send, auto& recv,
                         const auto& counts, const auto& displs) {
        ep::Request request =
            ep::igatherv(c, send.data(), 2, MPI_INT, recv.data(), counts, displs, MPI_INT, 0);
        ep::wait(request);
      });
}

template <class Scatter>
void expect_scatterv_mismatch_reported(const char* name, Scatter&& scatter) {
  on_layouts_across_processes([&](const ep::Communicator& c, RankCase& k) {
    std::vector<int> send(static_cast<std::size_t>(k.n) * 2);
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<int>(i);
    std::vector<int> recv(2, -1);
    const int room = k.r == k.last ? 1 : 2;
    const std::optional<ep::Error> error =
        thrown_by([&] { scatter(c, send, k.counts, k.displs, recv, room); });
    expect_reported_if(k.mine == k.last_process, error, name, 0, k.r);
    if (!error) {
      EXPECT_EQ(recv[0], 2 * k.r) << "scattered block of ep rank " << k.r;
      EXPECT_EQ(recv[1], 2 * k.r + 1) << "scattered block of ep rank " << k.r;
    }
  });
}

TEST(AlltoallErrors, ScattervMismatchAcrossProcessesIsReported) {
  expect_scatterv_mismatch_reported(
      "ep::scatterv", [](const ep::Communicator& c, const auto& send, const auto& counts,
                         const auto& displs, auto& recv, int room) {
        ep::scatterv(c, send.data(), counts, displs, MPI_INT, recv.data(), room, MPI_INT, 0);
      });
  expect_scatterv_mismatch_reported(
      "ep::iscatterv", [](const ep::Communicator& c, const auto& send, const auto& counts,
                          const auto& displs, auto& recv, int room) {
        ep::Request request =
            ep::iscatterv(c, send.data(), counts, displs, MPI_INT, recv.data(), room, MPI_INT, 0);
        ep::wait(request);
      });
}

template <class Allgather>
void expect_allgatherv_mismatch_reported(const char* name, Allgather&& allgather) {
  on_layouts_across_processes([&](const ep::Communicator& c, RankCase& k) {
    // The endpoints of rank 0's process all expect 1 int from the last rank.
    if (k.mine == k.first_process) k.counts[static_cast<std::size_t>(k.last)] = 1;
    const std::optional<ep::Error> error =
        thrown_by([&] { allgather(c, k.send, k.recv, k.counts, k.displs); });
    expect_reported_if(k.mine == k.first_process, error, name, k.last, k.r);
    if (error) return;
    for (int j = 0; j < k.n; ++j) {
      const auto at = static_cast<std::size_t>(2 * j);
      EXPECT_EQ(k.recv[at], j * 10) << "block of ep rank " << j << " at ep rank " << k.r;
      EXPECT_EQ(k.recv[at + 1], j * 10 + 1) << "block of ep rank " << j << " at ep rank " << k.r;
    }
  });
}

TEST(AlltoallErrors, AllgathervMismatchAcrossProcessesIsReported) {
  expect_allgatherv_mismatch_reported(
      "ep::allgatherv", [](const ep::Communicator& c, const auto& send, auto& recv,
                           const auto& counts, const auto& displs) {
        ep::allgatherv(c, send.data(), 2, MPI_INT, recv.data(), counts, displs, MPI_INT);
      });
  expect_allgatherv_mismatch_reported(
      "ep::iallgatherv", [](const ep::Communicator& c, const auto& send, auto& recv,
                            const auto& counts, const auto& displs) {
        ep::Request request =
            ep::iallgatherv(c, send.data(), 2, MPI_INT, recv.data(), counts, displs, MPI_INT);
        ep::wait(request);
      });
}

// The forms with one count for every block: every block carries 2 ints, and
// the endpoints of the last EP rank's process receive with a count of 1
// (alltoall: every block they receive; gather: the root, the last rank;
// scatter: their block from root 0). More is sent than they expect, so
// exactly those endpoints throw kTruncate, naming the call; every other
// endpoint completes with its data. `exchange(c, count, recv)` makes the
// call with receive count `count` into `recv` (room for 2 ints per EP rank);
// `expected(c, j)` is the block a completed endpoint holds at block j
// (nothing to check: empty).
template <class Exchange, class Expected>
void expect_short_count_reported(const char* name, Exchange&& exchange, Expected&& expected) {
  on_layouts_across_processes([&](const ep::Communicator& c, const RankCase& k) {
    const bool short_side = k.mine == k.last_process;
    std::vector<int> recv(static_cast<std::size_t>(k.n) * 2, kUntouched);
    const std::optional<ep::Error> error =
        thrown_by([&] { exchange(c, short_side ? 1 : 2, recv); });
    if (!short_side) {
      EXPECT_FALSE(error) << "ep rank " << k.r << " threw: " << error->what();
      if (error) return;
      for (int j = 0; j < k.n; ++j) {
        const std::vector<int> block = expected(c, j);
        for (std::size_t i = 0; i < block.size(); ++i) {
          EXPECT_EQ(recv[2 * static_cast<std::size_t>(j) + i], block[i])
              << "element " << i << " of block " << j;
        }
      }
      return;
    }
    if (!error) {
      ADD_FAILURE() << "the short receive count was not reported on ep rank " << k.r;
      return;
    }
    EXPECT_EQ(error->kind(), ep::ErrorKind::kTruncate) << error->what();
    EXPECT_NE(std::string(error->what()).find(name), std::string::npos) << error->what();
  });
}

// The 2 ints EP rank `from` sends to EP rank `to`.
std::vector<int> block_of(int from, int to) { return {value(from, to, 0), value(from, to, 1)}; }

// Every endpoint's blocks for alltoall and scatter: block_of(me, j) for each
// EP rank j. (allgather has no such case: its own block would disagree too;
// AllgathervMismatchAcrossProcessesIsReported covers it.)
std::vector<int> blocks_for_everyone(const ep::Communicator& c) {
  std::vector<int> send;
  for (int j = 0; j < c.size(); ++j) {
    const std::vector<int> block = block_of(c.rank(), j);
    send.insert(send.end(), block.begin(), block.end());
  }
  return send;
}

// Runs the blocking call, or starts the nonblocking one and waits for it.
template <class Blocking, class Nonblocking>
void blocking_or_not(bool nonblocking, Blocking&& blocking, Nonblocking&& start) {
  if (!nonblocking) {
    blocking();
    return;
  }
  ep::Request request = start();
  ep::wait(request);
}

TEST(AlltoallErrors, ShortReceiveCountAcrossProcessesIsReported) {
  for (const bool nb : {false, true}) {
    SCOPED_TRACE(nb ? "nonblocking" : "blocking");
    expect_short_count_reported(
        nb ? "ep::ialltoall" : "ep::alltoall",
        [nb](const ep::Communicator& c, int count, std::vector<int>& recv) {
          const std::vector<int> send = blocks_for_everyone(c);
          blocking_or_not(
              nb, [&] { ep::alltoall(c, send.data(), 2, MPI_INT, recv.data(), count, MPI_INT); },
              [&] {
                return ep::ialltoall(c, send.data(), 2, MPI_INT, recv.data(), count, MPI_INT);
              });
        },
        [](const ep::Communicator& c, int j) { return block_of(j, c.rank()); });
    expect_short_count_reported(
        nb ? "ep::igather" : "ep::gather",
        [nb](const ep::Communicator& c, int count, std::vector<int>& recv) {
          const int root = c.size() - 1;
          const std::vector<int> send = block_of(c.rank(), root);
          blocking_or_not(
              nb,
              [&] { ep::gather(c, send.data(), 2, MPI_INT, recv.data(), count, MPI_INT, root); },
              [&] {
                return ep::igather(c, send.data(), 2, MPI_INT, recv.data(), count, MPI_INT, root);
              });
        },
        [](const ep::Communicator& /*c*/, int /*j*/) { return std::vector<int>(); });
    expect_short_count_reported(
        nb ? "ep::iscatter" : "ep::scatter",
        [nb](const ep::Communicator& c, int count, std::vector<int>& recv) {
          const std::vector<int> send = blocks_for_everyone(c);
          blocking_or_not(
              nb, [&] { ep::scatter(c, send.data(), 2, MPI_INT, recv.data(), count, MPI_INT, 0); },
              [&] {
                return ep::iscatter(c, send.data(), 2, MPI_INT, recv.data(), count, MPI_INT, 0);
              });
        },
        [](const ep::Communicator& c, int j) {
          return j == 0 ? block_of(0, c.rank()) : std::vector<int>();
        });
  }
}

}  // namespace
