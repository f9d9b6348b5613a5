// The kernel benchmarks' harness (kernel_bench.hpp): the launch layout and
// the participants of each backend, the shared options, the tables and the
// target lines.
#include "kernel_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_cli.hpp"
#include "machine.hpp"

namespace bench::kernels {

KernelModes::KernelModes(MPI_Comm world, int threads, const char* bench_name,
                         std::vector<std::string> backends)
    : world_(world), bench_(bench_name), backends_(std::move(backends)) {
  int size = 1;
  check_mpi(MPI_Comm_rank(world_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(world_, &size), "MPI_Comm_size");
  bool threaded = false;
  bool flat = false;
  for (const Backend b : kBackends) {
    if (bench::selected(backends_, backend_name(b))) (is_threaded(b) ? threaded : flat) = true;
  }
  layout_ = LaunchLayout::of(size, threads, threaded, flat);
  // A threaded process's threads must not queue for the one core the
  // launcher may have bound it to (machine.hpp); flat processes keep the
  // launcher's binding. Before any OpenMP region: threads inherit the mask.
  if (rank_ < processes()) widen_affinity_to_all_cpus();
  group_ = first_ranks(world_, processes());
  if (group_ != MPI_COMM_NULL) endpoints_ = ep::create_endpoints(group_, threads);
}

KernelModes::~KernelModes() {
  run_or_abort(bench_, [&] {
    if (!endpoints_.empty()) {
      auto& endpoints = endpoints_;
      // Freeing is collective over the endpoints: each thread frees its own.
#pragma omp parallel num_threads(threads()) default(none) shared(endpoints)
      endpoints[static_cast<std::size_t>(omp_get_thread_num())].free();
    }
    if (group_ != MPI_COMM_NULL) check_mpi(MPI_Comm_free(&group_), "MPI_Comm_free");
  });
}

bool KernelModes::selected(Backend backend) const {
  if (!bench::selected(backends_, backend_name(backend))) return false;
  return is_threaded(backend) ? processes() > 0 : layout_.kind != LaunchLayout::Kind::kThreaded;
}

void KernelModes::print_launch(const char* bench_line) const {
  if (rank_ != 0) return;
  std::printf("# %s\n# %s\n", bench_line, layout_.describe(online_cpus()).c_str());
  print_load(stdout, "start");
  std::fflush(stdout);
}

void KernelModes::slowest_to_root(std::vector<double>& times, MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const int n = static_cast<int>(times.size());
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(rank == 0
                ? MPI_Ireduce(MPI_IN_PLACE, times.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm, &request)
                : MPI_Ireduce(times.data(), nullptr, n, MPI_DOUBLE, MPI_MAX, 0, comm, &request),
            "MPI_Ireduce");
  wait_yielding(request, "MPI_Ireduce");
}

const char* const kSharedUsage =
    "  --threads T        threads per process of ep and funneled (default 2)\n"
    "  --quick            few sizes and repetitions (seconds)\n"
    "  --backends LIST    comma-separated subset of ep,mpi,funneled,ref; only ep and\n"
    "                     funneled: every process runs T threads (a threaded launch);\n"
    "                     only mpi and ref: one thread per process (a flat launch); both\n"
    "                     (the default): N must be a multiple of T, ep and funneled use\n"
    "                     the first N/T processes (a mixed launch, never judged)\n"
    "  --algorithms LIST  comma-separated subset of the benchmark's algorithms\n"
    "  --json PATH        JSON results (default bench-results/<bench>.json)\n"
    "  --csv PATH         CSV results (default bench-results/<bench>.csv)\n";

Options parse_options(int argc, char** argv, std::string_view bench, const OwnOptions& own) {
  Options opt;
  opt.json = "bench-results/" + std::string(bench) + ".json";
  opt.csv = "bench-results/" + std::string(bench) + ".csv";
  OptionParser parser;
  parser.flag("--quick", opt.quick)
      .count("--threads", opt.threads)
      .count("--reps", opt.repetitions)
      .list("--backends", kBackendNames, opt.backends)
      .custom("--algorithms",
              [&opt](std::string_view, const std::string& list) {
                std::size_t start = 0;
                while (start <= list.size()) {
                  const std::size_t comma = std::min(list.find(',', start), list.size());
                  opt.algorithms.push_back(list.substr(start, comma - start));
                  start = comma + 1;
                }
              })
      .text("--json", opt.json)
      .text("--csv", opt.csv);
  if (!own.iterations.what.empty()) parser.count("--iters", opt.iterations);
  if (own.add) own.add(parser);
  parser.parse(argc, argv);
  if (opt.threads > ep::kMaxEndpointsPerProcess) {
    throw std::invalid_argument("--threads: 1 to " + std::to_string(ep::kMaxEndpointsPerProcess));
  }
  if (opt.repetitions == 0) opt.repetitions = opt.quick ? own.quick_repetitions : own.repetitions;
  if (opt.iterations == 0) opt.iterations = opt.quick ? own.iterations.quick : own.iterations.full;
  if (own.finish) own.finish(opt);
  return opt;
}

std::optional<int> start(int& argc, char**& argv, const char* name, Options& options,
                         const OwnOptions& own) {
  std::string usage = std::string("usage: mpiexec -n N ") + name + " [options]\n" + kSharedUsage +
                      "  --reps N           timed repetitions per point (default " +
                      std::to_string(own.repetitions) + ", quick " +
                      std::to_string(own.quick_repetitions) + ")\n";
  if (!own.iterations.what.empty()) {
    usage += "  --iters N          " + std::string(own.iterations.what) + " (default " +
             std::to_string(own.iterations.full) + ", quick " +
             std::to_string(own.iterations.quick) + ")\n";
  }
  usage += own.usage;
  return ::bench::start(argc, argv, name, usage.c_str(),
                        [&] { options = parse_options(argc, argv, name, own); });
}

bool Harness::selected_algorithm(std::string_view name) const {
  return bench::selected(options_.algorithms, name);
}

std::vector<std::string> Harness::selected_algorithms(std::vector<std::string> algorithms) const {
  std::erase_if(algorithms, [&](const std::string& a) { return !selected_algorithm(a); });
  return algorithms;
}

void print_backend_tables(const Report& report, std::string_view test, std::string_view title,
                          const std::vector<std::string>& algorithms,
                          const std::vector<std::size_t>& sizes) {
  for (const Backend backend : kBackends) {
    Comparison columns;
    const std::string prefix = std::string(backend_name(backend)) + ".";
    for (const std::string& a : algorithms) {
      if (report.find(test, prefix + a, sizes.front()) != nullptr) {
        columns.modes.push_back(prefix + a);
      }
    }
    // Modes outside the algorithm list: the ref backend's one mode.
    for (const Record& r : report.records()) {
      if (r.test == test && r.mode.starts_with(prefix) &&
          std::find(columns.modes.begin(), columns.modes.end(), r.mode) == columns.modes.end()) {
        columns.modes.push_back(r.mode);
      }
    }
    if (columns.modes.empty()) continue;
    const std::string library = prefix + "library";
    for (const std::string& m : columns.modes) {
      if (m != library && report.find(test, library, sizes.front()) != nullptr) {
        columns.ratios.emplace_back(m, library);
      }
    }
    const Record* any = report.find(test, columns.modes.front(), sizes.front());
    print_comparison_header(stdout,
                            std::string(title) + " -- " + backend_name(backend) + ", " +
                                std::to_string(any->ranks) + " process(es) x " +
                                std::to_string(any->threads) + " thread(s)",
                            columns);
    for (const std::size_t bytes : sizes)
      print_comparison_row(stdout, report, test, bytes, columns);
  }
}

bool print_best_target(const Report& report, std::string_view test,
                       const std::vector<std::string>& candidates, std::string_view label,
                       const std::string& b, double factor, const std::vector<std::size_t>& sizes) {
  int points = 0;
  int met = 0;
  double worst = 0.0;
  std::size_t worst_bytes = 0;
  std::string worst_mode;
  for (const std::size_t bytes : sizes) {
    const std::string a = fastest_mode(report, test, candidates, bytes);
    const Record* rb = report.find(test, b, bytes);
    if (a.empty() || rb == nullptr) continue;
    const double ratio = report.find(test, a, bytes)->time.avg_us / rb->time.avg_us;
    ++points;
    if (ratio <= factor) ++met;
    if (ratio > worst) {
      worst = ratio;
      worst_bytes = bytes;
      worst_mode = a;
    }
  }
  if (points == 0) return false;
  std::printf("  %-26s <= %.2f x %-20s at %2d of %2d sizes; worst %6.3f at %s (%s)  %s\n",
              std::string(label).c_str(), factor, b.c_str(), met, points, worst,
              format_bytes(worst_bytes).c_str(), worst_mode.c_str(),
              met == points ? "met" : "NOT met");
  return met == points;
}

bool print_target(const Report& report, std::string_view test, const std::string& a,
                  const std::string& b, double factor, const std::vector<std::size_t>& sizes) {
  return print_best_target(report, test, {a}, a, b, factor, sizes);
}

std::string fastest_mode(const Report& report, std::string_view test,
                         const std::vector<std::string>& modes, std::size_t bytes) {
  std::string best;
  double best_us = 0.0;
  for (const std::string& m : modes) {
    const Record* r = report.find(test, m, bytes);
    if (r != nullptr && (best.empty() || r->time.avg_us < best_us)) {
      best = m;
      best_us = r->time.avg_us;
    }
  }
  return best;
}

void print_ep_vs_funneled(const Report& report, std::string_view test,
                          const std::vector<std::string>& algorithms,
                          const std::vector<std::size_t>& sizes) {
  for (const std::string& a : algorithms) {
    print_target(report, test, "ep." + a, "funneled." + a, 1.0, sizes);
  }
}

void write_results(const Report& report, const Options& options) {
  if (!options.json.empty()) report.write_json(options.json);
  if (!options.csv.empty()) report.write_csv(options.csv);
  std::printf("# results: %s %s\n", options.json.c_str(), options.csv.c_str());
}

void print_family_target(const Report& report, std::string_view test, std::string_view backend,
                         const std::vector<std::string>& algorithms, std::string_view family,
                         std::string_view reference, double factor,
                         const std::vector<std::size_t>& sizes) {
  const std::string b(backend);
  std::vector<std::string> candidates;
  for (const std::string& a : algorithms) {
    if (a.starts_with(family)) candidates.push_back(b + "." + a);
  }
  print_best_target(report, test, candidates, b + "." + std::string(family) + "<best k>",
                    b + "." + std::string(reference), factor, sizes);
}

void finish_report(const Report& report, std::string_view test,
                   const std::vector<std::string>& algorithms,
                   const std::vector<std::size_t>& sizes, const Options& options) {
  print_ep_vs_funneled(report, test, algorithms, sizes);
  // The cost of the library's layers: each mpi.<algorithm> against the
  // hand-written reference of the same launch.
  const auto ref =
      std::find_if(report.records().begin(), report.records().end(),
                   [&](const Record& r) { return r.test == test && r.mode.starts_with("ref."); });
  if (ref != report.records().end()) {
    for (const std::string& a : algorithms) {
      print_target(report, test, "mpi." + a, ref->mode, 1.2, sizes);
    }
  }
  print_load(stdout, "end");
  write_results(report, options);
}

}  // namespace bench::kernels
