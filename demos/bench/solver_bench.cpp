// solver_bench: GCR(k) (collectives/solvers/gcr.hpp) and preconditioned CG
// (collectives/solvers/cg.hpp) on each backend (ep, mpi, funneled) with each
// halo algorithm, side by side in one run. Modes are <backend>.<algorithm>.
//
// Launch layout: kernel_bench.hpp (threaded: --backends ep,funneled; flat:
// --backends mpi; mixed: all). ep and mpi solve on the grid's ranks (a
// px x py grid of --block x --block columns of --levels levels), funneled on
// one rank per process (the same global problem, T threads sharing every
// loop). The solvers have no hand-written reference: ep is compared with the
// best mpi.* mode, whose halo and allreduce halo_bench and allreduce_bench
// compare with their references. Every solve runs exactly --iters iterations (the
// tolerance is 0), --reps times; a record's t is the time per iteration
// (halo + allreduce + compute of the solve; one solver made once for all
// the solves, so neither the plan's set-up nor the vectors' allocation) of the
// slowest rank. Tests: gcr, cg (time per iteration), and gcr_halo,
// gcr_allreduce, gcr_compute, cg_halo, ... (each part per iteration), so the
// JSON keeps the split. `bytes` is the size of one rank's solution column.
//
//   mpiexec -n 1 solver_bench --threads 2 --backends ep,funneled [--quick]
//   mpiexec -n 2 solver_bench --threads 2 --backends mpi [--quick]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bench_cli.hpp"
#include "bench_mpi.hpp"
#include "bench_report.hpp"
#include "collectives/solvers/cg.hpp"
#include "collectives/solvers/gcr.hpp"
#include "halo_modes.hpp"
#include "kernel_bench.hpp"

