// Reads the Fortran demo's file back and checks every value exactly:
//
//   check_fortran_output fortran_out.nc
//
// tas is (time, lat, lon) = (4, 6, 12), ta is (time, lev, lat, lon) =
// (4, 3, 6, 12); the value at step s, level k, row j, column i is
// s*10000 + k*1000 + j*100 + i (k = 0 for tas), as fortran_model.f90 sends
// it. per_client is (time, clients), one point per output client, each
// client's part of the axis set by the model: s*10000 + r at point r. Exit
// status 0 and "fortran output read back exactly" when all match.
#include <netcdf.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kSteps = 4;
constexpr int kLevels = 3;
constexpr int kNj = 6;
constexpr int kNi = 12;

double value(int step, int k, int j, int i) { return step * 10000.0 + k * 1000.0 + j * 100.0 + i; }

// The variable's values when its extents are `shape`; an empty vector (and a
// message) otherwise.
std::vector<double> read(int nc, const char* name, const std::vector<std::size_t>& shape) {
  int var = -1;
  int ndims = 0;
  if (nc_inq_varid(nc, name, &var) != NC_NOERR || nc_inq_varndims(nc, var, &ndims) != NC_NOERR) {
    std::fprintf(stderr, "check_fortran_output: no variable %s\n", name);
    return {};
  }
  std::vector<int> dims(static_cast<std::size_t>(ndims));
  nc_inq_vardimid(nc, var, dims.data());
  std::size_t total = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    std::size_t len = 0;
    nc_inq_dimlen(nc, dims[d], &len);
    if (dims.size() != shape.size() || len != shape[d]) {
      std::fprintf(stderr,
                   "check_fortran_output: %s has %d dimensions, dimension %zu of length %zu\n",
                   name, ndims, d, len);
      return {};
    }
    total *= len;
  }
  std::vector<double> values(total);
  if (nc_get_var_double(nc, var, values.data()) != NC_NOERR) {
    std::fprintf(stderr, "check_fortran_output: cannot read %s\n", name);
    return {};
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: check_fortran_output FILE.nc\n");
    return 2;
  }
  int nc = -1;
  if (nc_open(argv[1], NC_NOWRITE, &nc) != NC_NOERR) {
    std::fprintf(stderr, "check_fortran_output: cannot open %s\n", argv[1]);
    return 1;
  }
  const std::vector<double> tas = read(nc, "tas", {kSteps, kNj, kNi});
  const std::vector<double> ta = read(nc, "ta", {kSteps, kLevels, kNj, kNi});
  // As many points as the run had clients (at least one).
  int clients_dim = -1;
  std::size_t n_clients = 0;
  if (nc_inq_dimid(nc, "clients", &clients_dim) != NC_NOERR ||
      nc_inq_dimlen(nc, clients_dim, &n_clients) != NC_NOERR || n_clients == 0) {
    std::fprintf(stderr, "check_fortran_output: no dimension clients of at least one point\n");
    nc_close(nc);
    return 1;
  }
  const std::vector<double> per_client = read(nc, "per_client", {kSteps, n_clients});
  nc_close(nc);
  if (tas.empty() || ta.empty() || per_client.empty()) {
    return 1;
  }
  int wrong = 0;
  std::size_t n2 = 0;
  std::size_t n3 = 0;
  std::size_t n1 = 0;
  for (int s = 1; s <= kSteps; ++s) {
    for (std::size_t r = 0; r < n_clients; ++r) {
      wrong += per_client[n1++] != value(s, 0, 0, static_cast<int>(r)) ? 1 : 0;
    }
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        wrong += tas[n2++] != value(s, 0, j, i) ? 1 : 0;
      }
    }
    for (int k = 1; k <= kLevels; ++k) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) {
          wrong += ta[n3++] != value(s, k, j, i) ? 1 : 0;
        }
      }
    }
  }
  if (wrong != 0) {
    std::printf("check_fortran_output: %d values differ\n", wrong);
    return 1;
  }
  std::printf(
      "check_fortran_output: fortran output read back exactly (%zu + %zu + %zu values, %zu "
      "clients)\n",
      n2, n3, n1, n_clients);
  return 0;
}
