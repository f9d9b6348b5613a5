// allreduce_bench: the library's allreduce, recursive doubling and
// recursive-k (k = 3, 4, 8) of collectives/ on endpoints, MPI processes and
// funneled, beside MPI_Allreduce called directly (mode ref.allreduce).
// Layout: kernel_bench.hpp.
//
//   mpiexec -n 1 allreduce_bench --threads 2 --backends ep,funneled   (threaded)
//   mpiexec -n 2 allreduce_bench --threads 2 --backends mpi,ref       (flat)
//   mpiexec -n 4 allreduce_bench --threads 2 [--quick]                (mixed)
//
// MPI_SUM of a vector of doubles per worker (ep rank, mpi or ref process,
// funneled thread); bytes = that vector. ep, mpi and ref reduce over the
// grid's ranks (ref twice: ref.allreduce, MPI_Allreduce; ref.shm, direct
// loads from an MPI-3 shared-memory window); funneled threads first combine their T vectors in
// shared memory (the team shares the loop), then the master reduces over the processes. Targets
// (where the launch has both sides): reck<k> at the best k at or below recdbl (per backend); ep at
// or below funneled.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/allreduce.hpp"
#include "kernel_bench.hpp"
#include "reference/ref_shm_allreduce.hpp"

namespace {

using bench::kernels::Backend;
using bench::kernels::RefComm;
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

/// The reference: MPI_Allreduce in place, nothing around it.
template <>
struct AllreduceCall<RefComm> {
  RefComm comm;
  std::vector<double> data;

  AllreduceCall(const RefComm& c, std::size_t length, const collectives::AllreduceOptions& /*o*/)
      : comm(c), data(length, 1.0) {
    call();
    if (data[0] != comm.size()) {
      throw std::runtime_error(std::string(kBench) + ": wrong sum of MPI_Allreduce");
    }
  }
  void call() {
    bench::check_mpi(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()),
                                   MPI_DOUBLE, MPI_SUM, comm.get()),
                     "MPI_Allreduce");
  }
};

/// ref.shm: the on-node shared-memory window allreduce
/// (reference/ref_shm_allreduce.hpp), on the ref backend only.
template <class C>
struct ShmAllreduceCall {
  explicit ShmAllreduceCall(const C& /*comm*/, std::size_t /*length*/) {
    throw std::logic_error(std::string(kBench) + ": ref.shm runs on the ref backend only");
  }
  void call() {}
};

template <>
struct ShmAllreduceCall<RefComm> {
  bench::reference::ShmAllreduce shm;
  std::vector<double> data;

  // Two checked calls: one on each parity of the window's segments (all
  // ones sum to P, then P's sum to P * P).
  ShmAllreduceCall(const RefComm& comm, std::size_t length) : shm(comm, length), data(length, 1.0) {
    const double p = comm.size();
    for (const double expected : {p, p * p}) {
      call();
      if (data.front() != expected || data.back() != expected) {
        throw std::runtime_error(std::string(kBench) + ": wrong sum of ref.shm on rank " +
                                 std::to_string(comm.rank()) + ": " + std::to_string(data.front()) +
                                 ", expected " + std::to_string(expected));
      }
    }
  }
  void call() { shm.call(data); }
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
        harness.print_launch(kBench);
        for (const std::size_t bytes : sizes) {
          const auto measure = [&](Backend backend, const std::string& algorithm) {
            bench::Record record;
            record.test = "allreduce";
            record.bytes = bytes;
            const collectives::AllreduceOptions o =
                parse_algorithm(backend == Backend::kRef ? "library" : algorithm);
            harness.measure(backend, algorithm, record,
                            bench::kernels::setup_calls<AllreduceCall>(bytes / sizeof(double), o),
                            report);
          };
          harness.measure_selected(algorithms, "allreduce", measure);
          if (harness.selected(Backend::kRef)) {
            bench::Record record;
            record.test = "allreduce";
            record.bytes = bytes;
            harness.measure(Backend::kRef, "shm", record,
                            bench::kernels::setup_calls<ShmAllreduceCall>(bytes / sizeof(double)),
                            report);
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
