#include "model_options.hpp"

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "bench_cli.hpp"

namespace model {

namespace {

// The names of the options' values, in the order of the enumerators.
constexpr std::string_view kBackendNames[] = {"mpi", "ep", "funneled"};
constexpr std::string_view kOutputModeNames[] = {"ep", "funneled"};

}  // namespace

const char* backend_name(Backend backend) {
  return kBackendNames[static_cast<std::size_t>(backend)].data();
}

const char* output_mode_name(OutputMode mode) {
  return kOutputModeNames[static_cast<std::size_t>(mode)].data();
}

std::string model_usage() {
  return R"(usage: mpiexec -n P mini_model [options]

A small atmospheric model on a 2-D decomposition: conservative semi-Lagrangian
advection of three tracers (wide halo), a spectral transposition round trip,
a GCR Helmholtz solve per step and asynchronous NetCDF output through
xios_lite. The last --servers MPI ranks are output servers; the others run
the model. The grid (domain "atm", axis "lev") and the timestep come from the
configuration file.

  --backend NAME         mpi | ep | funneled (default ep)
                           mpi: one rank per process, one thread each
                           ep: every thread is an endpoint rank
                           funneled: one MPI rank per process, its threads
                             share the loops, the master thread calls MPI
  --threads LIST         threads per client process, cycled over the
                         processes: "2", or "2,1" for mixed counts (default:
                         OMP_NUM_THREADS, else 2; mpi forces 1)
  --output MODE          xios_lite client mode: ep | funneled (default ep)
  --servers N            output server processes, the last N ranks (default 1);
                         0: no output at all (no xios_lite client or server)
  --server-threads N     receiving endpoints (threads) per server process
                         (default 1)
  --config PATH          iodef XML (default demos/model/model_iodef.xml)
  --output-dir DIR       every process works there; NetCDF lands there
                         (default output)
  --steps N              time steps (default 48)
  --courant-x C          wind in cells per step at the top level, x (default 2.6)
  --courant-y C          the same in y (default 1.3); lower levels move slower
  --transpose-every N    spectral round trip every N steps, 0: never (default 4)
  --solver-restart K     GCR(k) restart length (default 8)
  --solver-tol T         GCR relative residual tolerance (default 1e-6)
  --progress-every N     progress line every N steps, 0: none (default 8)
  --quiet                no progress lines and no output report
  --no-communication     the compute-only floor (ep and mpi backends): every
                         rank runs the step on its own subdomain, each halo
                         exchange, transposition and global sum replaced by
                         local copies of the same size (no MPI, no endpoint
                         call in the time loop); no output (--servers 0);
                         --json records have mode floor.compute_only
  --json PATH            the phase table as benchmark records (bench
                         model_bench; demos/bench schema) written by rank 0
  --csv PATH             the same records as CSV
  -h, --help             this text
)";
}

namespace {

double parse_real(std::string_view flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(v)) {
    throw std::invalid_argument(std::string(flag) + ": '" + text + "' is not a number");
  }
  return v;
}

int parse_nonnegative(std::string_view flag, const std::string& text) {
  if (text == "0") return 0;
  const long long v = bench::parse_count(flag, text);
  if (v > 1000000000LL)
    throw std::invalid_argument(std::string(flag) + ": " + text + " is too large");
  return static_cast<int>(v);
}

}  // namespace

ModelOptions parse_model_options(int argc, char** argv) {
  ModelOptions o;
  if (const char* env = std::getenv("OMP_NUM_THREADS"); env != nullptr && *env != '\0') {
    const long long t = std::atoll(env);
    if (t >= 1 && t <= 256) o.threads = {static_cast<int>(t)};
  }
  bool threads_given = false;
  bench::OptionParser parser;
  bool servers_given = false;
  parser.flag("--quiet", o.quiet)
      .flag("--no-communication", o.no_communication)
      .choice("--backend", kBackendNames, o.backend)
      .custom("--threads",
              [&](std::string_view flag, const std::string& v) {
                o.threads.clear();
                std::size_t start = 0;
                while (start <= v.size()) {
                  const std::size_t comma = v.find(',', start);
                  const std::string item = v.substr(
                      start, comma == std::string::npos ? std::string::npos : comma - start);
                  const long long t = bench::parse_count(flag, item);
                  if (t > 256)
                    throw std::invalid_argument(std::string(flag) + ": " + item + " > 256");
                  o.threads.push_back(static_cast<int>(t));
                  if (comma == std::string::npos) break;
                  start = comma + 1;
                }
                threads_given = true;
              })
      .choice("--output", kOutputModeNames, o.output)
      .custom("--servers",
              [&](std::string_view flag, const std::string& v) {
                o.servers = parse_nonnegative(flag, v);
                servers_given = true;
              })
      .custom(
          "--server-threads",
          [&](std::string_view flag, const std::string& v) {
            o.server_threads = parse_nonnegative(flag, v);
            if (o.server_threads < 1 || o.server_threads > 256) {
              throw std::invalid_argument(std::string(flag) + ": " + v + " out of range [1, 256]");
            }
          })
      .text("--config", o.config)
      .text("--json", o.json)
      .text("--csv", o.csv)
      .text("--output-dir", o.output_dir)
      .count("--steps", o.steps)
      .custom("--courant-x", [&](std::string_view flag,
                                 const std::string& v) { o.courant_x = parse_real(flag, v); })
      .custom("--courant-y", [&](std::string_view flag,
                                 const std::string& v) { o.courant_y = parse_real(flag, v); })
      .custom("--transpose-every",
              [&](std::string_view flag, const std::string& v) {
                o.transpose_every = parse_nonnegative(flag, v);
              })
      .count("--solver-restart", o.solver_restart)
      .custom("--solver-tol",
              [&](std::string_view flag, const std::string& v) {
                o.solver_tolerance = parse_real(flag, v);
                if (o.solver_tolerance <= 0.0) {
                  throw std::invalid_argument(std::string(flag) + ": must be > 0");
                }
              })
      .custom("--progress-every", [&](std::string_view flag, const std::string& v) {
        o.progress_every = parse_nonnegative(flag, v);
      });
  try {
    parser.parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).empty()) {  // --help or -h
      o.help = true;
      return o;
    }
    throw;
  }
  if (std::abs(o.courant_x) > 64.0 || std::abs(o.courant_y) > 64.0) {
    throw std::invalid_argument("--courant-x/--courant-y: at most 64 cells per step");
  }
  if (o.no_communication) {
    if (o.backend == Backend::kFunneled) {
      throw std::invalid_argument("--no-communication: the ep and mpi backends only");
    }
    if (servers_given && o.servers > 0) {
      throw std::invalid_argument("--no-communication: runs without output (--servers 0)");
    }
    o.servers = 0;
  }
  if (o.backend == Backend::kMpi) {
    if (threads_given && (o.threads.size() != 1 || o.threads[0] != 1)) {
      throw std::invalid_argument("--threads: the mpi backend runs one thread per process");
    }
    o.threads = {1};
  }
  return o;
}

int threads_of_process(const ModelOptions& options, int process) {
  return options.threads[static_cast<std::size_t>(process) % options.threads.size()];
}

}  // namespace model
