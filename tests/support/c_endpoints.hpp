// The C interface's endpoints for tests written against ep/ep.h
// (tests/fortran/test_ep_c_api.cpp, tests/xios_lite/test_xios_c_api.cpp).
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <cstddef>
#include <vector>

#include "ep/ep.h"

namespace ep_test {

/// Runs body(comm, rank, size) on every OpenMP thread with its own endpoint
/// of MPI_COMM_WORLD (made by ep_create_endpoints), then frees the handles.
/// Collective over every thread of every process: a body must not leave
/// early (no ASSERT_* there), or the others wait in ep_comm_free.
template <typename Body>
void on_c_endpoints(Body&& body) {
  std::vector<ep_comm_t> comms(static_cast<std::size_t>(omp_get_max_threads()), nullptr);
#pragma omp parallel
  {
#pragma omp single
    EXPECT_EQ(ep_create_endpoints(MPI_COMM_WORLD, omp_get_num_threads(), comms.data()), EP_OK)
        << ep_last_error();
    ep_comm_t comm = comms[static_cast<std::size_t>(omp_get_thread_num())];
    int rank = -1;
    int size = 0;
    EXPECT_EQ(ep_comm_rank(comm, &rank), EP_OK);
    EXPECT_EQ(ep_comm_size(comm, &size), EP_OK);
    body(comm, rank, size);
    EXPECT_EQ(ep_comm_free(&comm), EP_OK) << ep_last_error();
  }
}

}  // namespace ep_test
