// Reads back the files of the programs in tests/fortran_xios and checks
// every value against what the programs sent:
//
//   check_xios_files model      xios_model_output.nc of xios_model_test.f90
//   check_xios_files contexts   atm_out.nc and srf_out.nc of xios_contexts_test.f90
//
// Prints "xios files read back exactly" and exits 0 when all match; names
// the variable, the index and both values otherwise.
#include <netcdf.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "nc_var_shape.hpp"

namespace {

int failures = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "check_xios_files: FAILED: %s\n", what.c_str());
  ++failures;
}

// The variable's values with their dimension lengths; empty when absent.
std::vector<double> read(int nc, const std::string& name, std::vector<std::size_t>& shape) {
  int var = -1;
  shape.clear();
  if (nc_inq_varid(nc, name.c_str(), &var) != NC_NOERR) return {};
  shape = xios_test::var_shape(nc, var);
  std::vector<double> values(xios_test::value_count(shape));
  if (nc_get_var_double(nc, var, values.data()) != NC_NOERR) {
    fail("cannot read " + name);
    return {};
  }
  return values;
}

std::string text(const std::vector<std::size_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  return out + ")";
}

// xios_model_test.f90: a 20 x 12 domain, levels 2 and 3 of 3 (the zoom),
// 24 hourly steps averaged over 6 h: record k holds the mean of steps
// 6k+1 .. 6k+6 of i + 100 j + 10000 l + 1e6 ts.
void check_model() {
  constexpr int kNi = 20;
  constexpr int kNj = 12;
  constexpr int kRecords = 4;
  const char* path = "xios_model_output.nc";
  int nc = -1;
  if (nc_open(path, NC_NOWRITE, &nc) != NC_NOERR) {
    fail(std::string("cannot open ") + path);
    return;
  }
  for (const char* name : {"field_A", "field_C"}) {
    std::vector<std::size_t> shape;
    const std::vector<double> v = read(nc, name, shape);
    const std::vector<std::size_t> want{kRecords, 2, kNj, kNi};
    if (shape != want) {
      fail(std::string(name) + " has shape " + text(shape) + ", not " + text(want));
      continue;
    }
    std::size_t n = 0;
    for (int k = 0; k < kRecords; ++k) {
      for (int lz = 0; lz < 2; ++lz) {
        for (int j = 0; j < kNj; ++j) {
          for (int i = 0; i < kNi; ++i, ++n) {
            const double expected = i + 100.0 * j + 10000.0 * (lz + 2) + 1e6 * (6 * k + 3.5);
            if (v[n] != expected) {
              fail(std::string(name) + "[" + std::to_string(k) + "," + std::to_string(lz) + "," +
                   std::to_string(j) + "," + std::to_string(i) + "] = " + std::to_string(v[n]) +
                   ", expected " + std::to_string(expected));
              nc_close(nc);
              return;
            }
          }
        }
      }
    }
  }
  std::vector<std::size_t> shape;
  const std::vector<double> lon = read(nc, "lon", shape);
  for (int i = 0; i < kNi && lon.size() == kNi; ++i) {
    if (lon[static_cast<std::size_t>(i)] != -171.0 + 18.0 * i)
      fail("lon[" + std::to_string(i) + "]");
  }
  if (lon.size() != kNi) fail("lon has shape " + text(shape));
  const std::vector<double> lat = read(nc, "lat", shape);
  for (int j = 0; j < kNj && lat.size() == kNj; ++j) {
    if (lat[static_cast<std::size_t>(j)] != -82.5 + 15.0 * j)
      fail("lat[" + std::to_string(j) + "]");
  }
  if (lat.size() != kNj) fail("lat has shape " + text(shape));
  // The time axis (xios_lite's time, XIOS's time_centered): record centres 6 h apart, from the
  // origin (2012-02-29 15:00), a day before the start (2012-03-01 15:00).
  const std::vector<double> t = read(nc, "time", shape);
  if (t.size() != kRecords) {
    fail("time has shape " + text(shape));
  } else {
    for (int k = 0; k < kRecords; ++k) {
      const double expected = 86400.0 + 3 * 3600.0 + k * 21600.0;
      if (std::fabs(t[static_cast<std::size_t>(k)] - expected) > 1e-6) {
        fail("time[" + std::to_string(k) + "] = " + std::to_string(t[static_cast<std::size_t>(k)]) +
             ", expected " + std::to_string(expected));
      }
    }
  }
  nc_close(nc);
}

