// The hand-written spectral transposition (see ref_transpose.hpp).
#include "reference/ref_transpose.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace bench::reference {

namespace {

using collectives::Box;
using collectives::Space;

Box intersect(const Box& a, const Box& b) {
  Box out;
  for (std::size_t d = 0; d < 3; ++d) {
    out.lo[d] = std::max(a.lo[d], b.lo[d]);
    out.n[d] = std::max(0, std::min(a.lo[d] + a.n[d], b.lo[d] + b.n[d]) - out.lo[d]);
  }
  return out;
}

// Offset of global point (x, y, z) in an array laid out over `box`, x fastest.
std::size_t offset_in(const Box& box, int x, int y, int z) {
  return (static_cast<std::size_t>(z - box.lo[2]) * static_cast<std::size_t>(box.n[1]) +
          static_cast<std::size_t>(y - box.lo[1])) *
             static_cast<std::size_t>(box.n[0]) +
         static_cast<std::size_t>(x - box.lo[0]);
}

// Copies the points of `part` between `local` (laid out over `box`) and the
// packed buffer at `packed` (part order: z, then y, then x runs). Returns the
// end of the packed points.
double* copy_part(const Box& part, const Box& box, const double* from_local, double* to_local,
                  double* packed) {
  const auto run = static_cast<std::size_t>(part.n[0]);
  for (int z = part.lo[2]; z < part.lo[2] + part.n[2]; ++z) {
    for (int y = part.lo[1]; y < part.lo[1] + part.n[1]; ++y) {
      const std::size_t at = offset_in(box, part.lo[0], y, z);
      if (from_local != nullptr) {
        std::memcpy(packed, from_local + at, run * sizeof(double));
      } else {
        std::memcpy(to_local + at, packed, run * sizeof(double));
      }
      packed += run;
    }
  }
  return packed;
}

}  // namespace

RefTranspose::RefTranspose(const RefComm& comm, const collectives::TransposeShape& shape,
                           Transport transport)
    : shape_(shape), transport_(transport) {
  if (shape.cx * shape.cy != comm.size()) {
    throw std::invalid_argument("RefTranspose on rank " + std::to_string(comm.rank()) + ": grid " +
                                std::to_string(shape.cx) + " x " + std::to_string(shape.cy) +
                                " for " + std::to_string(comm.size()) + " ranks");
  }
  px_ = comm.rank() % shape.cx;
  py_ = comm.rank() / shape.cx;
  check_mpi(MPI_Comm_split(comm.get(), py_, px_, &subs_[0]), "MPI_Comm_split");
  check_mpi(MPI_Comm_split(comm.get(), px_, py_, &subs_[1]), "MPI_Comm_split");
  work_[0].resize(local_size(Space::kYZ));
  work_[1].resize(local_size(Space::kXZ));
  if (transport_ == Transport::kSharedWindow) open_window(comm);
}

void RefTranspose::open_window(const RefComm& comm) {
  world_ = shared_node_of(comm.get(), "RefTranspose");
  // A step packs at most the rank's whole field of the space it leaves.
  unsigned long largest = 0;
  for (const Space space : {Space::kGrid, Space::kYZ, Space::kXZ, Space::kSpectral}) {
    largest = std::max<unsigned long>(largest, local_size(space));
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UNSIGNED_LONG, MPI_MAX, world_),
            "MPI_Allreduce");
  window_half_ = largest;
  window_ = SharedWindow(world_, 2 * window_half_);
}

RefTranspose::~RefTranspose() {
  // Destructors do not throw: the return codes are left unchecked here.
  window_ = SharedWindow();  // before its communicator
  if (world_ != MPI_COMM_NULL) MPI_Comm_free(&world_);
  for (MPI_Comm& sub : subs_) {
    if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
  }
}

std::size_t RefTranspose::local_size(Space space) const {
  return collectives::transpose_box(shape_, space, px_, py_).size();
}

void RefTranspose::forward(std::span<const double> grid, std::span<double> spectral) {
  step(Space::kGrid, Space::kYZ, 0, grid.data(), work_[0].data());
  step(Space::kYZ, Space::kXZ, 1, work_[0].data(), work_[1].data());
  step(Space::kXZ, Space::kSpectral, 0, work_[1].data(), spectral.data());
}

void RefTranspose::backward(std::span<const double> spectral, std::span<double> grid) {
  step(Space::kSpectral, Space::kXZ, 0, spectral.data(), work_[1].data());
  step(Space::kXZ, Space::kYZ, 1, work_[1].data(), work_[0].data());
  step(Space::kYZ, Space::kGrid, 0, work_[0].data(), grid.data());
}

