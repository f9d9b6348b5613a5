// The field "t" that the stand-alone model programs (mpmd_model,
// sync_kill_model) write and read back: kNi x kNj points per step, value(step,
// j, i), the rows split evenly across the client endpoints. Header only, so
// both programs share it without a library.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace xios_test::model_field {

constexpr int kNi = 16;
constexpr int kNj = 8;

inline double value(int step, int j, int i) { return step * 1000.0 + j * 10.0 + i; }

/// Rows j0 .. j1 of step `step`, i fastest (what one endpoint sends).
inline std::vector<double> rows(int step, int j0, int j1) {
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(j1 - j0) * kNi);
  for (int j = j0; j < j1; ++j) {
    for (int i = 0; i < kNi; ++i) v.push_back(value(step, j, i));
  }
  return v;
}

/// How many values of `got` (steps 1 .. `steps`, each kNj x kNi, i fastest)
/// differ from value().
inline int mismatches(const std::vector<double>& got, int steps) {
  int bad = 0;
  std::size_t n = 0;
  for (int s = 1; s <= steps; ++s) {
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) bad += got[n++] != value(s, j, i) ? 1 : 0;
    }
  }
  return bad;
}

}  // namespace xios_test::model_field
