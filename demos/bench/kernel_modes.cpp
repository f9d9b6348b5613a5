// KernelModes: the launch layout and the participants of each backend (see
// kernel_modes.hpp).
#include "kernel_modes.hpp"

#include <cstdio>
#include <string>
#include <utility>

#include "bench_cli.hpp"

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

}  // namespace bench::kernels
