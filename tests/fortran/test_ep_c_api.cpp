// The C interface of the whole endpoint API (ep/ep.h) from C++, for what the
// Fortran tests do not reach the same way: statuses read by MPI_Get_count,
// MPI_STATUS_IGNORE and MPI_IN_PLACE as C passes them, the NULL handles of
// split, matched probes on MPI_PROC_NULL, request release by the test calls,
// and intercommunicator handles refused where an intracommunicator is needed.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <array>
#include <string>
#include <vector>

#include "c_endpoints.hpp"
#include "ep/ep.h"

namespace {

bool contains(const char* text, const std::string& part) {
  return std::string(text).find(part) != std::string::npos;
}

// A periodic ring of the endpoints of `comm` (ep_cart_create, freed by the
// caller) and the ranks before and after this one (`rank` of `size`) on it.
struct Ring {
  ep_comm_t comm = nullptr;
  int left = 0;
  int right = 0;
};

Ring periodic_ring(ep_comm_t comm, int rank, int size) {
  const int dims[1] = {size};
  const int periods[1] = {1};
  Ring ring;
  EXPECT_EQ(ep_cart_create(comm, 1, dims, periods, 0, &ring.comm), EP_OK) << ep_last_error();
  ring.left = (rank + size - 1) % size;
  ring.right = (rank + 1) % size;
  return ring;
}

TEST(EpCApi, StatusesCountsAndProbes) {
  ep_test::on_c_endpoints([](ep_comm_t comm, int rank, int size) {
    const int right = (rank + 1) % size;
    const int left = (rank + size - 1) % size;
    std::array<double, 4> out{1.0 * rank, 2.0, 3.0, 4.0};
    std::array<double, 4> in{};
    MPI_Status st;
    EXPECT_EQ(ep_sendrecv(out.data(), 4, MPI_DOUBLE, right, 3, in.data(), 4, MPI_DOUBLE,
                          MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st),
              EP_OK)
        << ep_last_error();
    EXPECT_EQ(st.MPI_SOURCE, left);
    EXPECT_EQ(st.MPI_TAG, 3);
    int count = -1;
    EXPECT_EQ(MPI_Get_count(&st, MPI_DOUBLE, &count), MPI_SUCCESS);
    EXPECT_EQ(count, 4);
    EXPECT_EQ(ep_get_count(&st, MPI_FLOAT, &count), EP_OK);
    EXPECT_EQ(count, 8);
    EXPECT_EQ(in[0], 1.0 * left);

    // A matched probe on MPI_PROC_NULL is the NULL message; receiving it is empty.
    ep_message_t msg = nullptr;
    EXPECT_EQ(ep_mprobe(MPI_PROC_NULL, 0, comm, &msg, &st), EP_OK) << ep_last_error();
    EXPECT_EQ(msg, nullptr);
    EXPECT_EQ(ep_mrecv(in.data(), 4, MPI_DOUBLE, &msg, &st), EP_OK);
    EXPECT_EQ(st.MPI_SOURCE, MPI_PROC_NULL);

    // testall releases the requests it completes; a second test of NULLs is complete.
    std::array<ep_request_t, 2> reqs{};
    int x = rank;
    int y = -1;
    EXPECT_EQ(ep_irecv(&y, 1, MPI_INT, left, 4, comm, &reqs[0]), EP_OK);
    EXPECT_EQ(ep_isend(&x, 1, MPI_INT, right, 4, comm, &reqs[1]), EP_OK);
    int flag = 0;
    while (flag == 0) {
      ASSERT_EQ(ep_testall(2, reqs.data(), &flag, MPI_STATUSES_IGNORE), EP_OK) << ep_last_error();
    }
    EXPECT_EQ(reqs[0], nullptr);
    EXPECT_EQ(reqs[1], nullptr);
    EXPECT_EQ(y, left);
    int index = 0;
    EXPECT_EQ(ep_testany(2, reqs.data(), &index, &flag, MPI_STATUS_IGNORE), EP_OK);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(index, MPI_UNDEFINED);
  });
}

// Waitsome/testsome report each completed request once, in index order with
// its status, and free its handle; a cancelled receive completes as
// cancelled; MPI_REQUEST_NULL cannot be cancelled.
TEST(EpCApi, WaitsomeTestsomeAndCancel) {
  ep_test::on_c_endpoints([](ep_comm_t comm, int rank, int size) {
    const int right = (rank + 1) % size;
    const int left = (rank + size - 1) % size;
    std::array<int, 3> in{-1, -1, -1};
    std::array<ep_request_t, 3> reqs{};
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(
          ep_irecv(&in[std::size_t(k)], 1, MPI_INT, left, 50 + k, comm, &reqs[std::size_t(k)]),
          EP_OK);
    }
    for (int k = 2; k >= 0; --k) {
      const int v = rank * 10 + k;
      EXPECT_EQ(ep_send(&v, 1, MPI_INT, right, 50 + k, comm), EP_OK) << ep_last_error();
    }
    std::array<int, 3> seen{};
    std::array<int, 3> idx{};
    std::array<MPI_Status, 3> st{};
    int out = 0;
    // No ASSERT here: every endpoint must reach the barrier and the free.
    EXPECT_EQ(ep_waitsome(3, reqs.data(), &out, idx.data(), st.data()), EP_OK) << ep_last_error();
    EXPECT_GE(out, 1);
    int total = 0;
    for (;;) {
      for (int j = 0; j < out; ++j) {
        const int i = idx[std::size_t(j)];
        if (i < 0 || i >= 3) {
          ADD_FAILURE() << "index " << i;
          continue;
        }
        ++seen[std::size_t(i)];
        EXPECT_EQ(reqs[std::size_t(i)], nullptr);
        EXPECT_EQ(st[std::size_t(j)].MPI_TAG, 50 + i);
        EXPECT_EQ(in[std::size_t(i)], left * 10 + i);
      }
      total += out;
      if (total >= 3 || out < 0) break;
      if (ep_testsome(3, reqs.data(), &out, idx.data(), st.data()) != EP_OK) {
        ADD_FAILURE() << ep_last_error();
        break;
      }
    }
    EXPECT_EQ(seen, (std::array<int, 3>{1, 1, 1}));
    EXPECT_EQ(ep_testsome(3, reqs.data(), &out, idx.data(), MPI_STATUSES_IGNORE), EP_OK);
    EXPECT_EQ(out, MPI_UNDEFINED);

    ep_request_t r = nullptr;
    int never = 0;
    EXPECT_EQ(ep_irecv(&never, 1, MPI_INT, left, 59, comm, &r), EP_OK);
    EXPECT_EQ(ep_cancel(&r), EP_OK) << ep_last_error();
    MPI_Status cs;
    EXPECT_EQ(ep_wait_status(&r, &cs), EP_OK) << ep_last_error();
    int flag = 0;
    EXPECT_EQ(ep_test_cancelled(&cs, &flag), EP_OK);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(ep_cancel(&r), EP_ERR_REQUEST);
    EXPECT_TRUE(contains(ep_last_error(), "ep_cancel")) << ep_last_error();
    EXPECT_EQ(ep_barrier(comm), EP_OK);
  });
}

