// Nonblocking neighbourhood collectives (ep::ineighbor_*): every variant
// against its blocking form value by value (completed by wait and by a test
// loop) on the Cartesian grids of topology_helpers.hpp, on ranks out of
// process order and on a distributed graph with repeated and one-way edges;
// a 2-D halo exchange against the closed form with the call returning before
// a late endpoint has called; several outstanding at once, completed
// backwards and by wait_any; argument errors from the call and block size
// mismatches from the wait.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/request.hpp"
#include "ep/topology.hpp"
#include "ep_test.hpp"
#include "request_completion.hpp"
#include "topology_helpers.hpp"

namespace {

using namespace ep_topo;  // NOLINT(google-build-using-namespace): the suite's reference helpers

constexpr int kCount = 3;
constexpr std::size_t kRoom = 10;  // ints of room per slot (3 strided pairs span 9)

// Elements a sender gives every one of its blocks in the v/w variants: it
// depends on the sender only, so both ends agree on any topology.
int sender_count(int rank) { return 1 + (rank * 7) % 3; }

// One endpoint's buffers and arguments for one variant; `shift` makes
// successive calls carry different data.
struct Call {
  Variant variant;
  int my_count;  // sender_count of the calling endpoint
  std::vector<int> out;
  std::vector<int> in;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<MPI_Aint> sbytes, rbytes;
  std::vector<MPI_Datatype> stypes, rtypes;

  Call(Variant v, const ep::Neighbors& nb, int me, int shift, const PairTypes& pairs)
      : variant(v), my_count(sender_count(me)), in(nb.sources.size() * kRoom + 1, kUntouched) {
    const std::size_t outdeg = nb.destinations.size();
    const std::size_t indeg = nb.sources.size();
    out.assign(outdeg * kRoom + 1, 0);
    for (std::size_t i = 0; i < outdeg; ++i) {
      for (std::size_t k = 0; k < kRoom; ++k) {
        out[i * kRoom + k] = value(me, static_cast<int>(i), static_cast<int>(k)) + shift;
      }
      scounts.push_back(my_count);
      sdispls.push_back(static_cast<int>(i * kRoom));
      // w: odd slots go out as contiguous int pairs, even ones as 2 * count ints.
      stypes.push_back(i % 2 == 1 ? pairs.contiguous() : MPI_INT);
      sbytes.push_back(static_cast<MPI_Aint>(i * kRoom * sizeof(int)));
    }
    for (std::size_t j = 0; j < indeg; ++j) {
      const int from = nb.sources[j];
      rcounts.push_back(from == MPI_PROC_NULL ? 0 : sender_count(from));
      rdispls.push_back(static_cast<int>(j * kRoom + 1));
      rtypes.push_back(j % 2 == 1 ? pairs.strided() : MPI_INT);
      rbytes.push_back(static_cast<MPI_Aint>((j * kRoom + 1) * sizeof(int)));
    }
  }

  // Blocking: runs `call` on `args` and returns a null request; otherwise
  // starts `icall` on them.
  template <typename Blocking, typename Nonblocking, typename... Args>
  static ep::Request run(bool blocking, Blocking call, Nonblocking icall, const Args&... args) {
    if (blocking) {
      call(args...);
      return {};
    }
    return icall(args...);
  }

