// ep_collectives: collectives of endpoint communicators against plain MPI and
// against the funneled hybrid pattern, side by side.
//
// Modes (--modes; where they run: launch_layout.hpp):
//   ep        processes of T OpenMP threads, each thread an EP rank of one
//             endpoint communicator: ep::barrier, ep::bcast, ...
//   mpi       single-threaded processes on (a dup of) MPI_COMM_WORLD
//   funneled  processes of T threads as models do it today: the threads
//             combine in shared memory, the master thread alone calls MPI on
//             the process communicator, the threads read the result
// ep and funneled are threaded modes, mpi a flat one. With only threaded
// modes every process runs T threads; with only mpi every process is a rank;
// with both (the default) N must be a multiple of T, ep and funneled use the
// first N/T processes and the others wait in a sleeping barrier meanwhile (a
// mixed launch: its ep/mpi ratios are printed, never judged). make bench runs
// a threaded and a flat launch, each as on cores of its own, alternated
// (scripts/run-bench.sh).
// Collectives: barrier, bcast (root 0), allreduce (MPI_DOUBLE, MPI_SUM),
// gather and scatter (root 0), allgather, alltoall and alltoallv (uniform
// counts); how each mode calls them and what `bytes` means:
// collective_modes.hpp.
//
// Every point is measured for all modes before the next size, so machine noise
// hits all modes alike. Only world rank 0 (EP rank 0, thread 0 in the thread
// modes) prints and writes JSON/CSV.
//
//   mpiexec -n 1 ep_collectives --threads 2 --modes ep,funneled ...   (threaded)
//   mpiexec -n 2 ep_collectives --threads 2 --modes mpi ...           (flat)
//   mpiexec -n 4 ep_collectives --threads 2 [--quick] [--max-bytes N] (mixed)
// (options: --help, or kOwnUsage and SweepOptions::usage; method and results:
// docs/ep_collectives.md)
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_buffers.hpp"
#include "bench_cli.hpp"
#include "bench_mpi.hpp"
#include "bench_report.hpp"
#include "collective_modes.hpp"
#include "ep/ep.hpp"
#include "kernel_backend.hpp"
#include "launch_layout.hpp"
#include "machine.hpp"

