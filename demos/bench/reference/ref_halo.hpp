// The `ref` halo exchange: the two-stage 9-point exchange an MPI expert
// writes by hand, on plain MPI -- pack each strip into a buffer, MPI_Irecv /
// MPI_Isend to the neighbour, MPI_Waitall, unpack:
//
//   stage 1 (x): the west and east strips of w columns, interior rows only
//   stage 2 (y): the south and north strips of w rows, over the whole width
//                including the x halo, which forwards the corners
//
// It covers what halo_bench measures and no more: periodic in both
// directions, every subdomain at least w wide and high (neighbours of
// neighbours are not reached), no land, fields of doubles. Subdomain r of
// the decomposition (by * px + bx) is rank r, as in collectives::HaloPlan, and
// the field layout is the plan's: (nx + 2w) x (ny + 2w) per level, x fastest.
// Messages are tagged with their direction of travel, so two directions that
// reach the same rank (px or py of 2) cannot be confused; a direction with
// one subdomain (px or py of 1) is a copy in memory, as such code does.
//
// The interface is the part of collectives::HaloPlan that halo_bench uses, so
// the benchmark times both with the same code.
//
// Two transports. kMessages (mode ref.two_sweep): MPI_Irecv/MPI_Isend of the
// packed strips. kSharedWindow (mode ref.shm): the on-node hybrid with MPI-3
// shared memory -- every rank packs its strips into its segment of one
// MPI_Win_allocate_shared window, MPI_Win_sync + MPI_Barrier + MPI_Win_sync
// make them visible, and every rank unpacks its neighbours' strips with
// direct loads from their segments: one copy less than the messages, two
// barriers per exchange (one per stage). A stage's strips live in buffers
// of their own, so the next exchange cannot overwrite a strip that a slower
// neighbour still reads: it must first pass the other stage's barrier. The
// window holds one level; on one shared-memory node only.
//
// Collective: construction (none of MPI's collectives, but every rank must
// build one), exchange(), start()+finish() over every rank of the
// communicator. Thread safety: one thread per rank (flat launches).
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "collectives/halo.hpp"
#include "reference/ref_comm.hpp"
#include "reference/shared_window.hpp"

namespace bench::reference {

class RefHaloPlan {
 public:
  /// Throws std::invalid_argument when `spec` is outside what the reference
  /// covers (see above; why_unsupported says it without throwing) or the
  /// decomposition does not have comm.size() subdomains. Local.
  enum class Transport { kMessages, kSharedWindow };

  /// With kSharedWindow also collective over `comm` (the window), and throws
  /// std::runtime_error naming the rank when `comm` spans several
  /// shared-memory nodes.
  RefHaloPlan(const RefComm& comm, const collectives::HaloSpec& spec,
              Transport transport = Transport::kMessages);
  ~RefHaloPlan();
  RefHaloPlan(const RefHaloPlan&) = delete;
  RefHaloPlan& operator=(const RefHaloPlan&) = delete;

  /// Empty when the reference can exchange `spec`, else the reason.
  static std::string why_unsupported(const collectives::HaloSpec& spec);

  [[nodiscard]] int nx() const noexcept { return nx_; }
  [[nodiscard]] int ny() const noexcept { return ny_; }
  [[nodiscard]] int x0() const noexcept { return x0_; }
  [[nodiscard]] int y0() const noexcept { return y0_; }
  [[nodiscard]] std::size_t field_elements(int levels) const noexcept;
  /// Bytes this rank sends per exchange of one level.
  [[nodiscard]] std::size_t bytes_sent() const noexcept;

  /// Both stages for every field (doubles; one message per direction and
  /// stage holding every field). Collective.
  void exchange(std::span<const collectives::HaloField> fields);
  /// The two-stage form has nothing to overlap: start() exchanges, finish()
  /// returns. Collective.
  void start(std::span<const collectives::HaloField> fields) { exchange(fields); }
  void finish() {}

 private:
  /// One direction of one stage: the strip sent and the strip received, as
  /// rectangles of the local frame (halo included).
  struct Strip {
    int peer = 0;
    int send_i0 = 0, send_j0 = 0;
    int recv_i0 = 0, recv_j0 = 0;
    int width = 0, height = 0;
    int tag = 0;
  };
  void exchange_stage(int stage, const std::array<Strip, 2>& strips,
                      std::span<const collectives::HaloField> fields);
  void open_window(const RefComm& comm);
  /// Rank q's buffer of (stage, direction) in the shared window.
  [[nodiscard]] double* window_strip(int q, int stage, std::size_t direction) const {
    return window_.segment(q) +
           (2 * static_cast<std::size_t>(stage) + direction) * window_capacity_;
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int w_ = 1;
  int nx_ = 0, ny_ = 0, x0_ = 0, y0_ = 0;
  std::array<Strip, 2> x_strips_{};  // west, east
  std::array<Strip, 2> y_strips_{};  // south, north
  std::array<std::vector<double>, 2> send_, recv_;
  Transport transport_ = Transport::kMessages;
  MPI_Comm node_ = MPI_COMM_NULL;
  SharedWindow window_;
  std::size_t window_capacity_ = 0;  // doubles per strip buffer
};

}  // namespace bench::reference
