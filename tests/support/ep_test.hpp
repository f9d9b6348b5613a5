// Helpers shared by all MPI tests: run a body on every endpoint and report
// failures with the endpoint that saw them.
#pragma once

#include <cstddef>
#include <functional>

#include "ep/communicator.hpp"

namespace ep_test {

/// Rank and size of MPI_COMM_WORLD.
int world_rank();
int world_size();

/// Runs `body` on `threads` OpenMP threads of every process (0: the
/// OMP_NUM_THREADS default), each with its own endpoint of a fresh endpoint
/// communicator created over MPI_COMM_WORLD; frees the communicator afterwards.
/// Collective over MPI_COMM_WORLD. GoogleTest failures raised inside `body`
/// are reported as "[rank r, ep e]"; an exception of any type escaping
/// `body` is recorded as a failure of that endpoint, and an ASSERT_* that
/// returned from `body` is noted as such. Either way the endpoint still takes
/// part in the closing free, so no other endpoint hangs there; when others
/// wait for it inside a collective it left, the watchdog (hang_watchdog.hpp)
/// ends the job with a message that says where each endpoint is.
void run_endpoints(const std::function<void(ep::Communicator&)>& body, int threads = 0,
                   const ep::EndpointOptions& options = {});

/// run_endpoints once per wait policy (spin, then park), each with
/// EndpointOptions::wait_policy set and its name in the failures' trace;
/// `body` gets the endpoint and the policy. Collective as run_endpoints.
void run_endpoints_per_wait_policy(
    const std::function<void(ep::Communicator&, ep::WaitPolicy)>& body);

/// run_endpoints with EndpointOptions::eager_threshold = `bytes` (messages
/// above it take the rendezvous path); checks that every endpoint reports
/// that threshold before `body` runs. Collective as run_endpoints.
void run_endpoints_with_eager_threshold(std::size_t bytes,
                                        const std::function<void(ep::Communicator&)>& body);

/// run_endpoints, then `body` on a communicator of the endpoints of the
/// caller's process only (split by process, ranked by thread), freed after
/// `body` returns: the calls' within-process paths at every shape.
/// Collective as run_endpoints.
void run_within_each_process(const std::function<void(ep::Communicator&)>& body);

/// The endpoint whose failures the calling thread reports (-1: none).
void set_current_endpoint(int ep_rank);
int current_endpoint();

/// Called by the failure listener on the thread that raised a failure;
/// run_endpoints uses it to tell an ASSERT_* return from a normal one.
void note_failure_on_this_thread(bool fatal);

/// This endpoint's place on the ring of `c`'s ranks: its rank, the size,
/// and its neighbours rank + 1 and rank - 1 (modulo the size). Local.
struct Ring {
  int rank;
  int size;
  int right;
  int left;
};
Ring ring_of(const ep::Communicator& c);

}  // namespace ep_test
