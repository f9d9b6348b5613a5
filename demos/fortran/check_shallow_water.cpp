// Reads shallow_water.f90's two files back:
//
//   check_shallow_water DIR RECORDS NI NJ
//
// DIR/shallow_water_inst.nc must hold h, u, v and DIR/shallow_water_avg.nc
// h_avg, u_avg, v_avg, each (time, y, x) = (RECORDS, NJ, NI); every instant
// record of h must hold the same total mass (relative 1e-12: the scheme
// conserves it to round-off, and a halo value written in place of an interior
// one would break it). Exit status 0 and "shallow water output ok" when all
// hold.
#include <netcdf.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// The variable's values when its extents are `shape`; an empty vector (and a
// message) otherwise.
std::vector<double> read(int nc, const std::string& file, const char* name,
                         const std::vector<std::size_t>& shape) {
  int var = -1;
  int ndims = 0;
  if (nc_inq_varid(nc, name, &var) != NC_NOERR || nc_inq_varndims(nc, var, &ndims) != NC_NOERR) {
    std::fprintf(stderr, "check_shallow_water: %s: no variable %s\n", file.c_str(), name);
    return {};
  }
  std::vector<int> dims(static_cast<std::size_t>(ndims));
  nc_inq_vardimid(nc, var, dims.data());
  if (dims.size() != shape.size()) {
    std::fprintf(stderr, "check_shallow_water: %s: %s has %d dimensions, not %zu\n", file.c_str(),
                 name, ndims, shape.size());
    return {};
  }
  std::size_t total = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    std::size_t len = 0;
    nc_inq_dimlen(nc, dims[d], &len);
    if (len != shape[d]) {
      std::fprintf(stderr, "check_shallow_water: %s: %s dimension %zu has length %zu, not %zu\n",
                   file.c_str(), name, d, len, shape[d]);
      return {};
    }
    total *= len;
  }
  std::vector<double> values(total);
  if (nc_get_var_double(nc, var, values.data()) != NC_NOERR) {
    std::fprintf(stderr, "check_shallow_water: %s: cannot read %s\n", file.c_str(), name);
    return {};
  }
  return values;
}

// Reads every variable of `names` from `file`; false (and a message) if one
// is missing or misshapen. The first one's values land in `first`.
bool check_file(const std::string& file, const std::vector<const char*>& names,
                const std::vector<std::size_t>& shape, std::vector<double>& first) {
  int nc = -1;
  if (nc_open(file.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    std::fprintf(stderr, "check_shallow_water: cannot open %s\n", file.c_str());
    return false;
  }
  bool ok = true;
  for (const char* name : names) {
    std::vector<double> values = read(nc, file, name, shape);
    ok = ok && !values.empty();
    if (first.empty()) first = std::move(values);
  }
  nc_close(nc);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: check_shallow_water DIR RECORDS NI NJ\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::vector<std::size_t> shape = {std::strtoul(argv[2], nullptr, 10),
                                          std::strtoul(argv[4], nullptr, 10),
                                          std::strtoul(argv[3], nullptr, 10)};
  std::vector<double> h;
  std::vector<double> h_avg;
  const bool inst_ok = check_file(dir + "/shallow_water_inst.nc", {"h", "u", "v"}, shape, h);
  const bool avg_ok =
      check_file(dir + "/shallow_water_avg.nc", {"h_avg", "u_avg", "v_avg"}, shape, h_avg);
  if (!inst_ok || !avg_ok) return 1;

  const std::size_t cells = shape[1] * shape[2];
  std::vector<double> mass(shape[0], 0.0);
  for (std::size_t r = 0; r < shape[0]; ++r) {
    for (std::size_t c = 0; c < cells; ++c) mass[r] += h[r * cells + c];
  }
  for (std::size_t r = 1; r < shape[0]; ++r) {
    const double change = std::abs(mass[r] - mass[0]) / mass[0];
    if (!(change < 1e-12)) {
      std::printf("check_shallow_water: h's total in record %zu differs from record 0 by %.3e\n", r,
                  change);
      return 1;
    }
  }
  std::printf("check_shallow_water: %zu records of h u v and h_avg u_avg v_avg (%zu x %zu)\n",
              shape[0], shape[2], shape[1]);
  std::printf("shallow water output ok\n");
  return 0;
}
