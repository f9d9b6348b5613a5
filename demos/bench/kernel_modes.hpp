// The one place where the kernel benchmarks of collectives/ (alltoallv,
// transpose, allreduce, halo, solver) lay their backends on the processes of
// a launch and run a measurement on each (kernel_backend.hpp names the
// backends, launch_layout.hpp the kinds of launch):
//
//   ep        the P threaded processes x T OpenMP threads, each thread an EP
//             rank (collectives::EpComm over its endpoint)
//   funneled  the same P processes, T threads sharing the kernels' loops, the
//             master thread alone calling MPI (collectives::FunneledComm):
//             P ranks in the kernel's eyes, each with a T times larger
//             subdomain, as a hybrid model run on P processes x T threads
//   mpi, ref  every process of the launch, single-threaded
//             (collectives::MpiComm; reference::RefComm for hand-written MPI)
//
// ep and mpi decompose the same problem over grid_ranks() ranks in every
// kind of launch, so a threaded launch (ep, funneled) and a flat launch (mpi,
// ref) of the same benchmark measure the same points. In a mixed launch the
// processes that sit out a threaded mode sleep in a quiet barrier.
//
// A body is run by every participant of a mode and returns its per-
// repetition times (seconds); world rank 0 gets the slowest participant's
// time of each entry. Any exception ends the job (bench::run_or_abort).
//
// Thread safety: a KernelModes is used by the main thread of each process;
// the ep bodies run on its OpenMP threads.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bench_mpi.hpp"
#include "collectives/communicator.hpp"
#include "ep/ep.hpp"
#include "kernel_backend.hpp"
#include "launch_layout.hpp"
#include "machine.hpp"
#include "reference/ref_comm.hpp"

namespace bench::kernels {

using reference::RefComm;

class KernelModes {
 public:
  /// Collective over `world`. `backends`: the selected backend names (empty:
  /// all), which decide the kind of launch. Throws std::invalid_argument for a
  /// layout that cannot be placed (launch_layout.hpp).
  KernelModes(MPI_Comm world, int threads, const char* bench_name,
              std::vector<std::string> backends = {});
  KernelModes(const KernelModes&) = delete;
  KernelModes& operator=(const KernelModes&) = delete;
  ~KernelModes();

  [[nodiscard]] int world_rank() const noexcept { return rank_; }
  [[nodiscard]] const LaunchLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] int processes() const noexcept { return layout_.threaded_processes; }
  [[nodiscard]] int threads() const noexcept { return layout_.threads; }
  /// Ranks of the ep and mpi decomposition (P*T in a threaded launch, N otherwise).
  [[nodiscard]] int grid_ranks() const noexcept { return layout_.grid_ranks; }
  /// Whether `backend` runs in this launch (selected, and its kind present).
  [[nodiscard]] bool selected(Backend backend) const;
  /// Ranks of a backend's kernel communicator: grid_ranks() for ep, mpi and
  /// ref, P for funneled.
  [[nodiscard]] int ranks(Backend backend) const {
    return backend == Backend::kFunneled ? processes() : grid_ranks();
  }
  /// Record fields: processes taking part and threads per process.
  [[nodiscard]] int record_ranks(Backend backend) const {
    return is_threaded(backend) ? processes() : layout_.world_size;
  }
  [[nodiscard]] int record_threads(Backend backend) const {
    return is_threaded(backend) ? threads() : 1;
  }
  /// Prints the launch line (kind, shape, judged or not) to stdout on world rank 0.
  void print_launch(const char* bench_line) const;

  /// Runs body(comm) -> std::vector<double> on every participant of `backend`
  /// (ep: collectives::EpComm, mpi: collectives::MpiComm, funneled:
  /// collectives::FunneledComm, ref: RefComm). Collective over the world.
  /// World rank 0 gets the slowest time of each entry; the others nullopt.
  template <class Body>
  std::optional<std::vector<double>> run(Backend backend, const Body& body) {
    std::vector<double> slowest;
    if (!is_threaded(backend)) {
      run_or_abort(bench_, [&] {
        slowest =
            backend == Backend::kRef ? body(RefComm(world_)) : body(collectives::MpiComm(world_));
        slowest_to_root(slowest, world_);
      });
    } else if (group_ != MPI_COMM_NULL) {
      if (backend == Backend::kEp) {
        auto& endpoints = endpoints_;
        const char* name = bench_;
#pragma omp parallel num_threads(threads()) default(none) shared(body, slowest, endpoints, name)
        run_or_abort(name, [&] {
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
        run_or_abort(bench_, [&] { slowest = body(collectives::FunneledComm(group_, threads())); });
      }
      run_or_abort(bench_, [&] { slowest_to_root(slowest, group_); });
    }
    // Idle processes of a mixed launch wait here asleep; in a threaded or
    // flat launch every process took part and this only ends the point.
    quiet_barrier(world_);
    if (rank_ != 0) return std::nullopt;
    return slowest;
  }

 private:
  static void slowest_to_root(std::vector<double>& times, MPI_Comm comm);

  MPI_Comm world_;
  const char* bench_;
  std::vector<std::string> backends_;
  int rank_ = 0;
  LaunchLayout layout_;
  MPI_Comm group_ = MPI_COMM_NULL;  // the threaded processes
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
