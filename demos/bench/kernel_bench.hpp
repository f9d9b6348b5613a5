// What the kernel benchmarks of collectives/ (alltoallv_bench, transpose_bench,
// allreduce_bench) share: the launch layout, the three backends, timing of one
// point, the side-by-side tables and the met / not met lines of the targets.
//
// Launch: N = P*T processes and --threads T. Every backend has the same
// number of ranks doing the work, on the same cores:
//   ep        the first P processes x T OpenMP threads, each an endpoint
//             (collectives::EpComm) of one endpoint communicator;
//   mpi       all N processes, one thread each (collectives::MpiComm on world);
//   funneled  the first P processes, T threads sharing every pack/unpack
//             loop, the master thread alone calling MPI (collectives::FunneledComm)
//             -- P ranks in the kernel's eyes, P*T threads at work.
// While ep and funneled run, the other N - P processes sleep in a quiet
// barrier. All modes of a point are measured one after the other before the
// next point, so machine noise hits them alike; so ep and mpi are compared
// within one run even though mpi needs T times the processes.
//
// Timing of one point: one call (checks, `auto` tuning), then 3 calls to size
// the batch, then `repetitions` timed batches of the same number of calls
// (the slowest rank's batch time, per call), a barrier before each batch.
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
#include "collectives/communicator.hpp"
#include "ep/ep.hpp"
#include "kernel_backend.hpp"
#include "machine.hpp"

namespace bench::kernels {

struct Options {
  int threads = 2;
  bool quick = false;
  int repetitions = 0;                  ///< 0: 7 (quick 3)
  std::vector<std::string> backends;    ///< empty: all
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
template <collectives::Communicator C>
void barrier(const C& comm) {
  int token = 0;
  comm.library_allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_SUM);
}

struct Timing {
  long iterations = 0;
  std::vector<double> seconds;  ///< per call, per repetition (this rank)
};

/// Times `op` on `comm` as the file comment says. Collective.
template <collectives::Communicator C, class Op>
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
  Harness(const Options& options, MPI_Comm world);
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;
  ~Harness();

  [[nodiscard]] int world_rank() const noexcept { return rank_; }
  [[nodiscard]] int processes() const noexcept { return processes_; }
  [[nodiscard]] int threads() const noexcept { return threads_; }
  [[nodiscard]] int world_size() const noexcept { return size_; }
  /// Ranks of the kernel's communicator: P*T (ep), N (mpi), P (funneled).
  [[nodiscard]] int kernel_ranks(Backend backend) const;
  [[nodiscard]] bool selected(Backend backend) const;
  [[nodiscard]] bool selected_algorithm(std::string_view name) const;
  /// `algorithms` less those --algorithms leaves out, in order.
  [[nodiscard]] std::vector<std::string> selected_algorithms(
      std::vector<std::string> algorithms) const;
  [[nodiscard]] int repetitions() const noexcept { return repetitions_; }

  /// Measures `setup(comm)()` on `backend` (setup returns the callable of one
  /// kernel call, built once per point) and adds the record to `report` on
  /// world rank 0. `record` carries test, mode (set here to
  /// "<backend>.<algorithm>"), bytes. Collective over the world.
  template <class Setup>
  void measure(Backend backend, std::string_view algorithm, Record record, Setup&& setup,
               Report& report) {
    std::optional<Timing> slowest;
    if (backend == Backend::kMpi) {
      run_or_abort("kernel bench", [&] {
        const collectives::MpiComm comm(world_);
        auto op = setup(comm);
        slowest = time_calls(comm, op, repetitions_);
        slowest_to_root(slowest->seconds, world_);
      });
    } else if (group_ != MPI_COMM_NULL) {
      slowest.emplace();
      if (backend == Backend::kEp) {
        slowest->seconds.assign(static_cast<std::size_t>(repetitions_), 0.0);
#pragma omp parallel num_threads(threads_) default(none) shared(setup, slowest)
        run_or_abort("kernel bench", [&] {
          const collectives::EpComm comm(
              endpoints_[static_cast<std::size_t>(omp_get_thread_num())]);
          auto op = setup(comm);
          const Timing mine = time_calls(comm, op, repetitions_);
#pragma omp critical(kernel_bench_slowest)
          {
            slowest->iterations = mine.iterations;
            for (std::size_t i = 0; i < mine.seconds.size(); ++i) {
              slowest->seconds[i] = std::max(slowest->seconds[i], mine.seconds[i]);
            }
          }
        });
      } else {
        run_or_abort("kernel bench", [&] {
          const collectives::FunneledComm comm(group_, threads_);
          auto op = setup(comm);
          slowest = time_calls(comm, op, repetitions_);
        });
      }
      run_or_abort("kernel bench", [&] { slowest_to_root(slowest->seconds, group_); });
    }
    quiet_barrier(world_);
    if (rank_ != 0 || !slowest) return;
    record.mode = std::string(backend_name(backend)) + "." + std::string(algorithm);
    record.ranks = backend == Backend::kMpi ? size_ : processes_;
    record.threads = backend == Backend::kMpi ? 1 : threads_;
    record.iterations = slowest->iterations;
    record.repetitions = repetitions_;
    record.time = TimeStats::from_seconds(slowest->seconds);
    record.mbps = static_cast<double>(record.bytes) / record.time.avg_us;
    report.add(std::move(record));
  }

 private:
  static void slowest_to_root(std::vector<double>& seconds, MPI_Comm comm);

  Options options_;
  MPI_Comm world_;
  int rank_ = 0;
  int size_ = 1;
  int threads_ = 1;
  int processes_ = 1;
  int repetitions_ = 7;
  MPI_Comm group_ = MPI_COMM_NULL;  // the first P processes: ep and funneled
  std::vector<ep::Communicator> endpoints_;
};

/// The main of a kernel benchmark: start() with `options`, then
/// `body(harness, options)` (collective over the world) under
/// bench::run_or_abort, then MPI_Finalize. Returns the exit code.
template <class Body>
int run_main(int& argc, char**& argv, const char* name, Body&& body) {
  Options options;
  if (auto stop = start(argc, argv, name, options)) return *stop;
  ::bench::run_or_abort(name, [&] {
    Harness harness(options, MPI_COMM_WORLD);
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
/// targets, the load average and the JSON / CSV files.
void finish_report(const Report& report, std::string_view test,
                   const std::vector<std::string>& algorithms,
                   const std::vector<std::size_t>& sizes, const Options& options);

/// Writes JSON and CSV where the options say.
void write_results(const Report& report, const Options& options);

}  // namespace bench::kernels