namespace {

using bench::Buffers;
using bench::collectives::CallShape;
using bench::collectives::Collective;
using bench::collectives::collective_name;
using bench::collectives::kCollectiveNames;
using bench::collectives::kCollectives;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::size_t kMinBytes = 8;  // one double: the smallest allreduce
constexpr const char* kBenchName = "ep_collectives";
// Set in the environment when ensure_passive_wait_policy chose the policy.
constexpr const char* kPolicyMarker = "EP_COLLECTIVES_SET_WAIT_POLICY";

// ---------------------------------------------------------------- options ----

struct Options : bench::SweepOptions {
  Options() : SweepOptions(kBenchName, kMiB) {}
  int threads = 2;
  bool blocking_mpi = false;
  std::vector<std::string> collectives;  // empty: all
};

// The sweep's counts. 4 processes on the 2-core VM: the full sweep takes
// about a minute at load 5 (other jobs), leaving room within its 2-minute
// budget for busier times.
constexpr bench::SweepPreset kPreset{"calls per repetition for small messages", {400, 20}, {20, 3}};

// ep_collectives' own options (SweepOptions::usage writes the shared ones).
constexpr const char* kOwnUsage =
    "usage: mpiexec -n N ep_collectives [options]   (N = P processes x T threads)\n"
    "  --threads T        threads per process of the ep and funneled modes (default 2;\n"
    "                     N must be a multiple of T)\n"
    "  --quick            few sizes and iterations (seconds)\n"
    "  --max-bytes N      largest message per rank (per block for gather, scatter,\n"
    "                     allgather and alltoall/v), a multiple of 8, suffix K or M\n"
    "                     allowed (default 1M)\n"
    "  --mpi-wait MODE    how mpi and the funneled master wait for MPI: 'yield' (default:\n"
    "                     MPI_I* + MPI_Test + sched_yield, as ep waits) or 'block'\n"
    "                     (the blocking calls; Open MPI busy-polls in them)\n"
    "  --collectives LIST comma-separated subset of barrier,bcast,allreduce,gather,scatter,\n"
    "                     allgather,alltoall,alltoallv\n";

constexpr std::string_view kModeNames[] = {"ep", "mpi", "funneled"};
Options parse_options(int argc, char** argv) {
  Options opt;
  bench::OptionParser parser;
  opt.add_to(parser, kModeNames);
  parser.count("--threads", opt.threads)
      .custom("--mpi-wait",
              [&opt](std::string_view flag, const std::string& wait) {
                if (wait != "yield" && wait != "block") {
                  throw std::invalid_argument(std::string(flag) + ": 'yield' or 'block', not '" +
                                              wait + "'");
                }
                opt.blocking_mpi = wait == "block";
              })
      .list("--collectives", kCollectiveNames, opt.collectives);
  parser.parse(argc, argv);
  if (opt.max_bytes < kMinBytes || opt.max_bytes % sizeof(double) != 0) {
    throw std::invalid_argument("--max-bytes: a multiple of 8 (allreduce sends doubles)");
  }
  if (opt.threads > ep::kMaxEndpointsPerProcess) {
    throw std::invalid_argument("--threads: at most " +
                                std::to_string(ep::kMaxEndpointsPerProcess));
  }
  return opt;
}

// Where the modes run (launch_layout.hpp): ep and funneled are threaded, mpi
// flat. Throws std::invalid_argument for a layout that cannot be placed.
bench::LaunchLayout launch_layout(const Options& opt, int world_size) {
  const bool threaded = bench::selected(opt.modes, "ep") || bench::selected(opt.modes, "funneled");
  const bool flat = bench::selected(opt.modes, "mpi");
  return bench::LaunchLayout::of(world_size, opt.threads, threaded, flat);
}

// Checks what depends on the process count. Throws std::invalid_argument.
void check_layout(const Options& opt, int world_size) {
  const bench::LaunchLayout layout = launch_layout(opt, world_size);
  // Largest displacement: the funneled alltoallv stages N*T blocks per process
  // (gather, scatter and allgather stage fewer).
  const auto blocks =
      static_cast<std::size_t>(layout.grid_ranks) * static_cast<std::size_t>(opt.threads);
  if (opt.max_bytes > static_cast<std::size_t>(INT_MAX) / blocks) {
    throw std::invalid_argument("--max-bytes: N * T * bytes must fit an MPI int count");
  }
}

// Powers of two from 8 B to max_bytes (quick: a few of them), max_bytes last.
std::vector<std::size_t> message_sizes(const Options& opt) {
  return opt.message_sizes(kMinBytes, {kMinBytes, kKiB, 64 * kKiB, kMiB});
}

// How much work each point gets. Iterations fall with the bytes a rank sends
// per call, so that large points move about as much data as small ones and
// the full sweep stays within its time budget.
struct Sizing {
  long base_iterations = kPreset.full.iterations;
  int repetitions = kPreset.full.repetitions;
  std::size_t flat_bytes = 16 * kKiB;  // sent per rank per call; above, iterations fall
  long min_iterations = 8;

