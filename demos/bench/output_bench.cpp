// output_bench: client-visible output time of xios_lite in its modes.
//
// N steps x F fields of S bytes per client (one EP client per thread), a
// compute phase between steps, output at every step (output_freq 1ts):
//
//   ep_server        every thread is a client of one server process
//   ep_server_threads  the same, the server process running T receiving
//                    endpoints (T = --threads) instead of one
//   funneled_server  only the master thread of each process is a client;
//                    the other threads hand it their blocks (before endpoints)
//   sync             no server: the processes write through parallel NetCDF-4
//   raw_write        parallel NetCDF-4 puts of the same data, no library: the
//                    throughput reference
//   memcpy           each client copies its step's fields into a buffer of its
//                    own: the least a hand-over of the data can cost
//
// Layout: the last MPI process is the server of the server modes and idles in
// the others, so every mode has the same clients. Modes are interleaved
// repetition by repetition after one warm-up run of each. The run is judged
// when the clients' threads and the server fit the cores (1 client process x
// 1 thread + 1 server on 2 cores); larger shapes are printed as
// oversubscribed.
//
// t_avg_us: per step, the time a client spends inside the output calls
// (update_calendar + send_field; in raw_write the write including waiting for
// the master), averaged over clients and steps; min/avg/max over repetitions.
// MBps: the writer's throughput: the server's bytes written / its time in
// NetCDF (server modes), bytes / time in NetCDF (sync, raw_write).
//
//   mpiexec -n 3 output_bench --threads 2 [--steps 20] [--fields 4] [--size 256K]
//           [--compute-us 20000] [--reps 3] [--dir /tmp] [--json F] [--csv F]
#include <mpi.h>
#include <netcdf.h>
#include <netcdf_par.h>
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "bench_mpi.hpp"
#include "bench_report.hpp"
#include "ep/communicator.hpp"
#include "machine.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/server.hpp"