void RefTranspose::step_shared(Space from, Space to, int sub, const double* in, double* out) {
  const int peers = sub == 0 ? shape_.cx : shape_.cy;
  // Rank of the grid point (q along this step's sub-communicator).
  const auto rank_of = [&](int q) { return sub == 0 ? py_ * shape_.cx + q : q * shape_.cx + px_; };
  const auto point = [&](int q) { return sub == 0 ? std::array{q, py_} : std::array{px_, q}; };
  const Box my_from = collectives::transpose_box(shape_, from, px_, py_);
  const Box my_to = collectives::transpose_box(shape_, to, px_, py_);
  const int me = sub == 0 ? px_ : py_;
  const std::size_t half = (window_steps_++ % 2) * window_half_;
  // Pack: my part for peer q at the offset every peer computes the same way.
  double* packed = window_.segment(rank_of(me)) + half;
  for (int q = 0; q < peers; ++q) {
    const auto [qx, qy] = point(q);
    packed = copy_part(intersect(my_from, collectives::transpose_box(shape_, to, qx, qy)), my_from,
                       in, nullptr, packed);
  }
  window_.exchange_point(world_);
  // Unpack: peer q's part for me sits after its parts for the peers before me.
  for (int q = 0; q < peers; ++q) {
    const auto [qx, qy] = point(q);
    const Box q_from = collectives::transpose_box(shape_, from, qx, qy);
    std::size_t offset = 0;
    for (int r = 0; r < me; ++r) {
      const auto [rx, ry] = point(r);
      offset += intersect(q_from, collectives::transpose_box(shape_, to, rx, ry)).size();
    }
    copy_part(intersect(q_from, my_to), my_to, nullptr, out,
              window_.segment(rank_of(q)) + half + offset);
  }
}

void RefTranspose::step(Space from, Space to, int sub, const double* in, double* out) {
  const int peers = sub == 0 ? shape_.cx : shape_.cy;
  if (transport_ == Transport::kSharedWindow && peers > 1) {
    step_shared(from, to, sub, in, out);
    return;
  }
  const auto point = [&](int q) { return sub == 0 ? std::array{q, py_} : std::array{px_, q}; };
  const Box my_from = collectives::transpose_box(shape_, from, px_, py_);
  const Box my_to = collectives::transpose_box(shape_, to, px_, py_);
  sendcounts_.assign(static_cast<std::size_t>(peers), 0);
  recvcounts_.assign(static_cast<std::size_t>(peers), 0);
  sdispls_.assign(static_cast<std::size_t>(peers), 0);
  rdispls_.assign(static_cast<std::size_t>(peers), 0);
  std::vector<Box>& sends = send_parts_;
  std::vector<Box>& recvs = recv_parts_;
  sends.resize(static_cast<std::size_t>(peers));
  recvs.resize(static_cast<std::size_t>(peers));
  int sent = 0;
  int received = 0;
  for (int q = 0; q < peers; ++q) {
    const auto [qx, qy] = point(q);
    const auto i = static_cast<std::size_t>(q);
    sends[i] = intersect(my_from, collectives::transpose_box(shape_, to, qx, qy));
    recvs[i] = intersect(collectives::transpose_box(shape_, from, qx, qy), my_to);
    sdispls_[i] = sent;
    rdispls_[i] = received;
    sendcounts_[i] = static_cast<int>(sends[i].size());
    recvcounts_[i] = static_cast<int>(recvs[i].size());
    sent += sendcounts_[i];
    received += recvcounts_[i];
  }
  send_.resize(static_cast<std::size_t>(sent));
  recv_.resize(static_cast<std::size_t>(received));
  for (int q = 0; q < peers; ++q) {
    const auto i = static_cast<std::size_t>(q);
    copy_part(sends[i], my_from, in, nullptr, send_.data() + sdispls_[i]);
  }
  check_mpi(MPI_Alltoallv(send_.data(), sendcounts_.data(), sdispls_.data(), MPI_DOUBLE,
                          recv_.data(), recvcounts_.data(), rdispls_.data(), MPI_DOUBLE,
                          subs_[static_cast<std::size_t>(sub)]),
            "MPI_Alltoallv");
  for (int q = 0; q < peers; ++q) {
    const auto i = static_cast<std::size_t>(q);
    copy_part(recvs[i], my_to, nullptr, out, recv_.data() + rdispls_[i]);
  }
}

}  // namespace bench::reference