  [[nodiscard]] long iterations(std::size_t traffic) const {
    return bench::scaled_iterations(base_iterations, flat_bytes, traffic, min_iterations);
  }
  [[nodiscard]] static long warmup(long iterations) { return std::max(2L, iterations / 10); }
};

Sizing sizing_for(const Options& opt) {
  Sizing sizing;
  const bench::SweepCounts counts = opt.counts(kPreset);
  sizing.base_iterations = counts.iterations;
  sizing.repetitions = counts.repetitions;
  sizing.min_iterations = std::min(sizing.min_iterations, sizing.base_iterations);
  return sizing;
}

// ---------------------------------------------------------------- timing ----

struct Plan {
  long iterations = 1;
  long warmup = 2;
  int repetitions = 1;
};

// The OSU/IMB loop, run by every participant of a mode: one call whose result
// is checked, a warm-up, then `repetitions` timed batches, each after a
// barrier of the mode. Returns this participant's time per call of each batch.
template <class Caller>
std::vector<double> time_point(Caller& caller, const Plan& plan) {
  caller.prepare();
  caller.call();
  caller.verify();
  for (long i = 0; i < plan.warmup; ++i) caller.call();
  std::vector<double> per_call(static_cast<std::size_t>(plan.repetitions));
  for (double& seconds : per_call) {
    caller.barrier();
    const double start = MPI_Wtime();
    for (long i = 0; i < plan.iterations; ++i) caller.call();
    seconds = (MPI_Wtime() - start) / static_cast<double>(plan.iterations);
  }
  return per_call;
}

// Element-wise maximum of `times` over `comm`, into rank 0's `times`: a
// repetition lasts as long as its slowest rank (IMB's t_max; rank 0 alone
// would flatter bcast, where the root may run ahead). Collective.
void slowest_to_root(std::vector<double>& times, MPI_Comm comm) {
  int rank = 0;
  bench::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const int n = static_cast<int>(times.size());
  MPI_Request request = MPI_REQUEST_NULL;
  bench::check_mpi(
      rank == 0 ? MPI_Ireduce(MPI_IN_PLACE, times.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm, &request)
                : MPI_Ireduce(times.data(), nullptr, n, MPI_DOUBLE, MPI_MAX, 0, comm, &request),
      "MPI_Ireduce");
  bench::wait_yielding(request, "MPI_Ireduce");
}

template <class Body>
void run_or_abort(Body&& body) noexcept {
  bench::run_or_abort(kBenchName, std::forward<Body>(body));
}

// Runs body(thread) on `threads` OpenMP threads; any error ends the job.
template <class Body>
void on_threads(int threads, const Body& body) {
#pragma omp parallel num_threads(threads) default(none) shared(body, threads)
  run_or_abort([&] {
    if (omp_get_num_threads() != threads) {
      throw std::runtime_error("asked OpenMP for " + std::to_string(threads) + " threads, got " +
                               std::to_string(omp_get_num_threads()) +
                               " (check OMP_THREAD_LIMIT / OMP_DYNAMIC)");
    }
    body(omp_get_thread_num());
  });
}

// ------------------------------------------------------------------ modes ----

// The backends of the kernel benchmarks but ref (there is no hand-written
// plain-MPI reference of the library's collectives: mpi is MPI's own).
using Mode = bench::kernels::Backend;
const char* mode_name(Mode mode) { return bench::kernels::backend_name(mode); }

constexpr Mode kModes[] = {Mode::kEp, Mode::kMpi, Mode::kFunneled};

class CollectivesBench {
 public:
  CollectivesBench(const Options& options, MPI_Comm world)
      : options_(options),
        sizing_(sizing_for(options)),
        sizes_(message_sizes(options)),
        world_(world),
        world_mpi_(world, options.blocking_mpi) {
    bench::check_mpi(MPI_Comm_rank(world_, &rank_), "MPI_Comm_rank");
    bench::check_mpi(MPI_Comm_size(world_, &size_), "MPI_Comm_size");
    threads_ = options_.threads;
    layout_ = launch_layout(options_, size_);
    processes_ = layout_.threaded_processes;
    group_ = bench::first_ranks(world_, processes_);
    group_mpi_.emplace(group_, options_.blocking_mpi);

    // Everything a participant will need, allocated and first touched now by
    // the thread that uses it, outside every timing.
    const std::size_t largest = bench::collectives::buffer_bytes(
        {Collective::kAlltoall, sizes_.back(), layout_.grid_ranks});
    mpi_buffers_.reserve(largest);
    if (group_ == MPI_COMM_NULL) return;
    int process = 0;
    bench::check_mpi(MPI_Comm_rank(group_, &process), "MPI_Comm_rank");
    endpoints_ = ep::create_endpoints(group_, threads_);
    thread_buffers_.resize(static_cast<std::size_t>(threads_));
    staging_.reserve(largest * static_cast<std::size_t>(threads_));
    // On cores of their own the funneled threads spin in their barrier, as
    // tuned hybrid codes do; shared cores need the waits that yield.
    team_.emplace(threads_, layout_.judged(bench::online_cpus()) ? bench::TeamBarrier::Wait::kSpin
                                                                 : bench::TeamBarrier::Wait::kAsEp);
    funneled_.emplace(bench::collectives::FunneledProcess{*group_mpi_, *team_, process, processes_,
                                                          threads_, staging_, thread_buffers_});
    on_threads(threads_, [&](int thread) {
      thread_buffers_[static_cast<std::size_t>(thread)].reserve(largest);
    });
  }

