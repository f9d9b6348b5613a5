// Spectral transposition of a 3-D field (nx x ny x nz points) on a cx x cy
// process grid, as spectral atmospheric models do every time step:
//
//   space      split over cx (grid column px)   split over cy (grid row py)   whole
//   kGrid      x                                 y                             z
//   kYZ        z                                 y                             x
//   kXZ        z                                 x                             y
//   kSpectral  y                                 x                             z
//
//   step               sub-communicator (cx*cy/size of them at once)    moves
//   kGrid  <-> kYZ     row:    the cx ranks with my py                  x <-> z
//   kYZ    <-> kXZ     column: the cy ranks with my px                  y <-> x
//   kXZ    <-> kSpectral row:  the cx ranks with my py                  z <-> y
//
// Each step is cy (or cx) simultaneous slab transposes, one alltoallv per
// sub-communicator, with any algorithm of alltoallv.hpp (seed 000's
// "multiple simultaneous alltoallv"). Rank r of `comm` is grid point
// (px, py) = (r mod cx, r / cx). A dimension of n points split over c ranks
// gives rank p the points [p*(n/c) + min(p, n%c), ...) of n/c (+1 for the
// first n%c): any sizes, also smaller than c (some ranks then hold nothing).
// Local arrays are stored x fastest, then y, then z, over the local box.
//
//   collectives::TransposePlan<collectives::EpComm, double> plan(comm, {nx, ny, nz, cx, cy});
//   std::vector<double> grid(plan.local_size(Space::kGrid)),
//   spectral(plan.local_size(Space::kSpectral)); plan.forward(grid, spectral);
//   plan.backward(spectral, grid);   // grid back bit for bit
//
// The plan holds everything a step needs (sub-communicators, counts,
// displacements, the pack/unpack line lists, the buffers, the alltoallv
// tuners): steps allocate nothing once the tuner has chosen, and rebuild()
// for the same shape keeps every buffer (and the sub-communicators while the
// grid is unchanged).
//
// Collective: construction, rebuild(), forward(), backward() and
// transpose() over every rank of `comm`, with the same shape everywhere (the
// shape is agreed at build: a difference throws common::Error on every rank).
// Thread safety: a plan belongs to one rank (one endpoint thread); with a
// FunneledComm, packing and unpacking are shared by its team.
//
// Zero-copy paths (bind). A plan whose grid and spectral arrays are bound,
//   plan.bind(grid, spectral);                      // collective
//   for (step...) { plan.forward(grid, spectral); ...; plan.backward(spectral, grid); }
// stops packing and sending what ranks of the same process (endpoint
// threads) move between each other; they copy it, line by line along x,
// straight out of each other's arrays, after arrive/depart rounds
// (collectives/detail/process_board.hpp): a rank reads another's array only
// once that rank has arrived in the same round, and leaves the round only
// when every local reader of its own array has departed.
//  - Every rank of `comm` in one process (fused()): each direction's three
//    steps become one round in which every rank copies the parts of its
//    target box out of the other ranks' source arrays (no pack, no
//    alltoallv, no unpack, no work field).
//  - Several processes (copies_local_members(), the endpoint backend): each
//    step is one round. A rank copies the parts coming from the members of
//    its row or column in its own process out of their source arrays (the
//    bound grid or spectral array, or their work fields), and only the
//    members in other processes keep the packed alltoallv (with zero counts
//    for the local members; a row or column all in one process runs none).
//    Every step waits, before it returns, for its local readers' departure,
//    so the next step (of this call or the next, in either direction) may
//    overwrite any array at once: forward then backward then forward on the
//    reused work fields needs nothing more.
// Both paths move the same elements as the three-step exchange, so the
// results are bit for bit those of an unbound plan. The bound arrays must
// stay where they are until the last call: forward() and backward() on a
// bound plan check (in every build: two compares) that they are given the
// bound arrays and throw common::Error (kArgument) naming both addresses
// otherwise; the other ranks then wait for this rank, so treat it as a bug,
// not a condition to recover from. bind() again to move them; rebuild()
// unbinds. With MpiComm and FunneledComm every peer is another process:
// bind() only records the arrays there. transpose() of one step never
// takes these paths.
//
// Communicators: the row and column communicators are the plan's own
// (private_split, made at build and freed with the plan), and every block
// travels on them; `comm` itself carries only the shape's agreement (a
// library allreduce), so no message of the plan can match a user's receive
// on `comm`, MPI_ANY_TAG included. Copies of a plan share its row and column
// communicators: use one copy at a time.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/alltoallv.hpp"
#include "collectives/communicator.hpp"
#include "collectives/detail/agreement.hpp"
#include "collectives/detail/process_board.hpp"
#include "common/datatype.hpp"
#include "common/error.hpp"

