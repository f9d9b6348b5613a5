// The three backends of the kernels' communicator interface give the same
// answers to the same code: ring shift, split, the library collectives and a
// neighbourhood exchange on a distributed graph.
#include <gtest/gtest.h>

#include <array>
#include <numeric>
#include <vector>

#include "backends.hpp"

namespace {

using collectives_test::run_on_backends;

TEST(CollectivesCommunicator, RingShiftWithTypedSpans) {
  run_on_backends([](const auto& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    std::vector<long> out(5), in(5, -1);
    comm.parallel_for(5, [&](int i) { out[static_cast<std::size_t>(i)] = me * 100L + i; });
    std::array reqs{collectives::irecv(comm, std::span<long>(in), (me + n - 1) % n, 3),
                    collectives::isend(comm, std::span<const long>(out), (me + 1) % n, 3)};
    comm.wait_all(reqs);
    const long left = (me + n - 1) % n;
    for (int i = 0; i < 5; ++i) EXPECT_EQ(in[static_cast<std::size_t>(i)], left * 100 + i);
  });
}

TEST(CollectivesCommunicator, SplitThenLibraryCollectives) {
  run_on_backends([](const auto& comm) {
    const auto half = comm.split(comm.rank() % 2, comm.rank());
    EXPECT_FALSE(half.is_null());
    double sum = 0.0;
    const double mine = comm.rank();
    half.library_allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM);
    double expected = 0.0;
    for (int r = comm.rank() % 2; r < comm.size(); r += 2) expected += r;
    EXPECT_EQ(sum, expected);

    const int n = comm.size();
    std::vector<int> send(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n), -1);
    std::vector<int> ones(static_cast<std::size_t>(n), 1), displs(static_cast<std::size_t>(n));
    std::iota(displs.begin(), displs.end(), 0);
    for (int j = 0; j < n; ++j) send[static_cast<std::size_t>(j)] = comm.rank() * 1000 + j;
    comm.library_alltoallv(send.data(), ones, displs, recv.data(), ones, displs, MPI_INT);
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(recv[static_cast<std::size_t>(i)], i * 1000 + comm.rank());
  });
}

TEST(CollectivesCommunicator, NeighborAlltoallvOnARing) {
  run_on_backends([](const auto& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    // Destination k is me + D_k, source k is me - D_k (D = -1, +1): correct
    // even when both neighbours are the same rank (n = 2) or the rank itself.
    const std::array dests{(me + n - 1) % n, (me + 1) % n};
    const std::array sources{(me + 1) % n, (me + n - 1) % n};
    const auto graph = comm.dist_graph(sources, dests);
    const std::array send{me * 10 + 0, me * 10 + 1};
    std::array recv{-1, -1};
    const std::array counts{1, 1};
    const std::array displs{0, 1};
    graph.neighbor_alltoallv(send.data(), counts, displs, recv.data(), counts, displs, MPI_INT);
    EXPECT_EQ(recv[0], sources[0] * 10 + 0);
    EXPECT_EQ(recv[1], sources[1] * 10 + 1);
  });
}

}  // namespace
