// The model of the configurations in tests/xios_lite/configs/, launched
// MPMD beside xios_lite_server as XIOS users launch their models:
//
//   mpiexec -n 2 config_model iodef.xml atmosphere : -n 1 xios_lite_server iodef.xml
//
// Every thread is a client of the context named on the command line (with
// several contexts in the run, each component's processes name their own).
// The atmosphere sets its calendar, domain and axis from the code (the
// configuration leaves them empty); the ocean's are in the configuration.
// After finalise the context's first client reads every variable of every
// file of its context back and compares each value with the one computed
// here from what was sent: the temporal operation over the output period
// applied to the variable's expression, reduction or zoom. Exit status 0
// and "config_model CONTEXT: every value checked" when all is right.
#include <mpi.h>
#include <netcdf.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ep/communicator.hpp"
#include "model_program.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/server.hpp"

namespace {

constexpr int kSteps = 4;
// The extents of a component's domain and vertical axis.
struct Grid {
  int ni;
  int nj;
  int nk;
};
constexpr Grid kAtm{8, 6, 3};
constexpr Grid kOce{5, 4, 2};

double ta(int s, int k, int j, int i) { return 200.0 + 10.0 * k + j + 0.125 * i + 0.5 * s; }
double ua(int s, int k, int j, int i) { return 0.5 * (i - 3.5) + k - 0.25 * s + 0.1 * j; }
double ps(int s, int j, int i) { return 100000.0 + 100.0 * j - 10.0 * i + 25.0 * s; }
double sst(int s, int j, int i) { return 15.0 + 0.5 * j - 0.25 * i + 0.1 * s; }
double thetao(int s, int k, int j, int i) { return 10.0 - 3.0 * k + 0.5 * j + 0.01 * i + 0.2 * s; }
// The ocean's forcing, record r (one per 4 h: two steps).
double qns(int r, int j, int i) { return -50.0 + 10.0 * r + 2.0 * j - 0.5 * i; }
constexpr int kForcingRecords = kSteps / 2;

// The forcing file an earlier run would have left: written by the ocean's
// first client before close_definition (the servers read it once the
// definitions are complete).
bool write_forcing(const char* path) {
  std::vector<double> values;
  for (int r = 0; r < kForcingRecords; ++r) {
    for (int j = 0; j < kOce.nj; ++j) {
      for (int i = 0; i < kOce.ni; ++i) values.push_back(qns(r, j, i));
    }
  }
  int nc = -1;
  int t = -1;
  int y = -1;
  int x = -1;
  int v = -1;
  if (nc_create(path, NC_NETCDF4 | NC_CLOBBER, &nc) != NC_NOERR) return false;
  bool ok = nc_def_dim(nc, "time_counter", NC_UNLIMITED, &t) == NC_NOERR &&
            nc_def_dim(nc, "y", kOce.nj, &y) == NC_NOERR &&
            nc_def_dim(nc, "x", kOce.ni, &x) == NC_NOERR;
  const int var_dims[] = {t, y, x};
  ok = ok && nc_def_var(nc, "qns", NC_DOUBLE, 3, var_dims, &v) == NC_NOERR;
  const std::size_t start[] = {0, 0, 0};
  const std::size_t count[] = {kForcingRecords, kOce.nj, kOce.ni};
  ok = ok && nc_put_vara_double(nc, v, start, count, values.data()) == NC_NOERR;
  return nc_close(nc) == NC_NOERR && ok;
}

using Record = std::vector<double>;

// nk x nj x ni values of f(k, j, i), i fastest.
Record grid(int nk, int nj, int ni, const std::function<double(int, int, int)>& f) {
  Record r;
  for (int k = 0; k < nk; ++k) {
    for (int j = 0; j < nj; ++j) {
      for (int i = 0; i < ni; ++i) r.push_back(f(k, j, i));
    }
  }
  return r;
}

// (f(0) + ... + f(n - 1)) / n, summed in that order.
double mean_of(int n, const std::function<double(int)>& f) {
  double sum = 0;
  for (int m = 0; m < n; ++m) sum += f(m);
  return sum / n;
}

// What each variable of the configurations holds at step s.
const std::map<std::string, std::function<Record(int)>>& expectations() {
  static const std::map<std::string, std::function<Record(int)>> table{
      {"ta",
       [](int s) {
         return grid(kAtm.nk, kAtm.nj, kAtm.ni,
                     [s](int k, int j, int i) { return ta(s, k, j, i); });
       }},
      {"ua",
       [](int s) {
         return grid(kAtm.nk, kAtm.nj, kAtm.ni,
                     [s](int k, int j, int i) { return ua(s, k, j, i); });
       }},
      {"ps",
       [](int s) {
         return grid(1, kAtm.nj, kAtm.ni, [s](int, int j, int i) { return ps(s, j, i); });
       }},
      {"ps_hpa",
       [](int s) {
         return grid(1, kAtm.nj, kAtm.ni, [s](int, int j, int i) { return ps(s, j, i) / 100; });
       }},
      {"ta_celsius",
       [](int s) {
         return grid(kAtm.nk, kAtm.nj, kAtm.ni,
                     [s](int k, int j, int i) { return ta(s, k, j, i) - 273.15; });
       }},
      {"ke",
       [](int s) {
         return grid(kAtm.nk, kAtm.nj, kAtm.ni,
                     [s](int k, int j, int i) { return 0.5 * ua(s, k, j, i) * ua(s, k, j, i); });
       }},
      {"ta_vmean",
       [](int s) {
         return grid(1, kAtm.nj, kAtm.ni, [s](int, int j, int i) {
           return mean_of(kAtm.nk, [&](int k) { return ta(s, k, j, i); });
         });
       }},
      {"ta_zonal",
       [](int s) {
         return grid(1, kAtm.nk, kAtm.nj, [s](int, int k, int j) {
           return mean_of(kAtm.ni, [&](int i) { return ta(s, k, j, i); });
         });
       }},
      {"ps_tropics",
       [](int s) {
         return grid(1, 2, kAtm.ni, [s](int, int j, int i) { return ps(s, 2 + j, i); });
       }},
      {"sst",
       [](int s) {
         return grid(1, kOce.nj, kOce.ni, [s](int, int j, int i) { return sst(s, j, i); });
       }},
      {"sst_k",
       [](int s) {
         return grid(1, kOce.nj, kOce.ni, [s](int, int j, int i) { return sst(s, j, i) + 273.15; });
       }},
      {"thetao",
       [](int s) {
         return grid(kOce.nk, kOce.nj, kOce.ni,
                     [s](int k, int j, int i) { return thetao(s, k, j, i); });
       }},
  };
  return table;
}

struct Variable {
  std::string name;
  xios_lite::Operation operation;
};
struct File {
  std::string path;
  int steps_per_record = 1;
  std::vector<Variable> variables;
  std::vector<xios_lite::Attribute> attributes;
  double period_s = 0;  ///< output_freq in seconds
  double origin_s = 0;  ///< from the time origin to the start date
};

std::vector<double> read_var(const std::string& path, const std::string& var, std::string& error) {
  int nc = -1;
  int id = -1;
  int ndims = 0;
  int dims[NC_MAX_VAR_DIMS];
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    error = "cannot open " + path;
    return {};
  }
  std::size_t n = 1;
  if (nc_inq_varid(nc, var.c_str(), &id) != NC_NOERR ||
      nc_inq_var(nc, id, nullptr, nullptr, &ndims, dims, nullptr) != NC_NOERR) {
    error = path + " has no variable " + var;
    nc_close(nc);
    return {};
  }
  for (int d = 0; d < ndims; ++d) {
    std::size_t len = 0;
    nc_inq_dimlen(nc, dims[d], &len);
    n *= len;
  }
  std::vector<double> out(n);
  if (n > 0 && nc_get_var_double(nc, id, out.data()) != NC_NOERR) error = "cannot read " + var;
  nc_close(nc);
  return out;
}

