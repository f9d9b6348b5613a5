// XIOS's reduce_axis and reduce_domain on one sample of a field, as the
// servers apply them before the temporal operation: the sample's rows
// (this server process's, or the whole domain for a global or along-j
// reduction) become the variable's output block.
//
//   vertical   reduce_axis: per point over the levels (sum, average, min, max)
//   along i    reduce_domain direction="iDir": per row (a zonal mean on a
//              lat-lon grid), one value per row and level
//   along j    reduce_domain direction="jDir": per column
//   global     reduce_domain to a scalar: one value per level
//
// A value equal to the fill value (or NaN with detect_missing_value) is missing -- a masked point,
// a land point, a point no client gave -- and is left out; an output with no valid input is the
// fill value. Averages over the domain are weighted by the cells' areas when the domain has them
// (XIOS's area weights), else plain; sums, minima and maxima are unweighted; the vertical average
// is plain (the levels' thicknesses are the model's to apply, with an expression).
//
// Pure functions: thread-safe.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "netcdf/variable_layout.hpp"
#include "temporal/temporal.hpp"

namespace xios_lite::server {

/// Folds values into one output value with `op`.
class ReductionFold {
 public:
  explicit ReductionFold(Reduction op) : op_(op) {}
  void add(double v, double weight = 1.0) {
    if (!any_) {
      acc_ = op_ == Reduction::kAverage ? v * weight : v;
      weights_ = weight;
      any_ = true;
      return;
    }
    switch (op_) {
      case Reduction::kSum:
        acc_ += v;
        break;
      case Reduction::kAverage:
        acc_ += v * weight;
        weights_ += weight;
        break;
      case Reduction::kMin:
        acc_ = temporal::nan_min(acc_, v);
        break;
      case Reduction::kMax:
        acc_ = temporal::nan_max(acc_, v);
        break;
      case Reduction::kNone:
        break;
    }
  }
  [[nodiscard]] double result(double fill) const {
    if (!any_) return fill;
    return op_ == Reduction::kAverage ? acc_ / weights_ : acc_;
  }

