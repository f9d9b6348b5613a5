// Command-line options of mini_model: how the model runs (backend, threads,
// output mode) and what it computes (steps, Courant numbers, solver and
// transposition cadence). The grid itself (ni x nj x levels, timestep) comes
// from the iodef configuration, so the model and its output agree by
// construction.
//
// Thread safety: plain values; parse_model_options is pure (no MPI).
#pragma once

#include <string>
#include <vector>

namespace model {

/// Which communicator the model's kernels (halo, transpose, solver) use.
enum class Backend {
  kMpi,       ///< one MPI rank per process, one thread (MpiComm)
  kEp,        ///< every OpenMP thread is an endpoint rank (EpComm)
  kFunneled,  ///< one MPI rank per process, threads share loops (FunneledComm)
};
const char* backend_name(Backend backend);

/// Which xios_lite client mode writes the output.
enum class OutputMode { kEndpoints, kFunneled };
const char* output_mode_name(OutputMode mode);

struct ModelOptions {
  Backend backend = Backend::kEp;
  /// Threads per client process, cycled over the processes ("2" or "2,1").
  std::vector<int> threads{2};
  OutputMode output = OutputMode::kEndpoints;
  int servers = 1;         ///< the last `servers` MPI ranks run the output server (0: no output)
  int server_threads = 1;  ///< receiving endpoints per server process
  std::string config = "demos/model/model_iodef.xml";
  std::string output_dir = "output";
  int steps = 48;
  double courant_x = 2.6;  ///< cells per step at the top level (any sign)
  double courant_y = 1.3;
  int transpose_every = 4;  ///< spectral round trip every N steps (0: never)
  int solver_restart = 8;
  double solver_tolerance = 1e-6;
  int progress_every = 8;  ///< progress line every N steps (0: none)
  bool quiet = false;      ///< no progress lines, no xios_lite report
  /// The compute-only floor: every rank runs its own subdomain alone
  /// (collectives::SelfComm), every exchange a local copy of the same size;
  /// no output (--servers 0 implied), records with mode floor.compute_only.
  bool no_communication = false;
  std::string json;  ///< phase records for model_bench (empty: none)
  std::string csv;   ///< the same as CSV (empty: none)
  bool help = false;
};

/// The --help text.
std::string model_usage();

/// Parses argv. --help or -h sets `help` (and stops parsing). Throws
/// std::invalid_argument naming the option for an unknown option or a bad
/// value.
ModelOptions parse_model_options(int argc, char** argv);

/// Threads of client process `process` (threads cycled).
int threads_of_process(const ModelOptions& options, int process);

}  // namespace model