namespace {

using bench::kernels::Backend;
using bench::kernels::RefComm;
using collectives::HaloAlgorithm;
using collectives::solvers::SolveResult;

constexpr const char* kBenchName = "solver_bench";
// No ref backend: see the file comment.
constexpr std::array kBackends{Backend::kEp, Backend::kMpi, Backend::kFunneled};
// solver_bench's own options (bench::kernels::start adds the shared ones).
constexpr const char* kOwnUsage =
    "  --block B          horizontal side of one rank's column in the N-rank grid (default 32)\n"
    "  --levels L         levels (default 16)\n"
    "  solver_bench: a repetition is one solve; no ref backend; --algorithms (the\n"
    "  halo's) of two_sweep, neighbor, direct, split\n";

struct Options : bench::kernels::Options {
  int block = 32;
  int levels = 16;
};

bench::kernels::OwnOptions own_options(Options& o) {
  return {.usage = kOwnUsage,
          .add =
              [&o](bench::OptionParser& parser) {
                parser.count("--block", o.block).count("--levels", o.levels);
              },
          .repetitions = 5,
          .quick_repetitions = 2,
          .finish = {},
          .iterations = {"iterations per solve", 40, 10}};
}

using bench::kernels::halo_mode;
using bench::kernels::kHaloAlgorithms;
using bench::kernels::print_ep_targets;
constexpr std::array kParts{"", "_halo", "_allreduce", "_compute"};

/// Options of a solver (GcrOptions, CgOptions) for exactly `iterations`
/// iterations (a tolerance never met) with `halo`.
template <class SolverOptions>
SolverOptions fixed_iterations(int iterations, HaloAlgorithm halo) {
  SolverOptions options;
  options.max_iterations = iterations;
  options.tolerance = -1.0;
  options.halo = halo;
  return options;
}

/// Per repetition: total, halo, allreduce, compute seconds per iteration
/// (four blocks of `reps` entries).
std::vector<double> per_iteration(const std::vector<SolveResult>& solves) {
  const std::size_t reps = solves.size();
  std::vector<double> out(4 * reps);
  for (std::size_t r = 0; r < reps; ++r) {
    const SolveResult& s = solves[r];
    const double it = std::max(1, s.iterations);
    out[r] = (s.halo_seconds + s.allreduce_seconds + s.compute_seconds) / it;
    out[reps + r] = s.halo_seconds / it;
    out[2 * reps + r] = s.allreduce_seconds / it;
    out[3 * reps + r] = s.compute_seconds / it;
  }
  return out;
}

template <class C>
std::vector<double> time_solver(const C& comm, const std::string& solver,
                                const collectives::Decomposition& d, HaloAlgorithm halo,
                                const Options& opt) {
  // One solver for every repetition, as a time loop keeps it: the plan and
  // the vectors are made once, before the warm-up solve.
  std::optional<collectives::solvers::GcrSolver<C>> gcr;
  std::optional<collectives::solvers::CgSolver<C>> cg;
  if (solver == "gcr") {
    gcr.emplace(comm, d, opt.levels,
                fixed_iterations<collectives::solvers::GcrOptions>(opt.iterations, halo));
  } else {
    cg.emplace(comm, collectives::solvers::PoissonProblem{d, opt.levels},
               fixed_iterations<collectives::solvers::CgOptions>(opt.iterations, halo));
  }
  std::vector<SolveResult> solves;
  for (int r = 0; r <= opt.repetitions; ++r) {  // the first solve is the warm-up
    SolveResult s =
        gcr ? gcr->solve(collectives::solvers::HelmholtzProblem{d, opt.levels}) : cg->solve();
    if (s.iterations != opt.iterations) {
      throw std::runtime_error(solver + " ran " + std::to_string(s.iterations) + " iterations, " +
                               std::to_string(opt.iterations) + " asked");
    }
    if (r > 0) solves.push_back(std::move(s));
  }
  return per_iteration(solves);
}

void run(const Options& opt) {
  if (std::ranges::find(opt.backends, "ref") != opt.backends.end()) {
    throw std::invalid_argument("--backends: solver_bench has no ref mode");
  }
  bench::kernels::KernelModes modes(MPI_COMM_WORLD, opt.threads, kBenchName, opt.backends);
  const int n = modes.grid_ranks();
  const auto [gpx, gpy] = bench::kernels::grid_of(n);
  const bool root = modes.world_rank() == 0;
  const std::size_t bytes = static_cast<std::size_t>(opt.block) * opt.block * opt.levels * 8;
  const std::string line =
      "solver_bench: ep and mpi on " + std::to_string(n) + " ranks, funneled " +
      std::to_string(modes.ranks(Backend::kFunneled)) + " x " + std::to_string(modes.threads()) +
      " threads; " + std::to_string(gpx * opt.block) + " x " + std::to_string(gpy * opt.block) +
      " x " + std::to_string(opt.levels) + " global grid, " + std::to_string(opt.iterations) +
      " iterations per solve";
  modes.print_launch(line.c_str());
  bench::Report report(kBenchName);
  for (const std::string solver : {"gcr", "cg"}) {
    for (const HaloAlgorithm a : kHaloAlgorithms) {
      if (!bench::selected(opt.algorithms, collectives::halo_algorithm_name(a))) continue;
      for (const Backend b : kBackends) {
        if (!modes.selected(b)) continue;
        const auto [px, py] = bench::kernels::grid_of(modes.ranks(b));
        const auto d = collectives::Decomposition::even(gpx * opt.block, gpy * opt.block, px, py);
        const auto times = modes.run(b, [&](const auto& comm) -> std::vector<double> {
          if constexpr (std::is_same_v<std::remove_cvref_t<decltype(comm)>, RefComm>) {
            throw std::logic_error("solver_bench has no ref mode");
          } else {
            return time_solver(comm, solver, d, a, opt);
          }
        });
        if (!root) continue;
        const auto reps = static_cast<std::size_t>(opt.repetitions);
        for (std::size_t part = 0; part < kParts.size(); ++part) {
          bench::Record record;
          record.test = solver + kParts[part];
          record.mode = halo_mode(b, a);
          record.ranks = modes.record_ranks(b);
          record.threads = modes.record_threads(b);
          record.bytes = bytes;
          record.iterations = opt.iterations;
          record.repetitions = opt.repetitions;
          record.time = bench::TimeStats::from_seconds(
              std::span<const double>(times->data() + part * reps, reps));
          report.add(record);
        }
      }
    }
    if (!root) continue;
    std::printf("\n# %s: t = time per iteration; split per iteration (t_avg, us)\n",
                solver.c_str());
    std::printf("%-20s %10s %10s %10s %10s %10s %10s\n", "mode", "t_min_us", "t_avg_us", "t_max_us",
                "halo", "allreduce", "compute");
    for (const HaloAlgorithm a : kHaloAlgorithms) {
      for (const Backend b : kBackends) {
        const std::string mode = halo_mode(b, a);
        const bench::Record* t = report.find(solver, mode, bytes);
        if (t == nullptr) continue;
        std::printf("%-20s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", mode.c_str(),
                    t->time.min_us, t->time.avg_us, t->time.max_us,
                    report.find(solver + "_halo", mode, bytes)->time.avg_us,
                    report.find(solver + "_allreduce", mode, bytes)->time.avg_us,
                    report.find(solver + "_compute", mode, bytes)->time.avg_us);
      }
    }
  }
  if (!root) return;
  std::printf("\n# targets (ratios of t_avg in this run)\n");
  for (const std::string solver : {"gcr", "cg"}) {
    print_ep_targets(report, solver, bytes, "ep <= mpi per iteration", 1.0);
  }
  bench::kernels::write_results(report, opt);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  return bench::kernels::run_main(argc, argv, kBenchName, opt, own_options(opt), [&] { run(opt); });
}
