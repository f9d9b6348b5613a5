#include "reference/ref_shm_allreduce.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace bench::reference {

ShmAllreduce::ShmAllreduce(const RefComm& comm, std::size_t length)
    : rank_(comm.rank()), size_(comm.size()), length_(length) {
  node_ = shared_node_of(comm.get(), "ShmAllreduce");
  check_mpi(MPI_Comm_rank(node_, &rank_), "MPI_Comm_rank");
  window_ = SharedWindow(node_, 4 * length_);
}

ShmAllreduce::~ShmAllreduce() {
  window_ = SharedWindow();  // before its communicator
  // Destructors do not throw: the return code is left unchecked here.
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
  const std::size_t ranks = window_.processes();
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

void ShmAllreduce::sync() const { window_.exchange_point(node_); }

}  // namespace bench::reference
