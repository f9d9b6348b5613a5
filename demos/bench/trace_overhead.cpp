// trace_overhead: what communication tracing (ep/trace.hpp) costs. Ping-pong
// latency between two EP threads of one process (the intra-process path,
// where a per-call cost shows most) with tracing compiled in but switched
// off, and switched on, interleaved repetition by repetition so that both
// modes see the same machine load.
//
//   OMP_NUM_THREADS=2 mpiexec -n 1 build/release/demos/bench/trace_overhead
//
// Modes: ep.trace_off (the default state: one relaxed atomic load and an
// untaken branch per traced call) and ep.trace_on (counting and timing).
// Target: off costs nothing measurable, i.e. the median over sizes of
// t_min(off) / t_min(on) is at most 1.0; t_min is the least disturbed by
// other jobs on a shared machine. Only process 0 measures; other processes
// wait quietly.
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bench_cli.hpp"
#include "bench_mpi.hpp"
#include "bench_report.hpp"
#include "ep/ep.hpp"
#include "ep/trace.hpp"
#include "machine.hpp"

namespace {

constexpr const char* kBenchName = "trace_overhead";
constexpr const char* kUsage =
    "usage: trace_overhead [--reps N] [--iters N] [--max-bytes N] [--json FILE] [--csv FILE]\n"
    "  Ping-pong latency of two EP threads with tracing off and on, interleaved.\n"
    "  --reps N       timed repetitions per mode and size (default 15)\n"
    "  --iters N      round trips per repetition (default 2000)\n"
    "  --max-bytes N  largest message, sizes 8 B x4 up to it (default 16K)\n"
    "  --json FILE    JSON records (default bench-results/trace_overhead.json)\n"
    "  --csv FILE     CSV records (default bench-results/trace_overhead.csv)\n";

struct Options {
  int repetitions = 15;
  long iterations = 2000;
  long long max_bytes = 16 * 1024;
  std::string json = "bench-results/trace_overhead.json";
  std::string csv = "bench-results/trace_overhead.csv";
};

constexpr std::string_view kModes[] = {"ep.trace_off", "ep.trace_on"};

// One repetition: `iterations` round trips between endpoints 0 and 1;
// returns the one-way time per message in seconds (measured by thread 0).
double ping_pong(std::vector<ep::Communicator>& endpoints, std::size_t bytes, long iterations) {
  double per_message = 0.0;
#pragma omp parallel num_threads(2)
  bench::run_or_abort(kBenchName, [&] {
    ep::Communicator& c = endpoints[static_cast<std::size_t>(omp_get_thread_num())];
    std::vector<char> buffer(std::max<std::size_t>(bytes, 1), 'p');
    const int count = static_cast<int>(bytes);
    const int peer = 1 - c.rank();
    ep::barrier(c);
    const double start = MPI_Wtime();
    for (long i = 0; i < iterations; ++i) {
      if (c.rank() == 0) {
        c.send(buffer.data(), count, MPI_BYTE, peer, 0);
        (void)c.recv(buffer.data(), count, MPI_BYTE, peer, 0);
      } else {
        (void)c.recv(buffer.data(), count, MPI_BYTE, peer, 0);
        c.send(buffer.data(), count, MPI_BYTE, peer, 0);
      }
    }
    if (c.rank() == 0)
      per_message = (MPI_Wtime() - start) / (2.0 * static_cast<double>(iterations));
  });
  return per_message;
}

// f(mode, rep) for rep in [0, repetitions), both modes each time (0: tracing
// off, 1: on), alternating which goes first so neither always follows the other.
template <class F>
void alternate_modes(int repetitions, const std::string& trace_directory, F&& f) {
  for (int rep = 0; rep < repetitions; ++rep) {
    for (int k = 0; k < 2; ++k) {
      const int mode = (rep + k) % 2;
      if (mode == 1) ep::trace::enable(trace_directory);
      f(mode, rep);
      ep::trace::disable();
    }
  }
}

// One record per mode from its seconds per operation (one process).
void add_mode_records(bench::Report& report, const char* test, int threads, std::size_t bytes,
                      long iterations, int repetitions, const std::vector<double> (&seconds)[2]) {
  for (int mode = 0; mode < 2; ++mode) {
    bench::Record record;
    record.test = test;
    record.mode = std::string(kModes[mode]);
    record.ranks = 1;
    record.threads = threads;
    record.bytes = bytes;
    record.iterations = iterations;
    record.repetitions = repetitions;
    record.time = bench::TimeStats::from_seconds(seconds[mode]);
    const double avg_seconds = record.time.avg_us * 1e-6;
    record.mbps = avg_seconds > 0 ? static_cast<double>(bytes) / avg_seconds / 1e6 : 0.0;
    report.add(record);
  }
}

bench::Report measure(const Options& options, const std::string& trace_directory) {
  // One process's two endpoints; the threads of each parallel region below
  // take element omp_get_thread_num().
  std::vector<ep::Communicator> endpoints = ep::create_endpoints(MPI_COMM_SELF, 2);

  bench::Report report(kBenchName);
  const bench::Comparison columns{{std::string(kModes[0]), std::string(kModes[1])},
                                  {{std::string(kModes[0]), std::string(kModes[1])}}};
  bench::print_comparison_header(stdout, "latency (one-way, us)", columns);
  for (std::size_t bytes = 8; bytes <= static_cast<std::size_t>(options.max_bytes); bytes *= 4) {
    std::vector<double> seconds[2];
    // Warm-up in both states.
    for (int mode = 0; mode < 2; ++mode) {
      if (mode == 1) ep::trace::enable(trace_directory);
      (void)ping_pong(endpoints, bytes, options.iterations / 4 + 1);
      ep::trace::disable();
    }
    alternate_modes(options.repetitions, trace_directory, [&](int mode, int /*rep*/) {
      seconds[mode].push_back(ping_pong(endpoints, bytes, options.iterations));
    });
    add_mode_records(report, "latency", 2, bytes, options.iterations, options.repetitions, seconds);
    bench::print_comparison_row(stdout, report, "latency", bytes, columns);
  }

  // The hook's own cost, without communication: iprobe on MPI_PROC_NULL is a
  // traced call that does almost nothing else (argument checks, one scope).
  const bench::Comparison call_columns{{std::string(kModes[0]), std::string(kModes[1])},
                                       {{std::string(kModes[0]), std::string(kModes[1])}}};
  bench::print_comparison_header(stdout, "traced call: iprobe(MPI_PROC_NULL) (us)", call_columns);
  const long calls = options.iterations * 100;
  std::vector<double> seconds[2];
  // Repetition 0 warms up.
  alternate_modes(options.repetitions + 1, trace_directory, [&](int mode, int rep) {
    const double start = MPI_Wtime();
    for (long i = 0; i < calls; ++i) (void)endpoints[0].iprobe(MPI_PROC_NULL, 0);
    const double per_call = (MPI_Wtime() - start) / static_cast<double>(calls);
    if (rep > 0) seconds[mode].push_back(per_call);
  });
  add_mode_records(report, "call", 1, 0, calls, options.repetitions, seconds);
  bench::print_comparison_row(stdout, report, "call", 0, call_columns);

#pragma omp parallel num_threads(2)
  bench::run_or_abort(kBenchName,
                      [&] { endpoints[static_cast<std::size_t>(omp_get_thread_num())].free(); });
  return report;
}

void print_summary(const bench::Report& report) {
  const auto stats = bench::ratio_stats(report, "latency", kModes[0], kModes[1]);
  if (!stats) return;
  std::printf(
      "\n# summary: t(off)/t(on) over %d sizes: median of t_min %.3f, median of t_avg %.3f\n",
      stats->sizes, stats->median_min, stats->median_avg);
  const bench::Record* call_off = report.find("call", kModes[0], 0);
  const bench::Record* call_on = report.find("call", kModes[1], 0);
  if (call_off != nullptr && call_on != nullptr) {
    std::printf("# one traced call, iprobe(MPI_PROC_NULL), t_min: off %.1f ns, on %.1f ns\n",
                call_off->time.min_us * 1e3, call_on->time.min_us * 1e3);
  }
  std::printf(
      "# target: tracing off costs nothing measurable (median t_min ratio off/on <= 1.0): %s\n",
      stats->median_min <= 1.0 ? "met" : "not met");
  if (stats->median_min > 1.0) {
    std::printf("#   off measured slower than on: machine noise larger than the difference\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (auto stop = bench::start(argc, argv, kBenchName, kUsage, [&] {
        bench::OptionParser parser;
        parser.count("--reps", options.repetitions)
            .count("--iters", options.iterations)
            .count("--max-bytes", options.max_bytes)
            .text("--json", options.json)
            .text("--csv", options.csv);
        parser.parse(argc, argv);
      })) {
    return *stop;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bench::widen_affinity_to_all_cpus();
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  bench::run_or_abort(kBenchName, [&] {
    if (rank == 0) {
      const std::filesystem::path traces = std::filesystem::temp_directory_path() /
                                           ("ep_trace_overhead." + std::to_string(getpid()));
      std::printf(
          "# trace_overhead: 2 EP threads of one process, %d repetitions x %ld round trips, "
          "modes interleaved\n",
          options.repetitions, options.iterations);
      bench::print_load(stdout, "start");
      const bench::Report report = measure(options, traces.string());
      print_summary(report);
      bench::print_load(stdout, "end");
      report.write_json(options.json);
      report.write_csv(options.csv);
      std::printf("\n# wrote %s and %s\n", options.json.c_str(), options.csv.c_str());
      std::filesystem::remove_all(traces);
    }
    bench::quiet_barrier(MPI_COMM_WORLD);
  });
  MPI_Finalize();
  return 0;
}
