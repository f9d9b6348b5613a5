// Persistent neighbourhood collectives (ep::neighbor_*_init with ep::start):
// every round equal, value by value, to the blocking form on the same data,
// on the Cartesian grids of topology_helpers.hpp and on a distributed graph
// with repeated, self and one-way edges; new send data and a cleared
// receive buffer before each round; rounds completed by wait, by a test
// loop and by wait_all after start_all over two requests; the request left
// inactive (not null) by its completion and nulled by request_free; misuse
// (starting an active, a null or a non-persistent request, freeing an
// active one) and, in debug builds, a count or datatype array changed after
// init.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/request.hpp"
#include "ep/topology.hpp"
#include "ep_test.hpp"
#include "topology_helpers.hpp"

namespace {

using namespace ep_topo;  // NOLINT(google-build-using-namespace): the suite's reference helpers

constexpr int kCount = 3;
constexpr std::size_t kRoom = 6;  // ints of room per slot
constexpr int kRounds = 3;

// Elements a sender gives every block in the v variant: depends on the
// sender only, so both ends agree on any topology.
int sender_count(int rank) { return 1 + (rank * 7) % 4; }

// One endpoint's buffers and arrays for one variant. The buffers are sized
// once: a persistent request keeps their addresses.
struct Buffers {
  Variant variant;
  int me;
  std::vector<int> out;
  std::vector<int> in;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<MPI_Aint> sbytes, rbytes;  // the w variant's displacements
  std::vector<MPI_Datatype> stypes, rtypes;

  Buffers(Variant v, const ep::Neighbors& nb, int rank)
      : variant(v),
        me(rank),
        out(nb.destinations.size() * kRoom + 1, 0),
        in(nb.sources.size() * kRoom + 1, kUntouched) {
    for (std::size_t i = 0; i < nb.destinations.size(); ++i) {
      scounts.push_back(sender_count(rank));
      sdispls.push_back(static_cast<int>(i * kRoom));
      sbytes.push_back(static_cast<MPI_Aint>(i * kRoom * sizeof(int)));
      stypes.push_back(MPI_INT);
    }
    for (std::size_t j = 0; j < nb.sources.size(); ++j) {
      const int from = nb.sources[j];
      rcounts.push_back(from == MPI_PROC_NULL ? 0 : sender_count(from));
      rdispls.push_back(static_cast<int>(j * kRoom + 1));
      rbytes.push_back(static_cast<MPI_Aint>((j * kRoom + 1) * sizeof(int)));
      rtypes.push_back(MPI_INT);
    }
  }

  // Round `round` of the blocking form, on new data: the reference of a
  // persistent request's round.
  void blocking_round(const ep::Communicator& c, int round) {
    refill(round);
    blocking(c);
  }

  // New send data for round `round` and a receive buffer to be overwritten.
  void refill(int round) {
    const std::size_t slots = (out.size() - 1) / kRoom;
    for (std::size_t i = 0; i < slots; ++i) {
      for (std::size_t k = 0; k < kRoom; ++k) {
        out[i * kRoom + k] = value(me, static_cast<int>(i), static_cast<int>(k)) + round * 1000000;
      }
    }
    std::fill(in.begin(), in.end(), kUntouched);
  }

  void blocking(const ep::Communicator& c) {
    switch (variant) {
      case Variant::kAllgather:
        ep::neighbor_allgather(c, out.data(), kCount, MPI_INT, in.data(), kCount, MPI_INT);
        return;
      case Variant::kAllgatherv:
        ep::neighbor_allgatherv(c, out.data(), sender_count(me), MPI_INT, in.data(), rcounts,
                                rdispls, MPI_INT);
        return;
      case Variant::kAlltoall:
        ep::neighbor_alltoall(c, out.data(), kCount, MPI_INT, in.data(), kCount, MPI_INT);
        return;
      case Variant::kAlltoallv:
        ep::neighbor_alltoallv(c, out.data(), scounts, sdispls, MPI_INT, in.data(), rcounts,
                               rdispls, MPI_INT);
        return;
      case Variant::kAlltoallw:
        ep::neighbor_alltoallw(c, out.data(), scounts, sbytes, stypes, in.data(), rcounts, rbytes,
                               rtypes);
        return;
    }
  }

