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

/// The atmosphere's tas of the context tests (test_xios_contexts.cpp,
/// test_xios_open_contexts.cpp) at step `s` and point (j, i).
inline double tas_at(int s, int j, int i) { return 250.0 + s + 0.5 * j + 0.01 * i; }

/// tas averaged over pairs of steps (1 and 2, 3 and 4, ...: the 2 h means of
/// 1 h steps) for `steps` steps of an nj x ni domain, record by record, i
/// fastest: what the file of those means holds.
inline std::vector<double> two_step_means(int steps, int nj, int ni) {
  std::vector<double> tas;
  for (int p = 0; p < steps / 2; ++p) {
    for (int j = 0; j < nj; ++j) {
      for (int i = 0; i < ni; ++i) {
        tas.push_back((tas_at(2 * p + 1, j, i) + tas_at(2 * p + 2, j, i)) / 2);
      }
    }
  }
  return tas;
}

}  // namespace xios_test
