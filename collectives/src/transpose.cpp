// The decomposition table of transpose.hpp.
#include "collectives/transpose.hpp"

namespace collectives {

Box transpose_box(const TransposeShape& shape, Space space, int px, int py) {
  // Which grid coordinate splits each dimension: 0 none, 1 px over cx, 2 py over cy.
  static constexpr int kSplit[4][3] = {
      {1, 2, 0},  // kGrid:     x by px, y by py
      {0, 2, 1},  // kYZ:       y by py, z by px
      {2, 0, 1},  // kXZ:       x by py, z by px
      {2, 1, 0},  // kSpectral: x by py, y by px
  };
  const int n[3] = {shape.nx, shape.ny, shape.nz};
  Box box;
  for (int d = 0; d < 3; ++d) {
    const int how = kSplit[static_cast<int>(space)][d];
    if (how == 0) {
      box.lo[static_cast<std::size_t>(d)] = 0;
      box.n[static_cast<std::size_t>(d)] = n[d];
    } else {
      const auto part = how == 1 ? block_part(n[d], shape.cx, px) : block_part(n[d], shape.cy, py);
      box.lo[static_cast<std::size_t>(d)] = part[0];
      box.n[static_cast<std::size_t>(d)] = part[1];
    }
  }
  return box;
}

}  // namespace collectives
