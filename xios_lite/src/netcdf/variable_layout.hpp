// What a file variable looks like in the file -- its dimensions after the
// grid transformations of its OutputShape -- and which of its rows a
// writer holds. Rows are the variable's j dimension (the output domain's
// rows, or the axis a reduce_domain made); a server process holds the rows
// of the field's domain that its endpoints receive (transport/bands.hpp),
// cut to the variable's window, and a variable that needs the whole domain
// in one place (a global or along-j reduction) lives on the first server
// process only.
//
// Pure functions: thread-safe, no NetCDF.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "records/row_range.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::netcdf {

using records::RowRange;

struct VariableLayout {
  enum class Horizontal { kDomain, kAxis, kNone };
  Horizontal horizontal = Horizontal::kDomain;
  int domain = -1;         ///< kDomain: the output domain
  int source_domain = -1;  ///< the domain of the field's grid (rows travel by it)
  int reduced_axis = -1;   ///< kAxis: the axis made by reduce_domain
  int rows = 1;            ///< extent of the row dimension (1 for kNone)
  int columns = 1;         ///< ni of the output domain (1 otherwise)
  int levels = 0;          ///< output levels; 0: no vertical dimension
  int vertical_axis = -1;  ///< the output vertical axis, -1: none
  /// A second vertical axis (outer in the file), -1: none; `levels` is then
  /// the product of both axes' sizes, vertical_axis fastest.
  int outer_axis = -1;
  bool whole_domain = false;
  Window window;  ///< kDomain: the output's window in the source domain
};

[[nodiscard]] inline VariableLayout layout_of(const Config& cfg, const OutputVariable& v) {
  const OutputShape& s = v.shape;
  VariableLayout l;
  l.source_domain =
      cfg.grids[static_cast<std::size_t>(cfg.fields[static_cast<std::size_t>(v.source)].grid)]
          .domain;
  l.whole_domain = s.needs_whole_domain();
  l.window = s.window;
  switch (s.horizontal) {
    case OutputShape::Horizontal::kDomain:
      l.domain = s.domain;
      l.rows = s.window.nj;
      l.columns = s.window.ni;
      break;
    case OutputShape::Horizontal::kAlongI:
    case OutputShape::Horizontal::kAlongJ:
      l.horizontal = VariableLayout::Horizontal::kAxis;
      l.reduced_axis = s.reduced_axis;
      l.rows = cfg.axes[static_cast<std::size_t>(s.reduced_axis)].n_glo;
      break;
    case OutputShape::Horizontal::kGlobal:
      l.horizontal = VariableLayout::Horizontal::kNone;
      break;
  }
  if (s.axis >= 0) {
    l.vertical_axis = s.axis;
    l.outer_axis = s.axis2;
    l.levels = static_cast<int>(s.levels.size());
  }
  return l;
}

/// The rows of the variable a writer holds that receives `source_rows` of
/// the field's domain; `owner`: it holds the whole-domain variables.
[[nodiscard]] inline RowRange held_rows(const VariableLayout& l, RowRange source_rows, bool owner) {
  if (l.whole_domain || l.horizontal == VariableLayout::Horizontal::kNone) {
    return owner ? RowRange{0, l.rows} : RowRange{0, 0};
  }
  const int lo = std::max(source_rows.jbegin, l.window.jbegin);
  const int hi = std::min(source_rows.jbegin + source_rows.nj, l.window.jbegin + l.window.nj);
  if (l.horizontal == VariableLayout::Horizontal::kAxis) {
    return source_rows;  // one value per source row (no window with a reduction)
  }
  return hi > lo ? RowRange{lo - l.window.jbegin, hi - lo} : RowRange{0, 0};
}

/// Where a block of a record lies in a variable's output coordinates: rows
/// jbegin.. of its row dimension, columns ibegin.., nk output levels.
struct BlockPlace {
  int jbegin = 0;
  int nj = 0;
  int ibegin = 0;
  int ni = 0;
  int nk = 1;
};

/// A block of a record with its nk x nj x ni values.
struct OutputBlock : BlockPlace {
  std::vector<double> values;
};

/// Whether a variable's output is its field's grid unchanged (no window,
/// every level): its blocks are written as they come.
[[nodiscard]] inline bool writes_field_grid(const Config& cfg, const OutputVariable& v) {
  const OutputShape& s = v.shape;
  if (s.reduces() || s.horizontal != OutputShape::Horizontal::kDomain) {
    return false;
  }
  const GridDef& g =
      cfg.grids[static_cast<std::size_t>(cfg.fields[static_cast<std::size_t>(v.source)].grid)];
  const DomainDef& d = cfg.domains[static_cast<std::size_t>(g.domain)];
  if (s.window != Window{0, d.ni_glo, 0, d.nj_glo}) {
    return false;
  }
  for (std::size_t k = 0; k < s.levels.size(); ++k) {
    if (s.levels[k] != static_cast<int>(k)) {
      return false;
    }
  }
  return g.axis < 0 || s.levels.size() == static_cast<std::size_t>(cfg.levels(
                                              cfg.fields[static_cast<std::size_t>(v.source)].grid));
}

/// Cuts a block of the field's grid (`nk` source levels of rows [jbegin,
/// jbegin + nj) and columns [ibegin, ibegin + ni), nk x nj x ni values) to
/// the variable's window and levels (XIOS's zoom and extract).
[[nodiscard]] inline OutputBlock cut_to_output(const OutputShape& s, int jbegin, int nj, int ibegin,
                                               int ni, int nk, const double* data) {
  const Window& w = s.window;
  OutputBlock out;
  const int j0 = std::max(jbegin, w.jbegin);
  const int j1 = std::min(jbegin + nj, w.jbegin + w.nj);
  const int i0 = std::max(ibegin, w.ibegin);
  const int i1 = std::min(ibegin + ni, w.ibegin + w.ni);
  out.jbegin = j0 - w.jbegin;
  out.ibegin = i0 - w.ibegin;
  out.nj = std::max(0, j1 - j0);
  out.ni = std::max(0, i1 - i0);
  std::vector<int> levels = s.levels;
  if (levels.empty()) {
    levels.push_back(0);  // a 2-D field
  }
  out.nk = static_cast<int>(levels.size());
  if (out.nj == 0 || out.ni == 0 || data == nullptr) {
    out.nj = out.ni = 0;
    return out;
  }
  out.values.resize(static_cast<std::size_t>(out.nk) * static_cast<std::size_t>(out.nj) *
                    static_cast<std::size_t>(out.ni));
  double* dst = out.values.data();
  for (const int k : levels) {
    (void)nk;
    for (int j = j0; j < j1; ++j) {
      const double* src = data +
                          (static_cast<std::size_t>(k) * static_cast<std::size_t>(nj) +
                           static_cast<std::size_t>(j - jbegin)) *
                              static_cast<std::size_t>(ni) +
                          static_cast<std::size_t>(i0 - ibegin);
      std::memcpy(dst, src, static_cast<std::size_t>(out.ni) * sizeof(double));
      dst += out.ni;
    }
  }
  return out;
}

}  // namespace xios_lite::netcdf