 private:
  Reduction op_;
  double acc_ = 0;
  double weights_ = 0;
  bool any_ = false;
};

// A point without a valid value: the fill value (masked, or not sent), or
// NaN when the variable detects missing values (else NaN propagates, as in
// the temporal operations: client/temporal.hpp).
[[nodiscard]] inline bool is_missing(double v, double fill, bool nan_missing) {
  return v == fill || (nan_missing && std::isnan(v));
}

/// One sample of a variable with a reduction: `data` holds `nk` source
/// levels of rows [rows.jbegin, rows.jbegin + rows.nj) and `ni` columns of
/// the field's domain; `area`: the domain's cell areas (ni x nj_glo, i
/// fastest) or empty. Returns the output block in the variable's output
/// coordinates (see netcdf::VariableLayout: rows of its row dimension,
/// columns, output levels).
[[nodiscard]] inline netcdf::OutputBlock reduce_sample(const OutputShape& s, netcdf::RowRange rows,
                                                       int ni, int nk, const double* data,
                                                       double fill, bool nan_missing,
                                                       const std::vector<double>& area) {
  // The window (zoom or extract before a vertical reduction) and the levels.
  const Window w = s.horizontal == OutputShape::Horizontal::kDomain
                       ? s.window
                       : Window{0, ni, rows.jbegin, rows.nj};
  const int j0 = std::max(rows.jbegin, w.jbegin);
  const int j1 = std::min(rows.jbegin + rows.nj, w.jbegin + w.nj);
  const int nj = std::max(0, j1 - j0);
  const int i0 = w.ibegin;
  const int wi = w.ni;
  const auto at = [&](int k, int j, int i) {
    return data[(static_cast<std::size_t>(k) * static_cast<std::size_t>(rows.nj) +
                 static_cast<std::size_t>(j - rows.jbegin)) *
                    static_cast<std::size_t>(ni) +
                static_cast<std::size_t>(i)];
  };
  // Levels after the vertical part: the selected levels, or one reduced level.
  std::vector<int> levels = s.levels;
  if (levels.empty()) levels.push_back(0);
  const bool vertical = s.vertical_op != Reduction::kNone;
  const int nk_out = vertical ? 1 : static_cast<int>(levels.size());
  std::vector<double> column(static_cast<std::size_t>(nk_out) * static_cast<std::size_t>(nj) *
                             static_cast<std::size_t>(wi));
  for (int j = 0; j < nj; ++j) {
    for (int i = 0; i < wi; ++i) {
      if (vertical) {
        ReductionFold fold(s.vertical_op);
        for (int k = 0; k < nk; ++k) {
          const double v = at(k, j0 + j, i0 + i);
          if (!is_missing(v, fill, nan_missing)) fold.add(v);
        }
        column[static_cast<std::size_t>(j) * static_cast<std::size_t>(wi) +
               static_cast<std::size_t>(i)] = fold.result(fill);
      } else {
        for (int k = 0; k < nk_out; ++k) {
          column[(static_cast<std::size_t>(k) * static_cast<std::size_t>(nj) +
                  static_cast<std::size_t>(j)) *
                     static_cast<std::size_t>(wi) +
                 static_cast<std::size_t>(i)] =
              at(levels[static_cast<std::size_t>(k)], j0 + j, i0 + i);
        }
      }
    }
  }
  netcdf::OutputBlock out;
  out.nk = nk_out;
  if (nj == 0) {
    return out;  // no row here (a whole-domain reduction on another process): nothing to write
  }
  const auto cell = [&](int k, int j, int i) {
    return column[(static_cast<std::size_t>(k) * static_cast<std::size_t>(nj) +
                   static_cast<std::size_t>(j)) *
                      static_cast<std::size_t>(wi) +
                  static_cast<std::size_t>(i)];
  };
  const auto weight = [&](int j, int i) {
    return area.empty() ? 1.0
                        : area[static_cast<std::size_t>(j0 + j) * static_cast<std::size_t>(ni) +
                               static_cast<std::size_t>(i0 + i)];
  };
  // One value per level and line (a row along i, or a column along j): the
  // fold of the `across` cells of each of `lines` lines, cell x of line l
  // being (j, i) = at(l, x). Missing values are skipped.
  const auto fold_lines = [&](int lines, int across, auto at) {
    for (int k = 0; k < nk_out; ++k) {
      for (int l = 0; l < lines; ++l) {
        ReductionFold fold(s.horizontal_op);
        for (int x = 0; x < across; ++x) {
          const auto [j, i] = at(l, x);
          // extract_domain: the one cell of the line on the extracted row or column.
          if (s.line >= 0 &&
              (s.horizontal == OutputShape::Horizontal::kAlongI ? i0 + i : j0 + j) != s.line) {
            continue;
          }
          const double v = cell(k, j, i);
          if (!is_missing(v, fill, nan_missing)) fold.add(v, weight(j, i));
        }
        out.values.push_back(fold.result(fill));
      }
    }
  };
  switch (s.horizontal) {
    case OutputShape::Horizontal::kDomain:
      out.jbegin = j0 - w.jbegin;
      out.nj = nj;
      out.ibegin = 0;
      out.ni = wi;
      out.values = std::move(column);
      break;
    case OutputShape::Horizontal::kAlongI:  // one value per row
      out.jbegin = j0;
      out.nj = nj;
      out.ni = 1;
      fold_lines(nj, wi, [](int j, int i) { return std::pair{j, i}; });
      break;
    case OutputShape::Horizontal::kAlongJ:  // one value per column: the row dimension is i
      out.jbegin = 0;
      out.nj = wi;
      out.ni = 1;
      fold_lines(wi, nj, [](int i, int j) { return std::pair{j, i}; });
      break;
    case OutputShape::Horizontal::kGlobal:
      out.jbegin = 0;
      out.nj = 1;
      out.ni = 1;
      for (int k = 0; k < nk_out; ++k) {
        ReductionFold fold(s.horizontal_op);
        for (int j = 0; j < nj; ++j) {
          for (int i = 0; i < wi; ++i) {
            const double v = cell(k, j, i);
            if (!is_missing(v, fill, nan_missing)) fold.add(v, weight(j, i));
          }
        }
        out.values.push_back(fold.result(fill));
      }
      break;
  }
  return out;
}

}  // namespace xios_lite::server