  CollectivesBench(const CollectivesBench&) = delete;
  CollectivesBench& operator=(const CollectivesBench&) = delete;

  ~CollectivesBench() {
    run_or_abort([&] {
      // Freeing is collective over the endpoints: each thread frees its own.
      if (!endpoints_.empty()) {
        on_threads(threads_,
                   [&](int thread) { endpoints_[static_cast<std::size_t>(thread)].free(); });
      }
      if (group_ != MPI_COMM_NULL) bench::check_mpi(MPI_Comm_free(&group_), "MPI_Comm_free");
    });
  }

  [[nodiscard]] int processes() const { return processes_; }
  [[nodiscard]] const bench::LaunchLayout& layout() const { return layout_; }

  bench::Report run() {
    bench::Report report(kBenchName);
    // One unrecorded point per mode and collective first: the first calls of
    // a run also pay for the OpenMP pool, Open MPI's lazy connection set-up
    // and the endpoint layer's first use of its internal communicators.
    for (const Collective collective : kCollectives) {
      if (!selected_collective(collective)) continue;
      for (const Mode mode : kModes) {
        if (selected_mode(mode)) {
          run_mode(mode, {collective, kMinBytes, layout_.grid_ranks}, Plan{});
        }
      }
      bench::quiet_barrier(world_);
    }
    for (const Collective collective : kCollectives) {
      if (!selected_collective(collective)) continue;
      if (rank_ == 0) bench::print_comparison_header(stdout, title(collective), comparison());
      const std::vector<std::size_t> sizes =
          collective == Collective::kBarrier ? std::vector<std::size_t>{0} : sizes_;
      for (const std::size_t bytes : sizes) {
        for (const Mode mode : kModes) {
          measure(mode, {collective, bytes, layout_.grid_ranks}, report);
        }
        if (rank_ == 0) {
          bench::print_comparison_row(stdout, report, collective_name(collective), bytes,
                                      comparison());
        }
      }
    }
    return report;
  }

  [[nodiscard]] bench::Comparison comparison() const {
    bench::Comparison columns;
    for (const Mode mode : kModes) {
      if (selected_mode(mode)) columns.modes.emplace_back(mode_name(mode));
    }
    for (const Mode other : {Mode::kMpi, Mode::kFunneled}) {
      if (selected_mode(Mode::kEp) && selected_mode(other)) {
        columns.ratios.emplace_back(mode_name(Mode::kEp), mode_name(other));
      }
    }
    return columns;
  }

 private:
  [[nodiscard]] bool selected_mode(Mode mode) const {
    if (!bench::selected(options_.modes, mode_name(mode))) return false;
    return mode == Mode::kMpi ? layout_.kind != bench::LaunchLayout::Kind::kThreaded
                              : processes_ > 0;
  }
  [[nodiscard]] bool selected_collective(Collective collective) const {
    return bench::selected(options_.collectives, collective_name(collective));
  }