TEST(EpCApi, CollectivesInPlaceAndCommunicators) {
  ep_test::on_c_endpoints([](ep_comm_t comm, int rank, int size) {
    int sum = rank;
    EXPECT_EQ(ep_allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, comm), EP_OK);
    EXPECT_EQ(sum, size * (size - 1) / 2);
    std::vector<int> blocks(static_cast<std::size_t>(size));
    for (int j = 0; j < size; ++j) blocks[static_cast<std::size_t>(j)] = 10 * rank + j;
    std::vector<int> ones(static_cast<std::size_t>(size), 1);
    std::vector<int> displs(static_cast<std::size_t>(size));
    for (int j = 0; j < size; ++j) displs[static_cast<std::size_t>(j)] = j;
    // In place: the send arrays may be NULL.
    EXPECT_EQ(ep_alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, blocks.data(),
                           ones.data(), displs.data(), MPI_INT, comm),
              EP_OK)
        << ep_last_error();
    for (int j = 0; j < size; ++j) EXPECT_EQ(blocks[static_cast<std::size_t>(j)], 10 * j + rank);

    // Only rank 0 keeps a communicator; the others get NULL (MPI_COMM_NULL).
    ep_comm_t alone = nullptr;
    EXPECT_EQ(ep_comm_split(comm, rank == 0 ? 0 : MPI_UNDEFINED, 0, &alone), EP_OK);
    EXPECT_EQ(alone == nullptr, rank != 0);
    if (alone != nullptr) {
      EXPECT_EQ(ep_comm_free(&alone), EP_OK);
    }

    std::array<int, 3> dims{0, 0, 0};
    EXPECT_EQ(ep_dims_create(size, 3, dims.data()), EP_OK);
    EXPECT_EQ(dims[0] * dims[1] * dims[2], size);
    EXPECT_EQ(ep_dims_create(size, -1, dims.data()), EP_ERR_ARGUMENT);
    EXPECT_TRUE(contains(ep_last_error(), "ep_dims_create")) << ep_last_error();

    int inter = 1;
    EXPECT_EQ(ep_comm_test_inter(comm, &inter), EP_OK);
    EXPECT_EQ(inter, 0);
    int remote = 0;
    EXPECT_EQ(ep_comm_remote_size(comm, &remote), EP_ERR_ARGUMENT);
    EXPECT_TRUE(contains(ep_last_error(), "ep rank " + std::to_string(rank))) << ep_last_error();
  });
}

