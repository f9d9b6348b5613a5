#include "reference/ref_shm_allreduce.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace bench::reference {

ShmAllreduce::ShmAllreduce(const RefComm& comm, std::size_t length)
    : rank_(comm.rank()), size_(comm.size()), length_(length) {
  check_mpi(
      MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node_),
      "MPI_Comm_split_type");
  int node_size = 0;
  check_mpi(MPI_Comm_size(node_, &node_size), "MPI_Comm_size");
  // Every rank sees the same two sizes, so either all throw or none does.
  if (node_size != size_) {
    MPI_Comm_free(&node_);
    throw std::runtime_error("ShmAllreduce: rank " + std::to_string(rank_) +
                             " shares memory with " + std::to_string(node_size) + " of " +
                             std::to_string(size_) + " ranks; ref.shm runs on one node only");
  }
  check_mpi(MPI_Comm_rank(node_, &rank_), "MPI_Comm_rank");
  const auto bytes = static_cast<MPI_Aint>(4 * length_ * sizeof(double));
  void* mine = nullptr;
  check_mpi(MPI_Win_allocate_shared(bytes, sizeof(double), MPI_INFO_NULL, node_, &mine, &win_),
            "MPI_Win_allocate_shared");
  segments_.resize(static_cast<std::size_t>(size_));
  for (int q = 0; q < size_; ++q) {
    MPI_Aint size = 0;
    int unit = 0;
    void* base = nullptr;
    check_mpi(MPI_Win_shared_query(win_, q, &size, &unit, &base), "MPI_Win_shared_query");
    segments_[static_cast<std::size_t>(q)] = static_cast<double*>(base);
  }
  // One passive-target epoch for the window's life: MPI_Win_sync needs one.
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
}

ShmAllreduce::~ShmAllreduce() {
  // Destructors do not throw: the return codes are left unchecked here.
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  MPI_Comm_free(&node_);
}

void ShmAllreduce::call(std::span<double> data) {
  if (data.size() != length_) {
    throw std::invalid_argument("ShmAllreduce::call: rank " + std::to_string(rank_) + " passed " +
                                std::to_string(data.size()) + " doubles, the window holds " +
                                std::to_string(length_));
  }
  const unsigned long parity = parity_++;
  const auto me = static_cast<std::size_t>(rank_);
  const std::size_t ranks = segments_.size();
  std::memcpy(vector(me, 0, parity), data.data(), length_ * sizeof(double));
  sync();
  // Every rank adds the inputs in the order of the ranks, so every rank gets
  // the same bits.
  auto sum = [&](std::size_t begin, std::size_t end, double* out) {
    const double* first = vector(0, 0, parity);
    for (std::size_t i = begin; i < end; ++i) out[i] = first[i];
    for (std::size_t q = 1; q < ranks; ++q) {
      const double* in = vector(q, 0, parity);
      for (std::size_t i = begin; i < end; ++i) out[i] += in[i];
    }
  };
  if (length_ * sizeof(double) < kScatterBytes || ranks == 1) {
    sum(0, length_, data.data());
    return;
  }
  auto part = [&](std::size_t q) { return q * length_ / ranks; };
  sum(part(me), part(me + 1), vector(me, 1, parity));
  sync();
  for (std::size_t q = 0; q < ranks; ++q) {
    std::memcpy(data.data() + part(q), vector(q, 1, parity) + part(q),
                (part(q + 1) - part(q)) * sizeof(double));
  }
}

void ShmAllreduce::sync() const {
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
  check_mpi(MPI_Barrier(node_), "MPI_Barrier");
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
}

}  // namespace bench::reference
