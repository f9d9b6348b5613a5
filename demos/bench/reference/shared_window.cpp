#include "reference/shared_window.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "bench_mpi.hpp"

namespace bench {

MPI_Comm shared_node_of(MPI_Comm comm, const char* who) {
  int rank = 0;
  int size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int node_size = 0;
  check_mpi(MPI_Comm_size(node, &node_size), "MPI_Comm_size");
  if (node_size != size) {
    MPI_Comm_free(&node);
    throw std::runtime_error(std::string(who) + " on rank " + std::to_string(rank) +
                             ": shares memory with " + std::to_string(node_size) + " of " +
                             std::to_string(size) + " ranks; ref.shm runs on one node only");
  }
  return node;
}

SharedWindow::SharedWindow(MPI_Comm node, std::size_t doubles) {
  int size = 0;
  check_mpi(MPI_Comm_size(node, &size), "MPI_Comm_size");
  void* mine = nullptr;
  const auto bytes = static_cast<MPI_Aint>(doubles * sizeof(double));
  check_mpi(MPI_Win_allocate_shared(bytes, sizeof(double), MPI_INFO_NULL, node, &mine, &win_),
            "MPI_Win_allocate_shared");
  segments_.resize(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q) {
    MPI_Aint segment_bytes = 0;
    int unit = 0;
    void* base = nullptr;
    check_mpi(MPI_Win_shared_query(win_, q, &segment_bytes, &unit, &base), "MPI_Win_shared_query");
    segments_[static_cast<std::size_t>(q)] = static_cast<double*>(base);
  }
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
}

SharedWindow::SharedWindow(SharedWindow&& other) noexcept
    : win_(std::exchange(other.win_, MPI_WIN_NULL)), segments_(std::move(other.segments_)) {}

SharedWindow& SharedWindow::operator=(SharedWindow&& other) noexcept {
  if (this != &other) {
    release();
    win_ = std::exchange(other.win_, MPI_WIN_NULL);
    segments_ = std::move(other.segments_);
  }
  return *this;
}

SharedWindow::~SharedWindow() { release(); }

void SharedWindow::release() noexcept {
  if (win_ == MPI_WIN_NULL) return;
  // Destructors do not throw: the return codes are left unchecked here.
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

void SharedWindow::exchange_point(MPI_Comm node) const {
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
  check_mpi(MPI_Barrier(node), "MPI_Barrier");
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
}

}  // namespace bench
