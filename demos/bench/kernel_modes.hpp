// The three backends of collectives/ side by side in one job, for the kernel
// benchmarks (halo_bench, solver_bench):
//
//   ep        the first P processes x T OpenMP threads, each thread an EP
//             rank (collectives::EpComm over its endpoint)
//   mpi       all N = P*T processes, single-threaded (collectives::MpiComm)
//   funneled  the first P processes, T threads sharing the kernels' loops,
//             the master thread alone calling MPI (collectives::FunneledComm)
//
// So ep and mpi have the same number of ranks (the same decomposition); the
// funneled mode has P ranks, each with a T times larger subdomain, as a
// hybrid model run on P processes x T threads today. While ep and funneled
// run, the other N - P processes wait in a sleeping barrier and take no core.
//
// A body is run by every participant of the mode and returns its per-
// repetition times (seconds); world rank 0 gets the slowest participant's
// time of each repetition. Any exception ends the job (bench::run_or_abort).
//
// Thread safety: a KernelModes is used by the main thread of each process;
// the EP bodies run on its OpenMP threads.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_mpi.hpp"
#include "collectives/communicator.hpp"
#include "ep/ep.hpp"
#include "kernel_backend.hpp"

namespace bench::kernels {

class KernelModes {
 public:
  /// Collective over `world`; its size must be a multiple of `threads`.
  KernelModes(MPI_Comm world, int threads, const char* bench_name)
      : world_(world), threads_(threads), bench_(bench_name) {
    bench::check_mpi(MPI_Comm_rank(world_, &rank_), "MPI_Comm_rank");
    bench::check_mpi(MPI_Comm_size(world_, &size_), "MPI_Comm_size");
    if (threads < 1 || size_ % threads != 0) {
      throw std::invalid_argument("the number of processes (" + std::to_string(size_) +
                                  ") must be a multiple of --threads (" + std::to_string(threads) +
                                  ")");
    }
    processes_ = size_ / threads_;
    group_ = bench::first_ranks(world_, processes_);
    if (group_ != MPI_COMM_NULL) endpoints_ = ep::create_endpoints(group_, threads_);
  }
  KernelModes(const KernelModes&) = delete;
  KernelModes& operator=(const KernelModes&) = delete;
  ~KernelModes() {
    bench::run_or_abort(bench_, [&] {
      if (!endpoints_.empty()) {
        auto& endpoints = endpoints_;
        // Freeing is collective over the endpoints: each thread frees its own.
#pragma omp parallel num_threads(threads_) default(none) shared(endpoints)
        endpoints[static_cast<std::size_t>(omp_get_thread_num())].free();
      }
      if (group_ != MPI_COMM_NULL) bench::check_mpi(MPI_Comm_free(&group_), "MPI_Comm_free");
    });
  }

  [[nodiscard]] int world_rank() const { return rank_; }
  [[nodiscard]] int processes() const { return processes_; }
  [[nodiscard]] int threads() const { return threads_; }
  /// Ranks of a mode: P*T for ep and mpi, P for funneled.
  [[nodiscard]] int ranks(Backend b) const { return b == Backend::kFunneled ? processes_ : size_; }
  /// Record fields: processes taking part and threads per process.
  [[nodiscard]] int record_ranks(Backend b) const {
    return b == Backend::kMpi ? size_ : processes_;
  }
  [[nodiscard]] int record_threads(Backend b) const { return b == Backend::kMpi ? 1 : threads_; }

  /// Runs body(comm) -> std::vector<double> on every participant of `b`;
  /// collective over the world. World rank 0 gets the slowest time per entry.
  template <class Body>
  std::optional<std::vector<double>> run(Backend b, const Body& body) {
    std::vector<double> slowest;
    if (b == Backend::kMpi) {
      bench::run_or_abort(bench_, [&] {
        slowest = body(collectives::MpiComm(world_));
        slowest_to_root(slowest, world_);
      });
    } else if (group_ != MPI_COMM_NULL) {
      if (b == Backend::kEp) {
        auto& endpoints = endpoints_;
        const char* name = bench_;
#pragma omp parallel num_threads(threads_) default(none) shared(body, slowest, endpoints, name)
        bench::run_or_abort(name, [&] {
          const auto mine =
              body(collectives::EpComm(endpoints[static_cast<std::size_t>(omp_get_thread_num())]));
#pragma omp critical(kernel_modes_slowest)
          {
            slowest.resize(std::max(slowest.size(), mine.size()), 0.0);
            for (std::size_t i = 0; i < mine.size(); ++i)
              slowest[i] = std::max(slowest[i], mine[i]);
          }
        });
      } else {
        bench::run_or_abort(bench_,
                            [&] { slowest = body(collectives::FunneledComm(group_, threads_)); });
      }
      bench::run_or_abort(bench_, [&] { slowest_to_root(slowest, group_); });
    }
    bench::quiet_barrier(world_);
    if (rank_ != 0) return std::nullopt;
    return slowest;
  }

 private:
  static void slowest_to_root(std::vector<double>& times, MPI_Comm comm) {
    int rank = 0;
    bench::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    const int n = static_cast<int>(times.size());
    MPI_Request request = MPI_REQUEST_NULL;
    bench::check_mpi(
        rank == 0
            ? MPI_Ireduce(MPI_IN_PLACE, times.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm, &request)
            : MPI_Ireduce(times.data(), nullptr, n, MPI_DOUBLE, MPI_MAX, 0, comm, &request),
        "MPI_Ireduce");
    bench::wait_yielding(request, "MPI_Ireduce");
  }

  MPI_Comm world_;
  int threads_;
  const char* bench_;
  int rank_ = 0;
  int size_ = 1;
  int processes_ = 1;
  MPI_Comm group_ = MPI_COMM_NULL;
  std::vector<ep::Communicator> endpoints_;
};

/// px x py = ranks with px >= py as square as possible.
inline std::pair<int, int> grid_of(int ranks) {
  int py = 1;
  for (int d = 1; d * d <= ranks; ++d) {
    if (ranks % d == 0) py = d;
  }
  return {ranks / py, py};
}

}  // namespace bench::kernels
