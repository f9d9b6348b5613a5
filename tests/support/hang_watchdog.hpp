// The test watchdog: a test that fails must fail, not hang.
//
// An endpoint that leaves a collective early (an ASSERT_* returning from the
// body, an exception) leaves the other endpoints waiting for it forever, and
// ctest's timeout then kills the job without a word about which test or
// endpoint was stuck (rank 0 prints the gathered failures only when a test
// ends). The watchdog runs one thread per process that ends such a job
// itself, with a message:
//
//   - a failure was recorded on this rank and the test has not ended
//     EP_TEST_FAILURE_GRACE_SECONDS later (default 30; 0 disables): the
//     failing endpoint presumably left a collective the others still wait in;
//   - the executable has run longer than EP_TEST_TIME_BUDGET_SECONDS (set by
//     ep_add_mpi_test a little below the ctest timeout; unset or 0: no budget).
//
// It then prints, on stderr of this rank, the running test, the failures
// recorded on this rank and where each local endpoint is (in its body, left
// it after a fatal failure, in the closing free), and calls MPI_Abort, so
// mpiexec and ctest report a failure instead of a timeout.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <string>

namespace ep_test {

/// Starts the watchdog thread of this process (after MPI_Init; `rank` is the
/// MPI_COMM_WORLD rank it names in its messages). Reads the two variables above.
void watchdog_start(int rank);
/// Stops and joins the thread (before MPI_Finalize).
void watchdog_stop();

/// The test that runs now; its end disarms the failure grace.
void watchdog_test_started(const std::string& name);
void watchdog_test_ended();

/// A failure recorded on this rank (the text printed for it).
void watchdog_note_failure(const std::string& text);

/// Where endpoint `ep_rank` of this process is, in words ("" forgets it).
void watchdog_endpoint_state(int ep_rank, const std::string& where);

}  // namespace ep_test
