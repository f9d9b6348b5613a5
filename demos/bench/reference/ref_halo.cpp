// The hand-written two-stage halo exchange (see ref_halo.hpp).
#include "reference/ref_halo.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

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

RefHaloPlan::RefHaloPlan(const RefComm& comm, const collectives::HaloSpec& spec)
    : comm_(comm.get()), rank_(comm.rank()), w_(spec.width) {
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
  exchange_stage(x_strips_, fields);
  exchange_stage(y_strips_, fields);
}

void RefHaloPlan::exchange_stage(const std::array<Strip, 2>& strips,
                                 std::span<const collectives::HaloField> fields) {
  const std::size_t row = static_cast<std::size_t>(nx_ + 2 * w_);
  const std::size_t plane = row * static_cast<std::size_t>(ny_ + 2 * w_);
  // Copies one strip of every field between the fields and a packed buffer.
  const auto copy_strip = [&](const Strip& s, bool pack, std::vector<double>& buffer) {
    std::size_t levels = 0;
    for (const collectives::HaloField& f : fields) levels += static_cast<std::size_t>(f.levels);
    const auto width = static_cast<std::size_t>(s.width);
    buffer.resize(levels * width * static_cast<std::size_t>(s.height));
    double* packed = buffer.data();
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
