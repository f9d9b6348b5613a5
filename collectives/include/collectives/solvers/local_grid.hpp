// One rank's part of a 3-D grid for the solvers: an nx x ny column of nz
// levels with a halo of width 1 (the layout of collectives/halo.hpp), and the
// loops the solvers run on it. Every loop goes through comm.parallel_for over
// the nz * ny interior rows, so a funneled process's team shares it; dot
// products sum per row and then the rows in order, so the result does not
// depend on the thread count (bitwise reproducible runs).
//
// Thread safety: a LocalGrid is a value; the loops are called by the rank's
// own thread (or a funneled master) like the kernels.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "collectives/halo.hpp"

namespace collectives::solvers {

struct LocalGrid {
  int nx = 0, ny = 0, nz = 0;  // interior
  int x0 = 0, y0 = 0;          // global index of the first interior cell
  int ni = 0, nj = 0;          // global extent

  template <Communicator C>
  static LocalGrid of(const HaloPlan<C>& plan, int levels) {
    const auto& d = plan.spec().decomposition;
    return {plan.nx(), plan.ny(), levels, plan.x0(), plan.y0(), d.ni, d.nj};
  }

  [[nodiscard]] int row() const noexcept { return nx + 2; }
  [[nodiscard]] int plane() const noexcept { return (nx + 2) * (ny + 2); }
  [[nodiscard]] std::size_t elements() const noexcept {
    return static_cast<std::size_t>(plane()) * static_cast<std::size_t>(nz);
  }
  [[nodiscard]] int rows() const noexcept { return nz * ny; }
  /// Index of interior cell (i, j, k); i or j may be -1 or n (the halo).
  [[nodiscard]] std::size_t at(int i, int j, int k) const noexcept {
    // In size_t: k * plane() can exceed INT_MAX for a large column.
    return static_cast<std::size_t>(k) * static_cast<std::size_t>(plane()) +
           static_cast<std::size_t>((j + 1) * row() + (i + 1));
  }
};

/// f(i, j, k) for every interior cell, rows shared by parallel_for.
template <Communicator C, class F>
void for_interior(const C& comm, const LocalGrid& g, F&& f) {
  comm.parallel_for(g.rows(), [&](int r) {
    const int k = r / g.ny;
    const int j = r % g.ny;
    for (int i = 0; i < g.nx; ++i) f(i, j, k);
  });
}

/// The local dot products (a[m], b[m]) over the interior, each summed row
/// by row, then the rows in order (independent of the thread count).
/// `scratch` is reused between calls.
template <Communicator C>
std::vector<double> local_dots(const C& comm, const LocalGrid& g, std::span<const double* const> a,
                               std::span<const double* const> b, std::vector<double>& scratch) {
  const std::size_t m_count = a.size();
  scratch.assign(static_cast<std::size_t>(g.rows()) * m_count, 0.0);
  comm.parallel_for(g.rows(), [&](int r) {
    const int k = r / g.ny;
    const int j = r % g.ny;
    for (std::size_t m = 0; m < m_count; ++m) {
      double s = 0.0;
      for (int i = 0; i < g.nx; ++i) {
        const std::size_t c = g.at(i, j, k);
        s += a[m][c] * b[m][c];
      }
      scratch[static_cast<std::size_t>(r) * m_count + m] = s;
    }
  });
  std::vector<double> out(m_count, 0.0);
  for (int r = 0; r < g.rows(); ++r) {
    for (std::size_t m = 0; m < m_count; ++m) {
      out[m] += scratch[static_cast<std::size_t>(r) * m_count + m];
    }
  }
  return out;
}

/// The interior of `field`, i fastest (SolveResult::solution).
inline std::vector<double> interior_of(const LocalGrid& g, const std::vector<double>& field) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(g.nx) * static_cast<std::size_t>(g.rows()));
  for (int k = 0; k < g.nz; ++k) {
    for (int j = 0; j < g.ny; ++j) {
      for (int i = 0; i < g.nx; ++i) out.push_back(field[g.at(i, j, k)]);
    }
  }
  return out;
}

}  // namespace collectives::solvers
