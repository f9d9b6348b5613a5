// transpose_bench: the spectral transposition of collectives/ (grid -> yz ->
// xz -> spectral and back) with each alltoallv algorithm, on endpoints, MPI
// processes and funneled, beside the hand-written pack / MPI_Alltoallv /
// unpack transposition (mode ref.alltoallv, reference/ref_transpose.hpp) and
// the same through an MPI-3 shared-memory window (mode ref.shm).
// Layout: kernel_bench.hpp. The library's plans are bound to the fields
// (TransposePlan::bind): on one process, ep's round trip is two fused copies;
// on several, ep's steps copy the blocks of the ranks in the same process
// straight out of their arrays and exchange the others' only.
//
//   mpiexec -n 1 transpose_bench --threads 2 --backends ep,funneled   (threaded)
//   mpiexec -n 2 transpose_bench --threads 2 --backends mpi,ref       (flat)
//   mpiexec -n 2 transpose_bench --threads 2 [--quick]                (mixed)
//
// A point is a global field of L x L x 16 doubles on a cx x cy grid of the
// backend's ranks (cy the largest divisor of the rank count not above its
// square root): the grid's ranks for ep, mpi and ref, one per process for
// funneled (whose threads pack and unpack). bytes = the field per worker
// (global bytes / grid ranks). t = one round trip (forward + backward: six
// slab-transpose steps). The reference's spectral field is checked against
// the library's. Targets (where the launch has both sides): ep.auto at or
// below 0.8 x mpi.auto; ep at or below funneled.
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/transpose.hpp"
#include "kernel_bench.hpp"
#include "reference/ref_transpose.hpp"

namespace {

using bench::kernels::Backend;
using bench::kernels::RefComm;
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

  // `shared` selects the reference's shared-window transport; the library's
  // plans have one path.
  RoundTrip(const C& comm, int edge, const collectives::AlltoallvChoice& choice, bool /*shared*/)
      : plan(comm, shape_for(comm.size(), edge), {.algorithm = choice.algorithm, .k = choice.k}) {
    grid.resize(plan.local_size(collectives::Space::kGrid));
    spectral.resize(plan.local_size(collectives::Space::kSpectral));
    for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<double>(i) + comm.rank();
    // Persistent use: bound once (ep copies the other threads' blocks
    // straight out of their arrays: on one process each direction is one
    // fused copy).
    plan.bind(grid, spectral);
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

/// The reference round trip, checked once against the library's plan on the
/// same ranks (same spectral field, grid back bit for bit).
template <>
struct RoundTrip<RefComm> {
  bench::reference::RefTranspose plan;
  std::vector<double> grid, spectral;

  RoundTrip(const RefComm& comm, int edge, const collectives::AlltoallvChoice& /*unused*/,
            bool shared)
      : plan(comm, shape_for(comm.size(), edge),
             shared ? bench::reference::RefTranspose::Transport::kSharedWindow
                    : bench::reference::RefTranspose::Transport::kMessages) {
    grid.resize(plan.local_size(collectives::Space::kGrid));
    spectral.resize(plan.local_size(collectives::Space::kSpectral));
    for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<double>(i) + comm.rank();
    const std::vector<double> original = grid;
    collectives::TransposePlan<collectives::MpiComm, double> library(
        collectives::MpiComm(comm.get()), shape_for(comm.size(), edge));
    std::vector<double> expected(spectral.size());
    library.forward(grid, expected);
    call();
    if (grid != original) {
      throw std::runtime_error(std::string(kBench) + ": reference round trip changed the field");
    }
    plan.forward(grid, spectral);
    if (spectral != expected) {
      throw std::runtime_error(std::string(kBench) +
                               ": reference spectral field differs from the library's");
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
        const int n = harness.grid_ranks();
        const std::vector<std::string> algorithms =
            harness.selected_algorithms(bench::kernels::alltoallv_algorithms(1));
        const std::vector<int> edges =
            options.quick ? std::vector<int>{32, 128} : std::vector<int>{32, 64, 128};
        std::vector<std::size_t> sizes;
        for (const int e : edges) {
          sizes.push_back(static_cast<std::size_t>(e) * static_cast<std::size_t>(e) * kLevels *
                          sizeof(double) / static_cast<std::size_t>(n));
        }
        bench::Report report(kBench);
        {
          const auto ep = shape_for(n, 1);
          const auto fun = shape_for(std::max(1, harness.kernel_ranks(Backend::kFunneled)), 1);
          std::string line =
              std::string(kBench) + ": ep, mpi and ref on a " + std::to_string(ep.cx) + " x " +
              std::to_string(ep.cy) + " grid, funneled on " + std::to_string(fun.cx) + " x " +
              std::to_string(fun.cy) + " (x " + std::to_string(harness.threads()) +
              " threads); fields L x L x " + std::to_string(kLevels) + " doubles, L =";
          for (const int e : edges) {
            // Two appends, not " " + to_string(e): GCC 12 sees a false
            // -Wrestrict overlap in that operator+ once inlined here.
            line += ' ';
            line += std::to_string(e);
          }
          harness.modes().print_launch(line.c_str());
        }
        for (std::size_t s = 0; s < edges.size(); ++s) {
          const auto measure = [&](Backend backend, const std::string& algorithm) {
            bench::Record record;
            record.test = "transpose";
            record.bytes = sizes[s];
            const collectives::AlltoallvChoice choice = collectives::parse_alltoallv_choice(
                backend == Backend::kRef ? "library" : algorithm);
            harness.measure(backend, algorithm, record,
                            bench::kernels::setup_calls<RoundTrip>(edges[s], choice, false),
                            report);
          };
          harness.measure_selected(algorithms, "alltoallv", measure);
          if (harness.selected(Backend::kRef)) {
            bench::Record record;
            record.test = "transpose";
            record.bytes = sizes[s];
            harness.measure(Backend::kRef, "shm", record,
                            bench::kernels::setup_calls<RoundTrip>(
                                edges[s], collectives::parse_alltoallv_choice("library"), true),
                            report);
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