  static std::string title(Collective collective) {
    std::string head = std::string(collective_name(collective)) + ": ";
    switch (collective) {
      case Collective::kBarrier:
        return head + "t = time per call";
      case Collective::kBcast:
        return head + "root 0; bytes = the message; t = time per call";
      case Collective::kAllreduce:
        return head + "MPI_DOUBLE, MPI_SUM; bytes = the vector per rank; t = time per call";
      case Collective::kGather:
        return head +
               "root 0; bytes = one block (every rank sends one to the root); t = time per call";
      case Collective::kScatter:
        return head +
               "root 0; bytes = one block (the root sends one to every rank); t = time per call";
      case Collective::kAllgather:
        return head +
               "bytes = one block (every rank sends one, receives every rank's); t = time per call";
      case Collective::kAlltoall:
      case Collective::kAlltoallv:
        return head + "bytes = one block (a rank sends one to every rank); t = time per call";
    }
    return head;
  }

  [[nodiscard]] Plan plan_for(const CallShape& shape) const {
    Plan plan;
    plan.iterations = sizing_.iterations(bench::collectives::traffic_bytes(shape));
    plan.warmup = Sizing::warmup(plan.iterations);
    plan.repetitions = sizing_.repetitions;
    return plan;
  }

  // Runs `mode` at `shape` on every rank (those outside the mode go straight
  // to the sleeping barrier) and records world rank 0's result.
  void measure(Mode mode, const CallShape& shape, bench::Report& report) {
    // The same decision on every rank, so all of them skip or join together.
    if (!selected_mode(mode)) return;
    const Plan plan = plan_for(shape);
    const std::optional<std::vector<double>> per_call = run_mode(mode, shape, plan);
    bench::quiet_barrier(world_);
    if (rank_ != 0 || !per_call) return;

    const bool threads = mode != Mode::kMpi;
    bench::Record record;
    record.test = collective_name(shape.collective);
    record.mode = mode_name(mode);
    record.ranks = threads ? processes_ : size_;
    record.threads = threads ? threads_ : 1;
    record.bytes = shape.bytes;
    record.iterations = plan.iterations;
    record.repetitions = plan.repetitions;
    record.time = bench::TimeStats::from_seconds(*per_call);
    record.mbps = static_cast<double>(shape.bytes) / record.time.avg_us;  // bytes/us = 10^6 B/s
    report.add(std::move(record));
  }

  // Every rank calls this; world rank 0 gets the slowest rank's time per call
  // of each repetition.
  std::optional<std::vector<double>> run_mode(Mode mode, const CallShape& shape, const Plan& plan) {
    std::vector<double> slowest;
    if (mode == Mode::kMpi) {
      run_or_abort([&] {
        bench::collectives::MpiCaller caller(world_mpi_, shape, rank_, mpi_buffers_);
        slowest = time_point(caller, plan);
        slowest_to_root(slowest, world_);
      });
    } else {
      if (group_ == MPI_COMM_NULL) return std::nullopt;
      slowest.assign(static_cast<std::size_t>(plan.repetitions), 0.0);
      on_threads(threads_, [&](int thread) {
        const auto t = static_cast<std::size_t>(thread);
        std::vector<double> mine;
        if (mode == Mode::kEp) {
          bench::collectives::EpCaller caller(endpoints_[t], shape, thread_buffers_[t]);
          mine = time_point(caller, plan);
        } else {
          bench::collectives::FunneledCaller caller(*funneled_, shape, thread);
          mine = time_point(caller, plan);
        }
#pragma omp critical(ep_collectives_slowest)
        for (std::size_t i = 0; i < mine.size(); ++i) slowest[i] = std::max(slowest[i], mine[i]);
      });
      run_or_abort([&] { slowest_to_root(slowest, group_); });
    }
    if (rank_ != 0) return std::nullopt;
    return slowest;
  }

