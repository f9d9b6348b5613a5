// GCR(k): restarted generalised conjugate residual for a non-symmetric 3-D
// Helmholtz problem with advection (seed 000's solver), on a 2-D
// decomposition of the horizontal with all levels on each rank.
//
//   (A u)(i,j,k) = (alpha + 6) u - (sum of the 6 neighbours)
//                  + cx (u(i+1) - u(i-1)) / 2 + cy (u(j+1) - u(j-1)) / 2
//                  + cz (u(k+1) - u(k-1)) / 2
// with u = 0 outside the domain in every non-periodic direction and the top
// and bottom level; b(i,j,k) = 1 + ((7i + 13j + 5k) mod 17) / 17.
//
// Each iteration: one halo exchange (width 1, 5 points) of the new search
// direction, the operator, and two global sums: the k-1 projections of
// classical Gram-Schmidt, then (q,q) and (r,q) together. The residual norm
// follows from |r - (r,q) q|^2 = |r|^2 - (r,q)^2 for the normalised q; each
// restart recomputes r = b - A x (one more exchange and sum). The result's
// last residual entry is this recurrence; `true_residual` is recomputed at
// the end.
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

struct HelmholtzProblem {
  Decomposition decomposition;  ///< horizontal ni x nj and its px x py split
  int levels = 8;
  double alpha = 0.5;  ///< Helmholtz shift
  double cx = 0.8;     ///< advection, central differences
  double cy = -0.5;
  double cz = 0.3;
};

struct GcrOptions {
  int restart = 8;  ///< k: directions kept before a restart
  int max_iterations = 300;
  double tolerance = 1e-8;  ///< on ||r|| / ||b||
  HaloAlgorithm halo = HaloAlgorithm::kTwoSweep;
};

/// GCR kept across solves on one decomposition, as a time loop solves a new
/// problem every step: the width-1 halo plan and the Krylov vectors (2k + 4
/// fields) are made once, so a solve pays neither a plan's set-up nor fresh
/// pages for its vectors (page faults cost more than the arithmetic of a
/// few iterations on a small subdomain).
///
/// Collective over `comm`: the constructor (it builds the plan) and solve().
/// Thread safety: one solver per rank, used by the rank's own thread (or a
/// funneled master). `comm` must outlive the solver.
template <Communicator C, class GlobalSum = LibraryGlobalSum>
class GcrSolver {
 public:
  /// For problems on `decomposition` with `levels` levels; `options` for
  /// every solve. Throws common::Error (kArgument) for restart or levels
  /// below 1, naming this rank.
  GcrSolver(const C& comm, const Decomposition& decomposition, int levels,
            const GcrOptions& options, GlobalSum global_sum = {})
      : options_(checked(comm, options, levels)),
        decomposition_(decomposition),
        levels_(levels),
        ctx_(comm, decomposition, Stencil::kFivePoint, options.halo, levels,
             std::move(global_sum)) {
    const std::size_t n = ctx_.field_elements();
    for (auto* v : {&x_, &b_, &r_, &ax_}) v->assign(n, 0.0);
    const auto k = static_cast<std::size_t>(options.restart);
    p_.assign(k, std::vector<double>(n, 0.0));
    q_.assign(k, std::vector<double>(n, 0.0));
  }

