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
// Two transports. kMessages (mode ref.alltoallv): pack, MPI_Alltoallv,
// unpack. kSharedWindow (mode ref.shm): the on-node hybrid with MPI-3 shared
// memory -- every rank packs its parts for its peers into its segment of one
// MPI_Win_allocate_shared window, MPI_Win_sync + MPI_Barrier + MPI_Win_sync,
// and every rank unpacks its parts straight from its peers' segments (the
// offset of a part in a peer's segment follows from the boxes, so nothing is
// exchanged but the data). A step with one peer copies in memory. Steps
// through the window alternate between two halves of each segment, and the
// barrier spans every rank, so a rank that packs its next step cannot
// overwrite a part that a slower peer still reads.
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
#include "reference/shared_window.hpp"

namespace bench::reference {

class RefTranspose {
 public:
  enum class Transport { kMessages, kSharedWindow };

  /// Throws std::invalid_argument when cx * cy differs from comm.size(), and
  /// with kSharedWindow std::runtime_error when `comm` spans several
  /// shared-memory nodes.
  RefTranspose(const RefComm& comm, const collectives::TransposeShape& shape,
               Transport transport = Transport::kMessages);
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
  /// step() through the shared window.
  void step_shared(collectives::Space from, collectives::Space to, int sub, const double* in,
                   double* out);
  void open_window(const RefComm& comm);

  collectives::TransposeShape shape_;
  int px_ = 0;
  int py_ = 0;
  std::array<MPI_Comm, 2> subs_{MPI_COMM_NULL, MPI_COMM_NULL};  // row, column
  std::array<std::vector<double>, 2> work_;                     // kYZ, kXZ
  std::vector<double> send_, recv_;
  std::vector<int> sendcounts_, sdispls_, recvcounts_, rdispls_;
  std::vector<collectives::Box> send_parts_, recv_parts_;  // per peer, this step
  Transport transport_ = Transport::kMessages;
  MPI_Comm world_ = MPI_COMM_NULL;  // the node: every rank's barrier
  SharedWindow window_;
  std::size_t window_half_ = 0;     // doubles per half of a segment
  unsigned long window_steps_ = 0;  // steps through the window so far
};

}  // namespace bench::reference