  Options options_;
  Sizing sizing_;
  std::vector<std::size_t> sizes_;
  MPI_Comm world_;
  bench::collectives::MpiCollectives world_mpi_;
  int rank_ = 0;
  int size_ = 1;
  int threads_ = 1;
  bench::LaunchLayout layout_;
  int processes_ = 1;
  MPI_Comm group_ = MPI_COMM_NULL;  // the first P processes: ep and funneled
  std::optional<bench::collectives::MpiCollectives> group_mpi_;
  std::vector<ep::Communicator> endpoints_;  // by OpenMP thread
  Buffers mpi_buffers_;
  std::vector<Buffers> thread_buffers_;     // by OpenMP thread
  Buffers staging_;                         // the funneled master's combined data
  std::optional<bench::TeamBarrier> team_;  // where funneled's threads meet
  std::optional<bench::collectives::FunneledProcess> funneled_;
};

// ---------------------------------------------------------------- summary ----

// One block of the summary: a/b per collective and, when `target`, whether a
// <= b at every size; nothing when the run measured a or b nowhere.
void print_target(const bench::Report& report, const char* a, const char* b, const char* heading,
                  bool target) {
  bool headed = false;
  for (const std::string_view name : kCollectiveNames) {
    const std::string test(name);
    const std::optional<bench::RatioStats> s = bench::ratio_stats(report, test, a, b);
    if (!s) continue;
    if (!headed) std::printf("# %s\n", heading);
    headed = true;
    std::printf("  %-10s %s/%s <= 1 at %2d of %2d sizes; median %6.3f (t_min %6.3f); worst %6.3f",
                test.c_str(), a, b, s->at_or_below, s->sizes, s->median_avg, s->median_min,
                s->worst);
    if (name != "barrier") std::printf(" at %s", bench::format_bytes(s->worst_bytes).c_str());
    if (target) std::printf("  %s", s->at_or_below == s->sizes ? "met" : "NOT met");
    std::printf("\n");
  }
}

void print_summary(const bench::Report& report, const bench::LaunchLayout& layout) {
  std::printf("\n# summary: measured ratios of t_avg (t_min for reference)\n");
  const std::string shape =
      std::to_string(layout.threaded_processes) + "x" + std::to_string(layout.threads);
  // The fair comparison with MPI needs two launches (run-bench.sh): a mixed
  // launch prints the ratio, never judges it.
  const std::string vs_mpi = "EP " + shape + " vs MPI with " + std::to_string(layout.world_size) +
                             " processes in one job: not judged (launch_layout.hpp)";
  print_target(report, "ep", "mpi", vs_mpi.c_str(), false);
  const bool judged = layout.judged(bench::online_cpus());
  const std::string vs_funneled =
      "EP " + shape + " vs funneled " + shape + ": " +
      (judged ? "target EP at or below funneled at every size" : "oversubscribed, not judged");
  print_target(report, "ep", "funneled", vs_funneled.c_str(), judged);
}

void print_preamble(const Options& opt, const bench::LaunchLayout& layout, int cpus_before,
                    int cpus_after) {
  const std::vector<std::size_t> sizes = message_sizes(opt);
  const Sizing sizing = sizing_for(opt);
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("# %s: endpoint collectives vs plain MPI vs funneled%s\n", kBenchName,
              opt.quick ? " (quick)" : "");
  const bool judged = layout.judged(bench::online_cpus());
  std::printf("# %s\n# %s", bench::mpi_library_version().c_str(),
              layout.describe(bench::online_cpus()).c_str());
  const int world = layout.world_size;
  const int processes = layout.threaded_processes;
  if (layout.kind == bench::LaunchLayout::Kind::kMixed) {
    if (processes + 1 == world) {
      std::printf(" (rank %d waits asleep in the threaded modes)", processes);
    } else if (processes < world) {
      std::printf(" (ranks %d..%d wait asleep in the threaded modes)", processes, world - 1);
    }
  }
  std::printf("\n");
  std::printf(
      "# MPI waits (mpi, funneled master): %s; ep waits as its library does; funneled threads "
      "meet in a barrier that %s\n",
      opt.blocking_mpi ? "blocking calls (Open MPI busy-polls)"
                       : "MPI_I* + MPI_Test + sched_yield (after 64 spins)",
      judged ? "spins (cores of their own)" : "waits as ep does (spin, yield, short sleeps)");
  std::printf(
      "# t = time per call of the slowest rank in each repetition; t_min/avg/max over "
      "repetitions; ratios from t_avg\n");
  bench::print_sweep_plan(sizes, sizing.repetitions, sizing.base_iterations, "calls per repetition",
                          sizing.flat_bytes, " sent per rank per call, proportionally fewer",
                          sizing.min_iterations);
  if (opt.keep_binding || cpus_before == cpus_after) {
    std::printf("# CPUs per process: %d of %d online", cpus_after, bench::online_cpus());
  } else {
    std::printf("# CPUs per process: launcher bound it to %d, widened to %d", cpus_before,
                cpus_after);
  }
  std::printf(
      "; OMP_WAIT_POLICY=%s%s\n", wait_policy != nullptr ? wait_policy : "(unset)",
      std::getenv(kPolicyMarker) != nullptr ? " (set by ep_collectives: it was unset)" : "");
  if (!judged && (wait_policy == nullptr || std::string_view(wait_policy) != "passive")) {
    std::printf(
        "# warning: OpenMP threads spin while they wait unless OMP_WAIT_POLICY=passive; on\n"
        "#   oversubscribed cores they take the cores of the ranks being measured\n");
  }
  bench::print_load(stdout, "start");
  std::printf("# the machine may be shared: with load above 0 the numbers are noisy\n");
  std::fflush(stdout);
}

// libgomp reads OMP_WAIT_POLICY once, when it loads (before main). Unset, its
// threads spin for a while in every `omp barrier` and after every parallel
// region, and on oversubscribed cores the spinners take the cores of the ranks
// being measured. Measured at load ~2: with the policy unset, mpi's barrier at
// -n 2 took 121 us instead of 0.8 (rank 0's idle pool spinning after the ep
// point) and funneled's at -n 4 10 ms instead of 60 us, which would also stretch
// the full sweep to hours. So when the launcher set neither OMP_WAIT_POLICY nor
// GOMP_SPINCOUNT, restart this process (before MPI_Init, same pid and
// environment) with passive; an explicit setting is honoured.
void ensure_passive_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) {
    return;
  }
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv(kPolicyMarker, "1", 1);
  execv("/proc/self/exe", argv);
  // Only reached when exec failed: go on as launched; the header warns.
  unsetenv("OMP_WAIT_POLICY");
  unsetenv(kPolicyMarker);
}

}  // namespace

