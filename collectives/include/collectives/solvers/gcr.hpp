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

/// Solves the problem from x = 0. `global_sum` is the seam for the global
/// reductions (LibraryGlobalSum by default; see solve_result.hpp).
template <Communicator C, class GlobalSum = LibraryGlobalSum>
SolveResult gcr(const C& comm, const HelmholtzProblem& problem, const GcrOptions& options,
                GlobalSum global_sum = {}) {
  if (options.restart < 1 || problem.levels < 1) {
    throw common::Error(common::ErrorKind::kArgument, "collectives::solvers::gcr", comm.rank(),
                        "restart " + std::to_string(options.restart) + " and levels " +
                            std::to_string(problem.levels) + " must be >= 1");
  }
  SolveContext<C, GlobalSum> ctx(comm, problem.decomposition, Stencil::kFivePoint, options.halo,
                                 problem.levels, std::move(global_sum));
  const LocalGrid& g = ctx.grid();
  const int nz = g.nz;
  const std::size_t n = ctx.field_elements();
  SolveResult& result = ctx.result();
  const int row = g.row();
  const int plane = g.plane();
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

  std::vector<double> x(n, 0.0), b(n, 0.0), r(n, 0.0), ax(n, 0.0);
  std::vector<std::vector<double>> p(static_cast<std::size_t>(options.restart),
                                     std::vector<double>(n, 0.0));
  std::vector<std::vector<double>> q = p;
  for_interior(comm, g, [&](int i, int j, int k) {
    const std::size_t c = g.at(i, j, k);
    b[c] = 1.0 + ((7 * (g.x0 + i) + 13 * (g.y0 + j) + 5 * k) % 17) / 17.0;
    r[c] = b[c];
  });
  std::vector<double> bb = ctx.dots({b.data()}, {b.data()});
  ctx.sum(bb);
  const double b_norm = std::sqrt(bb[0]);
  double rr = bb[0];
  result.residuals.push_back(1.0);

  while (result.iterations < options.max_iterations && !result.converged) {
    for (int j = 0; j < options.restart && result.iterations < options.max_iterations; ++j) {
      auto& pj = p[static_cast<std::size_t>(j)];
      auto& qj = q[static_cast<std::size_t>(j)];
      for_interior(comm, g, [&](int i, int jj, int k) { pj[g.at(i, jj, k)] = r[g.at(i, jj, k)]; });
      ctx.exchange(pj);
      apply(pj, qj);
      if (j > 0) {
        std::vector<const double*> a, bq;
        for (int l = 0; l < j; ++l) {
          a.push_back(qj.data());
          bq.push_back(q[static_cast<std::size_t>(l)].data());
        }
        std::vector<double> proj = ctx.dots(a, bq);
        ctx.sum(proj);
        for_interior(comm, g, [&](int i, int jj, int k) {
          const std::size_t c = g.at(i, jj, k);
          for (int l = 0; l < j; ++l) {
            pj[c] -= proj[static_cast<std::size_t>(l)] * p[static_cast<std::size_t>(l)][c];
            qj[c] -= proj[static_cast<std::size_t>(l)] * q[static_cast<std::size_t>(l)][c];
          }
        });
      }
      std::vector<double> s = ctx.dots({qj.data(), r.data()}, {qj.data(), qj.data()});
      ctx.sum(s);
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
      if (result.residuals.back() <= options.tolerance) {
        result.converged = true;
        break;
      }
    }
    if (!result.converged && result.iterations < options.max_iterations) {
      rr = ctx.residual_squared(apply, x, b, r, ax);
    }
  }
  result.true_residual = std::sqrt(ctx.residual_squared(apply, x, b, r, ax)) / b_norm;
  return ctx.finish(x);
}

}  // namespace collectives::solvers
