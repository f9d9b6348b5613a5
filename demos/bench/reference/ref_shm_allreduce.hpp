// The `ref.shm` allreduce: the on-node hybrid an MPI expert writes with MPI-3
// shared-memory windows ("MPI+MPI") instead of messages. The processes of a
// node share one window, MPI_Win_allocate_shared; each process's segment
// holds an input and a result vector per parity. A call
//
//   1. copies the caller's vector into its input of this call's parity,
//   2. MPI_Win_sync, MPI_Barrier, MPI_Win_sync ("sync"): the inputs are
//      complete and visible to every process (the rule for load and store
//      access to a shared window inside a lock_all epoch), then
//   3. small vectors (below kScatterBytes): sums every process's input with
//      direct loads into the caller's vector -- one barrier per call;
//      larger ones: sums its 1/P of the elements over every input into its
//      own result (a reduce-scatter by loads), sync, and copies every
//      process's part of the result into the caller's vector (an allgather
//      by loads) -- two barriers, each process reading 2(P-1)/P of the
//      vector from the others instead of P-1 vectors.
//
// The two parities alternate, so a process that writes its next input or
// result cannot overwrite one that a slower process is still reading: it
// would first have to pass a barrier that the reader has not reached.
//
// On-node only: the constructor throws when the communicator spans more than
// one shared-memory node. Collective: construction, call() and destruction
// over every rank of the communicator. Thread safety: one thread per rank
// (flat launches).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

#include "reference/ref_comm.hpp"
#include "reference/shared_window.hpp"

namespace bench::reference {

class ShmAllreduce {
 public:
  /// Allocates the window for vectors of `length` doubles. Collective over
  /// `comm`; throws std::runtime_error naming the rank when `comm` is not one
  /// shared-memory node.
  ShmAllreduce(const RefComm& comm, std::size_t length);
  ~ShmAllreduce();
  ShmAllreduce(const ShmAllreduce&) = delete;
  ShmAllreduce& operator=(const ShmAllreduce&) = delete;

  /// Vectors from this size on take the reduce-scatter path.
  static constexpr std::size_t kScatterBytes = std::size_t{16} * 1024;

  /// MPI_SUM of every rank's `data` (length() doubles) into `data`; the same
  /// bits on every rank. Collective.
  void call(std::span<double> data);
  [[nodiscard]] std::size_t length() const noexcept { return length_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::size_t length_ = 0;
  unsigned long parity_ = 0;
  void sync() const;
  /// Process q's input (0) or result (1) vector of `parity`, in this
  /// process's address space.
  [[nodiscard]] double* vector(std::size_t q, int which, unsigned long parity) const {
    return window_.segment(static_cast<int>(q)) +
           (2 * (parity % 2) + static_cast<std::size_t>(which)) * length_;
  }

  /// Process q's segment: input 0, result 0, input 1, result 1.
  SharedWindow window_;
};

}  // namespace bench::reference
