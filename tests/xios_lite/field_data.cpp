#include "field_data.hpp"

#include <cstddef>

namespace xios_test {

xios_lite::Block uneven_block(int rank, int size, int ni, int nj) {
  // Row bands with weights 1, 2, 1, 2, ... over pairs of ranks; inside a
  // pair the second rank takes the right part of the band's columns.
  const int pairs = (size + 1) / 2;
  const int pair = rank / 2;
  const bool split_i = size > 1 && (rank / 2) * 2 + 1 < size;
  int total_w = 0;
  int before_w = 0;
  for (int p = 0; p < pairs; ++p) {
    const int w = 1 + p % 2;
    if (p < pair) {
      before_w += w;
    }
    total_w += w;
  }
  const int j0 = nj * before_w / total_w;
  const int j1 = nj * (before_w + 1 + pair % 2) / total_w;
  xios_lite::Block b{0, ni, j0, j1 - j0};
  if (split_i) {
    const int cut = ni / 3 + 1;
    if (rank % 2 == 0) {
      b.ni = cut;
    } else {
      b.ibegin = cut;
      b.ni = ni - cut;
    }
  }
  return b;
}

std::vector<double> field_values(int f, long step, int nk, const xios_lite::Block& b) {
  return block_values(b, nk, [&](int k, int j, int i) { return value(f, step, k, j, i); });
}

}  // namespace xios_test
