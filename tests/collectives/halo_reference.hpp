// Serial reference for halo tests: the global field gathered from every
// rank's interior, and what each halo cell must hold according to the rules
// of collectives/halo/geometry.hpp. Also the decompositions the tests use.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/halo.hpp"

namespace collectives_test {

/// Uneven sizes: 4, 6, 3, 4, 6, 3, ... cells in x; 5, 3, 4, ... in y.
inline std::vector<int> uneven_sizes(int blocks, bool x) {
  std::vector<int> out;
  for (int b = 0; b < blocks; ++b)
    out.push_back(x ? std::array{4, 6, 3}[b % 3] : std::array{5, 3, 4}[b % 3]);
  return out;
}

/// px x py = ranks with px >= py, uneven sizes.
inline collectives::Decomposition uneven_decomposition(int ranks, bool periodic_x,
                                                       bool periodic_y) {
  int py = 1;
  for (int d = 1; d * d <= ranks; ++d) {
    if (ranks % d == 0) py = d;
  }
  collectives::Decomposition d;
  d.x_sizes = uneven_sizes(ranks / py, true);
  d.y_sizes = uneven_sizes(py, false);
  for (const int s : d.x_sizes) d.ni += s;
  for (const int s : d.y_sizes) d.nj += s;
  d.periodic_x = periodic_x;
  d.periodic_y = periodic_y;
  return d;
}

/// 3 x 3 uneven subdomains, the middle one all land and more all-land ones
/// until `ranks` sea subdomains remain (ranks <= 8), plus scattered land cells
/// inside sea subdomains (which stay sea).
inline std::vector<std::uint8_t> land_with_middle_subdomain(const collectives::Decomposition& d,
                                                            int ranks) {
  std::vector<std::uint8_t> cells(static_cast<std::size_t>(d.ni * d.nj), 0);
  std::vector<int> land_blocks{4};
  const std::array extra{8, 6, 2, 0, 7, 5, 3, 1};
  for (int n = 0; n < 8 - ranks; ++n) land_blocks.push_back(extra[static_cast<std::size_t>(n)]);
  int y0 = 0;
  for (int by = 0; by < 3; ++by) {
    int x0 = 0;
    for (int bx = 0; bx < 3; ++bx) {
      const bool land =
          std::find(land_blocks.begin(), land_blocks.end(), by * 3 + bx) != land_blocks.end();
      for (int j = 0; j < d.y_sizes[static_cast<std::size_t>(by)]; ++j) {
        for (int i = 0; i < d.x_sizes[static_cast<std::size_t>(bx)]; ++i) {
          const int gi = x0 + i;
          const int gj = y0 + j;
          cells[static_cast<std::size_t>(gj * d.ni + gi)] =
              land || (gi * 7 + gj * 3) % 5 == 0 ? 1 : 0;
        }
      }
      x0 += d.x_sizes[static_cast<std::size_t>(bx)];
    }
    y0 += d.y_sizes[static_cast<std::size_t>(by)];
  }
  return cells;
}

/// Expected halo of one rank's field from the gathered global field
/// (`global`: ni * nj * levels, level-major), `untouched` where the exchange
/// must not write, `fill` for all-land owners.
template <class T>
std::vector<T> expected_field(const collectives::HaloSpec& spec, const std::vector<double>& global,
                              const std::vector<T>& before, int nx, int ny, int x0, int y0,
                              int levels, T fill) {
  const auto& d = spec.decomposition;
  const int w = spec.width;
  std::vector<std::uint8_t> land;
  if (!spec.land_cells.empty()) land = collectives::all_land_subdomains(d, spec.land_cells);
  auto block_of = [](const std::vector<int>& sizes, int g) {
    int b = 0;
    for (int start = 0; g >= start + sizes[static_cast<std::size_t>(b)]; ++b)
      start += sizes[static_cast<std::size_t>(b)];
    return b;
  };
  std::vector<T> out = before;
  const int row = nx + 2 * w;
  const int plane = row * (ny + 2 * w);
  for (int k = 0; k < levels; ++k) {
    for (int j = -w; j < ny + w; ++j) {
      for (int i = -w; i < nx + w; ++i) {
        const bool out_i = i < 0 || i >= nx;
        const bool out_j = j < 0 || j >= ny;
        if (!out_i && !out_j) continue;
        if (out_i && out_j && spec.stencil == collectives::Stencil::kFivePoint) continue;
        int gi = x0 + i;
        int gj = y0 + j;
        if (!d.periodic_x && (gi < 0 || gi >= d.ni)) continue;
        if (!d.periodic_y && (gj < 0 || gj >= d.nj)) continue;
        gi = ((gi % d.ni) + d.ni) % d.ni;
        gj = ((gj % d.nj) + d.nj) % d.nj;
        const auto cell = static_cast<std::size_t>(k * plane + (j + w) * row + (i + w));
        const int block = block_of(d.y_sizes, gj) * d.px() + block_of(d.x_sizes, gi);
        if (!land.empty() && land[static_cast<std::size_t>(block)] != 0) {
          out[cell] = fill;
        } else {
          out[cell] = static_cast<T>(global[static_cast<std::size_t>((k * d.nj + gj) * d.ni + gi)]);
        }
      }
    }
  }
  return out;
}

}  // namespace collectives_test
