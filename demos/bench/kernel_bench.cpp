// The shared half of the kernel benchmarks: options, the tables and target
// lines (see kernel_bench.hpp; the launch layout is kernel_modes.cpp's).
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

const char* const kSharedUsage =
    "  --threads T        threads per process of ep and funneled (default 2)\n"
    "  --quick            few sizes and repetitions (seconds)\n"
    "  --reps N           timed repetitions per point (default 7, quick 3)\n"
    "  --backends LIST    comma-separated subset of ep,mpi,funneled,ref; only ep and\n"
    "                     funneled: every process runs T threads (a threaded launch);\n"
    "                     only mpi and ref: one thread per process (a flat launch); both\n"
    "                     (the default): N must be a multiple of T, ep and funneled use\n"
    "                     the first N/T processes (a mixed launch, never judged)\n"
    "  --algorithms LIST  comma-separated subset of the benchmark's algorithms\n"
    "  --json PATH        JSON results (default bench-results/<bench>.json)\n"
    "  --csv PATH         CSV results (default bench-results/<bench>.csv)\n";

Options parse_options(int argc, char** argv, std::string_view bench) {
  Options opt;
  opt.json = "bench-results/" + std::string(bench) + ".json";
  opt.csv = "bench-results/" + std::string(bench) + ".csv";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(arg) + ": missing value");
      return argv[++i];
    };
    if (arg == "--quick") {
      opt.quick = true;
    } else if (arg == "--threads") {
      opt.threads = static_cast<int>(parse_count(arg, value()));
    } else if (arg == "--reps") {
      opt.repetitions = static_cast<int>(parse_count(arg, value()));
    } else if (arg == "--backends") {
      opt.backends = parse_list(arg, value(), kBackendNames);
    } else if (arg == "--algorithms") {
      const std::string list = value();
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        opt.algorithms.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (arg == "--json") {
      opt.json = value();
    } else if (arg == "--csv") {
      opt.csv = value();
    } else if (arg == "--help" || arg == "-h") {
      throw std::invalid_argument("");
    } else {
      throw std::invalid_argument("unknown option '" + std::string(arg) + "'");
    }
  }
  if (opt.threads < 1 || opt.threads > ep::kMaxEndpointsPerProcess) {
    throw std::invalid_argument("--threads: 1 to " + std::to_string(ep::kMaxEndpointsPerProcess));
  }
  if (opt.repetitions == 0) opt.repetitions = opt.quick ? 3 : 7;
  return opt;
}

std::optional<int> start(int& argc, char**& argv, const char* name, Options& options) {
  const std::string usage =
      std::string("usage: mpiexec -n N ") + name + " [options]\n" + kSharedUsage;
  return ::bench::start(argc, argv, name, usage.c_str(),
                        [&] { options = parse_options(argc, argv, name); });
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
