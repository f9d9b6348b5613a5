// Preconditioned conjugate gradients on HPCG's problem (seed 003): the
// 27-point 3-D Poisson operator, 26 on the diagonal and -1 for each of the 26
// neighbours inside the domain (zero Dirichlet outside; the domain must not
// be periodic), with b = A * 1 so that the exact solution is all ones.
// The horizontal is split 2-D (px x py), all nz levels on each rank.
//
// Each iteration: one halo exchange (width 1, 9 points: the 27-point stencil
// needs the corners) of the search direction, the operator, two global sums
// ((p, Ap), then (r, z) and (r, r) together) and the preconditioner:
//   kJacobi                z = r / 26
//   kSymmetricGaussSeidel  one forward and one backward Gauss-Seidel sweep
//                          over this rank's cells, neighbours on other ranks
//                          taken as zero (block Jacobi between ranks, as
//                          HPCG's smoother sees a zero initial guess). The
//                          cells are swept in 8 colours (parity of global
//                          i, j, k): no two cells of a colour are neighbours,
//                          so a colour is one parallel_for and the result
//                          does not depend on the thread count.
//
// Collective over `comm`. Ranks beyond the decomposition's subdomains take
// part in the sums with nothing of their own.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "collectives/halo.hpp"
#include "collectives/solvers/local_grid.hpp"
#include "collectives/solvers/solve_context.hpp"
#include "collectives/solvers/solve_result.hpp"

namespace collectives::solvers {

struct PoissonProblem {
  Decomposition decomposition;  ///< horizontal ni x nj and its px x py split
  int levels = 16;
};

enum class CgPreconditioner { kNone, kJacobi, kSymmetricGaussSeidel };

struct CgOptions {
  int max_iterations = 300;
  double tolerance = 1e-8;  ///< on ||r|| / ||b||
  CgPreconditioner preconditioner = CgPreconditioner::kSymmetricGaussSeidel;
  HaloAlgorithm halo = HaloAlgorithm::kTwoSweep;
};

/// CG kept across solves on one decomposition: the width-1 halo plan and
/// the six vectors are made once, so a time loop's solves pay neither a
/// plan's set-up nor fresh pages (see GcrSolver).
///
/// Collective over `comm`: the constructor (it builds the plan) and solve().
/// Thread safety: one solver per rank, used by the rank's own thread (or a
/// funneled master). `comm` must outlive the solver.
template <Communicator C, class GlobalSum = LibraryGlobalSum>
class CgSolver {
 public:
  /// For `problem`'s decomposition and levels (common::Error kArgument for a
  /// periodic domain or levels below 1, naming this rank).
  CgSolver(const C& comm, const PoissonProblem& problem, const CgOptions& options,
           GlobalSum global_sum = {})
      : options_(options),
        ctx_(comm, checked(comm, problem).decomposition, Stencil::kNinePoint, options.halo,
             problem.levels, std::move(global_sum)) {
    const std::size_t n = ctx_.field_elements();
    for (auto* v : {&x_, &b_, &r_, &z_, &p_, &ap_}) v->assign(n, 0.0);
  }

  /// Solves the problem from x = 0 (every solve the same system: HPCG's).
  /// Collective.
  SolveResult solve() {
    ctx_.begin();
    const C& comm = ctx_.comm();
    const LocalGrid& g = ctx_.grid();
    const int nz = g.nz;
    SolveResult& result = ctx_.result();
    const auto row = static_cast<std::ptrdiff_t>(g.row());
    const auto plane = static_cast<std::ptrdiff_t>(g.plane());
    // Sum of the 26 neighbours of cell c at level k (halo cells outside the
    // domain are never written, so they read as zero).
    auto neighbours = [&](const std::vector<double>& u, std::size_t c, int k) {
      double s = 0.0;
      for (int dk = -1; dk <= 1; ++dk) {
        if (k + dk < 0 || k + dk >= nz) continue;
        for (std::ptrdiff_t dj = -1; dj <= 1; ++dj) {
          for (std::ptrdiff_t di = -1; di <= 1; ++di) {
            if (dk == 0 && dj == 0 && di == 0) continue;
            s += u[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(c) + dk * plane + dj * row +
                                            di)];
          }
        }
      }
      return s;
    };
    auto apply = [&](const std::vector<double>& u, std::vector<double>& out) {
      for_interior(comm, g, [&](int i, int j, int k) {
        const std::size_t c = g.at(i, j, k);
        out[c] = 26.0 * u[c] - neighbours(u, c, k);
      });
    };
    // z = M^-1 r. z's halo is never exchanged and stays zero: the sweeps see
    // other ranks' cells as zero.
    auto precondition = [&](const std::vector<double>& r, std::vector<double>& z) {
      if (options_.preconditioner != CgPreconditioner::kSymmetricGaussSeidel) {
        const double scale =
            options_.preconditioner == CgPreconditioner::kJacobi ? 1.0 / 26.0 : 1.0;
        for_interior(comm, g,
                     [&](int i, int j, int k) { z[g.at(i, j, k)] = scale * r[g.at(i, j, k)]; });
        return;
      }
      for_interior(comm, g, [&](int i, int j, int k) { z[g.at(i, j, k)] = 0.0; });
      auto sweep_colour = [&](int colour) {
        const int ci = colour & 1;
        const int cj = (colour >> 1) & 1;
        const int ck = (colour >> 2) & 1;
        comm.parallel_for(g.rows(), [&](int rw) {
          const int k = rw / g.ny;
          const int j = rw % g.ny;
          if ((k & 1) != ck || ((g.y0 + j) & 1) != cj) return;
          for (int i = ((g.x0 & 1) == ci) ? 0 : 1; i < g.nx; i += 2) {
            const std::size_t c = g.at(i, j, k);
            z[c] = (r[c] + neighbours(z, c, k)) / 26.0;
          }
        });
      };
      for (int colour = 0; colour < 8; ++colour) sweep_colour(colour);
      for (int colour = 7; colour >= 0; --colour) sweep_colour(colour);
    };

