// allreduce_bench: the library's allreduce, recursive doubling and
// recursive-k (k = 3, 4, 8) of collectives/ on endpoints, MPI processes and
// funneled, in one run (layout: kernel_bench.hpp).
//
//   mpiexec -n 4 allreduce_bench --threads 2 [--quick]
//
// MPI_SUM of a vector of doubles per worker (ep rank, mpi process, funneled
// thread); bytes = that vector. ep and mpi reduce over N ranks; funneled
// threads first combine their T vectors in shared memory (the team shares
// the loop), then the master reduces over N/T processes. Targets:
// reck<k> at the best k at or below recdbl (per backend); ep at or below
// funneled.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/allreduce.hpp"
#include "kernel_bench.hpp"

namespace {

using bench::kernels::Backend;
constexpr const char* kBench = "allreduce_bench";

collectives::AllreduceOptions parse_algorithm(const std::string& name) {
  if (name == "library") return {collectives::AllreduceAlgorithm::kLibrary, 0};
  if (name == "recdbl") return {collectives::AllreduceAlgorithm::kRecursiveDoubling, 2};
  return {collectives::AllreduceAlgorithm::kRecursiveK, std::stoi(name.substr(4))};
}

template <class C>
struct AllreduceCall {
  static constexpr bool kFunneled = std::is_same_v<C, collectives::FunneledComm>;
  C comm;
  collectives::AllreduceOptions options;
  std::vector<double> data;
  /// Funneled: every thread's own vector, combined into `data` in shared
  /// memory before the master's allreduce (what ep and mpi do inside theirs).
  std::vector<std::vector<double>> per_thread;

  AllreduceCall(const C& c, std::size_t length, const collectives::AllreduceOptions& o)
      : comm(c), options(o), data(length, 1.0) {
    int workers = 1;
    if constexpr (kFunneled) {
      per_thread.assign(static_cast<std::size_t>(comm.threads()), data);
      workers = comm.threads();
    }
    call();
    if (data[0] != comm.size() * workers) {
      throw std::runtime_error(std::string(kBench) + ": wrong sum with " +
                               collectives::allreduce_name(options));
    }
  }
  // ep and mpi sum in place, so their values double every call; that keeps
  // the vector finite for ~1000 calls and the time does not depend on it.
  void call() {
    if constexpr (kFunneled) {
      constexpr std::size_t kChunk = 8192;
      const std::size_t n = data.size();
      const int chunks = static_cast<int>((n + kChunk - 1) / kChunk);
      comm.parallel_for(chunks, [&](int c) {
        const std::size_t begin = static_cast<std::size_t>(c) * kChunk;
        const std::size_t end = std::min(n, begin + kChunk);
        for (std::size_t i = begin; i < end; ++i) {
          double sum = per_thread[0][i];
          for (std::size_t t = 1; t < per_thread.size(); ++t) sum += per_thread[t][i];
          data[i] = sum;
        }
      });
    }
    collectives::allreduce(comm, std::span<double>(data), MPI_SUM, options);
  }
};

}  // namespace

int main(int argc, char** argv) {
  return bench::kernels::run_main(
      argc, argv, kBench,
      [](bench::kernels::Harness& harness, const bench::kernels::Options& options) {
        std::vector<std::string> algorithms = {"library", "recdbl", "reck3", "reck4", "reck8"};
        algorithms = harness.selected_algorithms(std::move(algorithms));
        const std::vector<std::size_t> sizes =
            options.quick ? std::vector<std::size_t>{8, 4096, 1 << 20}
                          : std::vector<std::size_t>{8, 64, 512, 4096, 32768, 262144, 1 << 20};
        bench::Report report(kBench);
        if (harness.world_rank() == 0) {
          std::printf("# %s: %d processes; ep %d x %d threads, mpi %d x 1, funneled %d x %d\n",
                      kBench, harness.world_size(), harness.processes(), harness.threads(),
                      harness.world_size(), harness.processes(), harness.threads());
          bench::print_load(stdout, "start");
        }
        for (const std::size_t bytes : sizes) {
          for (const std::string& algorithm : algorithms) {
            const collectives::AllreduceOptions o = parse_algorithm(algorithm);
            for (const Backend backend : bench::kernels::kBackends) {
              if (!harness.selected(backend)) continue;
              bench::Record record;
              record.test = "allreduce";
              record.bytes = bytes;
              harness.measure(backend, algorithm, record,
                              bench::kernels::setup_calls<AllreduceCall>(bytes / sizeof(double), o),
                              report);
            }
          }
        }
        if (harness.world_rank() != 0) return;
        bench::kernels::print_backend_tables(
            report, "allreduce", "allreduce: MPI_SUM of doubles; bytes = the vector; t = per call",
            algorithms, sizes);
        std::printf("# targets (t_avg ratios of this run)\n");
        for (const Backend backend : bench::kernels::kBackends) {
          bench::kernels::print_family_target(report, "allreduce",
                                              bench::kernels::backend_name(backend), algorithms,
                                              "reck", "recdbl", 1.0, sizes);
        }
        bench::kernels::finish_report(report, "allreduce", algorithms, sizes, options);
      });
}
