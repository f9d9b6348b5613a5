// Runs one kernel test body on every backend of collectives/communicator.hpp:
// endpoint threads (every OpenMP thread a rank, optionally with a different
// thread count per process), plain MPI processes, and funneled (one rank per
// process, its threads sharing the loops).
//
//   run_on_backends([](const auto& comm) { ... EXPECT_EQ(...); });
//
// Collective over MPI_COMM_WORLD. Failures are reported with the endpoint
// that raised them (see support/ep_test.hpp); an exception escaping the body
// is a failure of that rank, and the other ranks still leave the call.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <exception>
#include <string_view>

#include "collectives/communicator.hpp"
#include "collectives/ep_comm.hpp"
#include "support/ep_test.hpp"

namespace collectives_test {

/// Threads per process for the mixed EP layout: 1, 2, 1, 2, ... capped at
/// OMP_NUM_THREADS, so processes differ whenever there are two or more.
inline int mixed_threads(int world_rank) {
  const int max = omp_get_max_threads();
  return max < 2 ? 1 : 1 + world_rank % 2;
}

template <class Body>
void run_guarded(std::string_view backend, const Body& body, const auto& comm) {
  try {
    body(comm);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[" << backend << " rank " << comm.rank()
                  << "] uncaught exception: " << e.what();
  }
}

/// EP with OMP_NUM_THREADS endpoints per process.
template <class Body>
void run_on_ep(const Body& body, int threads = 0) {
  ep_test::run_endpoints(
      [&](ep::Communicator& c) { run_guarded("ep", body, collectives::EpComm(c)); }, threads);
}

template <class Body>
void run_on_mpi(const Body& body) {
  run_guarded("mpi", body, collectives::MpiComm(MPI_COMM_WORLD));
}

template <class Body>
void run_on_funneled(const Body& body) {
  run_guarded("funneled", body, collectives::FunneledComm(MPI_COMM_WORLD, omp_get_max_threads()));
}

/// EP (uniform and mixed thread counts), MPI and funneled, one after the other.
template <class Body>
void run_on_backends(const Body& body) {
  run_on_ep(body);
  run_on_ep(body, mixed_threads(ep_test::world_rank()));
  run_on_mpi(body);
  run_on_funneled(body);
}

}  // namespace collectives_test