    // Every vector's interior is written before it is read, halos outside
    // the domain are never written; x restarts from 0.
    std::fill(x_.begin(), x_.end(), 0.0);
    // The algorithm's names for the kept vectors.
    std::vector<double>&x = x_, &b = b_, &r = r_, &z = z_, &p = p_, &ap = ap_;
    // b = A * 1: the ones field with its halo exchanged (zero outside the domain).
    for_interior(comm, g, [&](int i, int j, int k) { p[g.at(i, j, k)] = 1.0; });
    ctx_.exchange(p);
    apply(p, b);
    for_interior(comm, g, [&](int i, int j, int k) {
      const std::size_t c = g.at(i, j, k);
      r[c] = b[c];
    });
    precondition(r, z);
    for_interior(comm, g, [&](int i, int j, int k) { p[g.at(i, j, k)] = z[g.at(i, j, k)]; });
    std::vector<double> s = ctx_.dots({r.data(), r.data()}, {z.data(), r.data()});
    ctx_.sum(s);
    double rz = s[0];
    const double b_norm = std::sqrt(s[1]);
    result.residuals.push_back(1.0);

    while (result.iterations < options_.max_iterations) {
      ctx_.exchange(p);
      apply(p, ap);
      std::vector<double> pap = ctx_.dots({p.data()}, {ap.data()});
      ctx_.sum(pap);
      const double alpha = rz / pap[0];
      for_interior(comm, g, [&](int i, int j, int k) {
        const std::size_t c = g.at(i, j, k);
        x[c] += alpha * p[c];
        r[c] -= alpha * ap[c];
      });
      precondition(r, z);
      s = ctx_.dots({r.data(), r.data()}, {z.data(), r.data()});
      ctx_.sum(s);
      ++result.iterations;
      result.residuals.push_back(std::sqrt(s[1]) / b_norm);
      if (result.residuals.back() <= options_.tolerance) {
        result.converged = true;
        break;
      }
      const double beta = s[0] / rz;
      rz = s[0];
      for_interior(comm, g, [&](int i, int j, int k) {
        const std::size_t c = g.at(i, j, k);
        p[c] = z[c] + beta * p[c];
      });
    }
    result.true_residual = std::sqrt(ctx_.residual_squared(apply, x, b, r, ap)) / b_norm;
    return ctx_.finish(x);
  }

 private:
  static const PoissonProblem& checked(const C& comm, const PoissonProblem& problem) {
    if (problem.decomposition.periodic_x || problem.decomposition.periodic_y ||
        problem.levels < 1) {
      throw common::Error(
          common::ErrorKind::kArgument, "collectives::solvers::cg", comm.rank(),
          "the 27-point problem needs a non-periodic domain and levels >= 1 (levels " +
              std::to_string(problem.levels) + ")");
    }
    return problem;
  }

  CgOptions options_;
  SolveContext<C, GlobalSum> ctx_;
  std::vector<double> x_, b_, r_, z_, p_, ap_;
};

/// One solve of `problem` from x = 0 (a CgSolver made for it and dropped);
/// a program that solves again keeps a CgSolver. `global_sum` is the seam
/// for the global reductions (LibraryGlobalSum by default; see
/// solve_result.hpp). Collective over `comm`.
template <Communicator C, class GlobalSum = LibraryGlobalSum>
SolveResult cg(const C& comm, const PoissonProblem& problem, const CgOptions& options,
               GlobalSum global_sum = {}) {
  return CgSolver<C, GlobalSum>(comm, problem, options, std::move(global_sum)).solve();
}

}  // namespace collectives::solvers