// An intercommunicator handle works for point-to-point and the collectives
// that exist on it, and is refused by name by the others.
// A persistent neighbour alltoall on a periodic ring: ep_start rounds
// completed by ep_wait, ep_test_status and ep_waitall (after ep_startall)
// keep the handle, each round delivers the data of that round, and
// ep_request_free releases the handle; ep_start of NULL is an error.
TEST(EpCApi, PersistentNeighborAlltoall) {
  ep_test::on_c_endpoints([](ep_comm_t comm, int rank, int size) {
    auto [ring, left, right] = periodic_ring(comm, rank, size);
    std::array<int, 2> out{};
    std::array<int, 2> in{};
    ep_request_t request = nullptr;
    EXPECT_EQ(ep_neighbor_alltoall_init(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, ring,
                                        MPI_INFO_NULL, &request),
              EP_OK)
        << ep_last_error();
    for (int round = 0; round < 3; ++round) {
      out = {1000 * round + 10 * rank, 1000 * round + 10 * rank + 1};  // to -1, to +1
      in = {-1, -1};
      EXPECT_EQ(ep_start(&request), EP_OK) << ep_last_error();
      if (round == 0) {
        EXPECT_EQ(ep_wait(&request), EP_OK) << ep_last_error();
      } else if (round == 1) {
        int flag = 0;
        while (flag == 0) {
          EXPECT_EQ(ep_test_status(&request, &flag, MPI_STATUS_IGNORE), EP_OK) << ep_last_error();
        }
      } else {
        EXPECT_EQ(ep_startall(0, nullptr), EP_OK);
        EXPECT_EQ(ep_waitall(1, &request), EP_OK) << ep_last_error();
      }
      EXPECT_NE(request, nullptr) << "round " << round;
      // Slot 0 comes from the -1 neighbour, which sent it through its +1 slot.
      EXPECT_EQ(in[0], 1000 * round + 10 * left + 1) << "round " << round;
      EXPECT_EQ(in[1], 1000 * round + 10 * right) << "round " << round;
    }
    EXPECT_EQ(ep_request_free(&request), EP_OK) << ep_last_error();
    EXPECT_EQ(request, nullptr);
    EXPECT_EQ(ep_start(&request), EP_ERR_REQUEST);
    EXPECT_TRUE(contains(ep_last_error(), "ep_start")) << ep_last_error();
    EXPECT_EQ(ep_comm_free(&ring), EP_OK) << ep_last_error();
  });
}

