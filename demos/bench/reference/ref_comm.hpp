// The communicator of the `ref` backend: a plain MPI communicator with just
// what the benchmark harness needs to time a hand-written MPI kernel on it
// (rank, size, a barrier-capable allreduce and a serial loop). It is not a
// collectives::Communicator on purpose: a collectives/ kernel instantiated
// on it does not compile, so a `ref` mode can only run reference code.
//
// Thread safety: as MPI's; one thread per process uses it (flat launches).
#pragma once

#include <mpi.h>

#include <string_view>

#include "bench_mpi.hpp"

namespace bench::reference {

class RefComm {
 public:
  /// Wraps `comm` (not owned). Local.
  explicit RefComm(MPI_Comm comm) : comm_(comm) {
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  [[nodiscard]] static constexpr std::string_view backend() noexcept { return "ref"; }

  /// MPI_Allreduce. Collective.
  void library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                         MPI_Op op) const {
    check_mpi(MPI_Allreduce(sendbuf, recvbuf, count, type, op, comm_), "MPI_Allreduce");
  }

  /// f(i) for i in [0, n) on the calling thread.
  template <class F>
  void parallel_for(int n, F&& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace bench::reference
