// What the Krylov solvers share: their result (residual history and the
// split of time between halo exchange, global reductions and computation, the
// three numbers HPCG reports), the stopwatch that produces the split, and the
// one seam through which every global reduction passes.
//
// Thread safety: values; a SolveClock belongs to one rank.
#pragma once

#include <mpi.h>

#include <chrono>
#include <span>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/communicator.hpp"

namespace collectives::solvers {

/// Result of one solve, on every rank (residuals and times are this rank's
/// view; residuals are global, identical on every rank).
struct SolveResult {
  /// ||r_n|| / ||b|| after each iteration n (entry 0: the initial residual).
  std::vector<double> residuals;
  int iterations = 0;
  /// ||b - A x|| / ||b|| recomputed from the final x.
  double true_residual = 0.0;
  bool converged = false;
  double halo_seconds = 0.0;       ///< in HaloPlan::exchange
  double allreduce_seconds = 0.0;  ///< in the global sums
  double compute_seconds = 0.0;    ///< everything else of the solve
  /// This rank's interior of the solution: nx x ny x nz, i fastest.
  std::vector<double> solution;
  int nx = 0, ny = 0, nz = 0, x0 = 0, y0 = 0;
};

/// The solvers' global reductions: an in-place sum of a few doubles over
/// every rank. This default calls the library's allreduce; any callable with
/// the same signature (e.g. AlgorithmGlobalSum below) can be passed to the
/// solvers instead. Collective.
struct LibraryGlobalSum {
  template <Communicator C>
  void operator()(const C& comm, std::span<double> values) const {
    comm.library_allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                           MPI_SUM);
  }
};

/// The global sums through one of the allreduce algorithms of
/// collectives/allreduce.hpp (recursive doubling, recursive-k with a radix,
/// or the library's), e.g. gcr(..., AlgorithmGlobalSum{{.algorithm =
/// AllreduceAlgorithm::kRecursiveK, .radix = 4}}). Collective.
struct AlgorithmGlobalSum {
  AllreduceOptions options;

  template <Communicator C>
  void operator()(const C& comm, std::span<double> values) const {
    allreduce(comm, values, MPI_SUM, options);
  }
};

/// Splits a solve's wall time into halo, allreduce and compute: time between
/// marks goes to the category named at the mark.
class SolveClock {
 public:
  SolveClock() : last_(std::chrono::steady_clock::now()) {}
  void to_compute(SolveResult& r) { r.compute_seconds += lap(); }
  void to_halo(SolveResult& r) { r.halo_seconds += lap(); }
  void to_allreduce(SolveResult& r) { r.allreduce_seconds += lap(); }

 private:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }
  std::chrono::steady_clock::time_point last_;
};

}  // namespace collectives::solvers