namespace {

constexpr const char* kBenchName = "output_bench";
constexpr const char* kUsage =
    "usage: mpiexec -n P output_bench [--threads T] [--steps N] [--fields F] [--size S]\n"
    "         [--compute-us US] [--reps R] [--modes a,b] [--report] [--dir DIR] [--json FILE] "
    "[--csv FILE]\n"
    "  P-1 client processes of T threads, 1 server process (P >= 2)\n"
    "  modes: ep_server, ep_server_threads, funneled_server, sync, raw_write, memcpy\n";
constexpr std::string_view kModeNames[] = {"ep_server", "ep_server_threads", "funneled_server",
                                           "sync",      "raw_write",         "memcpy"};

struct Options {
  int threads = 0;
  int steps = 20;
  int fields = 4;
  std::size_t size = 256 * 1024;  // bytes per field per client
  int compute_us = 20000;
  int reps = 3;
  bool report = false;  // print xios_lite's own finalise report of every run
  std::vector<std::string> modes;
  std::string dir = "/tmp";
  std::string json = "bench-results/output_bench.json";
  std::string csv = "bench-results/output_bench.csv";
};

Options parse_options(int argc, char** argv) {
  Options o;
  o.threads = omp_get_max_threads();
  bench::OptionParser parser;
  parser.count("--threads", o.threads)
      .count("--steps", o.steps)
      .count("--fields", o.fields)
      .count("--size", o.size)
      .count("--compute-us", o.compute_us)
      .count("--reps", o.reps)
      .list("--modes", kModeNames, o.modes)
      .flag("--report", o.report)
      .text("--dir", o.dir)
      .text("--json", o.json)
      .text("--csv", o.csv);
  parser.parse(argc, argv);
  return o;
}

// "f<index>" (built by append: GCC 12's -Wrestrict misfires on "f" + std::string).
std::string field_name(int f) {
  std::string name(1, 'f');
  name.append(std::to_string(f));
  return name;
}

// The geometry: each client (thread) owns `rows` full rows of an nx-wide domain.
struct Geometry {
  int nx = 0;
  int rows = 0;  // per client
  int clients = 0;
  [[nodiscard]] int ny() const { return rows * clients; }
};

Geometry geometry(const Options& o, int client_processes) {
  Geometry g;
  const std::size_t points = std::max<std::size_t>(1, o.size / sizeof(double));
  g.rows = 8;
  g.nx = static_cast<int>(std::max<std::size_t>(1, points / static_cast<std::size_t>(g.rows)));
  g.clients = client_processes * o.threads;
  return g;
}

std::string config_text(const Options& o, const Geometry& g, const std::string& file,
                        bool one_file) {
  std::string xml =
      "<xios_lite><context id=\"bench\">\n"
      "  <calendar type=\"gregorian\" start_date=\"2000-01-01\" timestep=\"1h\"/>\n"
      "  <options finalise_timeout=\"120\"/>\n"
      "  <domain_definition><domain id=\"d\" ni_glo=\"" +
      std::to_string(g.nx) + "\" nj_glo=\"" + std::to_string(g.ny()) +
      "\"/></domain_definition>\n"
      "  <grid_definition><grid id=\"g\" domain_ref=\"d\"/></grid_definition>\n"
      "  <field_definition>\n";
  for (int f = 0; f < o.fields; ++f) {
    xml += "    <field id=\"" + field_name(f) + "\" grid_ref=\"g\" units=\"1\"/>\n";
  }
  xml += "  </field_definition>\n  <file_definition>\n    <file id=\"out\" name=\"" + file +
         "\" output_freq=\"1ts\" type=\"" + (one_file ? "one_file" : "multiple_file") + "\">";
  for (int f = 0; f < o.fields; ++f) {
    xml += "<field field_ref=\"" + field_name(f) + "\"/>";
  }
  return xml + "</file>\n  </file_definition>\n</context></xios_lite>\n";
}

// The model's compute phase: spin for `us` microseconds (real CPU work the
// server must overlap with).
double compute(int us) {
  const double t_end = MPI_Wtime() + us * 1e-6;
  double x = 1.0;
  while (MPI_Wtime() < t_end) {
    for (int i = 0; i < 1000; ++i) {
      x = x * 1.0000001 + 1e-9;
    }
  }
  return x;
}

struct RunResult {
  double output_us_per_step = 0;  // mean over clients
  double total_s = 0;
  double mbps = 0;
  double bytes = 0;  // written per run
};

// One run of an xios_lite mode on the client processes (`clients` comm) and,
// for server modes, the server process with `server_threads` receiving endpoints.
RunResult run_library(const Options& o, const Geometry& g, MPI_Comm world, MPI_Comm clients,
                      xios_lite::Mode mode, int server_threads, const std::string& cfg) {
  RunResult res;
  const bool server_mode = mode != xios_lite::Mode::kSynchronous;
  xios_lite::World w;
  if (server_mode) {
    w = xios_lite::split_world(world, xios_lite::role_of_last_ranks(world, 1));
    if (w.role == xios_lite::Role::kServer) {
      xios_lite::ServerOptions server_options;
      server_options.threads = server_threads;
      (void)xios_lite::run_server(w, cfg, server_options);
      xios_lite::free_world(w);
      return res;
    }
  } else {
    if (clients == MPI_COMM_NULL) {
      return res;  // the server process idles
    }
    w = xios_lite::split_world(clients, xios_lite::Role::kClient);
  }
  std::vector<ep::Communicator> eps;
  double output_s = 0;
  xios_lite::Report report;
  const double t0 = MPI_Wtime();
#pragma omp parallel num_threads(o.threads) reduction(+ : output_s)
  {
#pragma omp single
    eps = ep::create_endpoints(w.local, omp_get_num_threads());
    ep::Communicator& comm = eps[static_cast<std::size_t>(omp_get_thread_num())];
    bench::run_or_abort(kBenchName, [&] {
      xios_lite::ClientOptions opt;
      opt.mode = mode;
      opt.print_report = o.report;
      xios_lite::Client client(comm, w, cfg, opt);
      client.set_domain_block("d", {0, g.nx, comm.rank() * g.rows, g.rows});
      client.close_definition();
      std::vector<std::vector<double>> data(
          static_cast<std::size_t>(o.fields),
          std::vector<double>(static_cast<std::size_t>(g.nx) * g.rows));
      double sink = 0;
      for (int s = 1; s <= o.steps; ++s) {
        sink += compute(o.compute_us);
        for (std::size_t f = 0; f < data.size(); ++f) {
          data[f][0] = s + static_cast<double>(f) + sink * 0;
        }
        const double a = MPI_Wtime();
        client.update_calendar(s);
        for (int f = 0; f < o.fields; ++f) {
          client.send_field(field_name(f), data[static_cast<std::size_t>(f)]);
        }
        output_s += MPI_Wtime() - a;
      }
      xios_lite::Report r = client.finalise();
      if (comm.rank() == 0) {
        report = r;
      }
    });
    comm.free();
  }
  res.total_s = MPI_Wtime() - t0;
  double sum = 0;
  bench::check_mpi(MPI_Allreduce(&output_s, &sum, 1, MPI_DOUBLE, MPI_SUM, w.local),
                   "MPI_Allreduce");
  res.output_us_per_step = sum / g.clients / o.steps * 1e6;
  if (server_mode) {
    for (const auto& s : report.servers) {
      res.bytes += s.bytes_written;
      res.mbps += s.write_mbps();
    }
  } else {
    double write_s = 0;
    for (const auto& c : report.clients) {
      res.bytes += c.bytes_sent;
      write_s = std::max(write_s, c.write_s);
    }
    res.mbps = write_s > 0 ? res.bytes / write_s / 1e6 : 0;
  }
  xios_lite::free_world(w);
  return res;
}

void check_nc(int rc, const char* call) {
  if (rc != NC_NOERR) {
    throw std::runtime_error(std::string(call) + ": " + nc_strerror(rc));
  }
}

// The reference: each process's master writes its threads' blocks with
// collective parallel NetCDF-4 puts, no library in between.
RunResult run_raw(const Options& o, const Geometry& g, MPI_Comm clients, const std::string& path) {
  RunResult res;
  int rank = 0;
  MPI_Comm_rank(clients, &rank);
  int ncid = -1;
  std::vector<int> vars(static_cast<std::size_t>(o.fields));
  check_nc(nc_create_par(path.c_str(), NC_NETCDF4 | NC_CLOBBER, clients, MPI_INFO_NULL, &ncid),
           "nc_create_par");
  int dims[3];
  check_nc(nc_def_dim(ncid, "time", NC_UNLIMITED, &dims[0]), "nc_def_dim");
  check_nc(nc_def_dim(ncid, "lat", static_cast<size_t>(g.ny()), &dims[1]), "nc_def_dim");
  check_nc(nc_def_dim(ncid, "lon", static_cast<size_t>(g.nx), &dims[2]), "nc_def_dim");
  for (int f = 0; f < o.fields; ++f) {
    const std::string name = field_name(f);
    check_nc(nc_def_var(ncid, name.c_str(), NC_DOUBLE, 3, dims, &vars[static_cast<std::size_t>(f)]),
             "nc_def_var");
    const size_t chunk[3] = {1, static_cast<size_t>(g.ny()), static_cast<size_t>(g.nx)};
    check_nc(nc_def_var_chunking(ncid, vars[static_cast<std::size_t>(f)], NC_CHUNKED, chunk),
             "nc_def_var_chunking");
  }
  check_nc(nc_enddef(ncid), "nc_enddef");
  for (int v : vars) {
    check_nc(nc_var_par_access(ncid, v, NC_COLLECTIVE), "nc_var_par_access");
  }
  std::vector<std::vector<double>> blocks(
      static_cast<std::size_t>(o.threads),
      std::vector<double>(static_cast<std::size_t>(g.nx) * g.rows));
  double output_s = 0;
  double write_s = 0;
  const double t0 = MPI_Wtime();
#pragma omp parallel num_threads(o.threads) reduction(+ : output_s)
  {
    const int t = omp_get_thread_num();
    double sink = 0;
    for (int s = 1; s <= o.steps; ++s) {
      sink += compute(o.compute_us);
      blocks[static_cast<std::size_t>(t)][0] = s + sink * 0;
      const double a = MPI_Wtime();
#pragma omp barrier
#pragma omp master
      {
        const double w0 = MPI_Wtime();
        for (int f = 0; f < o.fields; ++f) {
          for (int b = 0; b < o.threads; ++b) {
            const int client = rank * o.threads + b;
            const size_t start[3] = {static_cast<size_t>(s - 1),
                                     static_cast<size_t>(client * g.rows), 0};
            const size_t count[3] = {1, static_cast<size_t>(g.rows), static_cast<size_t>(g.nx)};
            bench::run_or_abort(kBenchName, [&] {
              check_nc(nc_put_vara_double(ncid, vars[static_cast<std::size_t>(f)], start, count,
                                          blocks[static_cast<std::size_t>(b)].data()),
                       "nc_put_vara_double");
            });
          }
        }
        write_s += MPI_Wtime() - w0;
      }
#pragma omp barrier
      output_s += MPI_Wtime() - a;
    }
  }
  const double c0 = MPI_Wtime();
  check_nc(nc_close(ncid), "nc_close");
  write_s += MPI_Wtime() - c0;
  res.total_s = MPI_Wtime() - t0;
  double sum = 0;
  double max_write = 0;
  bench::check_mpi(MPI_Allreduce(&output_s, &sum, 1, MPI_DOUBLE, MPI_SUM, clients),
                   "MPI_Allreduce");
  bench::check_mpi(MPI_Allreduce(&write_s, &max_write, 1, MPI_DOUBLE, MPI_MAX, clients),
                   "MPI_Allreduce");
  res.output_us_per_step = sum / g.clients / o.steps * 1e6;
  res.bytes = static_cast<double>(o.steps) * o.fields * g.nx * g.ny() * sizeof(double);
  res.mbps = res.bytes / max_write / 1e6;
  return res;
}

// The hand-over reference: every client thread copies its step's fields into
// a buffer of its own (what a client that hands its data over must at least
// do), with the same compute phase between steps.
RunResult run_memcpy(const Options& o, const Geometry& g, MPI_Comm clients) {
  RunResult res;
  const auto points = static_cast<std::size_t>(g.nx) * static_cast<std::size_t>(g.rows);
  double output_s = 0;
  const double t0 = MPI_Wtime();
#pragma omp parallel num_threads(o.threads) reduction(+ : output_s)
  {
    std::vector<std::vector<double>> data(static_cast<std::size_t>(o.fields),
                                          std::vector<double>(points, 1.0));
    std::vector<std::vector<double>> copies(data);
    double sink = 0;
    for (int s = 1; s <= o.steps; ++s) {
      sink += compute(o.compute_us);
      data[0][0] = s + sink * 0;
      const double a = MPI_Wtime();
      for (std::size_t f = 0; f < data.size(); ++f) {
        std::memcpy(copies[f].data(), data[f].data(), points * sizeof(double));
        asm volatile("" : : "r"(copies[f].data()) : "memory");  // keeps the copy
      }
      output_s += MPI_Wtime() - a;
    }
  }
  res.total_s = MPI_Wtime() - t0;
  double sum = 0;
  bench::check_mpi(MPI_Allreduce(&output_s, &sum, 1, MPI_DOUBLE, MPI_SUM, clients),
                   "MPI_Allreduce");
  res.output_us_per_step = sum / g.clients / o.steps * 1e6;
  res.bytes = static_cast<double>(o.steps) * o.fields * static_cast<double>(points) *
              sizeof(double) * g.clients;
  return res;
}

}  // namespace

