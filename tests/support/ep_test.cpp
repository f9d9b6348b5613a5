// Endpoint helpers for the MPI tests (interface in ep_test.hpp).
#include "support/ep_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <exception>
#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "support/hang_watchdog.hpp"

namespace ep_test {

namespace {

// The EP rank whose failures this thread reports; read by the failure
// listener in mpi_gtest_main.cpp on the thread that raised the failure.
thread_local int t_current_endpoint = -1;
// Fatal failures (ASSERT_*, FAIL) raised on this thread; run_endpoints
// compares it before and after the body.
thread_local int t_fatal_failures = 0;

}  // namespace

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void run_endpoints_per_wait_policy(
    const std::function<void(ep::Communicator&, ep::WaitPolicy)>& body) {
  for (const ep::WaitPolicy policy : {ep::WaitPolicy::kSpin, ep::WaitPolicy::kPark}) {
    SCOPED_TRACE(ep::wait_policy_name(policy));
    ep::EndpointOptions options;
    options.wait_policy = policy;
    run_endpoints([&](ep::Communicator& c) { body(c, policy); }, 0, options);
  }
}

void run_endpoints_with_eager_threshold(std::size_t bytes,
                                        const std::function<void(ep::Communicator&)>& body) {
  ep::EndpointOptions options;
  options.eager_threshold = bytes;
  run_endpoints(
      [&](ep::Communicator& c) {
        EXPECT_EQ(c.eager_threshold(), bytes);
        body(c);
      },
      0, options);
}

void run_within_each_process(const std::function<void(ep::Communicator&)>& body) {
  run_endpoints([&](ep::Communicator& world) {
    ep::Communicator local = ep::split(world, world.process_rank(), world.local_thread());
    body(local);
    local.free();
  });
}

void set_current_endpoint(int ep_rank) { t_current_endpoint = ep_rank; }

int current_endpoint() { return t_current_endpoint; }

void note_failure_on_this_thread(bool fatal) {
  if (fatal) ++t_fatal_failures;
}

void run_endpoints(const std::function<void(ep::Communicator&)>& body, int threads,
                   const ep::EndpointOptions& options) {
  const int requested = threads > 0 ? threads : omp_get_max_threads();
  const int rank = world_rank();
  // A local copy: Open MPI's MPI_COMM_WORLD names a global, which default(none)
  // would make us list.
  MPI_Comm world = MPI_COMM_WORLD;
  std::vector<ep::Communicator> endpoints;

  // Every thread either runs its endpoint or, when creation failed on this
  // process, nothing: then the other processes hang in the collective
  // creation until the test's timeout, but the failure is on record here.
#pragma omp parallel num_threads(requested) default(none) \
    shared(body, options, endpoints, requested, rank, world)
  {
#pragma omp single
    {
      const int team = omp_get_num_threads();
      if (team != requested) {
        ADD_FAILURE() << "[rank " << rank << "] run_endpoints asked for " << requested
                      << " OpenMP threads and got " << team
                      << " (nested parallel region, OMP_THREAD_LIMIT or OMP_DYNAMIC?)";
      }
      try {
        endpoints = ep::create_endpoints(world, team, options);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "[rank " << rank << "] ep::create_endpoints(MPI_COMM_WORLD, " << team
                      << ") threw: " << e.what();
      }
    }  // implicit barrier: every thread sees `endpoints` filled in

    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    if (thread < endpoints.size()) {
      ep::Communicator& comm = endpoints[thread];
      const int ep_rank = comm.rank();
      set_current_endpoint(ep_rank);
      watchdog_endpoint_state(ep_rank, "in the test body");
      const int fatal_before = t_fatal_failures;
      std::string left = "left the test body normally; in the closing Communicator::free";
      try {
        body(comm);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "[rank " << rank << ", ep " << ep_rank
                      << "] uncaught exception: " << e.what();
        left = std::string("left the test body by an exception (") + e.what() +
               "); in the closing Communicator::free";
      } catch (...) {
        ADD_FAILURE() << "[rank " << rank << ", ep " << ep_rank
                      << "] uncaught exception of a type not derived from std::exception";
        left =
            "left the test body by an exception of unknown type; in the closing "
            "Communicator::free";
      }
      if (t_fatal_failures != fatal_before) {
        left =
            "left the test body early after a fatal failure (ASSERT_* or FAIL); in the "
            "closing Communicator::free";
      }
      watchdog_endpoint_state(ep_rank, left);
      // Collective over all endpoints: even an endpoint whose body failed
      // takes part, so that no other endpoint hangs in free().
      try {
        comm.free();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "[rank " << rank << ", ep " << ep_rank
                      << "] Communicator::free threw: " << e.what();
      } catch (...) {
        ADD_FAILURE() << "[rank " << rank << ", ep " << ep_rank
                      << "] Communicator::free threw an exception of unknown type";
      }
      watchdog_endpoint_state(ep_rank, "");
      set_current_endpoint(-1);
    }
  }
}

Ring ring_of(const ep::Communicator& c) {
  const int n = c.size();
  const int r = c.rank();
  return Ring{r, n, (r + 1) % n, (r - 1 + n) % n};
}

}  // namespace ep_test
