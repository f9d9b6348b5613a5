// The `ref` spectral transposition: what an MPI expert writes by hand for
// collectives::TransposePlan's data movement -- per step, pack the slabs for
// every peer of the row or column communicator with nested loops,
// MPI_Alltoallv, unpack with nested loops.
//
// Spaces, boxes and the rank grid are TransposePlan's (collectives/
// transpose.hpp: rank r is grid point (r mod cx, r / cx); local arrays x
// fastest over the local box), so a round trip moves exactly the data the
// library's does, and the benchmark can check the spectral field of one
// against the other. Fields of doubles.
//
// Collective: construction (two MPI_Comm_split), forward(), backward() over
// every rank of the communicator; destroy on every rank (MPI_Comm_free).
// Thread safety: one thread per rank (flat launches).
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "collectives/transpose.hpp"
#include "reference/ref_comm.hpp"

namespace bench::reference {

class RefTranspose {
 public:
  /// Throws std::invalid_argument when cx * cy differs from comm.size().
  RefTranspose(const RefComm& comm, const collectives::TransposeShape& shape);
  RefTranspose(const RefTranspose&) = delete;
  RefTranspose& operator=(const RefTranspose&) = delete;
  ~RefTranspose();

  [[nodiscard]] std::size_t local_size(collectives::Space space) const;
  /// kGrid -> kYZ -> kXZ -> kSpectral. Collective.
  void forward(std::span<const double> grid, std::span<double> spectral);
  /// kSpectral -> kXZ -> kYZ -> kGrid. Collective.
  void backward(std::span<const double> spectral, std::span<double> grid);

 private:
  /// One step from one space to the next over the row (sub 0) or column
  /// (sub 1) communicator.
  void step(collectives::Space from, collectives::Space to, int sub, const double* in, double* out);

  collectives::TransposeShape shape_;
  int px_ = 0;
  int py_ = 0;
  std::array<MPI_Comm, 2> subs_{MPI_COMM_NULL, MPI_COMM_NULL};  // row, column
  std::array<std::vector<double>, 2> work_;                     // kYZ, kXZ
  std::vector<double> send_, recv_;
  std::vector<int> sendcounts_, sdispls_, recvcounts_, rdispls_;
  std::vector<collectives::Box> send_parts_, recv_parts_;  // per peer, this step
};

}  // namespace bench::reference