  // Blocking: runs the call and returns a null request.
  ep::Request start(const ep::Communicator& c, bool blocking) {
    std::vector<int> w_scounts(scounts);
    std::vector<int> w_rcounts(rcounts);
    for (std::size_t i = 0; i < w_scounts.size(); ++i) {
      if (i % 2 == 0) w_scounts[i] *= 2;
    }
    for (std::size_t j = 0; j < w_rcounts.size(); ++j) {
      if (j % 2 == 0) w_rcounts[j] *= 2;
    }
    switch (variant) {
      case Variant::kAllgather:
        return run(blocking, ep::neighbor_allgather, ep::ineighbor_allgather, c, out.data(), kCount,
                   MPI_INT, in.data(), kCount, MPI_INT);
      case Variant::kAllgatherv:
        return run(blocking, ep::neighbor_allgatherv, ep::ineighbor_allgatherv, c, out.data(),
                   my_count, MPI_INT, in.data(), rcounts, rdispls, MPI_INT);
      case Variant::kAlltoall:
        return run(blocking, ep::neighbor_alltoall, ep::ineighbor_alltoall, c, out.data(), kCount,
                   MPI_INT, in.data(), kCount, MPI_INT);
      case Variant::kAlltoallv:
        return run(blocking, ep::neighbor_alltoallv, ep::ineighbor_alltoallv, c, out.data(),
                   scounts, sdispls, MPI_INT, in.data(), rcounts, rdispls, MPI_INT);
      case Variant::kAlltoallw:
        return run(blocking, ep::neighbor_alltoallw, ep::ineighbor_alltoallw, c, out.data(),
                   w_scounts, sbytes, stypes, in.data(), w_rcounts, rbytes, rtypes);
    }
    return {};
  }
};

// Every variant once blocking and once per nonblocking mode: the receive
// buffers must agree value by value (including the untouched gaps).
void expect_same_as_blocking(const ep::Communicator& topo) {
  const PairTypes pairs;
  const ep::Neighbors nb = ep::topology_neighbors(topo);
  for (const Variant v : kVariants) {
    Call reference(v, nb, topo.rank(), 0, pairs);
    static_cast<void>(reference.start(topo, true));
    for (const ep_test::Completion how :
         {ep_test::Completion::kWait, ep_test::Completion::kTestLoop}) {
      Call call(v, nb, topo.rank(), 0, pairs);
      ep::Request request = call.start(topo, false);
      ep_test::complete(request, how);
      EXPECT_EQ(call.in, reference.in) << name_of(v) << " (" << ep_test::name_of(how) << ")";
    }
  }
}

TEST(Ineighbor, CartesianMatchesBlocking) {
  on_every_grid([](ep::Communicator& grid, const Grid& /*g*/) { expect_same_as_blocking(grid); });
}

// Ranks not in process order (a split with reversed keys): which edges are
// local and which remote follows the rank map.
TEST(Ineighbor, ReversedRanksMatchBlocking) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    ep::Communicator reversed = ep::split(comm, 0, comm.size() - comm.rank());
    const int size = reversed.size();
    for (const Grid& g : {Grid{{size}, {1}}, Grid{{1, size}, {1, 0}}}) {
      on_grid(reversed, g, [&](ep::Communicator& grid) { expect_same_as_blocking(grid); });
    }
    reversed.free();
  });
}

// Repeated, self and one-way edges (irregular_dist_graph).
TEST(Ineighbor, DistGraphMatchesBlocking) {
  on_irregular_dist_graph([](ep::Communicator& graph) { expect_same_as_blocking(graph); });
}

// A halo exchange on a 2-D periodic grid against the closed form, with the
// last rank calling only after every other endpoint has returned from its
// call and sent it a message (a call that waited for it would deadlock).
TEST(Ineighbor, HaloReturnsBeforeTheLateEndpoint) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const Grid g = periodic_grid_2d(comm.size());
    on_grid(comm, g, [&](ep::Communicator& grid) {
      constexpr int kLateTag = 5;
      const int late = grid.size() - 1;
      const Halo2D h(g, grid.rank());
      const std::vector<int> out = h.edges();
      std::vector<int> halo(4 * Halo2D::kBlock, kUntouched);
      if (grid.rank() == late) {
        for (int i = 0; i < grid.size() - 1; ++i) {
          int token = 0;
          grid.recv(&token, 1, MPI_INT, ep::kAnySource, kLateTag);
        }
      }
      ep::Request request = ep::ineighbor_alltoall(grid, out.data(), Halo2D::kBlock, MPI_INT,
                                                   halo.data(), Halo2D::kBlock, MPI_INT);
      if (grid.rank() != late) {
        const int token = grid.rank();
        grid.send(&token, 1, MPI_INT, late, kLateTag);
      }
      ep::wait(request);
      h.expect_halo(halo);
    });
  });
}

