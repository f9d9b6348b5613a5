// What the kernel benchmarks of collectives/ that time one call at a time
// (alltoallv_bench, transpose_bench, allreduce_bench) share on top of the
// launch layout of kernel_modes.hpp: options, timing of one point, the
// side-by-side tables and the met / not met lines of the targets.
//
// Timing of one point: one call (checks, `auto` tuning), then 3 calls to size
// the batch, then `repetitions` timed batches of the same number of calls
// (the slowest rank's batch time, per call), a barrier before each batch.
// All backends of a point are measured one after the other before the next
// point, so machine noise hits them alike.
//
// Thread safety: a Harness is used by the main thread of every process.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bench_mpi.hpp"
#include "bench_report.hpp"
#include "kernel_backend.hpp"
#include "kernel_modes.hpp"

namespace bench::kernels {

struct Options {
  int threads = 2;
  bool quick = false;
  int repetitions = 0;                  ///< 0: 7 (quick 3)
  std::vector<std::string> backends;    ///< empty: all (kernel_backend.hpp)
  std::vector<std::string> algorithms;  ///< empty: all of the benchmark
  std::string json;
  std::string csv;
};

/// The usage text of the shared options, for the benchmarks' --help.
extern const char* const kSharedUsage;

/// Parses the shared options; throws std::invalid_argument (empty message
/// for --help) as bench::start expects.
Options parse_options(int argc, char** argv, std::string_view bench);

/// bench::start for a kernel benchmark: the usage is the benchmark's line and
/// kSharedUsage, the options go to `options`. Returns the exit code when the
/// program must stop now, std::nullopt to go on.
std::optional<int> start(int& argc, char**& argv, const char* name, Options& options);

/// A barrier on any backend (the library's allreduce of one int). Collective.
template <class C>
void barrier(const C& comm) {
  int token = 0;
  comm.library_allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_SUM);
}

struct Timing {
  long iterations = 0;
  std::vector<double> seconds;  ///< per call, per repetition (this rank)
};

/// Times `op` on `comm` as the file comment says. Collective.
template <class C, class Op>
Timing time_calls(const C& comm, Op& op, int repetitions) {
  constexpr double kBatchSeconds = 0.004;
  op();
  barrier(comm);
  double start = MPI_Wtime();
  for (int i = 0; i < 3; ++i) op();
  double per_call = (MPI_Wtime() - start) / 3.0;
  comm.library_allreduce(MPI_IN_PLACE, &per_call, 1, MPI_DOUBLE, MPI_MAX);
  Timing t;
  t.iterations = std::clamp(static_cast<long>(kBatchSeconds / std::max(per_call, 1e-9)), 2L, 500L);
  t.seconds.resize(static_cast<std::size_t>(repetitions));
  for (double& s : t.seconds) {
    barrier(comm);
    start = MPI_Wtime();
    for (long i = 0; i < t.iterations; ++i) op();
    s = (MPI_Wtime() - start) / static_cast<double>(t.iterations);
  }
  return t;
}

/// A Setup for Harness::measure: builds one Call<C>(comm, args...) per point
/// (args copied) and returns the callable that runs its call().
template <template <class> class Call, class... Args>
auto setup_calls(Args... args) {
  return [args...](const auto& comm) {
    using C = std::remove_cvref_t<decltype(comm)>;
    auto state = std::make_shared<Call<C>>(comm, args...);
    return [state] { state->call(); };
  };
}

class Harness {
 public:
  /// Collective over `world`; lays the selected backends out (kernel_modes.hpp).
  Harness(const Options& options, MPI_Comm world, const char* bench_name)
      : options_(options),
        modes_(world, options.threads, bench_name, options.backends),
        repetitions_(options.repetitions) {}
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  [[nodiscard]] int world_rank() const noexcept { return modes_.world_rank(); }
  [[nodiscard]] const KernelModes& modes() const noexcept { return modes_; }
  [[nodiscard]] int threads() const noexcept { return modes_.threads(); }
  /// Ranks of the ep and mpi decomposition (kernel_modes.hpp).
  [[nodiscard]] int grid_ranks() const noexcept { return modes_.grid_ranks(); }
  /// Ranks of the kernel's communicator: grid_ranks() (ep, mpi, ref), P (funneled).
  [[nodiscard]] int kernel_ranks(Backend backend) const { return modes_.ranks(backend); }
  [[nodiscard]] bool selected(Backend backend) const { return modes_.selected(backend); }
  [[nodiscard]] bool selected_algorithm(std::string_view name) const;
  /// `algorithms` less those --algorithms leaves out, in order.
  [[nodiscard]] std::vector<std::string> selected_algorithms(
      std::vector<std::string> algorithms) const;
  [[nodiscard]] int repetitions() const noexcept { return repetitions_; }