namespace {

struct ModeRuns {
  std::string name;
  std::vector<double> output_s;  // per rep: seconds per step (TimeStats wants seconds)
  std::vector<double> total_s;
  double mbps = 0;
  double bytes = 0;
};

void print_target(const char* what, double ratio, double limit, bool at_most,
                  const std::string& why) {
  const bool met = at_most ? ratio <= limit : ratio >= limit;
  std::printf("# target %-52s ratio %.3f (%s %.2f): %s%s%s\n", what, ratio,
              at_most ? "<=" : ">=", limit, met ? "met" : "NOT MET", met ? "" : "; ",
              met ? "" : why.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int world_size = 1;
  if (auto stop = bench::start(argc, argv, kBenchName, kUsage, [&] {
        MPI_Comm_size(MPI_COMM_WORLD, &world_size);
        o = parse_options(argc, argv);
        if (world_size < 2) {
          throw std::invalid_argument("needs at least 2 processes (clients + 1 server)");
        }
      })) {
    return *stop;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bench::widen_affinity_to_all_cpus();
  const int client_processes = world_size - 1;
  const Geometry g = geometry(o, client_processes);
  const std::vector<std::string> modes =
      o.modes.empty() ? std::vector<std::string>(std::begin(kModeNames), std::end(kModeNames))
                      : o.modes;
  MPI_Comm clients = bench::first_ranks(MPI_COMM_WORLD, client_processes);
  const bool is_client = clients != MPI_COMM_NULL;

  // Scratch directory for the files, made by rank 0.
  char dir[512] = {};
  if (rank == 0) {
    std::snprintf(dir, sizeof dir, "%s/output_bench_%d", o.dir.c_str(), static_cast<int>(getpid()));
    std::filesystem::create_directories(dir);
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::size_t field_bytes = static_cast<std::size_t>(g.nx) * g.rows * sizeof(double);
  if (rank == 0) {
    std::printf(
        "# output_bench: %d client processes x %d threads (%d EP clients) + 1 server process\n",
        client_processes, o.threads, g.clients);
    const int busy = g.clients + 1;
    std::printf(
        "# %d busy threads on %d CPUs: %s\n", busy, bench::online_cpus(),
        busy <= bench::online_cpus() ? "fits the cores, judged" : "oversubscribed, not judged");
    std::printf(
        "# %d steps x %d fields x %s per client and field (domain %d x %d), compute %d us/step, %d "
        "reps\n",
        o.steps, o.fields, bench::format_bytes(field_bytes).c_str(), g.nx, g.ny(), o.compute_us,
        o.reps);
    bench::print_load(stdout, "start");
  }

  std::vector<ModeRuns> runs;
  for (const auto& m : modes) {
    runs.push_back({m, {}, {}, 0, 0});
  }
  bench::run_or_abort(kBenchName, [&] {
    for (int rep = -1; rep < o.reps; ++rep) {  // rep -1: warm-up, not recorded
      for (auto& mr : runs) {
        const std::string base = std::string(dir) + "/" + mr.name;
        const std::string cfg = base + ".xml";
        if (rank == 0) {
          std::ofstream(cfg) << config_text(o, g, base, mr.name == "sync");
        }
        bench::quiet_barrier(MPI_COMM_WORLD);  // an idle server must not spin
        RunResult r;
        if (mr.name == "raw_write") {
          if (is_client) {
            r = run_raw(o, g, clients, base + ".nc");
          }
        } else if (mr.name == "memcpy") {
          if (is_client) r = run_memcpy(o, g, clients);
        } else {
          const bool endpoints = mr.name == "ep_server" || mr.name == "ep_server_threads";
          const xios_lite::Mode mode = endpoints ? xios_lite::Mode::kEndpoints
                                       : mr.name == "funneled_server"
                                           ? xios_lite::Mode::kFunneled
                                           : xios_lite::Mode::kSynchronous;
          const int server_threads = mr.name == "ep_server_threads" ? o.threads : 1;
          r = run_library(o, g, MPI_COMM_WORLD, clients, mode, server_threads, cfg);
        }
        bench::quiet_barrier(MPI_COMM_WORLD);  // an idle server must not spin
        if (rank == 0) {
          std::error_code ec;
          for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
            if (entry.path().extension() == ".nc") {
              std::filesystem::remove(entry.path(), ec);
            }
          }
          if (rep >= 0) {
            mr.output_s.push_back(r.output_us_per_step * 1e-6);
            mr.total_s.push_back(r.total_s);
            mr.mbps += r.mbps / o.reps;
            mr.bytes = r.bytes;
          }
        }
      }
    }
  });

  if (rank == 0) {
    bench::Report report(kBenchName);
    // The fields every record of this run shares; the caller sets the times.
    auto record_of = [&](const char* test, const std::string& mode) {
      bench::Record rec;
      rec.test = test;
      rec.mode = mode;
      rec.ranks = client_processes;
      rec.threads = o.threads;
      rec.bytes = field_bytes;
      rec.iterations = o.steps;
      rec.repetitions = o.reps;
      return rec;
    };
    bench::print_header(
        stdout, "output: client-visible output time per step; MB/s = writer throughput", {});
    for (const auto& mr : runs) {
      bench::Record rec = record_of("output", mr.name);
      rec.time = bench::TimeStats::from_seconds(mr.output_s);
      rec.mbps = mr.mbps;
      bench::print_row(stdout, rec, {});
      report.add(rec);
    }
    bench::print_header(stdout, "total: whole run (compute + output + finalise) per step", {});
    for (const auto& mr : runs) {
      bench::Record rec = record_of("total", mr.name);
      std::vector<double> per_step;
      for (double t : mr.total_s) {
        per_step.push_back(t / o.steps);
      }
      rec.time = bench::TimeStats::from_seconds(per_step);
      rec.mbps = static_cast<double>(o.fields) * field_bytes * g.clients / rec.time.avg_us;
      bench::print_row(stdout, rec, {});
      report.add(rec);
    }
    auto avg = [&](const char* m) -> const bench::Record* {
      return report.find("output", m, field_bytes);
    };
    std::printf("\n");
    const auto* fun = avg("funneled_server");
    const auto* sync = avg("sync");
    const auto* raw = avg("raw_write");
    const auto* copy = avg("memcpy");
    // The same two targets for one receiving endpoint and for T of them.
    for (const char* name : {"ep_server", "ep_server_threads"}) {
      const auto* mode = avg(name);
      if (mode != nullptr && sync != nullptr) {
        // The client copies its data once before send_field returns: with
        // the memcpy mode measured, say what the target asks of that copy.
        std::string why =
            "clients wait for the server to take their buffers (back-pressure; --report shows "
            "blocked%)";
        if (copy != nullptr && copy->time.avg_us > 0) {
          char text[160];
          std::snprintf(text, sizeof text,
                        "sync costs %.1f memcpys of the data here, so the target asks for "
                        "%.2f x memcpy and the client copies its data once (this run: %.2f)",
                        sync->time.avg_us / copy->time.avg_us,
                        0.10 * sync->time.avg_us / copy->time.avg_us,
                        mode->time.avg_us / copy->time.avg_us);
          why = text;
        }
        print_target((std::string(name) + " output time <= 0.10 x sync").c_str(),
                     mode->time.avg_us / sync->time.avg_us, 0.10, true, why);
      }
      if (mode != nullptr && copy != nullptr) {
        print_target((std::string(name) + " output time <= 2.0 x memcpy of its data").c_str(),
                     mode->time.avg_us / copy->time.avg_us, 2.0, true,
                     "the client packs, sends and waits for buffer space beyond the copy");
      }
      if (mode != nullptr && fun != nullptr) {
        print_target((std::string(name) + " output time <= 0.67 x funneled (" +
                      std::to_string(o.threads) + " threads)")
                         .c_str(),
                     mode->time.avg_us / fun->time.avg_us, 0.67, true,
                     "at 2 threads the master's extra copy is small and back-pressure dominates "
                     "both modes");
      }
    }
    const auto* ep = avg("ep_server");
    if (ep != nullptr && raw != nullptr && raw->mbps > 0) {
      print_target("server write throughput >= 0.8 x raw_write", ep->mbps / raw->mbps, 0.8, false,
                   "the server's NetCDF writes (with coordinates, fill, time axis) are slower than "
                   "raw puts");
    }
    bench::print_load(stdout, "end");
    report.write_json(o.json);
    report.write_csv(o.csv);
    std::printf("# wrote %s and %s\n", o.json.c_str(), o.csv.c_str());
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  if (clients != MPI_COMM_NULL) {
    MPI_Comm_free(&clients);
  }
  MPI_Finalize();
  return 0;
}
