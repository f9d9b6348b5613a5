// GCR(k) and preconditioned CG converge to the serial solution of the same
// problem (solved by each rank alone on a one-rank communicator), on every
// backend and layout; the residual history is bitwise identical from run to
// run for the same layout; the time split is filled in. A solver kept
// across solves (GcrSolver, CgSolver: plan and vectors reused, as a time loop
// keeps them) gives bitwise what a fresh solve gives, whatever it solved
// before.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "backends.hpp"
#include "collectives/solvers/cg.hpp"
#include "collectives/solvers/gcr.hpp"
#include "halo_reference.hpp"

namespace {

using collectives::HaloAlgorithm;
using collectives::solvers::SolveResult;
using collectives_test::run_on_backends;

/// Largest |distributed - serial| over this rank's interior, relative to max |serial|.
double difference(const SolveResult& mine, const SolveResult& serial) {
  double diff = 0.0;
  double scale = 0.0;
  for (double v : serial.solution) scale = std::max(scale, std::abs(v));
  for (int k = 0; k < mine.nz; ++k) {
    for (int j = 0; j < mine.ny; ++j) {
      for (int i = 0; i < mine.nx; ++i) {
        const double a = mine.solution[static_cast<std::size_t>((k * mine.ny + j) * mine.nx + i)];
        const double b = serial.solution[static_cast<std::size_t>(
            (k * serial.ny + mine.y0 + j) * serial.nx + mine.x0 + i)];
        diff = std::max(diff, std::abs(a - b));
      }
    }
  }
  return diff / scale;
}

/// `problem` on one rank: the same domain, not split.
template <class Problem>
Problem undivided(Problem problem) {
  problem.decomposition =
      collectives::Decomposition::even(problem.decomposition.ni, problem.decomposition.nj, 1, 1);
  return problem;
}

void expect_time_split(const SolveResult& r, const char* what) {
  EXPECT_GE(r.halo_seconds, 0.0) << what;
  EXPECT_GE(r.allreduce_seconds, 0.0) << what;
  EXPECT_GT(r.compute_seconds, 0.0) << what;
}

/// A `Problem` of `levels` levels on the uneven decomposition over `ranks`.
template <class Problem>
Problem uneven_problem(int ranks, int levels) {
  Problem problem;
  problem.decomposition = collectives_test::uneven_decomposition(ranks, false, false);
  problem.levels = levels;
  return problem;
}

/// Two runs of one solve: converged (true residual below 1e-9), the same
/// residual history both times, and on rank `rank` within 1e-8 of the
/// serial solution.
void expect_converged_as_serial(const SolveResult& first, const SolveResult& second,
                                const SolveResult& serial, int rank) {
  EXPECT_TRUE(first.converged) << "iterations " << first.iterations;
  EXPECT_LT(first.true_residual, 1e-9);
  EXPECT_EQ(first.residuals, second.residuals) << "residual history differs run to run";
  EXPECT_LT(difference(first, serial), 1e-8) << "rank " << rank;
}

TEST(CollectivesSolvers, GcrMatchesSerialAndIsReproducible) {
  run_on_backends([](const auto& comm) {
    const auto problem = uneven_problem<collectives::solvers::HelmholtzProblem>(comm.size(), 4);
    collectives::solvers::GcrOptions options;
    options.restart = 6;
    options.tolerance = 1e-10;
    const auto serial_comm = comm.split(comm.rank(), 0);
    const auto serial_problem = undivided(problem);
    const SolveResult serial = collectives::solvers::gcr(serial_comm, serial_problem, options);
    EXPECT_TRUE(serial.converged);
    for (const auto halo : {HaloAlgorithm::kTwoSweep, HaloAlgorithm::kNeighbor}) {
      options.halo = halo;
      const SolveResult first = collectives::solvers::gcr(comm, problem, options);
      const SolveResult second = collectives::solvers::gcr(comm, problem, options);
      expect_converged_as_serial(first, second, serial, comm.rank());
      EXPECT_GT(first.iterations, options.restart) << "the restart path is exercised";
      EXPECT_EQ(first.solution, second.solution);
      expect_time_split(first, "gcr");
    }
  });
}

TEST(CollectivesSolvers, CgMatchesSerialAndIsReproducible) {
  run_on_backends([](const auto& comm) {
    const auto problem = uneven_problem<collectives::solvers::PoissonProblem>(comm.size(), 6);
    const auto serial_comm = comm.split(comm.rank(), 0);
    const auto serial_problem = undivided(problem);
    for (const auto pre : {collectives::solvers::CgPreconditioner::kSymmetricGaussSeidel,
                           collectives::solvers::CgPreconditioner::kJacobi}) {
      collectives::solvers::CgOptions options;
      options.tolerance = 1e-10;
      options.preconditioner = pre;
      options.halo = HaloAlgorithm::kDirect;
      const SolveResult serial = collectives::solvers::cg(serial_comm, serial_problem, options);
      EXPECT_TRUE(serial.converged);
      const SolveResult first = collectives::solvers::cg(comm, problem, options);
      const SolveResult second = collectives::solvers::cg(comm, problem, options);
      expect_converged_as_serial(first, second, serial, comm.rank());
      // b = A * 1: the exact solution is all ones.
      for (const double v : first.solution) EXPECT_NEAR(v, 1.0, 1e-8);
      expect_time_split(first, "cg");
    }
  });
}

TEST(CollectivesSolvers, GcrWithRecursiveKAllreduceMatchesSerial) {
  run_on_backends([](const auto& comm) {
    const auto problem = uneven_problem<collectives::solvers::HelmholtzProblem>(comm.size(), 3);
    collectives::solvers::GcrOptions options;
    options.tolerance = 1e-10;
    const auto serial_comm = comm.split(comm.rank(), 0);
    const auto serial_problem = undivided(problem);
    const SolveResult serial = collectives::solvers::gcr(serial_comm, serial_problem, options);
    for (const int radix : {2, 3}) {
      const collectives::solvers::AlgorithmGlobalSum sum{
          {.algorithm = collectives::AllreduceAlgorithm::kRecursiveK, .radix = radix}};
      const SolveResult first = collectives::solvers::gcr(comm, problem, options, sum);
      const SolveResult second = collectives::solvers::gcr(comm, problem, options, sum);
      EXPECT_TRUE(first.converged) << "radix " << radix;
      EXPECT_EQ(first.residuals, second.residuals) << "radix " << radix;
      EXPECT_LT(difference(first, serial), 1e-8) << "rank " << comm.rank() << " radix " << radix;
    }
  });
}

// A kept GcrSolver solves problems that change between solves (the model's
// shift follows its time) exactly as a fresh solve of each does: nothing of
// one solve leaks into the next (the vectors' interiors and halos, the
// result, the time split).
TEST(CollectivesSolvers, KeptGcrSolverSolvesEachProblemAsAFreshSolve) {
  run_on_backends([](const auto& comm) {
    using Comm = std::decay_t<decltype(comm)>;
    auto problem = uneven_problem<collectives::solvers::HelmholtzProblem>(comm.size(), 3);
    collectives::solvers::GcrOptions options;
    options.restart = 5;
    options.tolerance = 1e-10;
    collectives::solvers::GcrSolver<Comm> kept(comm, problem.decomposition, problem.levels,
                                               options);
    for (const double alpha : {0.5, 0.25, 0.75, 0.5}) {
      problem.alpha = alpha;
      const SolveResult reused = kept.solve(problem);
      const SolveResult fresh = collectives::solvers::gcr(comm, problem, options);
      EXPECT_TRUE(reused.converged) << "alpha " << alpha;
      EXPECT_EQ(reused.iterations, fresh.iterations) << "alpha " << alpha;
      EXPECT_EQ(reused.residuals, fresh.residuals) << "alpha " << alpha;
      EXPECT_EQ(reused.solution, fresh.solution) << "alpha " << alpha;
      EXPECT_EQ(reused.true_residual, fresh.true_residual) << "alpha " << alpha;
      expect_time_split(reused, "kept gcr");
    }
  });
}

TEST(CollectivesSolvers, KeptCgSolverRepeatsAFreshSolve) {
  run_on_backends([](const auto& comm) {
    using Comm = std::decay_t<decltype(comm)>;
    const auto problem = uneven_problem<collectives::solvers::PoissonProblem>(comm.size(), 4);
    collectives::solvers::CgOptions options;
    options.tolerance = 1e-10;
    const SolveResult fresh = collectives::solvers::cg(comm, problem, options);
    collectives::solvers::CgSolver<Comm> kept(comm, problem, options);
    for (int solve = 0; solve < 3; ++solve) {
      const SolveResult reused = kept.solve();
      EXPECT_EQ(reused.residuals, fresh.residuals) << "solve " << solve;
      EXPECT_EQ(reused.solution, fresh.solution) << "solve " << solve;
    }
  });
}

// A problem on another grid than the solver's is refused on every rank
// (each checks locally, so none is left waiting in a collective).
TEST(CollectivesSolvers, KeptGcrSolverRefusesAnotherGrid) {
  run_on_backends([](const auto& comm) {
    using Comm = std::decay_t<decltype(comm)>;
    auto problem = uneven_problem<collectives::solvers::HelmholtzProblem>(comm.size(), 3);
    collectives::solvers::GcrSolver<Comm> kept(comm, problem.decomposition, problem.levels,
                                               collectives::solvers::GcrOptions{});
    problem.levels = 4;
    try {
      (void)kept.solve(problem);
      ADD_FAILURE() << "a problem of 4 levels accepted by a solver made for 3";
    } catch (const common::Error& e) {
      EXPECT_EQ(e.kind(), common::ErrorKind::kArgument);
      EXPECT_NE(std::string(e.what()).find("GcrSolver::solve"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(" x 4 in "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(" x 3 in "), std::string::npos) << e.what();
    }
  });
}

}  // namespace