namespace collectives {

enum class Space { kGrid = 0, kYZ = 1, kXZ = 2, kSpectral = 3 };

struct TransposeShape {
  int nx = 1;
  int ny = 1;
  int nz = 1;
  int cx = 1;  ///< ranks along the first grid dimension (row length)
  int cy = 1;  ///< ranks along the second
  friend bool operator==(const TransposeShape&, const TransposeShape&) = default;
};

/// A local box: first point and extent per dimension (x, y, z).
struct Box {
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> n{0, 0, 0};
  [[nodiscard]] std::size_t size() const {
    return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
           static_cast<std::size_t>(n[2]);
  }
};

/// The points [lo, lo + count) of `n` split over `c` parts that part `p` holds.
constexpr std::array<int, 2> block_part(int n, int c, int p) {
  return {p * (n / c) + (p < n % c ? p : n % c), n / c + (p < n % c ? 1 : 0)};
}

/// The box of grid point (px, py) in `space`. Local.
Box transpose_box(const TransposeShape& shape, Space space, int px, int py);

namespace detail {

/// The points two boxes share (an empty box if none).
inline Box box_overlap(const Box& a, const Box& b) {
  Box r;
  for (std::size_t d = 0; d < 3; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.n[d] = std::max(0, std::min(a.lo[d] + a.n[d], b.lo[d] + b.n[d]) - r.lo[d]);
  }
  return r;
}

/// Offset, in an array over `whole` (x fastest), of the first point of line
/// (y, z) of `part`, a box inside `whole`.
inline std::size_t line_offset(const Box& whole, const Box& part, int y, int z) {
  return static_cast<std::size_t>(part.lo[0] - whole.lo[0]) +
         static_cast<std::size_t>(whole.n[0]) *
             (static_cast<std::size_t>(part.lo[1] - whole.lo[1] + y) +
              static_cast<std::size_t>(whole.n[1]) *
                  static_cast<std::size_t>(part.lo[2] - whole.lo[2] + z));
}

}  // namespace detail

template <Communicator C, common::HasDatatype T>
class TransposePlan {
 public:
  TransposePlan() = default;
  /// Builds the plan; collective over `comm` (cx * cy must equal its size).
  TransposePlan(const C& comm, const TransposeShape& shape, const AlltoallvOptions& options = {})
      : comm_(comm), options_(options) {
    rebuild(shape);
  }

  /// Re-plans for `shape`, keeping buffers (and the sub-communicators when cx
  /// and cy are unchanged). Collective.
  void rebuild(const TransposeShape& shape);

  [[nodiscard]] const TransposeShape& shape() const noexcept { return shape_; }
  [[nodiscard]] Box box(Space space) const { return transpose_box(shape_, space, px_, py_); }
  [[nodiscard]] std::size_t local_size(Space space) const { return box(space).size(); }
  /// The tuners of the row and column alltoallvs (their `auto` choices).
  [[nodiscard]] const AlltoallvTuner& row_tuner() const noexcept { return tuners_[0]; }
  [[nodiscard]] const AlltoallvTuner& column_tuner() const noexcept { return tuners_[1]; }
  /// Identity of the plan's storage, for tests that check reuse.
  [[nodiscard]] std::array<const void*, 4> buffers() const noexcept {
    return {send_.data(), recv_.data(), fields_[0].data(), fields_[1].data()};
  }