// The persistent alltoallw: byte displacements with gaps, and a datatype
// per block on each side (two MPI_INTs sent, one contiguous pair of ints
// received: the same signature), over two rounds with new data.
TEST(EpCApi, PersistentNeighborAlltoallw) {
  ep_test::on_c_endpoints([](ep_comm_t comm, int rank, int size) {
    auto [ring, left, right] = periodic_ring(comm, rank, size);
    MPI_Datatype pair = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    std::array<int, 6> out{};
    std::array<int, 6> in{};
    const std::array<int, 2> sendcounts{2, 2};
    const std::array<MPI_Aint, 2> sdispls{0, 3 * sizeof(int)};  // ints 0-1 and 3-4
    const std::array<MPI_Datatype, 2> sendtypes{MPI_INT, MPI_INT};
    const std::array<int, 2> recvcounts{1, 1};
    const std::array<MPI_Aint, 2> rdispls{sizeof(int), 4 * sizeof(int)};  // ints 1-2 and 4-5
    const std::array<MPI_Datatype, 2> recvtypes{pair, pair};
    ep_request_t request = nullptr;
    EXPECT_EQ(
        ep_neighbor_alltoallw_init(out.data(), sendcounts.data(), sdispls.data(), sendtypes.data(),
                                   in.data(), recvcounts.data(), rdispls.data(), recvtypes.data(),
                                   ring, MPI_INFO_NULL, &request),
        EP_OK)
        << ep_last_error();
    for (int round = 1; round <= 2; ++round) {
      const int base = 1000 * round + 10 * rank;
      out = {base, base + 1, -7, base + 2, base + 3, -7};  // to -1: ints 0-1; to +1: ints 3-4
      in.fill(-1);
      EXPECT_EQ(ep_start(&request), EP_OK) << ep_last_error();
      EXPECT_EQ(ep_wait(&request), EP_OK) << ep_last_error();
      // Slot 0 holds what the left neighbour sent to its +1, slot 1 what the
      // right one sent to its -1; the gaps stay untouched.
      const int from_left = 1000 * round + 10 * left;
      const int from_right = 1000 * round + 10 * right;
      EXPECT_EQ(in, (std::array<int, 6>{-1, from_left + 2, from_left + 3, -1, from_right,
                                        from_right + 1}))
          << "round " << round;
    }
    EXPECT_EQ(ep_request_free(&request), EP_OK) << ep_last_error();
    MPI_Type_free(&pair);
    EXPECT_EQ(ep_comm_free(&ring), EP_OK) << ep_last_error();
  });
}

TEST(EpCApi, IntercommunicatorHandles) {
  int processes = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  if (processes < 2) GTEST_SKIP() << "needs two processes";
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  ep_test::on_c_endpoints([world](ep_comm_t comm, int rank, int size) {
    const int color = world % 2;
    ep_comm_t local = nullptr;
    ASSERT_EQ(ep_comm_split(comm, color, rank, &local), EP_OK) << ep_last_error();
    ep_comm_t inter = nullptr;
    ASSERT_EQ(ep_intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 91, &inter), EP_OK)
        << ep_last_error();
    int remote = 0;
    EXPECT_EQ(ep_comm_remote_size(inter, &remote), EP_OK);
    int lsize = 0;
    EXPECT_EQ(ep_comm_size(inter, &lsize), EP_OK);
    EXPECT_EQ(remote + lsize, size);
    int one = 1;
    int got = 0;
    EXPECT_EQ(ep_allreduce(&one, &got, 1, MPI_INT, MPI_SUM, inter), EP_OK) << ep_last_error();
    EXPECT_EQ(got, remote);
    int buf = 0;
    EXPECT_EQ(ep_gather(&one, 1, MPI_INT, &buf, 1, MPI_INT, 0, inter), EP_ERR_ARGUMENT);
    EXPECT_TRUE(contains(ep_last_error(), "intercommunicator")) << ep_last_error();
    int result = 0;
    EXPECT_EQ(ep_comm_compare(inter, inter, &result), EP_OK);
    EXPECT_EQ(result, MPI_IDENT);
    ep_comm_t merged = nullptr;
    EXPECT_EQ(ep_intercomm_merge(inter, color, &merged), EP_OK) << ep_last_error();
    EXPECT_EQ(ep_comm_free(&merged), EP_OK);
    EXPECT_EQ(ep_comm_free(&inter), EP_OK) << ep_last_error();
    EXPECT_EQ(ep_comm_free(&local), EP_OK);
  });
}

}  // namespace
