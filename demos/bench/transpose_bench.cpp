// transpose_bench: the spectral transposition of collectives/ (grid -> yz ->
// xz -> spectral and back) with each alltoallv algorithm, on endpoints, MPI
// processes and funneled, in one run (layout: kernel_bench.hpp).
//
//   mpiexec -n 2 transpose_bench --threads 2 [--quick]
//
// A point is a global field of L x L x 16 doubles on a cx x cy grid of the
// backend's ranks (cy the largest divisor of the rank count not above its
// square root): N ranks for ep and mpi, N/T for funneled (whose threads pack
// and unpack). bytes = the field per worker (global bytes / N). t = one
// round trip (forward + backward: six slab-transpose steps).
// Targets: ep.auto at or below 0.8 x mpi.auto; ep at or below funneled.
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/transpose.hpp"
#include "kernel_bench.hpp"

namespace {

using bench::kernels::Backend;
constexpr const char* kBench = "transpose_bench";
constexpr int kLevels = 16;

collectives::TransposeShape shape_for(int ranks, int edge) {
  int cy = 1;
  for (int d = 1; d * d <= ranks; ++d) {
    if (ranks % d == 0) cy = d;
  }
  return {edge, edge, kLevels, ranks / cy, cy};
}

template <class C>
struct RoundTrip {
  collectives::TransposePlan<C, double> plan;
  std::vector<double> grid, spectral;

  RoundTrip(const C& comm, int edge, const collectives::AlltoallvChoice& choice)
      : plan(comm, shape_for(comm.size(), edge), {.algorithm = choice.algorithm, .k = choice.k}) {
    grid.resize(plan.local_size(collectives::Space::kGrid));
    spectral.resize(plan.local_size(collectives::Space::kSpectral));
    for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<double>(i) + comm.rank();
    const std::vector<double> original = grid;
    call();
    if (grid != original) {
      throw std::runtime_error(std::string(kBench) + ": round trip changed the field with " +
                               collectives::alltoallv_name(choice));
    }
  }
  void call() {
    plan.forward(grid, spectral);
    plan.backward(spectral, grid);
  }
};

}  // namespace

int main(int argc, char** argv) {
  return bench::kernels::run_main(
      argc, argv, kBench,
      [](bench::kernels::Harness& harness, const bench::kernels::Options& options) {
        const int n = harness.world_size();
        std::vector<std::string> algorithms = {"library", "burst", "pairwise",
                                               "bruck",   "ring1", "auto"};
        algorithms = harness.selected_algorithms(std::move(algorithms));
        const std::vector<int> edges =
            options.quick ? std::vector<int>{32, 128} : std::vector<int>{32, 64, 128};
        std::vector<std::size_t> sizes;
        for (const int e : edges) {
          sizes.push_back(static_cast<std::size_t>(e) * static_cast<std::size_t>(e) * kLevels *
                          sizeof(double) / static_cast<std::size_t>(n));
        }
        bench::Report report(kBench);
        if (harness.world_rank() == 0) {
          const auto ep = shape_for(harness.kernel_ranks(Backend::kEp), 1);
          const auto fun = shape_for(harness.kernel_ranks(Backend::kFunneled), 1);
          std::printf(
              "# %s: %d processes; ep and mpi on a %d x %d grid, funneled on %d x %d (x %d "
              "threads); fields L x L x %d doubles, L = ",
              kBench, n, ep.cx, ep.cy, fun.cx, fun.cy, harness.threads(), kLevels);
          for (const int e : edges) std::printf("%d ", e);
          std::printf("\n");
          bench::print_load(stdout, "start");
        }
        for (std::size_t s = 0; s < edges.size(); ++s) {
          for (const std::string& algorithm : algorithms) {
            const collectives::AlltoallvChoice choice =
                collectives::parse_alltoallv_choice(algorithm);
            for (const Backend backend : bench::kernels::kBackends) {
              if (!harness.selected(backend)) continue;
              bench::Record record;
              record.test = "transpose";
              record.bytes = sizes[s];
              const int edge = edges[s];
              harness.measure(backend, algorithm, record,
                              bench::kernels::setup_calls<RoundTrip>(edge, choice), report);
            }
          }
        }
        if (harness.world_rank() != 0) return;
        bench::kernels::print_backend_tables(
            report, "transpose",
            "transpose: bytes = field per worker; t = forward + backward round trip", algorithms,
            sizes);
        std::printf("# targets (t_avg ratios of this run)\n");
        bench::kernels::print_target(report, "transpose", "ep.auto", "mpi.auto", 0.8, sizes);
        bench::kernels::finish_report(report, "transpose", algorithms, sizes, options);
      });
}