  /// One step between adjacent spaces (either direction); `in` has
  /// local_size(from) elements, `out` local_size(to). Collective. Never
  /// takes a zero-copy path, bound plan or not.
  void transpose(Space from, Space to, std::span<const T> in, std::span<T> out);
  /// kGrid -> kYZ -> kXZ -> kSpectral through the plan's own work fields
  /// (on a bound plan: one fused copy on one process, local members copied
  /// directly on several). Collective.
  void forward(std::span<const T> grid, std::span<T> spectral) {
    if (bound_) check_bound("collectives::TransposePlan::forward", grid.data(), spectral.data());
    through({Space::kGrid, Space::kYZ, Space::kXZ, Space::kSpectral}, 0, grid, spectral);
  }
  /// kSpectral -> kXZ -> kYZ -> kGrid. Collective.
  void backward(std::span<const T> spectral, std::span<T> grid) {
    if (bound_) check_bound("collectives::TransposePlan::backward", grid.data(), spectral.data());
    through({Space::kSpectral, Space::kXZ, Space::kYZ, Space::kGrid}, 1, spectral, grid);
  }

  /// Records `grid` (local_size(kGrid) elements) and `spectral`
  /// (local_size(kSpectral)) as the arrays of every later forward() and
  /// backward(), and switches them to the zero-copy path of the layout:
  /// fused on one process, local members copied directly on several (see
  /// the file comment). Wrong sizes on any rank throw common::Error
  /// (kCount) on every rank. Collective over `comm`.
  void bind(std::span<T> grid, std::span<T> spectral);
  /// Whether bind() was called since the last build.
  [[nodiscard]] bool bound() const noexcept { return bound_; }
  /// Whether forward() and backward() take the fused zero-copy path (every
  /// rank in one process).
  [[nodiscard]] bool fused() const noexcept { return bound_ && fused_ != nullptr; }
  /// Whether forward() and backward() copy what the members of a row or
  /// column in this process send straight out of their arrays, and exchange
  /// messages with the other processes' members only (a bound plan over
  /// several processes whose backend has several ranks per process).
  [[nodiscard]] bool copies_local_members() const noexcept { return bound_ && copies_local_; }

 private:
  /// One contiguous run along x: `count` elements from offset `from` of the
  /// source array to offset `to` of the target.
  struct Line {
    std::size_t from = 0;
    std::size_t to = 0;
    std::size_t count = 0;
  };
  /// Step s (0: grid<->yz, 1: yz<->xz, 2: xz<->spectral) in its forward sense.
  struct Step {
    int sub = 0;  ///< 0: row communicator, 1: column
    std::vector<int> sendcounts, sdispls, recvcounts, rdispls;
    std::vector<Line> pack;               ///< from-space field -> send buffer
    std::vector<Line> unpack;             ///< receive buffer -> to-space field
    std::size_t largest_block_bytes = 0;  ///< over the whole sub-communicator
  };

  /// The lines one rank copies out of another local rank's array.
  struct LocalSource {
    int thread = 0;
    std::vector<Line> lines;
  };
  using FusedDirection = std::vector<LocalSource>;

  /// Step s of a bound plan over several processes: the lines copied out of
  /// each local member's array (forward sense: its from-space array into my
  /// to-space one; backward: its to-space array into my from-space one), and
  /// the exchange with the other members (local members' counts zero).
  struct LocalStep {
    std::array<std::vector<LocalSource>, 2> sources;  // [0] forward, [1] backward
    std::vector<int> local_threads;                   // the local members, this rank included
    bool all_local = false;                           // no member elsewhere: no exchange
    Step remote;
  };