int main(int argc, char** argv) {
  ensure_passive_wait_policy(argv);
  int world_size = 1;
  Options options;
  const std::string usage = kOwnUsage + Options::usage(kBenchName, kPreset, kModeNames);
  if (auto stop = bench::start(argc, argv, kBenchName, usage.c_str(), [&] {
        MPI_Comm_size(MPI_COMM_WORLD, &world_size);
        options = parse_options(argc, argv);
        check_layout(options, world_size);
      })) {
    return *stop;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  // Before any OpenMP region: threads inherit the mask of the thread that
  // creates them, so widening later would leave the pool on one core.
  const int cpus_before = bench::allowed_cpus();
  const int cpus_after = options.keep_binding ? cpus_before : bench::widen_affinity_to_all_cpus();

  // Errors come back as codes, which every call checks (bench::check_mpi).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  run_or_abort([&] {
    MPI_Comm world = MPI_COMM_NULL;
    bench::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &world), "MPI_Comm_dup");
    {
      CollectivesBench collectives(options, world);
      if (rank == 0) {
        print_preamble(options, collectives.layout(), cpus_before, cpus_after);
      }
      const bench::Report report = collectives.run();
      if (rank == 0) {
        print_summary(report, collectives.layout());
        bench::print_load(stdout, "end");
        report.write_json(options.json);
        report.write_csv(options.csv);
        std::printf("\n# wrote %s and %s\n", options.json.c_str(), options.csv.c_str());
      }
    }
    bench::check_mpi(MPI_Comm_free(&world), "MPI_Comm_free");
  });
  MPI_Finalize();
  return 0;
}
