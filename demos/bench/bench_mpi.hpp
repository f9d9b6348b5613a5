// MPI helpers shared by the benchmarks of demos/bench: checked calls, waiting
// without burning cores, the sub-communicators a benchmark measures on, and
// ending the whole job when one rank or thread fails.
//
// Why a waiting policy here at all: this project runs more ranks and threads
// than cores (4 processes on the 2-core development VM is normal), and Open
// MPI's blocking calls busy-poll. A rank that spins while it waits takes the
// core the rank it waits for needs, so the benchmarks wait the way the
// endpoint layer does (ep/src/backoff.hpp): a few spins, then yield.
//
// Thread safety: every function may be called by any thread under
// MPI_THREAD_MULTIPLE; each waiter owns its YieldingBackoff.
#pragma once

#include <mpi.h>
#include <omp.h>
#include <sched.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

namespace bench {

/// Throws ep::Error naming `call` when `rc` is not MPI_SUCCESS (the project's
/// one error convention; the benchmarks have no EP rank to name, hence -1).
void check_mpi(int rc, const char* call);

/// Waiting policy of the reference MPI paths, the same as the endpoint
/// layer's: a few spins for a partner on another core, then yield on every poll.
class YieldingBackoff {
 public:
  void pause() {
    if (++polls_ <= kSpinPolls) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      sched_yield();
    }
  }

 private:
  static constexpr long kSpinPolls = 64;
  long polls_ = 0;
};

/// Completes `request` by polling MPI_Test with YieldingBackoff: what a
/// blocking call would do, minus Open MPI's busy polling. `call` names the
/// operation that started it, for the error message.
void wait_yielding(MPI_Request& request, const char* call);

/// A barrier whose waiters sleep (MPI_Ibarrier + MPI_Test + 100 us sleeps)
/// instead of polling, for ranks that sit out a measurement: an idle rank
/// spinning in MPI_Barrier would take a core from the ranks being measured.
/// Collective over `comm`.
void quiet_barrier(MPI_Comm comm);

/// The first `processes` ranks of `comm`, in order (MPI_COMM_NULL on the
/// others). Collective over `comm`; the caller frees the result.
MPI_Comm first_ranks(MPI_Comm comm, int processes);

/// The first line of MPI_Get_library_version, e.g. "Open MPI v4.1.2".
std::string mpi_library_version();

/// Runs `body`; an exception from any rank or thread is printed with the
/// benchmark's name, the MPI rank and the OpenMP thread, and ends the whole job
/// (MPI_Abort): a participant that stopped would leave its partners waiting
/// forever inside a collective.
template <class Body>
void run_or_abort(const char* bench, Body&& body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "%s: rank %d thread %d: %s\n", bench, rank, omp_get_thread_num(),
                 e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/// The start every benchmark shares: MPI_Init_thread asking for
/// MPI_THREAD_MULTIPLE, then `parse()` on every rank (it throws
/// std::invalid_argument for a bad option, with an empty message for --help).
/// Returns the exit code when the program must stop now (help, bad option,
/// thread level below MULTIPLE; MPI is finalised then), std::nullopt to go on.
/// Only rank 0 prints.
template <class Parse>
std::optional<int> start(int& argc, char**& argv, const char* bench, const char* usage,
                         Parse&& parse) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::optional<int> stop;
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    const bool help = *e.what() == '\0';
    if (rank == 0) {
      if (!help) std::fprintf(stderr, "%s: %s\n", bench, e.what());
      std::fputs(usage, help ? stdout : stderr);
    }
    stop = help ? 0 : 2;
  }
  if (!stop && provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) {
      std::fprintf(stderr, "%s: MPI provides thread level %d, MPI_THREAD_MULTIPLE needed\n", bench,
                   provided);
    }
    stop = 1;
  }
  if (stop) MPI_Finalize();
  return stop;
}

}  // namespace bench
