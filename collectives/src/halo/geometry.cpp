// Halo geometry: which cells of which subdomain fill each halo cell (see
// collectives/halo/geometry.hpp for the rules).
//
// A halo is cut into rectangles (faces, and for 9 points the corners carried
// by the south and north strips); each rectangle is cut along x and along y
// into runs of cells that come from one subdomain without a periodic wrap in
// between ("segments"). The product of an x run and a y run is one piece: a
// rectangle owned by one subdomain. The sender finds what it must send by
// running the same cutting for each receiver, so both ends list the pieces of
// a message in the same (the receiver's) order.
#include "collectives/halo/geometry.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace collectives {

Decomposition Decomposition::even(int ni, int nj, int px, int py, bool periodic_x,
                                  bool periodic_y) {
  Decomposition d;
  d.ni = ni;
  d.nj = nj;
  d.periodic_x = periodic_x;
  d.periodic_y = periodic_y;
  for (int b = 0; b < px; ++b) d.x_sizes.push_back(ni / px + (b < ni % px ? 1 : 0));
  for (int b = 0; b < py; ++b) d.y_sizes.push_back(nj / py + (b < nj % py ? 1 : 0));
  return d;
}

std::vector<std::uint8_t> all_land_subdomains(const Decomposition& decomposition,
                                              const std::vector<std::uint8_t>& cell_is_land) {
  std::vector<std::uint8_t> land(static_cast<std::size_t>(decomposition.subdomains()), 1);
  int y0 = 0;
  for (int by = 0; by < decomposition.py(); ++by) {
    int x0 = 0;
    const int ny = decomposition.y_sizes[static_cast<std::size_t>(by)];
    for (int bx = 0; bx < decomposition.px(); ++bx) {
      const int nx = decomposition.x_sizes[static_cast<std::size_t>(bx)];
      bool all_land = true;
      for (int gj = y0; gj < y0 + ny && all_land; ++gj) {
        for (int gi = x0; gi < x0 + nx; ++gi) {
          const auto cell =
              static_cast<std::size_t>(gj) * static_cast<std::size_t>(decomposition.ni) +
              static_cast<std::size_t>(gi);
          if (cell >= cell_is_land.size() || cell_is_land[cell] == 0) {
            all_land = false;
            break;
          }
        }
      }
      const int block = by * decomposition.px() + bx;
      land[static_cast<std::size_t>(block)] = all_land ? 1 : 0;
      x0 += nx;
    }
    y0 += ny;
  }
  return land;
}

namespace detail {

SubdomainMap::SubdomainMap(const Decomposition& decomposition, std::vector<std::uint8_t> land)
    : decomposition_(decomposition) {
  x_starts_.push_back(0);
  for (const int n : decomposition.x_sizes) x_starts_.push_back(x_starts_.back() + n);
  y_starts_.push_back(0);
  for (const int n : decomposition.y_sizes) y_starts_.push_back(y_starts_.back() + n);
  land.resize(static_cast<std::size_t>(decomposition.subdomains()), 0);
  block_rank_.assign(land.size(), -1);
  for (std::size_t b = 0; b < land.size(); ++b) {
    if (land[b] != 0) continue;
    block_rank_[b] = static_cast<int>(rank_block_.size());
    rank_block_.push_back(static_cast<int>(b));
  }
}

namespace {

/// A run of receiver-local coordinates [lo, hi) mirroring cells of one column
/// (or row) of subdomains, starting at `source_lo` in that subdomain's frame.
/// block == -1: outside a non-periodic domain.
struct Segment {
  int lo = 0;
  int hi = 0;
  int block = -1;
  int source_lo = 0;
};

struct Axis {
  const std::vector<int>& starts;  // boundaries, size blocks + 1
  int n;
  bool periodic;
};

int floor_mod(int a, int n) { return ((a % n) + n) % n; }

/// Cuts local coordinates [lo, hi) of the subdomain starting at `origin` into
/// segments of one source block each.
std::vector<Segment> segments(const Axis& axis, int origin, int lo, int hi) {
  std::vector<Segment> out;
  int l = lo;
  while (l < hi) {
    int g = origin + l;
    Segment s;
    s.lo = l;
    if (!axis.periodic && (g < 0 || g >= axis.n)) {
      const int inside_from = g < 0 ? l - g : hi;  // first local coordinate back in the domain
      s.hi = std::min(hi, inside_from);
      s.block = -1;
    } else {
      g = floor_mod(g, axis.n);
      const auto it = std::upper_bound(axis.starts.begin(), axis.starts.end(), g);
      const int block = static_cast<int>(it - axis.starts.begin()) - 1;
      const int block_start = axis.starts[static_cast<std::size_t>(block)];
      const int block_end = axis.starts[static_cast<std::size_t>(block) + 1];
      s.hi = std::min(hi, l + (block_end - g));
      s.block = block;
      s.source_lo = g - block_start;
    }
    l = s.hi;
    out.push_back(s);
  }
  return out;
}

/// One piece of a receiver's halo: from subdomain `block` (-1: all land, to
/// be filled), rectangle `from` in its frame to `to` in the receiver's.
struct Piece {
  int block = -1;
  RectCopy copy;
};

class PieceCutter {
 public:
  PieceCutter(const SubdomainMap& map, int block, int width)
      : map_(map),
        px_(map.decomposition().px()),
        bx_(block % px_),
        by_(block / px_),
        x_axis_{map.x_starts(), map.decomposition().ni, map.decomposition().periodic_x},
        y_axis_{map.y_starts(), map.decomposition().nj, map.decomposition().periodic_y},
        x0_(map.x_start(bx_)),
        y0_(map.y_start(by_)),
        nx_(map.decomposition().x_sizes[static_cast<std::size_t>(bx_)]),
        ny_(map.decomposition().y_sizes[static_cast<std::size_t>(by_)]),
        w_(width) {}