std::string text_att(const std::string& path, const std::string& name) {
  int nc = -1;
  std::string out;
  std::size_t len = 0;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) return out;
  if (nc_inq_attlen(nc, NC_GLOBAL, name.c_str(), &len) == NC_NOERR) {
    out.resize(len);
    nc_get_att_text(nc, NC_GLOBAL, name.c_str(), out.data());
  }
  nc_close(nc);
  return out;
}

// Mismatches of every variable of `f`, each one described on stderr.
int check(const File& f) {
  int bad = 0;
  const int records = kSteps / f.steps_per_record;
  // Every file here has a mean: time is the middle of each output period,
  // in seconds since the calendar's time origin.
  std::string time_error;
  const std::vector<double> time = read_var(f.path, "time", time_error);
  for (int r = 0; r < records; ++r) {
    const double want = f.origin_s + (r + 0.5) * f.period_s;
    if (!time_error.empty() || time.size() != static_cast<std::size_t>(records) ||
        time[static_cast<std::size_t>(r)] != want) {
      std::fprintf(stderr, "config_model: %s: time[%d] is not %.17g %s\n", f.path.c_str(), r, want,
                   time_error.c_str());
      ++bad;
      break;
    }
  }
  for (const Variable& v : f.variables) {
    const auto e = expectations().find(v.name);
    if (e == expectations().end()) {
      std::fprintf(stderr, "config_model: no expectation for variable %s\n", v.name.c_str());
      ++bad;
      continue;
    }
    Record want;
    for (int r = 0; r < records; ++r) {
      Record acc = e->second(r * f.steps_per_record + 1);
      for (int s = r * f.steps_per_record + 2; s <= (r + 1) * f.steps_per_record; ++s) {
        const Record x = e->second(s);
        for (std::size_t p = 0; p < acc.size(); ++p) {
          acc[p] = v.operation == xios_lite::Operation::kInstant ? x[p] : acc[p] + x[p];
        }
      }
      if (v.operation == xios_lite::Operation::kAverage) {
        for (double& a : acc) a /= f.steps_per_record;
      }
      want.insert(want.end(), acc.begin(), acc.end());
    }
    std::string error;
    const std::vector<double> got = read_var(f.path, v.name, error);
    if (!error.empty() || got.size() != want.size()) {
      std::fprintf(stderr, "config_model: %s %s: %s (%zu values, expected %zu)\n", f.path.c_str(),
                   v.name.c_str(), error.c_str(), got.size(), want.size());
      ++bad;
      continue;
    }
    for (std::size_t p = 0; p < want.size(); ++p) {
      if (std::fabs(got[p] - want[p]) > 1e-9 * (1 + std::fabs(want[p]))) {
        std::fprintf(stderr, "config_model: %s %s[%zu] = %.17g, expected %.17g\n", f.path.c_str(),
                     v.name.c_str(), p, got[p], want[p]);
        ++bad;
        break;
      }
    }
  }
  for (const xios_lite::Attribute& a : f.attributes) {
    if (a.type == xios_lite::Attribute::Type::kString && text_att(f.path, a.name) != a.value) {
      std::fprintf(stderr, "config_model: %s: global attribute %s is not '%s'\n", f.path.c_str(),
                   a.name.c_str(), a.value.c_str());
      ++bad;
    }
  }
  return bad;
}