  /// The rank in `comm_` of member `m` of my row (sub 0) or column (sub 1).
  [[nodiscard]] int member_rank(int sub, int m) const {
    return sub == 0 ? m + shape_.cx * py_ : px_ + shape_.cx * m;
  }
  /// Plans `step` (forward sense from -> to over sub-communicator `sub`);
  /// with `skip_local`, members in this process get zero counts and no lines.
  void plan_step(Step& step, Space from, Space to, int sub, bool skip_local);
  void plan_fused();
  void plan_local_steps();
  void check_bound(const char* call, const T* grid, const T* spectral) const;
  /// The three steps of `chain` (forward: direction 0, backward: 1), kYZ in
  /// fields_[0] and kXZ in fields_[1]; a bound fused plan copies in one go,
  /// a bound plan over several processes copies its local members directly.
  void through(const std::array<Space, 4>& chain, std::size_t direction, std::span<const T> in,
               std::span<T> out) {
    if (bound_ && fused_) {
      fused_call((*fused_)[direction], chain[0], out.data());
      return;
    }
    std::span<T> first = fields_[direction == 0 ? 0 : 1];
    std::span<T> second = fields_[direction == 0 ? 1 : 0];
    if (bound_ && copies_local_) {
      local_step(chain[0], chain[1], in.data(), first.data());
      local_step(chain[1], chain[2], first.data(), second.data());
      local_step(chain[2], chain[3], second.data(), out.data());
      return;
    }
    transpose(chain[0], chain[1], in, first);
    transpose(chain[1], chain[2], first, second);
    transpose(chain[2], chain[3], second, out);
  }
  /// One fused direction: the others' `source` arrays (kGrid or kSpectral)
  /// into this rank's `target`.
  void fused_call(const FusedDirection& sources, Space source, T* target);
  /// One step of a bound plan over several processes: `in` and `out` are
  /// this rank's arrays of `from` and `to` (the bound ones or the work fields).
  void local_step(Space from, Space to, const T* in, T* out);
  /// Pack, alltoallv over the step's sub-communicator, unpack.
  void exchange(const Step& step, bool forward, const T* in, T* out, AlltoallvTuner& tuner);
  void copy_lines(std::span<const Line> lines, bool reversed, const T* source, T* target);
  void check_shape(const TransposeShape& shape);