// Ten calls outstanding on one communicator (every variant twice, with
// different data, and an ibarrier among them), completed backwards on even
// ranks and by wait_any on odd ones; each must equal its blocking form.
TEST(Ineighbor, ManyOutstandingAnyCompletionOrder) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const PairTypes pairs;
    const Grid g{{comm.size()}, {1}};
    on_grid(comm, g, [&](ep::Communicator& ring) {
      const ep::Neighbors nb = ep::topology_neighbors(ring);
      std::vector<Call> calls;
      std::vector<Call> references;
      for (int round = 0; round < 2; ++round) {
        for (const Variant v : kVariants) {
          calls.emplace_back(v, nb, ring.rank(), round * 1000000, pairs);
          references.emplace_back(v, nb, ring.rank(), round * 1000000, pairs);
        }
      }
      for (Call& reference : references) static_cast<void>(reference.start(ring, true));
      std::vector<ep::Request> requests;
      for (std::size_t i = 0; i < calls.size(); ++i) {
        requests.push_back(calls[i].start(ring, false));
        if (i == 4) requests.push_back(ep::ibarrier(ring));
      }
      if (ring.rank() % 2 == 0) {
        for (auto it = requests.rbegin(); it != requests.rend(); ++it) ep::wait(*it);
      } else {
        while (ep::wait_any(requests) != MPI_UNDEFINED) {
        }
      }
      for (std::size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(calls[i].in, references[i].in)
            << "call " << i << " " << name_of(calls[i].variant);
      }
    });
  });
}

// Bad arguments throw ep::Error naming the call from the call itself, on
// every endpoint (each passes the same bad value, so none is left waiting).
TEST(Ineighbor, ArgumentErrorsThrowFromTheCall) {
  ep_test::run_endpoints([](ep::Communicator& comm) {
    const auto expect_error = [](const char* call, auto&& start) {
      try {
        ep::Request request = start();
        ADD_FAILURE() << call << " accepted a bad argument";
        ep::wait(request);
      } catch (const ep::Error& e) {
        EXPECT_NE(std::string(e.what()).find(call), std::string::npos) << e.what();
      }
    };
    int buf[4] = {0, 0, 0, 0};
    // No topology attached.
    expect_error("ep::ineighbor_alltoall", [&] {
      return ep::ineighbor_alltoall(comm, buf, 1, MPI_INT, buf + 2, 1, MPI_INT);
    });
    const Grid g{{comm.size()}, {1}};
    on_grid(comm, g, [&](ep::Communicator& ring) {
      expect_error("ep::ineighbor_allgather", [&] {
        return ep::ineighbor_allgather(ring, buf, -1, MPI_INT, buf + 2, 1, MPI_INT);
      });
      expect_error("ep::ineighbor_alltoall", [&] {
        return ep::ineighbor_alltoall(ring, MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT);
      });
      const std::vector<int> one{1};  // two neighbours on a ring
      const std::vector<int> two{1, 1};
      const std::vector<int> displs{0, 1};
      expect_error("ep::ineighbor_allgatherv", [&] {
        return ep::ineighbor_allgatherv(ring, buf, 1, MPI_INT, buf + 2, one, displs, MPI_INT);
      });
      expect_error("ep::ineighbor_alltoallv", [&] {
        return ep::ineighbor_alltoallv(ring, buf, two, displs, MPI_INT, buf + 2, two, one, MPI_INT);
      });
      const std::vector<MPI_Aint> bytes{0, 4};
      const std::vector<MPI_Datatype> types{MPI_INT};
      expect_error("ep::ineighbor_alltoallw", [&] {
        return ep::ineighbor_alltoallw(ring, buf, two, bytes, types, buf + 2, two, bytes, types);
      });
      // Every sender gives one int less than its receivers expect: every
      // endpoint has an in-edge, so every wait reports the mismatch.
      int in[2] = {kUntouched, kUntouched};
      const int payload[2] = {1, 2};
      const std::vector<int> short_counts{0, 0};
      ep::Request request = ep::ineighbor_alltoallv(ring, payload, short_counts, displs, MPI_INT,
                                                    in, two, displs, MPI_INT);
      try {
        ep::wait(request);
        ADD_FAILURE() << "a block size mismatch went unnoticed";
      } catch (const ep::Error& e) {
        EXPECT_TRUE(e.kind() == ep::ErrorKind::kCount || e.kind() == ep::ErrorKind::kTruncate)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("ep::ineighbor_alltoallv"), std::string::npos)
            << e.what();
      }
    });
  });
}

}  // namespace
