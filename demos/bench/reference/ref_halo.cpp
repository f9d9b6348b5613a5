// The hand-written two-stage halo exchange (see ref_halo.hpp).
#include "reference/ref_halo.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace bench::reference {

namespace {

// Tags by direction of travel; a strip received travels the opposite way of
// the one sent in the same direction, hence tag ^ 1.
constexpr int kTravelWest = 0;
constexpr int kTravelEast = 1;
constexpr int kTravelSouth = 2;
constexpr int kTravelNorth = 3;

}  // namespace

std::string RefHaloPlan::why_unsupported(const collectives::HaloSpec& spec) {
  const collectives::Decomposition& d = spec.decomposition;
  if (!d.periodic_x || !d.periodic_y) return "the reference halo is periodic in x and y only";
  if (!spec.land_cells.empty()) return "the reference halo has no land exclusion";
  if (spec.stencil != collectives::Stencil::kNinePoint) return "the reference halo is 9-point";
  const int narrowest = std::min(*std::min_element(d.x_sizes.begin(), d.x_sizes.end()),
                                 *std::min_element(d.y_sizes.begin(), d.y_sizes.end()));
  if (spec.width > narrowest) {
    return "halo width " + std::to_string(spec.width) + " exceeds the smallest subdomain side " +
           std::to_string(narrowest) + " (the reference reaches direct neighbours only)";
  }
  return {};
}

RefHaloPlan::RefHaloPlan(const RefComm& comm, const collectives::HaloSpec& spec,
                         Transport transport)
    : comm_(comm.get()), rank_(comm.rank()), w_(spec.width), transport_(transport) {
  if (const std::string why = why_unsupported(spec); !why.empty()) {
    throw std::invalid_argument("RefHaloPlan on rank " + std::to_string(comm.rank()) + ": " + why);
  }
  const collectives::Decomposition& d = spec.decomposition;
  const int px = d.px();
  const int py = d.py();
  if (px * py != comm.size()) {
    throw std::invalid_argument("RefHaloPlan on rank " + std::to_string(comm.rank()) + ": " +
                                std::to_string(px * py) + " subdomains for " +
                                std::to_string(comm.size()) + " ranks");
  }
  const int bx = comm.rank() % px;
  const int by = comm.rank() / px;
  nx_ = d.x_sizes[static_cast<std::size_t>(bx)];
  ny_ = d.y_sizes[static_cast<std::size_t>(by)];
  x0_ = std::accumulate(d.x_sizes.begin(), d.x_sizes.begin() + bx, 0);
  y0_ = std::accumulate(d.y_sizes.begin(), d.y_sizes.begin() + by, 0);
  const auto rank_at = [&](int x, int y) { return ((y + py) % py) * px + (x + px) % px; };
  const int w = w_;
  // Stage 1: interior rows, w columns each way.
  x_strips_[0] = {rank_at(bx - 1, by), w, w, 0, w, w, ny_, kTravelWest};
  x_strips_[1] = {rank_at(bx + 1, by), nx_, w, nx_ + w, w, w, ny_, kTravelEast};
  // Stage 2: w rows each way over the whole width, x halo included.
  y_strips_[0] = {rank_at(bx, by - 1), 0, w, 0, 0, nx_ + 2 * w, w, kTravelSouth};
  y_strips_[1] = {rank_at(bx, by + 1), 0, ny_, 0, ny_ + w, nx_ + 2 * w, w, kTravelNorth};
  if (transport_ == Transport::kSharedWindow) open_window(comm);
}

void RefHaloPlan::open_window(const RefComm& comm) {
  node_ = shared_node_of(comm.get(), "RefHaloPlan");
  // Ranks keep their numbers (key = rank), so a strip's peer is its window rank.
  // Capacity: the largest strip of any rank (sizes differ by one at most).
  int largest = 0;
  for (const auto* strips : {&x_strips_, &y_strips_}) {
    for (const Strip& st : *strips) largest = std::max(largest, st.width * st.height);
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_INT, MPI_MAX, node_), "MPI_Allreduce");
  window_capacity_ = static_cast<std::size_t>(largest);
  window_ = SharedWindow(node_, 4 * window_capacity_);
}

RefHaloPlan::~RefHaloPlan() {
  if (node_ == MPI_COMM_NULL) return;
  window_ = SharedWindow();  // before its communicator
  // Destructors do not throw: the return code is left unchecked here.
  MPI_Comm_free(&node_);
}

std::size_t RefHaloPlan::field_elements(int levels) const noexcept {
  return static_cast<std::size_t>(nx_ + 2 * w_) * static_cast<std::size_t>(ny_ + 2 * w_) *
         static_cast<std::size_t>(levels);
}