  C comm_;
  AlltoallvOptions options_;
  TransposeShape shape_{};
  bool built_ = false;
  int px_ = 0;
  int py_ = 0;
  std::array<C, 2> subs_;  // row, column
  std::array<AlltoallvTuner, 2> tuners_;
  // The row and column exchanges of local steps: other counts, so their own
  // `auto` choices.
  std::array<AlltoallvTuner, 2> remote_tuners_;
  std::array<Step, 3> steps_;
  std::vector<T> send_, recv_;
  std::array<std::vector<T>, 2> fields_;  // kYZ and kXZ work fields of forward/backward
  alltoallv_algorithms::Scratch<T, typename C::Request> scratch_;
  std::vector<long long> check_slots_;
  std::vector<detail::LocalCheck> checks_;
  // Zero-copy paths: the board of the process (null for backends with one
  // rank per process), this rank's slot, the lines of the fused directions
  // or of the local steps, the bound arrays.
  std::shared_ptr<detail::ProcessBoard> board_;
  int thread_ = 0;
  std::vector<int> threads_;  // every rank's thread (-1: another process)
  std::shared_ptr<const std::array<FusedDirection, 2>> fused_;  // immutable: copies share it
  std::array<LocalStep, 3> local_steps_;
  bool copies_local_ = false;
  bool bound_ = false;
  const T* bound_grid_ = nullptr;
  const T* bound_spectral_ = nullptr;
  // Board rounds of this plan, the same count on every rank (each bound
  // forward() and backward() makes one fused round or three local steps).
  std::uint64_t rounds_ = 0;
};

// ---------------------------------------------------------------------------

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::check_shape(const TransposeShape& shape) {
  detail::LocalCheck mine;
  const int n = comm_.size();
  if (shape.cx < 1 || shape.cy < 1 || static_cast<long long>(shape.cx) * shape.cy != n) {
    mine = {1, shape.cx, shape.cy};
  } else if (shape.nx < 1 || shape.ny < 1 || shape.nz < 1) {
    mine = {2, shape.nx, static_cast<long long>(shape.ny) * 1000000 + shape.nz};
  }
  mine.agreed[0] = shape.nx;
  mine.agreed[1] = static_cast<long long>(shape.ny) << 32 | static_cast<unsigned>(shape.nz);
  mine.agreed[2] = static_cast<long long>(shape.cx) << 32 | static_cast<unsigned>(shape.cy);
  detail::gather_checks(comm_, mine, check_slots_, checks_);
  for (std::size_t r = 0; r < checks_.size() && checks_[r].code == 0; ++r) {
    for (int i = 0; i < 3; ++i) {
      if (checks_[r].agreed[i] != checks_[0].agreed[i]) checks_[r].code = 3;
    }
  }
  detail::throw_if_any(
      comm_, "collectives::TransposePlan", std::span<const detail::LocalCheck>(checks_),
      [&](const detail::LocalCheck& c) -> std::pair<common::ErrorKind, std::string> {
        if (c.code == 1) {
          return {common::ErrorKind::kArgument,
                  "grid " + std::to_string(c.index) + " x " + std::to_string(c.value) + " for " +
                      std::to_string(n) + " ranks (cx * cy must equal the size)"};
        }
        if (c.code == 2) {
          return {common::ErrorKind::kArgument, "field of nx " + std::to_string(c.index) +
                                                    " (ny*10^6 + nz = " + std::to_string(c.value) +
                                                    "): every size must be >= 1"};
        }
        return {common::ErrorKind::kArgument,
                "a shape (nx " + std::to_string(c.agreed[0]) + ") different from rank 0's (nx " +
                    std::to_string(checks_[0].agreed[0]) + ", ny, nz, cx, cy)"};
      });
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::rebuild(const TransposeShape& shape) {
  check_shape(shape);
  const bool same_grid = built_ && shape.cx == shape_.cx && shape.cy == shape_.cy;
  shape_ = shape;
  px_ = comm_.rank() % shape.cx;
  py_ = comm_.rank() / shape.cx;
  if (!same_grid) {
    subs_[0] = comm_.private_split(py_, px_);  // row: my py, ordered by px
    subs_[1] = comm_.private_split(px_, py_);  // column: my px, ordered by py
    for (AlltoallvTuner& t : tuners_) t.reset();
    for (AlltoallvTuner& t : remote_tuners_) t.reset();
  }
  built_ = true;
  bound_ = false;  // the bound arrays' sizes belong to the old shape
  fused_.reset();
  copies_local_ = false;
  plan_step(steps_[0], Space::kGrid, Space::kYZ, 0, false);
  plan_step(steps_[1], Space::kYZ, Space::kXZ, 1, false);
  plan_step(steps_[2], Space::kXZ, Space::kSpectral, 0, false);
  std::size_t largest = 0;
  for (const Step& s : steps_) {
    const auto sent =
        static_cast<std::size_t>(s.sdispls.back()) + static_cast<std::size_t>(s.sendcounts.back());
    const auto received =
        static_cast<std::size_t>(s.rdispls.back()) + static_cast<std::size_t>(s.recvcounts.back());
    largest = std::max({largest, sent, received});
  }
  // The local steps' exchanges move a part of these blocks: the buffers fit them too.
  send_.resize(largest);
  recv_.resize(largest);
  fields_[0].resize(local_size(Space::kYZ));
  fields_[1].resize(local_size(Space::kXZ));
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::bind(std::span<T> grid, std::span<T> spectral) {
  const bool sizes_fit =
      grid.size() == local_size(Space::kGrid) && spectral.size() == local_size(Space::kSpectral);
  int bad = sizes_fit ? 0 : 1;  // an empty box may come with a null array
  comm_.library_allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX);
  if (bad != 0) {
    throw common::Error(common::ErrorKind::kCount, "collectives::TransposePlan::bind", comm_.rank(),
                        sizes_fit
                            ? "another rank bound arrays of the wrong size"
                            : "arrays of " + std::to_string(grid.size()) + " and " +
                                  std::to_string(spectral.size()) + " elements, the plan expects " +
                                  std::to_string(local_size(Space::kGrid)) + " and " +
                                  std::to_string(local_size(Space::kSpectral)));
  }
  threads_ = detail::local_threads_of(comm_);
  // The same answer on every rank: each process sees the others' ranks.
  const bool one_process = std::find(threads_.begin(), threads_.end(), -1) == threads_.end();
  // Made at the first bind, the same one on every local rank (each binds
  // as often); null for the backends with one rank per process.
  if (board_ == nullptr) {
    board_ = detail::make_process_board(comm_);
    thread_ = detail::local_thread_of(comm_);
  }
  fused_.reset();
  copies_local_ = false;
  if (board_ != nullptr) {
    if (one_process) {
      plan_fused();
    } else {
      plan_local_steps();
      copies_local_ = true;
    }
    // No rank reads this slot now: the last call ended with the departure
    // of every local reader (of the fused round, or of each local step),
    // and the next one publishes it with an arrival. Indexed by Space.
    std::vector<std::byte*>& addresses = board_->addresses(thread_);
    addresses = {reinterpret_cast<std::byte*>(grid.data()),
                 reinterpret_cast<std::byte*>(fields_[0].data()),
                 reinterpret_cast<std::byte*>(fields_[1].data()),
                 reinterpret_cast<std::byte*>(spectral.data())};
  }
  bound_ = true;
  bound_grid_ = grid.data();
  bound_spectral_ = spectral.data();
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::plan_fused() {
  auto fused = std::make_shared<std::array<FusedDirection, 2>>();
  const Box grid_mine = box(Space::kGrid);
  const Box spectral_mine = box(Space::kSpectral);
  for (int q = 0; q < comm_.size(); ++q) {
    const int qx = q % shape_.cx;
    const int qy = q / shape_.cx;
    // Forward: q's grid into my spectral box; backward: q's spectral into my grid box.
    for (std::size_t d = 0; d < 2; ++d) {
      const Box source = transpose_box(shape_, d == 0 ? Space::kGrid : Space::kSpectral, qx, qy);
      const Box& target = d == 0 ? spectral_mine : grid_mine;
      const Box part = detail::box_overlap(source, target);
      if (part.size() == 0) continue;
      LocalSource from_q;
      from_q.thread = threads_[static_cast<std::size_t>(q)];
      for (int z = 0; z < part.n[2]; ++z) {
        for (int y = 0; y < part.n[1]; ++y) {
          from_q.lines.push_back({detail::line_offset(source, part, y, z),
                                  detail::line_offset(target, part, y, z),
                                  static_cast<std::size_t>(part.n[0])});
        }
      }
      (*fused)[d].push_back(std::move(from_q));
    }
  }
  fused_ = std::move(fused);
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::plan_local_steps() {
  static constexpr Space kFrom[3] = {Space::kGrid, Space::kYZ, Space::kXZ};
  for (std::size_t s = 0; s < 3; ++s) {
    const Space from = kFrom[s];
    const auto to = static_cast<Space>(static_cast<int>(from) + 1);
    LocalStep& step = local_steps_[s];
    const int sub = steps_[s].sub;
    const int members = sub == 0 ? shape_.cx : shape_.cy;
    const Box mine[2] = {box(to), box(from)};  // my target, forward and backward
    step.local_threads.clear();
    for (std::vector<LocalSource>& sources : step.sources) sources.clear();
    for (int m = 0; m < members; ++m) {
      const int q = member_rank(sub, m);
      const int thread = threads_[static_cast<std::size_t>(q)];
      if (thread < 0) continue;
      step.local_threads.push_back(thread);
      const int qx = q % shape_.cx;
      const int qy = q / shape_.cx;
      // Forward: q's from-space array into my to-space one; backward: q's
      // to-space array into my from-space one.
      const Box theirs[2] = {transpose_box(shape_, from, qx, qy),
                             transpose_box(shape_, to, qx, qy)};
      for (std::size_t d = 0; d < 2; ++d) {
        const Box part = detail::box_overlap(theirs[d], mine[d]);
        if (part.size() == 0) continue;
        LocalSource from_q;
        from_q.thread = thread;
        for (int z = 0; z < part.n[2]; ++z) {
          for (int y = 0; y < part.n[1]; ++y) {
            from_q.lines.push_back({detail::line_offset(theirs[d], part, y, z),
                                    detail::line_offset(mine[d], part, y, z),
                                    static_cast<std::size_t>(part.n[0])});
          }
        }
        step.sources[d].push_back(std::move(from_q));
      }
    }
    // Every member sees the same answer: all in my process means all in theirs.
    step.all_local = static_cast<int>(step.local_threads.size()) == members;
    plan_step(step.remote, from, to, sub, true);
  }
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::check_bound(const char* call, const T* grid, const T* spectral) const {
  if (grid == bound_grid_ && spectral == bound_spectral_) return;
  const auto hex = [](const void* p) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", p);
    return std::string(text);
  };
  throw common::Error(common::ErrorKind::kArgument, call, comm_.rank(),
                      "arrays at " + hex(grid) + " (grid) and " + hex(spectral) +
                          " (spectral) are not the bound ones at " + hex(bound_grid_) + " and " +
                          hex(bound_spectral_) + ": bind() the new arrays first, on every rank");
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::fused_call(const FusedDirection& sources, Space source, T* target) {
  ++rounds_;
  board_->arrive(thread_, rounds_);
  for (const LocalSource& from : sources) {
    board_->wait_arrived(from.thread, rounds_);
    const T* array = reinterpret_cast<const T*>(
        board_->addresses(from.thread)[static_cast<std::size_t>(source)]);
    for (const Line& l : from.lines) {
      std::memcpy(target + l.to, array + l.from, l.count * sizeof(T));
    }
  }
  board_->depart(thread_, rounds_);
  for (const int t : threads_) board_->wait_departed(t, rounds_);
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::local_step(Space from, Space to, const T* in, T* out) {
  const bool forward = to > from;
  const LocalStep& step = local_steps_[static_cast<std::size_t>(forward ? from : to)];
  // One round per step. The arrival says `in` holds this step's data: the
  // user's array (first step) or the work field the previous step wrote and
  // closed. The departure says this rank has read its local members'
  // arrays; waiting for theirs before returning closes the step, so no
  // later step (of this call or the next, either direction) writes an
  // array that a local member still reads.
  ++rounds_;
  board_->arrive(thread_, rounds_);
  for (const LocalSource& source : step.sources[forward ? 0 : 1]) {
    board_->wait_arrived(source.thread, rounds_);
    const T* array = reinterpret_cast<const T*>(
        board_->addresses(source.thread)[static_cast<std::size_t>(from)]);
    for (const Line& l : source.lines) {
      std::memcpy(out + l.to, array + l.from, l.count * sizeof(T));
    }
  }
  board_->depart(thread_, rounds_);
  if (!step.all_local) {
    exchange(step.remote, forward, in, out,
             remote_tuners_[static_cast<std::size_t>(step.remote.sub)]);
  }
  for (const int t : step.local_threads) board_->wait_departed(t, rounds_);
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::plan_step(Step& step, Space from, Space to, int sub, bool skip_local) {
  step.sub = sub;
  const int members = sub == 0 ? shape_.cx : shape_.cy;
  // Member m of my row is (m, py); of my column (px, m).
  auto member_box = [&](Space space, int m) {
    return sub == 0 ? transpose_box(shape_, space, m, py_) : transpose_box(shape_, space, px_, m);
  };
  // Lines of `part` (x fastest) between a field over `whole` and a block.
  auto add_lines = [](std::vector<Line>& lines, const Box& whole, const Box& part,
                      std::size_t block_offset, bool field_is_source) {
    if (part.size() == 0) return;
    std::size_t b = block_offset;
    for (int z = 0; z < part.n[2]; ++z) {
      for (int y = 0; y < part.n[1]; ++y) {
        const std::size_t f = detail::line_offset(whole, part, y, z);
        const auto len = static_cast<std::size_t>(part.n[0]);
        lines.push_back(field_is_source ? Line{f, b, len} : Line{b, f, len});
        b += len;
      }
    }
  };
  const Box mine_from = box(from);
  const Box mine_to = box(to);
  const auto um = static_cast<std::size_t>(members);
  step.sendcounts.resize(um);
  step.sdispls.resize(um);
  step.recvcounts.resize(um);
  step.rdispls.resize(um);
  step.pack.clear();
  step.unpack.clear();
  step.largest_block_bytes = 0;
  int sent = 0;
  int received = 0;
  for (int m = 0; m < members; ++m) {
    const auto u = static_cast<std::size_t>(m);
    // A local member copies its blocks itself (local_step): nothing to send.
    const bool copied = skip_local && threads_[static_cast<std::size_t>(member_rank(sub, m))] >= 0;
    const Box out = copied ? Box{} : detail::box_overlap(mine_from, member_box(to, m));
    const Box in = copied ? Box{} : detail::box_overlap(member_box(from, m), mine_to);
    step.sendcounts[u] = static_cast<int>(out.size());
    step.sdispls[u] = sent;
    step.recvcounts[u] = static_cast<int>(in.size());
    step.rdispls[u] = received;
    add_lines(step.pack, mine_from, out, static_cast<std::size_t>(sent), true);
    add_lines(step.unpack, mine_to, in, static_cast<std::size_t>(received), false);
    sent += step.sendcounts[u];
    received += step.recvcounts[u];
    // The largest block anywhere in the sub-communicator, known to all its
    // members without asking (auto's size class); local blocks included, so
    // that every member of a local step's exchange agrees on it too.
    for (int q = 0; q < members; ++q) {
      const Box any = detail::box_overlap(member_box(from, m), member_box(to, q));
      step.largest_block_bytes = std::max(step.largest_block_bytes, any.size() * sizeof(T));
    }
  }
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::copy_lines(std::span<const Line> lines, bool reversed, const T* source,
                                     T* target) {
  auto copy = [&](int i) {
    const Line& l = lines[static_cast<std::size_t>(i)];
    const std::size_t from = reversed ? l.to : l.from;
    const std::size_t to = reversed ? l.from : l.to;
    std::memcpy(target + to, source + from, l.count * sizeof(T));
  };
  // Below 64 KiB in all, waking a team costs more than the copy.
  const std::size_t total = lines.empty() ? 0 : lines.back().count * lines.size();
  if (total * sizeof(T) < 65536) {
    for (int i = 0; i < static_cast<int>(lines.size()); ++i) copy(i);
  } else {
    comm_.parallel_for(static_cast<int>(lines.size()), copy);
  }
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::exchange(const Step& step, bool forward, const T* in, T* out,
                                   AlltoallvTuner& tuner) {
  // Backward runs the forward step's exchange mirrored: the forward
  // receive layout is the backward send layout, and vice versa.
  copy_lines(forward ? step.pack : step.unpack, !forward, in, send_.data());
  AlltoallvOptions options = options_;
  options.check = AlltoallvCheck::kNone;  // counts are consistent by construction (agreed shape)
  options.tuner = &tuner;
  options.agreed_block_bytes = std::max<std::size_t>(1, step.largest_block_bytes);
  const C& sub = subs_[static_cast<std::size_t>(step.sub)];
  if (forward) {
    alltoallv(sub, std::span<const T>(send_), step.sendcounts, step.sdispls, std::span<T>(recv_),
              step.recvcounts, step.rdispls, options, scratch_);
  } else {
    alltoallv(sub, std::span<const T>(send_), step.recvcounts, step.rdispls, std::span<T>(recv_),
              step.sendcounts, step.sdispls, options, scratch_);
  }
  copy_lines(forward ? step.unpack : step.pack, !forward, recv_.data(), out);
}

template <Communicator C, common::HasDatatype T>
void TransposePlan<C, T>::transpose(Space from, Space to, std::span<const T> in, std::span<T> out) {
  const int a = static_cast<int>(from);
  const int b = static_cast<int>(to);
  if (a - b != 1 && b - a != 1) {
    throw common::Error(common::ErrorKind::kArgument, "collectives::TransposePlan::transpose",
                        comm_.rank(),
                        "spaces " + std::to_string(a) + " and " + std::to_string(b) +
                            " are not adjacent (grid 0, yz 1, xz 2, spectral 3)");
  }
  if (in.size() != local_size(from) || out.size() != local_size(to)) {
    throw common::Error(
        common::ErrorKind::kCount, "collectives::TransposePlan::transpose", comm_.rank(),
        "field sizes " + std::to_string(in.size()) + " -> " + std::to_string(out.size()) +
            ", the plan expects " + std::to_string(local_size(from)) + " -> " +
            std::to_string(local_size(to)));
  }
  const bool forward = b > a;
  const Step& step = steps_[static_cast<std::size_t>(forward ? a : b)];
  exchange(step, forward, in.data(), out.data(), tuners_[static_cast<std::size_t>(step.sub)]);
}

}  // namespace collectives