  ep::Request init(const ep::Communicator& c) {
    switch (variant) {
      case Variant::kAllgather:
        return ep::neighbor_allgather_init(c, out.data(), kCount, MPI_INT, in.data(), kCount,
                                           MPI_INT);
      case Variant::kAllgatherv:
        return ep::neighbor_allgatherv_init(c, out.data(), sender_count(me), MPI_INT, in.data(),
                                            rcounts, rdispls, MPI_INT);
      case Variant::kAlltoall:
        return ep::neighbor_alltoall_init(c, out.data(), kCount, MPI_INT, in.data(), kCount,
                                          MPI_INT);
      case Variant::kAlltoallv:
        return ep::neighbor_alltoallv_init(c, out.data(), scounts, sdispls, MPI_INT, in.data(),
                                           rcounts, rdispls, MPI_INT);
      case Variant::kAlltoallw:
        return ep::neighbor_alltoallw_init(c, out.data(), scounts, sbytes, stypes, in.data(),
                                           rcounts, rbytes, rtypes);
    }
    return {};
  }
};

// Every variant: kRounds rounds of one persistent request, each against the
// blocking form on that round's data, completed alternately by wait and by
// a test loop.
void expect_rounds_match_blocking(const ep::Communicator& topo) {
  const ep::Neighbors nb = ep::topology_neighbors(topo);
  for (const Variant v : kVariants) {
    Buffers reference(v, nb, topo.rank());
    Buffers persistent(v, nb, topo.rank());
    ep::Request request = persistent.init(topo);
    EXPECT_TRUE(request.is_persistent()) << name_of(v);
    EXPECT_FALSE(request.is_active()) << name_of(v);
    for (int round = 0; round < kRounds; ++round) {
      reference.blocking_round(topo, round);
      persistent.refill(round);
      ep::start(request);
      EXPECT_TRUE(request.is_active());
      if (round % 2 == 0) {
        ep::wait(request);
      } else {
        while (!ep::test(request)) std::this_thread::yield();
      }
      EXPECT_FALSE(request.is_null()) << name_of(v) << " round " << round;
      EXPECT_FALSE(request.is_active()) << name_of(v) << " round " << round;
      EXPECT_EQ(persistent.in, reference.in) << name_of(v) << " round " << round;
    }
    // An inactive request: wait returns at once with an empty status.
    const ep::Status status = ep::wait(request);
    EXPECT_EQ(status.bytes, 0U);
    ep::request_free(request);
    EXPECT_TRUE(request.is_null());
  }
}

// Runs `body(ring, neighbours)` on a periodic ring of every endpoint of a
// fresh endpoint communicator. Collective over MPI_COMM_WORLD.
template <typename Body>
void on_ring(Body body) {
  ep_test::run_endpoints([&](ep::Communicator& comm) {
    on_grid(comm, Grid{{comm.size()}, {1}},
            [&](ep::Communicator& ring) { body(ring, ep::topology_neighbors(ring)); });
  });
}

TEST(PersistentNeighbor, CartesianMatchesBlocking) {
  on_every_grid(
      [](ep::Communicator& grid, const Grid& /*g*/) { expect_rounds_match_blocking(grid); });
}

// Repeated, self and one-way edges (irregular_dist_graph).
TEST(PersistentNeighbor, DistGraphMatchesBlocking) {
  on_irregular_dist_graph([](ep::Communicator& graph) { expect_rounds_match_blocking(graph); });
}

// Two persistent requests on one ring, started together by start_all and
// completed by wait_all (the first round) and wait_any (the second); each
// round of each equals its blocking form.
TEST(PersistentNeighbor, StartAllOverTwoRequests) {
  on_ring([](ep::Communicator& ring, const ep::Neighbors& nb) {
    Buffers a(Variant::kAlltoall, nb, ring.rank());
    Buffers b(Variant::kAlltoallv, nb, ring.rank());
    Buffers ref_a(Variant::kAlltoall, nb, ring.rank());
    Buffers ref_b(Variant::kAlltoallv, nb, ring.rank());
    std::vector<ep::Request> requests{a.init(ring), b.init(ring)};
    for (int round = 0; round < 2; ++round) {
      ref_a.blocking_round(ring, round);
      ref_b.blocking_round(ring, round + 7);
      a.refill(round);
      b.refill(round + 7);
      ep::start_all(requests);
      if (round == 0) {
        ep::wait_all(requests);
      } else {
        int completed = 0;
        while (ep::wait_any(requests) != MPI_UNDEFINED) ++completed;
        EXPECT_EQ(completed, 2);  // inactive ones are skipped, not reported again
      }
      EXPECT_EQ(a.in, ref_a.in) << "round " << round;
      EXPECT_EQ(b.in, ref_b.in) << "round " << round;
      for (const ep::Request& r : requests) EXPECT_TRUE(r.is_persistent() && !r.is_active());
    }
    for (ep::Request& r : requests) ep::request_free(r);
    EXPECT_TRUE(requests[0].is_null() && requests[1].is_null());
  });
}

// `body` must throw ep::Error of `kind` whose message names `call`.
template <typename Body>
void expect_error(ep::ErrorKind kind, const char* call, Body body) {
  try {
    body();
    ADD_FAILURE() << call << " accepted a misuse";
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(call), std::string::npos) << e.what();
  }
}

