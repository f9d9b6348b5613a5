// The one harness of the kernel benchmarks of collectives/ (alltoallv,
// transpose, allreduce, halo, solver): where each backend runs on the
// processes of a launch (KernelModes), how one point is timed (time_calls,
// Harness), the shared options and the tables and target lines of the
// results. kernel_backend.hpp names the backends, launch_layout.hpp the kinds
// of launch.
//
// Backends:
//   ep        the P threaded processes x T OpenMP threads, each thread an EP
//             rank (collectives::EpComm over its endpoint)
//   funneled  the same P processes, T threads sharing the kernels' loops, the
//             master thread alone calling MPI (collectives::FunneledComm):
//             P ranks in the kernel's eyes, each with a T times larger
//             subdomain, as a hybrid model run on P processes x T threads
//   mpi, ref  every process of the launch, single-threaded
//             (collectives::MpiComm; reference::RefComm for hand-written MPI)
//
// ep and mpi decompose the same problem over grid_ranks() ranks in every
// kind of launch, so a threaded launch (ep, funneled) and a flat launch (mpi,
// ref) of the same benchmark measure the same points. In a mixed launch the
// processes that sit out a threaded mode sleep in a quiet barrier.
//
// A body is run by every participant of a mode and returns its per-
// repetition times (seconds); world rank 0 gets the slowest participant's
// time of each entry. Any exception ends the job (bench::run_or_abort).
//
// Timing of one point (time_calls, for Harness::measure; halo_bench and
// solver_bench time batches of a fixed --iters of their own): one call (checks, `auto` tuning),
// then 3 calls to size the batch, then `repetitions` timed batches of the same number of calls (the
// slowest rank's batch time, per call), a barrier before each batch. All backends of a point are
// measured one after the other before the next point, so machine noise hits them alike.
//
// Targets: ratios of t_avg measured in the same run (never redefined: a
// missed target is printed as missed, with the times it compares).
//
// Thread safety: a KernelModes or a Harness is used by the main thread of
// each process; the ep bodies run on its OpenMP threads. The reporting
// functions run on world rank 0 after the measurements.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_cli.hpp"
#include "bench_mpi.hpp"
#include "bench_report.hpp"
#include "collectives/communicator.hpp"
#include "collectives/ep_comm.hpp"
#include "ep/ep.hpp"
#include "kernel_backend.hpp"
#include "launch_layout.hpp"
#include "machine.hpp"
#include "reference/ref_comm.hpp"

namespace bench::kernels {

// ---- the launch: where each backend runs ----

using reference::RefComm;

class KernelModes {
 public:
  /// Collective over `world`. `backends`: the selected backend names (empty:
  /// all), which decide the kind of launch. Throws std::invalid_argument for a
  /// layout that cannot be placed (launch_layout.hpp).
  KernelModes(MPI_Comm world, int threads, const char* bench_name,
              std::vector<std::string> backends = {});
  KernelModes(const KernelModes&) = delete;
  KernelModes& operator=(const KernelModes&) = delete;
  ~KernelModes();

  [[nodiscard]] int world_rank() const noexcept { return rank_; }
  [[nodiscard]] const LaunchLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] int processes() const noexcept { return layout_.threaded_processes; }
  [[nodiscard]] int threads() const noexcept { return layout_.threads; }
  /// Ranks of the ep and mpi decomposition (P*T in a threaded launch, N otherwise).
  [[nodiscard]] int grid_ranks() const noexcept { return layout_.grid_ranks; }
  /// Whether `backend` runs in this launch (selected, and its kind present).
  [[nodiscard]] bool selected(Backend backend) const;
  /// Ranks of a backend's kernel communicator: grid_ranks() for ep, mpi and
  /// ref, P for funneled.
  [[nodiscard]] int ranks(Backend backend) const {
    return backend == Backend::kFunneled ? processes() : grid_ranks();
  }
  /// Record fields: processes taking part and threads per process.
  [[nodiscard]] int record_ranks(Backend backend) const {
    return is_threaded(backend) ? processes() : layout_.world_size;
  }
  [[nodiscard]] int record_threads(Backend backend) const {
    return is_threaded(backend) ? threads() : 1;
  }
  /// Prints the launch line (kind, shape, judged or not) to stdout on world rank 0.
  void print_launch(const char* bench_line) const;

