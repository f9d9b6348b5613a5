// Conservative semi-Lagrangian advection on one rank's subdomain (flux form,
// dimensionally split), the scheme of the mini model.
//
// The wind is constant in time and in the horizontal, and varies with the
// level: Courant number c = n + f cells per step (n whole cells, 0 <= f < 1).
// The mass that crosses face i-1/2 of a 1-D row in one step is the mass of
// the departure interval [x_{i-1/2} - c, x_{i-1/2}]: the n whole cells
// upstream plus the fraction f of the next one, whose part is integrated
// exactly from a piecewise-linear reconstruction with a monotonised-centred
// (MC) slope limiter. The new value is q_i - (F_{i+1/2} - F_{i-1/2}), so the
// fluxes telescope and the total mass of a periodic domain is conserved to
// round-off for any Courant number; the departure interval reaches n + 2
// cells upstream (n + 1 cells plus the slope's neighbour), which sets the halo
// width (halo_width_for).
//
// One halo exchange (9-point, width w) per step is enough: the x sweep runs on
// the interior columns of every row including the y halo rows (their x halos
// are the corner cells), so the y sweep that follows finds its halo rows
// already advected in x, exactly as the neighbouring rank computed them.
//
// Field layout: collectives/halo/copy_lists.hpp (level planes of
// (nx + 2w) x (ny + 2w), i fastest). Thread safety: the sweeps touch only
// the rows they are given; rows are independent, so callers share them out
// (comm.parallel_for).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace model {

/// The halo width the scheme needs for Courant numbers up to |c| (see above).
inline int halo_width_for(double max_abs_courant) {
  return static_cast<int>(std::floor(std::abs(max_abs_courant))) + 2;
}

/// MC-limited slope of the cell between `left` and `right`.
inline double limited_slope(double left, double centre, double right) {
  const double dl = centre - left;
  const double dr = right - centre;
  if (dl * dr <= 0.0) return 0.0;
  const double central = 0.5 * (dl + dr);
  const double bound = 2.0 * std::min(std::abs(dl), std::abs(dr));
  return std::copysign(std::min(std::abs(central), bound), central);
}

/// One strided 1-D line of a field: element m is data[offset + m * stride]
/// for m in [-w, n + w).
struct Line {
  double* data;
  std::ptrdiff_t offset;  ///< index of element 0 (the first interior cell)
  std::ptrdiff_t stride;
  double& operator[](int m) const { return data[offset + static_cast<std::ptrdiff_t>(m) * stride]; }
};

/// Advects the n interior cells of `line` by `courant` cells (any sign, at
/// most w - 2 whole cells, see halo_width_for). `flux` is scratch of n + 1
/// entries. Halo cells are read, not written.
inline void advect_line(const Line& line, int n, double courant, std::vector<double>& flux) {
  flux.resize(static_cast<std::size_t>(n) + 1);
  const double c = std::abs(courant);
  const int whole = static_cast<int>(std::floor(c));
  const double f = c - whole;
  const int dir = courant >= 0.0 ? 1 : -1;
  // Face m sits between cells m-1 and m. For dir = +1 the mass comes from
  // cells m-1, m-2, ... (whole of them) and a fraction f of cell m-1-whole
  // at its right edge. For dir = -1, mirrored: cells m, m+1, ... and the left
  // edge of cell m+whole. Flux is counted positive in +x.
  for (int m = 0; m <= n; ++m) {
    double mass = 0.0;
    int partial = 0;
    if (dir > 0) {
      for (int k = 1; k <= whole; ++k) mass += line[m - k];
      partial = m - 1 - whole;
    } else {
      for (int k = 0; k < whole; ++k) mass += line[m + k];
      partial = m + whole;
    }
    if (f > 0.0) {
      const double q = line[partial];
      const double s = limited_slope(line[partial - 1], q, line[partial + 1]);
      // Mean over the outer fraction f of the cell at its downwind edge: the
      // right edge (+x wind) has value q + s/2, the mean there is
      // q + s (1 - f) / 2; the left edge mirrors the sign.
      mass += f * (q + dir * 0.5 * (1.0 - f) * s);
    }
    flux[static_cast<std::size_t>(m)] = dir * mass;
  }
  for (int m = 0; m < n; ++m) {
    line[m] -= flux[static_cast<std::size_t>(m) + 1] - flux[static_cast<std::size_t>(m)];
  }
}

}  // namespace model