  /// Every cell of `r` from its owner.
  void direct(const Rect& r, std::vector<Piece>& out) const {
    const auto xs = segments(x_axis_, x0_, r.i0, r.i0 + r.width);
    const auto ys = segments(y_axis_, y0_, r.j0, r.j0 + r.height);
    for (const Segment& sy : ys) {
      if (sy.block < 0) continue;
      for (const Segment& sx : xs) {
        if (sx.block < 0) continue;
        const int block = sy.block * px_ + sx.block;
        const Rect to{sx.lo, sy.lo, sx.hi - sx.lo, sy.hi - sy.lo};
        const Rect from{sx.source_lo, sy.source_lo, to.width, to.height};
        out.push_back({map_.rank_of(block) < 0 ? -1 : block, {from, to}});
      }
    }
  }

  /// Rows of `r` from the subdomain of the same column that owns them, which
  /// forwards its own x halo for the columns outside [0, nx) (second stage of
  /// the sweep). Rows owned by an all-land subdomain have no one to forward
  /// them: their cells come from their owners directly, so that every
  /// algorithm gives the same halo.
  void forwarded_rows(const Rect& r, std::vector<Piece>& out) const {
    const auto xs = segments(x_axis_, x0_, r.i0, r.i0 + r.width);
    int lo = r.i0 + r.width;
    int hi = r.i0;
    for (const Segment& sx : xs) {
      if (sx.block < 0) continue;
      lo = std::min(lo, sx.lo);
      hi = std::max(hi, sx.hi);
    }
    if (lo >= hi) return;
    for (const Segment& sy : segments(y_axis_, y0_, r.j0, r.j0 + r.height)) {
      if (sy.block < 0) continue;
      const Rect to{lo, sy.lo, hi - lo, sy.hi - sy.lo};
      const int block = sy.block * px_ + bx_;
      if (map_.rank_of(block) >= 0) {
        out.push_back({block, {Rect{lo, sy.source_lo, to.width, to.height}, to}});
      } else {
        direct(to, out);
      }
    }
  }

  [[nodiscard]] Rect west() const { return {-w_, 0, w_, ny_}; }
  [[nodiscard]] Rect east() const { return {nx_, 0, w_, ny_}; }
  [[nodiscard]] Rect south(Stencil s) const {
    return s == Stencil::kNinePoint ? Rect{-w_, -w_, nx_ + 2 * w_, w_} : Rect{0, -w_, nx_, w_};
  }
  [[nodiscard]] Rect north(Stencil s) const {
    return s == Stencil::kNinePoint ? Rect{-w_, ny_, nx_ + 2 * w_, w_} : Rect{0, ny_, nx_, w_};
  }

 private:
  const SubdomainMap& map_;
  int px_, bx_, by_;
  Axis x_axis_, y_axis_;
  int x0_, y0_, nx_, ny_, w_;
};

/// The pieces of `block`'s halo, stage by stage.
std::vector<std::vector<Piece>> pieces_of(const SubdomainMap& map, int block, int width,
                                          Stencil stencil, StageLayout layout) {
  const PieceCutter cut(map, block, width);
  if (layout == StageLayout::kOneStage) {
    std::vector<Piece> all;
    cut.direct(cut.south(stencil), all);
    cut.direct(cut.west(), all);
    cut.direct(cut.east(), all);
    cut.direct(cut.north(stencil), all);
    return {std::move(all)};
  }
  std::vector<Piece> x_stage;
  cut.direct(cut.west(), x_stage);
  cut.direct(cut.east(), x_stage);
  std::vector<Piece> y_stage;
  cut.forwarded_rows(cut.south(stencil), y_stage);
  cut.forwarded_rows(cut.north(stencil), y_stage);
  return {std::move(x_stage), std::move(y_stage)};
}

PeerTransfer& transfer_with(std::vector<PeerTransfer>& peers, int peer) {
  auto it = std::lower_bound(peers.begin(), peers.end(), peer,
                             [](const PeerTransfer& t, int p) { return t.peer < p; });
  if (it == peers.end() || it->peer != peer) it = peers.insert(it, PeerTransfer{peer, {}, {}});
  return *it;
}

}  // namespace

std::vector<Stage> build_stages(const SubdomainMap& map, int rank, int width, Stencil stencil,
                                StageLayout layout) {
  const int my_block = map.block_of(rank);
  if (my_block < 0) return {};
  const auto mine = pieces_of(map, my_block, width, stencil, layout);
  std::vector<Stage> stages(mine.size());
  for (std::size_t s = 0; s < mine.size(); ++s) {
    for (const Piece& piece : mine[s]) {
      if (piece.block < 0) {
        stages[s].fill.push_back(piece.copy.to);
      } else if (piece.block == my_block) {
        stages[s].self.push_back(piece.copy);
      } else {
        transfer_with(stages[s].peers, map.rank_of(piece.block)).receives.push_back(piece.copy.to);
      }
    }
  }
  // What the others need from me, in their order. Only subdomains within
  // reach could need anything, but the decomposition is small next to the
  // work of a step and this runs once per plan.
  for (int r = 0; r < map.active_count(); ++r) {
    if (r == rank) continue;
    const auto theirs = pieces_of(map, map.block_of(r), width, stencil, layout);
    for (std::size_t s = 0; s < theirs.size(); ++s) {
      for (const Piece& piece : theirs[s]) {
        if (piece.block == my_block)
          transfer_with(stages[s].peers, r).sends.push_back(piece.copy.from);
      }
    }
  }
  return stages;
}

}  // namespace detail
}  // namespace collectives
