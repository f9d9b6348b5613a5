// The data of the xios_lite MPI tests' models: which block of the domain a
// client owns and the value of every field at every step and point, so a
// check can recompute what a file must hold.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "xios_lite/client.hpp"

namespace xios_test {

/// The block of client `rank` of `size` in an ni x nj domain: rows split
/// unevenly (weights 1, 2, 1, 2, ...), and a client with more than one row
/// of every second one split along i too (it goes to the next rank).
xios_lite::Block uneven_block(int rank, int size, int ni, int nj);

/// The test's value of field `f` at a step and point.
inline double value(int f, long step, int k, int j, int i) {
  return f * 1e6 + static_cast<double>(step) * 1e4 + k * 1e3 + j * 10.0 + i * 0.25;
}
/// f(k, j, i) at every point of `nk` levels of block `b`, i fastest, then j,
/// then k: what a client sends.
template <class F>
std::vector<double> block_values(const xios_lite::Block& b, int nk, F&& f) {
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(nk) * b.ni * b.nj);
  for (int k = 0; k < nk; ++k) {
    for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
      for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) v.push_back(f(k, j, i));
    }
  }
  return v;
}

/// This client's values of field `f` at `step` (levels x block, ni fastest).
std::vector<double> field_values(int f, long step, int nk, const xios_lite::Block& b);

}  // namespace xios_test
