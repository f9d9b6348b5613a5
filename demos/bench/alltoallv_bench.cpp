// alltoallv_bench: the alltoallv algorithms of collectives/ (library, burst,
// pairwise, bruck, ring<k>, auto) on endpoints, MPI processes and funneled,
// the same kernel code on each, in one run (layout: kernel_bench.hpp).
//
//   mpiexec -n 4 alltoallv_bench --threads 2 [--quick]
//
// bytes = one block (every rank sends one block of doubles to every rank,
// uniform sizes). ep and mpi have N ranks; funneled has N/T ranks, so each of
// its blocks carries the T x T blocks of its threads (T*T*bytes): every mode
// moves the same data. Targets (printed as met / NOT met): per backend the
// best ring<k> and auto at or below library; ep at or below funneled.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/alltoallv.hpp"
#include "kernel_bench.hpp"

namespace {

using bench::kernels::Backend;
constexpr const char* kBench = "alltoallv_bench";

/// One alltoallv call of a point, with its buffers; the constructor makes a
/// checked (and, for auto, tuning) call and verifies the result.
template <class C>
struct AlltoallvCall {
  C comm;
  std::vector<double> send, recv;
  std::vector<int> counts, displs;
  collectives::AlltoallvTuner tuner;
  collectives::AlltoallvOptions options;
  collectives::alltoallv_algorithms::Scratch<double, typename C::Request> scratch;

  AlltoallvCall(const C& c, int block, const collectives::AlltoallvChoice& choice) : comm(c) {
    const int n = comm.size();
    send.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(block));
    recv.assign(send.size(), -1.0);
    for (int j = 0; j < n; ++j) {
      counts.push_back(block);
      displs.push_back(j * block);
      send[static_cast<std::size_t>(j * block)] = comm.rank() * 1000.0 + j;
    }
    options.algorithm = choice.algorithm;
    options.k = choice.k;
    options.tuner = &tuner;
    options.agreed_block_bytes = static_cast<std::size_t>(block) * sizeof(double);
    call();
    for (int j = 0; j < n; ++j) {
      if (recv[static_cast<std::size_t>(j * block)] != j * 1000.0 + comm.rank()) {
        throw std::runtime_error(std::string(kBench) + ": wrong result of " +
                                 collectives::alltoallv_name(choice));
      }
    }
    options.check = false;  // checked once; the timed calls are what a plan runs
  }
  void call() {
    collectives::alltoallv(comm, std::span<const double>(send), counts, displs,
                           std::span<double>(recv), counts, displs, options, scratch);
  }
};

std::vector<std::size_t> block_sizes(bool quick) {
  if (quick) return {8, 4096, 65536};
  return {8, 64, 512, 4096, 32768, 131072};
}

}  // namespace

int main(int argc, char** argv) {
  return bench::kernels::run_main(
      argc, argv, kBench,
      [](bench::kernels::Harness& harness, const bench::kernels::Options& options) {
        const int n = harness.world_size();
        std::vector<std::string> algorithms = {"library", "burst", "pairwise", "bruck"};
        for (int k = 1; k < std::max(2, n); ++k) algorithms.push_back("ring" + std::to_string(k));
        algorithms.push_back("auto");
        algorithms = harness.selected_algorithms(std::move(algorithms));
        const std::vector<std::size_t> sizes = block_sizes(options.quick);
        bench::Report report(kBench);
        if (harness.world_rank() == 0) {
          std::printf("# %s: %d processes; ep %d x %d threads, mpi %d x 1, funneled %d x %d\n",
                      kBench, n, harness.processes(), harness.threads(), n, harness.processes(),
                      harness.threads());
          bench::print_load(stdout, "start");
        }
        for (const std::size_t bytes : sizes) {
          for (const std::string& algorithm : algorithms) {
            const collectives::AlltoallvChoice choice =
                collectives::parse_alltoallv_choice(algorithm);
            for (const Backend backend : bench::kernels::kBackends) {
              if (!harness.selected(backend)) continue;
              const int threads = harness.threads();
              const int per_worker = static_cast<int>(bytes / sizeof(double));
              const int block =
                  backend == Backend::kFunneled ? per_worker * threads * threads : per_worker;
              bench::Record record;
              record.test = "alltoallv";
              record.bytes = bytes;
              harness.measure(backend, algorithm, record,
                              bench::kernels::setup_calls<AlltoallvCall>(block, choice), report);
            }
          }
        }
        if (harness.world_rank() != 0) return;
        bench::kernels::print_backend_tables(report, "alltoallv",
                                             "alltoallv: bytes = one block; t = time per call",
                                             algorithms, sizes);
        std::printf("# targets (t_avg ratios of this run)\n");
        for (const Backend backend : bench::kernels::kBackends) {
          const std::string b = bench::kernels::backend_name(backend);
          bench::kernels::print_family_target(report, "alltoallv", b, algorithms, "ring", "library",
                                              1.0, sizes);
          bench::kernels::print_target(report, "alltoallv", b + ".auto", b + ".library", 1.0,
                                       sizes);
        }
        bench::kernels::finish_report(report, "alltoallv", algorithms, sizes, options);
      });
}