  /// Runs body(comm) -> std::vector<double> on every participant of `backend`
  /// (ep: collectives::EpComm, mpi: collectives::MpiComm, funneled:
  /// collectives::FunneledComm, ref: RefComm). Collective over the world.
  /// World rank 0 gets the slowest time of each entry; the others nullopt.
  template <class Body>
  std::optional<std::vector<double>> run(Backend backend, const Body& body) {
    std::vector<double> slowest;
    if (!is_threaded(backend)) {
      run_or_abort(bench_, [&] {
        slowest =
            backend == Backend::kRef ? body(RefComm(world_)) : body(collectives::MpiComm(world_));
        slowest_to_root(slowest, world_);
      });
    } else if (group_ != MPI_COMM_NULL) {
      if (backend == Backend::kEp) {
        auto& endpoints = endpoints_;
        const char* name = bench_;
#pragma omp parallel num_threads(threads()) default(none) shared(body, slowest, endpoints, name)
        run_or_abort(name, [&] {
          const auto mine =
              body(collectives::EpComm(endpoints[static_cast<std::size_t>(omp_get_thread_num())]));
#pragma omp critical(kernel_bench_slowest)
          {
            slowest.resize(std::max(slowest.size(), mine.size()), 0.0);
            for (std::size_t i = 0; i < mine.size(); ++i)
              slowest[i] = std::max(slowest[i], mine[i]);
          }
        });
      } else {
        run_or_abort(bench_, [&] { slowest = body(collectives::FunneledComm(group_, threads())); });
      }
      run_or_abort(bench_, [&] { slowest_to_root(slowest, group_); });
    }
    // Idle processes of a mixed launch wait here asleep; in a threaded or
    // flat launch every process took part and this only ends the point.
    quiet_barrier(world_);
    if (rank_ != 0) return std::nullopt;
    return slowest;
  }

 private:
  static void slowest_to_root(std::vector<double>& times, MPI_Comm comm);

  MPI_Comm world_;
  const char* bench_;
  std::vector<std::string> backends_;
  int rank_ = 0;
  LaunchLayout layout_;
  MPI_Comm group_ = MPI_COMM_NULL;  // the threaded processes
  std::vector<ep::Communicator> endpoints_;
};

/// px x py = ranks with px >= py as square as possible.
inline std::pair<int, int> grid_of(int ranks) {
  int py = 1;
  for (int d = 1; d * d <= ranks; ++d) {
    if (ranks % d == 0) py = d;
  }
  return {ranks / py, py};
}

/// The alltoallv algorithms the kernel benchmarks compare (names as
/// collectives::parse_alltoallv_choice reads them): the library's, the
/// fixed schedules, ring1 .. ring<rings>, and the automatic choice.
inline std::vector<std::string> alltoallv_algorithms(int rings) {
  std::vector<std::string> names = {"library", "burst", "pairwise", "bruck"};
  for (int k = 1; k <= rings; ++k) names.push_back("ring" + std::to_string(k));
  names.push_back("auto");
  return names;
}

// ---- options ----

struct Options {
  int threads = 2;
  bool quick = false;
  int repetitions = 0;  ///< 0: the benchmark's default (OwnOptions)
  long iterations = 0;  ///< --iters of a benchmark that has it (OwnOptions::iteration)
  std::vector<std::string> backends;    ///< empty: all (kernel_backend.hpp)
  std::vector<std::string> algorithms;  ///< empty: all of the benchmark
  std::string json;
  std::string csv;
};

/// --iters of a benchmark that times batches of a fixed number of
/// iterations: what one iteration is (for the usage) and the defaults
/// without and with --quick. `what` empty: the benchmark has no --iters.
struct FixedIterations {
  std::string_view what;
  long full = 0;
  long quick = 0;
};

/// What a benchmark adds to the shared options: its usage lines, the options
/// it registers on the parser (their targets must outlive parsing) and its
/// default repetitions.
struct OwnOptions {
  std::string_view usage;
  std::function<void(::bench::OptionParser&)> add;
  int repetitions = 7;
  int quick_repetitions = 3;
  /// Run after parsing: defaults that depend on the shared options (--quick).
  std::function<void(const Options&)> finish;
  FixedIterations iterations{};
};

/// The usage text of the shared options, for the benchmarks' --help; start()
/// adds --reps and --iters with the benchmark's own defaults.
extern const char* const kSharedUsage;

/// Parses the shared options and the benchmark's own; throws
/// std::invalid_argument (empty message for --help) as bench::start expects.
Options parse_options(int argc, char** argv, std::string_view bench, const OwnOptions& own = {});

/// bench::start for a kernel benchmark: the usage is the benchmark's line,
/// kSharedUsage and its own lines, the options go to `options` (and the
/// targets of own.add). Returns the exit code when the program must stop
/// now, std::nullopt to go on.
std::optional<int> start(int& argc, char**& argv, const char* name, Options& options,
                         const OwnOptions& own = {});