// A variable of `want` shape whose value at flat index n, record k is
// expected(k, rest); nullopt: _FillValue. `tolerance` for float files.
template <typename Expected>
void check_values(int nc, const std::string& name, const std::vector<std::size_t>& want,
                  double tolerance, Expected expected) {
  std::vector<std::size_t> shape;
  const std::vector<double> v = read(nc, name, shape);
  if (shape != want) {
    fail(name + " has shape " + text(shape) + ", not " + text(want));
    return;
  }
  const std::size_t per_record = v.size() / want[0];
  for (std::size_t n = 0; n < v.size(); ++n) {
    const std::optional<double> e = expected(n / per_record, n % per_record);
    const bool ok =
        e ? std::fabs(v[n] - *e) <= tolerance * std::max(1.0, std::fabs(*e)) : v[n] > 9e36;
    if (!ok) {
      fail(name + " record " + std::to_string(n / per_record) + " point " +
           std::to_string(n % per_record) + " = " + std::to_string(v[n]) + ", expected " +
           (e ? std::to_string(*e) : std::string("_FillValue")));
      return;
    }
  }
}

// xios_contexts_test.f90: atm_out.nc (12 x 8, 2 levels, hourly steps
// averaged and maximised over 2 h) and srf_out.nc (every second point sent,
// 30 min steps, instant values each hour, in single precision).
void check_contexts() {
  constexpr int kNi = 12;
  constexpr int kNj = 8;
  int nc = -1;
  if (nc_open("atm_out.nc", NC_NOWRITE, &nc) != NC_NOERR) {
    fail("cannot open atm_out.nc");
  } else {
    const auto base = [&](std::size_t point) {
      const std::size_t i = point % kNi;
      const std::size_t j = (point / kNi) % kNj;
      const std::size_t l = point / (kNi * kNj) + 1;
      return static_cast<double>(i) + 100.0 * static_cast<double>(j) +
             1000.0 * static_cast<double>(l);
    };
    check_values(nc, "ta", {4, 2, kNj, kNi}, 0.0, [&](std::size_t k, std::size_t p) {
      return std::optional<double>(base(p) + 1e5 * (2.0 * static_cast<double>(k) + 1.5));
    });
    check_values(nc, "ta_max", {4, 2, kNj, kNi}, 0.0, [&](std::size_t k, std::size_t p) {
      return std::optional<double>(base(p) + 1e5 * (2.0 * static_cast<double>(k) + 2.0));
    });
    nc_close(nc);
  }
  if (nc_open("srf_out.nc", NC_NOWRITE, &nc) != NC_NOERR) {
    fail("cannot open srf_out.nc");
    return;
  }
  const auto sst = [&](std::size_t k, std::size_t p) -> std::optional<double> {
    const std::size_t i = p % kNi;
    const std::size_t j = p / kNi;
    if ((i + j) % 2 != 0) return std::nullopt;  // a point no client sent
    return static_cast<double>(i) + 100.0 * static_cast<double>(j) +
           10.0 * (2.0 * static_cast<double>(k) + 2.0);
  };
  check_values(nc, "sst", {4, kNj, kNi}, 1e-6, sst);
  check_values(nc, "sst_k", {4, kNj, kNi}, 1e-6, [&](std::size_t k, std::size_t p) {
    const std::optional<double> c = sst(k, p);
    return c ? std::optional<double>(*c + 273.15) : std::nullopt;
  });
  nc_close(nc);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "model") {
    check_model();
  } else if (what == "contexts") {
    check_contexts();
  } else {
    std::fprintf(stderr, "usage: check_xios_files model|contexts\n");
    return 2;
  }
  if (failures > 0) {
    return 1;
  }
  std::printf("xios files read back exactly\n");
  return 0;
}
