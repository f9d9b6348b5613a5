// Geometry of a halo exchange: the 2-D decomposition of the global domain,
// which subdomain each rank owns, and the schedule of rectangles one rank
// sends, receives, copies to itself and fills. Pure arithmetic, no
// communication: every rank computes the same answers from the same
// HaloSpec, so the two ends of every message agree on its layout without
// exchanging anything.
//
// Local frame of a subdomain of nx x ny cells with halo width w: interior
// cells are (i, j) with 0 <= i < nx, 0 <= j < ny; halo cells have
// -w <= i < nx + w, -w <= j < ny + w and lie outside the interior. A halo cell
// mirrors the global cell (x0 + i, y0 + j), wrapped in a periodic direction.
// It is
//   - left untouched when that cell lies outside a non-periodic domain, or
//     when it is a corner cell (outside the interior in both i and j) of a
//     5-point stencil;
//   - set to the field's fill value when the cell lies in an all-land
//     subdomain (a subdomain that takes no part);
//   - set to that cell's value otherwise, whichever subdomain owns it (with a
//     wide halo, w > a neighbour's size, neighbours of neighbours take part).
//
// Thread safety: pure functions and immutable values.
#pragma once

#include <cstdint>
#include <vector>

namespace collectives {

/// Points of the stencil the halo serves: faces only, or faces and corners.
enum class Stencil { kFivePoint, kNinePoint };

/// A px x py decomposition of an ni x nj domain into possibly uneven
/// subdomains: column bx is x_sizes[bx] cells wide, row by is y_sizes[by]
/// cells high. Subdomain (bx, by) has index by * px + bx.
struct Decomposition {
  int ni = 0;
  int nj = 0;
  std::vector<int> x_sizes;
  std::vector<int> y_sizes;
  bool periodic_x = false;
  bool periodic_y = false;

  /// ni x nj split into px x py subdomains as evenly as possible (the first
  /// ni % px columns one cell wider, likewise rows).
  static Decomposition even(int ni, int nj, int px, int py, bool periodic_x = false,
                            bool periodic_y = false);

  [[nodiscard]] int px() const noexcept { return static_cast<int>(x_sizes.size()); }
  [[nodiscard]] int py() const noexcept { return static_cast<int>(y_sizes.size()); }
  [[nodiscard]] int subdomains() const noexcept { return px() * py(); }
};

/// Which subdomains are all land: `cell_is_land` holds ni * nj flags (index
/// gj * ni + gi, nonzero = land); a subdomain is all land when every one of
/// its cells is. Land cells inside a subdomain with any sea cell are ordinary
/// cells of the exchange (as in NEMO: only whole subdomains are removed).
std::vector<std::uint8_t> all_land_subdomains(const Decomposition& decomposition,
                                              const std::vector<std::uint8_t>& cell_is_land);

namespace detail {

/// A rectangle of cells in some subdomain's local frame.
struct Rect {
  int i0 = 0;
  int j0 = 0;
  int width = 0;
  int height = 0;
};

/// The rectangle `from` (sender's frame) goes to `to` (receiver's frame);
/// both have the same width and height.
struct RectCopy {
  Rect from;
  Rect to;
};

/// What one rank exchanges with one other rank in one stage. `sends[n]` and
/// the peer's `receives[n]` are the same cells: both ends list them in the
/// receiver's enumeration order.
struct PeerTransfer {
  int peer = -1;
  std::vector<Rect> sends;     ///< in my frame
  std::vector<Rect> receives;  ///< in my frame
};

/// One round of messages: all of a stage's transfers are independent; stage
/// s + 1 may forward cells that stage s delivered (the two-stage sweep).
struct Stage {
  std::vector<PeerTransfer> peers;  ///< sorted by peer rank, never this rank
  std::vector<RectCopy> self;       ///< periodic wrap onto this rank itself
  std::vector<Rect> fill;           ///< halo cells mirroring all-land subdomains
};

/// Which subdomain each rank owns: the subdomains that are not all land,
/// numbered in index order (by, then bx). Ranks beyond that count own none.
class SubdomainMap {
 public:
  SubdomainMap(const Decomposition& decomposition, std::vector<std::uint8_t> land);

  [[nodiscard]] const Decomposition& decomposition() const noexcept { return decomposition_; }
  [[nodiscard]] int active_count() const noexcept { return static_cast<int>(rank_block_.size()); }
  /// -1 for an all-land subdomain.
  [[nodiscard]] int rank_of(int block) const {
    return block_rank_[static_cast<std::size_t>(block)];
  }
  /// -1 for a rank that owns no subdomain.
  [[nodiscard]] int block_of(int rank) const {
    return rank >= 0 && rank < active_count() ? rank_block_[static_cast<std::size_t>(rank)] : -1;
  }
  [[nodiscard]] int x_start(int bx) const { return x_starts_[static_cast<std::size_t>(bx)]; }
  [[nodiscard]] int y_start(int by) const { return y_starts_[static_cast<std::size_t>(by)]; }
  [[nodiscard]] const std::vector<int>& x_starts() const noexcept { return x_starts_; }
  [[nodiscard]] const std::vector<int>& y_starts() const noexcept { return y_starts_; }

 private:
  Decomposition decomposition_;
  std::vector<int> x_starts_;  ///< px + 1 column boundaries
  std::vector<int> y_starts_;
  std::vector<int> block_rank_;
  std::vector<int> rank_block_;
};

/// How the halo is delivered: one stage from every owner directly, or two
/// stages (x first, then y extended over the x halo so corners arrive by
/// forwarding).
enum class StageLayout { kOneStage, kTwoStage };

/// The stages of `rank`'s exchange (empty for a rank that owns no subdomain).
/// Cost: O(active subdomains x pieces per halo), paid once per plan.
std::vector<Stage> build_stages(const SubdomainMap& map, int rank, int width, Stencil stencil,
                                StageLayout layout);

}  // namespace detail
}  // namespace collectives