std::size_t RefHaloPlan::bytes_sent() const noexcept {
  std::size_t cells = 0;
  for (const auto* strips : {&x_strips_, &y_strips_}) {
    for (const Strip& s : *strips)
      cells += static_cast<std::size_t>(s.width) * static_cast<std::size_t>(s.height);
  }
  return cells * sizeof(double);
}

void RefHaloPlan::exchange(std::span<const collectives::HaloField> fields) {
  for (const collectives::HaloField& f : fields) {
    if (f.element_bytes != sizeof(double) || f.elements != field_elements(f.levels)) {
      throw std::invalid_argument("RefHaloPlan::exchange: a field of " +
                                  std::to_string(f.elements) + " elements of " +
                                  std::to_string(f.element_bytes) + " bytes, expected doubles, " +
                                  std::to_string(field_elements(f.levels)) + " elements");
    }
  }
  if (transport_ == Transport::kSharedWindow &&
      (fields.size() != 1 || fields.front().levels != 1)) {
    throw std::invalid_argument("RefHaloPlan::exchange on rank " + std::to_string(rank_) +
                                ": the shared window holds one field of one level, got " +
                                std::to_string(fields.size()) + " field(s)");
  }
  exchange_stage(0, x_strips_, fields);
  exchange_stage(1, y_strips_, fields);
}

void RefHaloPlan::exchange_stage(int stage, const std::array<Strip, 2>& strips,
                                 std::span<const collectives::HaloField> fields) {
  const std::size_t row = static_cast<std::size_t>(nx_ + 2 * w_);
  const std::size_t plane = row * static_cast<std::size_t>(ny_ + 2 * w_);
  // Copies one strip of every field between the fields and a packed buffer.
  // Copies one strip of every field between the fields and `packed`.
  const auto copy_at = [&](const Strip& s, bool pack, double* packed) {
    const auto width = static_cast<std::size_t>(s.width);
    for (const collectives::HaloField& f : fields) {
      auto* field = reinterpret_cast<double*>(f.data);
      for (int k = 0; k < f.levels; ++k) {
        for (int j = 0; j < s.height; ++j) {
          const std::size_t at =
              static_cast<std::size_t>(k) * plane +
              static_cast<std::size_t>((pack ? s.send_j0 : s.recv_j0) + j) * row +
              static_cast<std::size_t>(pack ? s.send_i0 : s.recv_i0);
          if (pack) {
            std::memcpy(packed, field + at, width * sizeof(double));
          } else {
            std::memcpy(field + at, packed, width * sizeof(double));
          }
          packed += width;
        }
      }
    }
  };
  const auto copy_strip = [&](const Strip& s, bool pack, std::vector<double>& buffer) {
    std::size_t levels = 0;
    for (const collectives::HaloField& f : fields) levels += static_cast<std::size_t>(f.levels);
    buffer.resize(levels * static_cast<std::size_t>(s.width) * static_cast<std::size_t>(s.height));
    copy_at(s, pack, buffer.data());
  };
  // A periodic direction with one subdomain: both neighbours are this rank,
  // and a strip is copied in memory (what arrives from the west is what
  // leaves to the east).
  if (strips[0].peer == rank_ && strips[1].peer == rank_) {
    copy_strip(strips[0], true, send_[0]);
    copy_strip(strips[1], true, send_[1]);
    copy_strip(strips[0], false, send_[1]);
    copy_strip(strips[1], false, send_[0]);
    return;
  }
  if (transport_ == Transport::kSharedWindow) {
    for (std::size_t d = 0; d < 2; ++d) copy_at(strips[d], true, window_strip(rank_, stage, d));
    window_.exchange_point(node_);
    // What arrives from the neighbour in direction d is the strip it sent
    // the opposite way, d ^ 1.
    for (std::size_t d = 0; d < 2; ++d) {
      copy_at(strips[d], false, window_strip(strips[d].peer, stage, d ^ 1U));
    }
    return;
  }
  std::array<MPI_Request, 4> requests{};
  for (std::size_t d = 0; d < 2; ++d) {
    const Strip& s = strips[d];
    copy_strip(s, true, send_[d]);
    recv_[d].resize(send_[d].size());
    check_mpi(MPI_Irecv(recv_[d].data(), static_cast<int>(recv_[d].size()), MPI_DOUBLE, s.peer,
                        s.tag ^ 1, comm_, &requests[d]),
              "MPI_Irecv");
  }
  for (std::size_t d = 0; d < 2; ++d) {
    const Strip& s = strips[d];
    check_mpi(MPI_Isend(send_[d].data(), static_cast<int>(send_[d].size()), MPI_DOUBLE, s.peer,
                        s.tag, comm_, &requests[2 + d]),
              "MPI_Isend");
  }
  check_mpi(MPI_Waitall(4, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (std::size_t d = 0; d < 2; ++d) copy_strip(strips[d], false, recv_[d]);
}

}  // namespace bench::reference