// Misuse of the request throws from the call, on every endpoint alike, and
// leaves the request usable.
TEST(PersistentNeighbor, MisuseThrows) {
  on_ring([](ep::Communicator& ring, const ep::Neighbors& nb) {
    Buffers buffers(Variant::kAlltoall, nb, ring.rank());
    Buffers reference(Variant::kAlltoall, nb, ring.rank());
    ep::Request request = buffers.init(ring);
    ep::Request null_request;
    expect_error(ep::ErrorKind::kRequest, "ep::start", [&] { ep::start(null_request); });
    expect_error(ep::ErrorKind::kRequest, "ep::request_free",
                 [&] { ep::request_free(null_request); });
    reference.blocking_round(ring, 1);
    buffers.refill(1);
    ep::start(request);
    expect_error(ep::ErrorKind::kRequest, "ep::start", [&] { ep::start(request); });
    expect_error(ep::ErrorKind::kRequest, "ep::request_free", [&] { ep::request_free(request); });
    ep::wait(request);
    EXPECT_EQ(buffers.in, reference.in);
    // A nonblocking collective's request is not persistent.
    ep::Request once = ep::ibarrier(ring);
    expect_error(ep::ErrorKind::kRequest, "ep::start", [&] { ep::start(once); });
    ep::wait(once);
    ep::request_free(request);
    // Argument errors throw from the init call on every endpoint.
    expect_error(ep::ErrorKind::kCount, "ep::neighbor_alltoall_init", [&] {
      ep::Request bad = ep::neighbor_alltoall_init(ring, buffers.out.data(), -1, MPI_INT,
                                                   buffers.in.data(), kCount, MPI_INT);
    });
  });
}

#ifndef NDEBUG
// Starts `request` after `array` changed since init, which must throw
// kArgument on this endpoint: the error's message ("" after a failure when
// nothing was thrown; the request is then waited for).
std::string changed_array_error(ep::Request& request, const std::string& array) {
  try {
    ep::start(request);
    ADD_FAILURE() << "a changed " << array << " went unnoticed";
    ep::wait(request);
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), ep::ErrorKind::kArgument) << e.what();
    return e.what();
  }
  return "";
}

// Debug builds: a count or displacement array changed after init throws
// from ep::start, naming the array, the entry and both values; put back, the
// request runs as before.
TEST(PersistentNeighbor, DebugChecksArraysAtStart) {
  on_ring([](ep::Communicator& ring, const ep::Neighbors& nb) {
    Buffers buffers(Variant::kAlltoallv, nb, ring.rank());
    Buffers reference(Variant::kAlltoallv, nb, ring.rank());
    ep::Request request = buffers.init(ring);
    const int kept = buffers.rdispls[1];
    buffers.rdispls[1] = kept + 1;  // every endpoint: each throws, none waits for another
    const std::string text = changed_array_error(request, "rdispls");
    EXPECT_NE(text.find("ep::start: ep rank " + std::to_string(ring.rank())), std::string::npos)
        << text;
    EXPECT_NE(text.find("rdispls[1]"), std::string::npos) << text;
    EXPECT_NE(text.find("is " + std::to_string(kept + 1) + ", was " + std::to_string(kept)),
              std::string::npos)
        << text;
    EXPECT_FALSE(request.is_active());
    buffers.rdispls[1] = kept;
    reference.blocking_round(ring, 2);
    buffers.refill(2);
    ep::start(request);
    ep::wait(request);
    EXPECT_EQ(buffers.in, reference.in);
    ep::request_free(request);
  });
}

// The w variant's datatype arrays are watched too, named by MPI's names.
TEST(PersistentNeighbor, DebugChecksDatatypesAtStart) {
  on_ring([](ep::Communicator& ring, const ep::Neighbors& nb) {
    Buffers buffers(Variant::kAlltoallw, nb, ring.rank());
    ep::Request request = buffers.init(ring);
    buffers.rtypes[0] = MPI_FLOAT;
    const std::string text = changed_array_error(request, "recvtypes");
    EXPECT_NE(text.find("recvtypes[0] of ep::neighbor_alltoallw_init is MPI_FLOAT, was MPI_INT"),
              std::string::npos)
        << text;
    buffers.rtypes[0] = MPI_INT;
    buffers.refill(1);
    ep::start(request);
    ep::wait(request);
    ep::request_free(request);
  });
}
#endif

}  // namespace
