// Reads mini_model's NetCDF output back and checks what makes it worth
// opening: the files are readable with the expected records, tracer q1 is
// conserved (its total is the same in every instant record), the column sum
// q1_col is the sum of q1 over the levels, and every averaged record is the
// mean of the instant records of its period.
//
//   check_model_output DIR STEPS PERIOD
//   check_model_output --same-tracer DIR_A DIR_B
//
// The second form checks that two runs (other backends, thread counts or
// decompositions) wrote the same q1 bit for bit: the advection does not
// depend on how the domain is cut.
//
// Serial (no MPI). Exit status 0 when every check holds, 1 otherwise, with a
// line per failed check.
#include <netcdf.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "check_model_output: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

struct Var {
  std::vector<std::size_t> shape;
  std::vector<double> data;
};

/// Reads variable `name` of `path` whole; exits on a NetCDF error.
Var read_var(const std::string& path, const std::string& name) {
  int nc = -1, var = -1, ndims = 0;
  int dims[NC_MAX_VAR_DIMS];
  auto check = [&](int status, const char* call) {
    if (status != NC_NOERR) {
      std::fprintf(stderr, "check_model_output: %s(%s, %s): %s\n", call, path.c_str(), name.c_str(),
                   nc_strerror(status));
      std::exit(1);
    }
  };
  check(nc_open(path.c_str(), NC_NOWRITE, &nc), "nc_open");
  check(nc_inq_varid(nc, name.c_str(), &var), "nc_inq_varid");
  check(nc_inq_varndims(nc, var, &ndims), "nc_inq_varndims");
  check(nc_inq_vardimid(nc, var, dims), "nc_inq_vardimid");
  Var v;
  std::size_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    std::size_t len = 0;
    check(nc_inq_dimlen(nc, dims[d], &len), "nc_inq_dimlen");
    v.shape.push_back(len);
    total *= len;
  }
  v.data.resize(total);
  check(nc_get_var_double(nc, var, v.data.data()), "nc_get_var_double");
  check(nc_close(nc), "nc_close");
  return v;
}

bool close(double a, double b, double rel) {
  return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)) + 1e-300;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--same-tracer") {
    const Var a = read_var(std::string(argv[2]) + "/mini_model_inst.nc", "q1");
    const Var b = read_var(std::string(argv[3]) + "/mini_model_inst.nc", "q1");
    expect(a.shape == b.shape, "q1 has the same shape in both runs");
    expect(a.data == b.data, std::string("q1 is identical in ") + argv[2] + " and " + argv[3]);
    if (failures == 0)
      std::printf("check_model_output: q1 identical in %s and %s\n", argv[2], argv[3]);
    return failures == 0 ? 0 : 1;
  }
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: check_model_output DIR STEPS PERIOD | --same-tracer DIR_A DIR_B\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::size_t steps = std::strtoul(argv[2], nullptr, 10);
  const std::size_t period = std::strtoul(argv[3], nullptr, 10);
  const std::string inst = dir + "/mini_model_inst.nc";
  const std::string avg = dir + "/mini_model_avg.nc";

  const Var q1 = read_var(inst, "q1");          // time, lev, lat, lon
  const Var col = read_var(inst, "q1_col");     // time, lat, lon
  const Var q1_avg = read_var(avg, "q1");       // time, lev, lat, lon
  const Var col_avg = read_var(avg, "q1_col");  // time, lat, lon
  expect(q1.shape.size() == 4 && col.shape.size() == 3, "q1 is 4-D and q1_col 3-D (with time)");
  if (failures != 0) return 1;
  expect(q1.shape[0] == steps, "inst file holds " + std::to_string(steps) + " records, not " +
                                   std::to_string(q1.shape[0]));
  expect(q1_avg.shape[0] == steps / period, "avg file holds " + std::to_string(steps / period) +
                                                " records, not " + std::to_string(q1_avg.shape[0]));
  expect(q1_avg.shape ==
             std::vector<std::size_t>({steps / period, q1.shape[1], q1.shape[2], q1.shape[3]}),
         "averaged q1 has the instant q1's shape");
  if (failures != 0) return 1;
  const std::size_t levels = q1.shape[1];
  const std::size_t cells = q1.shape[2] * q1.shape[3];
  const std::size_t record = levels * cells;

  // Conservation: the total of q1 in every record equals the first one's.
  double first = 0.0;
  for (std::size_t c = 0; c < record; ++c) first += q1.data[c];
  double worst = 0.0;
  for (std::size_t r = 0; r < steps; ++r) {
    double s = 0.0;
    for (std::size_t c = 0; c < record; ++c) s += q1.data[r * record + c];
    worst = std::max(worst, std::abs(s - first) / std::abs(first));
  }
  std::printf("check_model_output: q1 total %.15e, largest relative change %.3e over %zu records\n",
              first, worst, steps);
  expect(worst < 1e-12, "q1 is conserved to round-off");

  // q1_col is q1 summed over the levels.
  std::size_t bad_col = 0;
  for (std::size_t r = 0; r < steps; ++r) {
    for (std::size_t c = 0; c < cells; ++c) {
      double s = 0.0;
      for (std::size_t k = 0; k < levels; ++k) s += q1.data[r * record + k * cells + c];
      bad_col += close(s, col.data[r * cells + c], 1e-13) ? 0 : 1;
    }
  }
  expect(bad_col == 0, std::to_string(bad_col) + " q1_col values differ from the sum of q1");

  // Averages: record a is the mean of instant records [a*period, (a+1)*period).
  std::size_t bad_avg = 0;
  for (std::size_t a = 0; a < steps / period; ++a) {
    for (std::size_t c = 0; c < record; ++c) {
      double s = 0.0;
      for (std::size_t r = a * period; r < (a + 1) * period; ++r) s += q1.data[r * record + c];
      bad_avg += close(s / period, q1_avg.data[a * record + c], 1e-12) ? 0 : 1;
    }
    for (std::size_t c = 0; c < cells; ++c) {
      double s = 0.0;
      for (std::size_t r = a * period; r < (a + 1) * period; ++r) s += col.data[r * cells + c];
      bad_avg += close(s / period, col_avg.data[a * cells + c], 1e-12) ? 0 : 1;
    }
  }
  expect(bad_avg == 0,
         std::to_string(bad_avg) + " averaged values differ from the mean of the instant ones");
  if (failures == 0) std::printf("check_model_output: all model output checks passed\n");
  return failures == 0 ? 0 : 1;
}