// ---- timing one call at a time ----

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
  /// Collective over `world`; lays the selected backends out (above).
  Harness(const Options& options, MPI_Comm world, const char* bench_name)
      : options_(options),
        modes_(world, options.threads, bench_name, options.backends),
        repetitions_(options.repetitions) {}
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  [[nodiscard]] int world_rank() const noexcept { return modes_.world_rank(); }
  [[nodiscard]] const KernelModes& modes() const noexcept { return modes_; }
  [[nodiscard]] int threads() const noexcept { return modes_.threads(); }
  /// Ranks of the ep and mpi decomposition (above).
  [[nodiscard]] int grid_ranks() const noexcept { return modes_.grid_ranks(); }
  /// Ranks of the kernel's communicator: grid_ranks() (ep, mpi, ref), P (funneled).
  [[nodiscard]] int kernel_ranks(Backend backend) const { return modes_.ranks(backend); }
  [[nodiscard]] bool selected(Backend backend) const { return modes_.selected(backend); }
  [[nodiscard]] bool selected_algorithm(std::string_view name) const;
  /// `algorithms` less those --algorithms leaves out, in order.
  [[nodiscard]] std::vector<std::string> selected_algorithms(
      std::vector<std::string> algorithms) const;
  [[nodiscard]] int repetitions() const noexcept { return repetitions_; }
  /// Prints the launch lines (KernelModes::print_launch) headed by
  /// "<bench>: N ranks; funneled P x T threads".
  void print_launch(const char* bench) const {
    const std::string line = std::string(bench) + ": " + std::to_string(grid_ranks()) +
                             " ranks; funneled " +
                             std::to_string(kernel_ranks(Backend::kFunneled)) + " x " +
                             std::to_string(threads()) + " threads";
    modes_.print_launch(line.c_str());
  }

  /// measure(backend, algorithm) for each of `algorithms` on every selected
  /// library backend (ep, mpi, funneled), then measure(Backend::kRef,
  /// reference) once when the reference is selected: the order every kernel
  /// benchmark measures a point in. Collective over the world (as measure()).
  template <class Measure>
  void measure_selected(const std::vector<std::string>& algorithms, const std::string& reference,
                        Measure&& measure) const {
    for (const std::string& algorithm : algorithms) {
      for (const Backend backend : kBackends) {
        if (backend != Backend::kRef && selected(backend)) measure(backend, algorithm);
      }
    }
    if (selected(Backend::kRef)) measure(Backend::kRef, reference);
  }

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
    record.mode = mode_name(backend, algorithm);
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

/// The main of a kernel benchmark with options of its own (`options` is
/// the shared part of them, `own` adds the rest): start(), then `body()`
/// (collective over the world) under bench::run_or_abort, then MPI_Finalize.
/// Returns the exit code.
template <class Body>
int run_main(int& argc, char**& argv, const char* name, Options& options, const OwnOptions& own,
             Body&& body) {
  if (auto stop = start(argc, argv, name, options, own)) return *stop;
  ::bench::run_or_abort(name, [&] { body(); });
  MPI_Finalize();
  return 0;
}

/// The main of a kernel benchmark timed by a Harness: the shared options,
/// then `body(harness, options)` (collective over the world).
template <class Body>
int run_main(int& argc, char**& argv, const char* name, Body&& body) {
  Options options;
  return run_main(argc, argv, name, options, {}, [&] {
    Harness harness(options, MPI_COMM_WORLD, name);
    body(harness, static_cast<const Options&>(options));
  });
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

/// Prints "target <what>: <a> <t_a> us / <b> <t_b> us = <ratio> (<= <limit>) met|NOT met"
/// for the records (test, a, bytes) and (test, b, bytes); nothing when one is
/// missing. Returns whether it was met (false when missing).
inline bool print_point_target(std::FILE* out, const bench::Report& report, const std::string& what,
                               const std::string& test, std::size_t bytes, const std::string& a,
                               const std::string& b, double limit) {
  const bench::Record* ra = report.find(test, a, bytes);
  const bench::Record* rb = report.find(test, b, bytes);
  if (ra == nullptr || rb == nullptr) return false;
  const double ratio = ra->time.avg_us / rb->time.avg_us;
  const bool met = ratio <= limit;
  std::fprintf(out, "target %-28s %-10s %-20s %9.2f us / %-20s %9.2f us = %5.2f (<= %.2f) %s\n",
               what.c_str(), test.c_str(), a.c_str(), ra->time.avg_us, b.c_str(), rb->time.avg_us,
               ratio, limit, met ? "met" : "NOT met");
  return met;
}

}  // namespace bench::kernels