// The atmosphere's geometry and calendar, from the code (XIOS's
// xios_define_calendar, xios_set_timestep, xios_set_domain_attr, xios_set_axis_attr).
void define_atmosphere(xios_lite::Client& c, int j0, int nj) {
  xios_lite::CalendarAttributes cal;
  cal.type = "Gregorian";
  cal.start_date = "2000-01-01 00:00:00";
  cal.time_origin = "2000-01-01 00:00:00";
  c.define_calendar(cal);
  c.set_timestep("1h");
  xios_lite::DomainAttributes d;
  d.ni_glo = kAtm.ni;
  d.nj_glo = kAtm.nj;
  d.ibegin = 0;
  d.ni = kAtm.ni;
  d.jbegin = j0;
  d.nj = nj;
  for (int i = 0; i < kAtm.ni; ++i) d.lonvalue_1d.push_back(45.0 * i);
  for (int j = j0; j < j0 + nj; ++j) d.latvalue_1d.push_back(-75.0 + 30.0 * j);
  c.set_domain_attr("domain_atm", d);
  xios_lite::AxisAttributes z;
  z.n_glo = kAtm.nk;
  z.value = {1000, 850, 500};
  z.unit = "hPa";
  c.set_axis_attr("plev", z);
}

}  // namespace

int main(int argc, char** argv) {
  xios_test::model_program::init_mpi(&argc, &argv, 3, "config_model CONFIG.xml CONTEXT");
  const std::string cfg = argv[1];
  const std::string context = argv[2];
  int failed = 0;
  xios_lite::World world =
      xios_lite::split_world(MPI_COMM_WORLD, xios_lite::Role::kClient, context);
  std::vector<File> files;
  failed += xios_test::model_program::run_on_endpoints(
      world.local, "config_model (" + context + ")", [&](ep::Communicator& comm) {
        bool ok = true;
        xios_lite::ClientOptions options;
        options.print_report = false;
        xios_lite::Client client(comm, world, cfg, options);
        const bool atm = context == "atmosphere";
        const int nj_glo = atm ? kAtm.nj : kOce.nj;
        // Plain ints, not a structured binding: the lambdas below capture them.
        const xios_test::model_program::Rows rows =
            xios_test::model_program::even_rows(nj_glo, comm);
        const int j0 = rows.j0;
        const int nj = rows.j1 - rows.j0;
        if (atm) {
          define_atmosphere(client, j0, nj);
        } else {
          client.set_domain_block("domain_oce", {0, kOce.ni, j0, nj});
          if (comm.rank() == 0 && !write_forcing("ocean_forcing.nc")) {
            std::fprintf(stderr, "config_model: cannot write ocean_forcing.nc\n");
            ok = false;
          }
        }
        client.close_definition();
        if (comm.rank() == 0) {
          const xios_lite::Config& c = client.config();
          for (const xios_lite::FileDef& f : c.files) {
            File file{f.name + f.name_suffix + ".nc",
                      static_cast<int>(c.calendar.fixed_seconds(f.output_freq) /
                                       c.calendar.timestep_seconds()),
                      {},
                      f.attributes,
                      static_cast<double>(c.calendar.fixed_seconds(f.output_freq)),
                      // The ocean's time origin is 150 days (noleap) before its start.
                      atm ? 0.0 : 150.0 * 86400.0};
            for (const xios_lite::OutputVariable& v : f.variables) {
              file.variables.push_back({v.name, v.operation});
            }
            files.push_back(file);
          }
        }
        const auto block = [&](int nk, int ni, const std::function<double(int, int, int)>& f) {
          std::vector<double> v;
          for (int k = 0; k < nk; ++k) {
            for (int j = j0; j < j0 + nj; ++j) {
              for (int i = 0; i < ni; ++i) v.push_back(f(k, j, i));
            }
          }
          return v;
        };
        for (int s = 1; s <= kSteps; ++s) {
          client.update_calendar(s);
          if (atm) {
            client.send_field(
                "ta", block(kAtm.nk, kAtm.ni, [s](int k, int j, int i) { return ta(s, k, j, i); }));
            client.send_field(
                "ua", block(kAtm.nk, kAtm.ni, [s](int k, int j, int i) { return ua(s, k, j, i); }));
            client.send_field("ps",
                              block(1, kAtm.ni, [s](int, int j, int i) { return ps(s, j, i); }));
          } else {
            std::vector<double> forcing(static_cast<std::size_t>(kOce.ni) * nj);
            client.recv_field("qns", forcing);
            if (forcing !=
                block(1, kOce.ni, [s](int, int j, int i) { return qns((s - 1) / 2, j, i); })) {
              std::fprintf(stderr, "config_model: ocean client %d: qns at step %d differs\n",
                           comm.rank(), s);
              ok = false;
            }
            client.send_field("sst",
                              block(1, kOce.ni, [s](int, int j, int i) { return sst(s, j, i); }));
            client.send_field("thetao", block(kOce.nk, kOce.ni, [s](int k, int j, int i) {
                                return thetao(s, k, j, i);
                              }));
          }
        }
        (void)client.finalise();
        return ok;
      });
  int rank = 0;
  MPI_Comm_rank(world.local, &rank);
  if (rank == 0 && failed == 0) {
    for (const File& f : files) failed += check(f);
    if (context == "atmosphere") {
      // The disabled file_group's file is not written.
      int nc = -1;
      if (nc_open("atm_debug.nc", NC_NOWRITE, &nc) == NC_NOERR) {
        nc_close(nc);
        std::fprintf(stderr,
                     "config_model: atm_debug.nc was written (its file_group is disabled)\n");
        ++failed;
      }
    }
    if (files.empty()) {
      std::fprintf(stderr, "config_model: context %s has no file\n", context.c_str());
      failed = 1;
    }
    if (failed == 0) {
      std::printf("config_model %s: every value checked (%zu files)\n", context.c_str(),
                  files.size());
    }
  }
  xios_lite::free_world(world);
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