  /// Measures `setup(comm)()` on `backend` (setup returns the callable of one
  /// kernel call, built once per point; for ref it gets a RefComm) and adds
  /// the record to `report` on world rank 0. `record` carries test and bytes;
  /// mode ("<backend>.<algorithm>"), shape and times are set here. Collective
  /// over the world.
  template <class Setup>
  void measure(Backend backend, std::string_view algorithm, Record record, Setup&& setup,
               Report& report) {
    long iterations = 0;
    const auto slowest = modes_.run(backend, [&](const auto& comm) {
      auto op = setup(comm);
      Timing mine = time_calls(comm, op, repetitions_);
      if (comm.rank() == 0) iterations = mine.iterations;  // the same on every rank
      return std::move(mine.seconds);
    });
    if (!slowest) return;
    record.mode = std::string(backend_name(backend)) + "." + std::string(algorithm);
    record.ranks = modes_.record_ranks(backend);
    record.threads = modes_.record_threads(backend);
    record.iterations = iterations;
    record.repetitions = repetitions_;
    record.time = TimeStats::from_seconds(*slowest);
    record.mbps = static_cast<double>(record.bytes) / record.time.avg_us;
    report.add(std::move(record));
  }

 private:
  Options options_;
  KernelModes modes_;
  int repetitions_ = 7;
};

/// The main of a kernel benchmark: start() with `options`, then
/// `body(harness, options)` (collective over the world) under
/// bench::run_or_abort, then MPI_Finalize. Returns the exit code.
template <class Body>
int run_main(int& argc, char**& argv, const char* name, Body&& body) {
  Options options;
  if (auto stop = start(argc, argv, name, options)) return *stop;
  ::bench::run_or_abort(name, [&] {
    Harness harness(options, MPI_COMM_WORLD, name);
    body(harness, static_cast<const Options&>(options));
  });
  MPI_Finalize();
  return 0;
}

// ---- reporting (world rank 0) ----

/// One table per backend: a column per algorithm, a row per size, the ratio
/// of each algorithm to the backend's `library`.
void print_backend_tables(const Report& report, std::string_view test, std::string_view title,
                          const std::vector<std::string>& algorithms,
                          const std::vector<std::size_t>& sizes);

/// "<a> <= factor * <b>" at every size where both were measured: prints the
/// count, the worst ratio and met / NOT met. Returns whether it was met.
bool print_target(const Report& report, std::string_view test, const std::string& a,
                  const std::string& b, double factor, const std::vector<std::size_t>& sizes);
/// The same with, at each size, the fastest of `candidates` as <a> (shown as `label`).
bool print_best_target(const Report& report, std::string_view test,
                       const std::vector<std::string>& candidates, std::string_view label,
                       const std::string& b, double factor, const std::vector<std::size_t>& sizes);

/// The fastest of `modes` at `bytes` (t_avg), or "" when none was measured.
std::string fastest_mode(const Report& report, std::string_view test,
                         const std::vector<std::string>& modes, std::size_t bytes);

/// Prints "ep.<alg> <= funneled.<alg>" for every algorithm (a target).
void print_ep_vs_funneled(const Report& report, std::string_view test,
                          const std::vector<std::string>& algorithms,
                          const std::vector<std::size_t>& sizes);

/// For `backend`: print_best_target with the algorithms whose names start
/// with `family` as candidates (shown as "<backend>.<family><best k>")
/// against "<backend>.<reference>".
void print_family_target(const Report& report, std::string_view test, std::string_view backend,
                         const std::vector<std::string>& algorithms, std::string_view family,
                         std::string_view reference, double factor,
                         const std::vector<std::size_t>& sizes);

/// The end every kernel benchmark shares (world rank 0): the ep vs funneled
/// targets, every mpi.<algorithm> against the ref mode (<= 1.2, where the
/// launch has both), the load average and the JSON / CSV files.
void finish_report(const Report& report, std::string_view test,
                   const std::vector<std::string>& algorithms,
                   const std::vector<std::size_t>& sizes, const Options& options);

/// Writes JSON and CSV where the options say.
void write_results(const Report& report, const Options& options);

}  // namespace bench::kernels
