// The shape of a NetCDF variable, for the programs that read the tests'
// files back: nc_reader (under gtest) and check_xios_files (without it).
#pragma once

#include <netcdf.h>

#include <cstddef>
#include <functional>
#include <numeric>
#include <vector>

namespace xios_test {

/// The lengths of variable `var`'s dimensions in the open file `nc`,
/// outermost first; empty when NetCDF cannot tell them.
inline std::vector<std::size_t> var_shape(int nc, int var) {
  int ndims = 0;
  if (nc_inq_varndims(nc, var, &ndims) != NC_NOERR) return {};
  std::vector<int> dims(static_cast<std::size_t>(ndims));
  if (nc_inq_vardimid(nc, var, dims.data()) != NC_NOERR) return {};
  std::vector<std::size_t> shape;
  for (const int d : dims) {
    std::size_t len = 0;
    if (nc_inq_dimlen(nc, d, &len) != NC_NOERR) return {};
    shape.push_back(len);
  }
  return shape;
}

/// The number of values of that shape (1 for a scalar variable).
inline std::size_t value_count(const std::vector<std::size_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
}

}  // namespace xios_test