  /// Solves `problem` from x = 0. Its decomposition and levels must be the
  /// solver's (common::Error kArgument otherwise, naming both); alpha and
  /// the advection may change from solve to solve. Collective.
  SolveResult solve(const HelmholtzProblem& problem) {
    check_problem(problem);
    ctx_.begin();
    const LocalGrid& g = ctx_.grid();
    const int nz = g.nz;
    SolveResult& result = ctx_.result();
    const int row = g.row();
    const int plane = g.plane();
    const C& comm = comm_of();
    auto apply = [&](const std::vector<double>& u, std::vector<double>& out) {
      for_interior(comm, g, [&](int i, int j, int k) {
        const std::size_t c = g.at(i, j, k);
        const double down = k > 0 ? u[c - static_cast<std::size_t>(plane)] : 0.0;
        const double up = k + 1 < nz ? u[c + static_cast<std::size_t>(plane)] : 0.0;
        const double west = u[c - 1];
        const double east = u[c + 1];
        const double south = u[c - static_cast<std::size_t>(row)];
        const double north = u[c + static_cast<std::size_t>(row)];
        out[c] = (problem.alpha + 6.0) * u[c] - (west + east + south + north + down + up) +
                 0.5 * (problem.cx * (east - west) + problem.cy * (north - south) +
                        problem.cz * (up - down));
      });
    };

    // Every vector's interior is written before it is read; x starts at 0
    // (halo included: its halo is read before the first exchange of x).
    std::fill(x_.begin(), x_.end(), 0.0);
    // The algorithm's names for the kept vectors.
    std::vector<double>&x = x_, &b = b_, &r = r_;
    std::vector<std::vector<double>>&p = p_, &q = q_;
    for_interior(comm, g, [&](int i, int j, int k) {
      const std::size_t c = g.at(i, j, k);
      b[c] = 1.0 + ((7 * (g.x0 + i) + 13 * (g.y0 + j) + 5 * k) % 17) / 17.0;
      r[c] = b[c];
    });
    std::vector<double> bb = ctx_.dots({b.data()}, {b.data()});
    ctx_.sum(bb);
    const double b_norm = std::sqrt(bb[0]);
    double rr = bb[0];
    result.residuals.push_back(1.0);

    while (result.iterations < options_.max_iterations && !result.converged) {
      for (int j = 0; j < options_.restart && result.iterations < options_.max_iterations; ++j) {
        auto& pj = p[static_cast<std::size_t>(j)];
        auto& qj = q[static_cast<std::size_t>(j)];
        for_interior(comm, g,
                     [&](int i, int jj, int k) { pj[g.at(i, jj, k)] = r[g.at(i, jj, k)]; });
        ctx_.exchange(pj);
        apply(pj, qj);
        if (j > 0) {
          std::vector<const double*> a, bq;
          for (int l = 0; l < j; ++l) {
            a.push_back(qj.data());
            bq.push_back(q[static_cast<std::size_t>(l)].data());
          }
          std::vector<double> proj = ctx_.dots(a, bq);
          ctx_.sum(proj);
          for_interior(comm, g, [&](int i, int jj, int k) {
            const std::size_t c = g.at(i, jj, k);
            for (int l = 0; l < j; ++l) {
              pj[c] -= proj[static_cast<std::size_t>(l)] * p[static_cast<std::size_t>(l)][c];
              qj[c] -= proj[static_cast<std::size_t>(l)] * q[static_cast<std::size_t>(l)][c];
            }
          });
        }
        std::vector<double> s = ctx_.dots({qj.data(), r.data()}, {qj.data(), qj.data()});
        ctx_.sum(s);
        const double q_norm = std::sqrt(s[0]);
        const double alpha = s[1] / q_norm;
        for_interior(comm, g, [&](int i, int jj, int k) {
          const std::size_t c = g.at(i, jj, k);
          pj[c] /= q_norm;
          qj[c] /= q_norm;
          x[c] += alpha * pj[c];
          r[c] -= alpha * qj[c];
        });
        rr = std::max(rr - alpha * alpha, 0.0);
        ++result.iterations;
        result.residuals.push_back(std::sqrt(rr) / b_norm);
        if (result.residuals.back() <= options_.tolerance) {
          result.converged = true;
          break;
        }
      }
      if (!result.converged && result.iterations < options_.max_iterations) {
        rr = ctx_.residual_squared(apply, x, b, r, ax_);
      }
    }
    result.true_residual = std::sqrt(ctx_.residual_squared(apply, x, b, r, ax_)) / b_norm;
    return ctx_.finish(x);
  }

 private:
  static const GcrOptions& checked(const C& comm, const GcrOptions& options, int levels) {
    if (options.restart < 1 || levels < 1) {
      throw common::Error(common::ErrorKind::kArgument, "collectives::solvers::gcr", comm.rank(),
                          "restart " + std::to_string(options.restart) + " and levels " +
                              std::to_string(levels) + " must be >= 1");
    }
    return options;
  }
  void check_problem(const HelmholtzProblem& problem) const {
    const Decomposition& d = problem.decomposition;
    if (problem.levels != levels_ || d.ni != decomposition_.ni || d.nj != decomposition_.nj ||
        d.x_sizes != decomposition_.x_sizes || d.y_sizes != decomposition_.y_sizes ||
        d.periodic_x != decomposition_.periodic_x || d.periodic_y != decomposition_.periodic_y) {
      throw common::Error(
          common::ErrorKind::kArgument, "collectives::solvers::GcrSolver::solve", comm_of().rank(),
          "the problem's grid " + std::to_string(d.ni) + " x " + std::to_string(d.nj) + " x " +
              std::to_string(problem.levels) + " in " + std::to_string(d.px()) + " x " +
              std::to_string(d.py()) + " subdomains is not the solver's " +
              std::to_string(decomposition_.ni) + " x " + std::to_string(decomposition_.nj) +
              " x " + std::to_string(levels_) + " in " + std::to_string(decomposition_.px()) +
              " x " + std::to_string(decomposition_.py()) + " (or its periodicity differs)");
    }
  }
  [[nodiscard]] const C& comm_of() const noexcept { return ctx_.comm(); }

  GcrOptions options_;
  Decomposition decomposition_;
  int levels_;
  SolveContext<C, GlobalSum> ctx_;
  std::vector<double> x_, b_, r_, ax_;
  std::vector<std::vector<double>> p_, q_;  // the k directions and their images A p
};

/// One solve of `problem` from x = 0 (a GcrSolver made for it and dropped):
/// for a single solve; a time loop keeps a GcrSolver. `global_sum` is the
/// seam for the global reductions (LibraryGlobalSum by default; see
/// solve_result.hpp). Collective over `comm`.
template <Communicator C, class GlobalSum = LibraryGlobalSum>
SolveResult gcr(const C& comm, const HelmholtzProblem& problem, const GcrOptions& options,
                GlobalSum global_sum = {}) {
  return GcrSolver<C, GlobalSum>(comm, problem.decomposition, problem.levels, options,
                                 std::move(global_sum))
      .solve(problem);
}

}  // namespace collectives::solvers
