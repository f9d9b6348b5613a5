#include "input_file.hpp"

#include <netcdf.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <mutex>

namespace xios_lite::netcdf {
namespace {

std::mutex& netcdf_mutex() {
  static std::mutex m;
  return m;
}

// Closes the file on every path out.
struct OpenFile {
  int id = -1;
  ~OpenFile() {
    if (id >= 0) (void)nc_close(id);
  }
};

}  // namespace

std::string read_input(const InputVariableShape& shape, int first, int count, int jbegin, int nj,
                       int ibegin, int ni, InputBlock& out) {
  const std::lock_guard lock(netcdf_mutex());
  const std::string what = "variable '" + shape.variable + "' of '" + shape.path + "'";
  OpenFile file;
  if (const int rc = nc_open(shape.path.c_str(), NC_NOWRITE, &file.id); rc != NC_NOERR) {
    file.id = -1;
    return "cannot open the input file '" + shape.path + "': " + nc_strerror(rc);
  }
  int var = -1;
  if (nc_inq_varid(file.id, shape.variable.c_str(), &var) != NC_NOERR) {
    return "the input file '" + shape.path + "' has no variable '" + shape.variable + "'";
  }
  int ndims = 0;
  std::array<int, NC_MAX_VAR_DIMS> dims{};
  if (const int rc = nc_inq_var(file.id, var, nullptr, nullptr, &ndims, dims.data(), nullptr);
      rc != NC_NOERR) {
    return what + ": " + nc_strerror(rc);
  }
  std::vector<std::size_t> lengths(static_cast<std::size_t>(ndims));
  std::string found;
  for (int d = 0; d < ndims; ++d) {
    std::array<char, NC_MAX_NAME + 1> name{};
    if (const int rc = nc_inq_dim(file.id, dims[static_cast<std::size_t>(d)], name.data(),
                                  &lengths[static_cast<std::size_t>(d)]);
        rc != NC_NOERR) {
      return what + ": " + nc_strerror(rc);
    }
    found += (found.empty() ? "" : ", ") + std::string(name.data()) + " " +
             std::to_string(lengths[static_cast<std::size_t>(d)]);
  }
  const int spatial = shape.nk > 1 ? 3 : 2;
  std::vector<std::size_t> grid;
  if (shape.nk > 1) grid.push_back(static_cast<std::size_t>(shape.nk));
  grid.push_back(static_cast<std::size_t>(shape.nj_glo));
  grid.push_back(static_cast<std::size_t>(shape.ni_glo));
  // Without a time dimension a variable has exactly the grid's; its first
  // dimension unlimited, it is the time dimension.
  int unlimited_count = 0;
  std::vector<int> unlimited;
  if (nc_inq_unlimdims(file.id, &unlimited_count, nullptr) == NC_NOERR && unlimited_count > 0) {
    unlimited.resize(static_cast<std::size_t>(unlimited_count));
    (void)nc_inq_unlimdims(file.id, &unlimited_count, unlimited.data());
  }
  const bool first_unlimited =
      ndims > 0 && std::find(unlimited.begin(), unlimited.end(), dims[0]) != unlimited.end();
  const bool timeless = ndims == spatial && !first_unlimited;
  bool fits = timeless || ndims == spatial + 1;
  for (std::size_t g = 0; fits && g < grid.size(); ++g) {
    fits = lengths[lengths.size() - grid.size() + g] == grid[g];
  }
  if (!fits) {
    return what + " has dimensions (" + found + "); its field's grid is ([time, ]" +
           (shape.nk > 1 ? std::to_string(shape.nk) + " levels, " : std::string()) +
           std::to_string(shape.nj_glo) + " x " + std::to_string(shape.ni_glo) + ")";
  }
  out.timeless = timeless;
  out.records = timeless ? 1 : static_cast<int>(lengths.front());
  if (count < 0) count = timeless ? 1 : out.records - first;
  if (!timeless && (first < 0 || first + count > out.records)) {
    return "the input file '" + shape.path + "' holds " + std::to_string(out.records) +
           " record(s) of variable '" + shape.variable + "': record " +
           std::to_string(first + count - 1) + " does not exist";
  }
  std::vector<std::size_t> start;
  std::vector<std::size_t> extent;
  if (!timeless) {
    start.push_back(static_cast<std::size_t>(first));
    extent.push_back(static_cast<std::size_t>(count));
  }
  if (shape.nk > 1) {
    start.push_back(0);
    extent.push_back(static_cast<std::size_t>(shape.nk));
  }
  start.push_back(static_cast<std::size_t>(jbegin));
  extent.push_back(static_cast<std::size_t>(nj));
  start.push_back(static_cast<std::size_t>(ibegin));
  extent.push_back(static_cast<std::size_t>(ni));
  out.values.assign(static_cast<std::size_t>(timeless ? 1 : count) *
                        static_cast<std::size_t>(shape.nk) * static_cast<std::size_t>(nj) *
                        static_cast<std::size_t>(ni),
                    0.0);
  if (out.values.empty()) return "";
  if (const int rc =
          nc_get_vara_double(file.id, var, start.data(), extent.data(), out.values.data());
      rc != NC_NOERR) {
    return what + ": nc_get_vara_double: " + nc_strerror(rc);
  }
  return "";
}

}  // namespace xios_lite::netcdf
