// The set-up every Krylov solver here shares: the width-1 halo plan of the
// problem's decomposition, this rank's LocalGrid (empty on a rank beyond the
// decomposition's subdomains, which still takes part in the sums), the
// result with its time split, and the three steps that touch other ranks or
// the clock: a halo exchange, a global sum and the local dot products.
//
// Collective: the constructor builds a HaloPlan (collective over `comm`);
// exchange(), sum() and residual_squared() are collective, as are the
// solvers that call them. A context serves any number of solves, each
// between begin() and finish(): the plan is made once (GcrSolver, CgSolver).
// `comm` must outlive the context. Thread safety: one SolveContext per rank, used by
// the rank's own thread (or a funneled master) like the kernels.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "collectives/halo.hpp"
#include "collectives/solvers/local_grid.hpp"
#include "collectives/solvers/solve_result.hpp"

namespace collectives::solvers {

template <Communicator C, class GlobalSum>
class SolveContext {
 public:
  SolveContext(const C& comm, const Decomposition& decomposition, Stencil stencil,
               HaloAlgorithm algorithm, int levels, GlobalSum global_sum)
      : comm_(comm),
        plan_(comm, spec_of(decomposition, stencil, algorithm)),
        grid_(LocalGrid::of(plan_, levels)),
        global_sum_(std::move(global_sum)) {
    if (!plan_.takes_part()) grid_.nx = grid_.ny = 0;
  }

  [[nodiscard]] const LocalGrid& grid() const noexcept { return grid_; }
  [[nodiscard]] const C& comm() const noexcept { return comm_; }
  /// Elements of one field with its halo (the size of every solver vector).
  [[nodiscard]] std::size_t field_elements() const { return plan_.field_elements(grid_.nz); }
  [[nodiscard]] SolveResult& result() noexcept { return result_; }

  /// Starts a solve: an empty result, the clock from now. Local.
  void begin() {
    result_ = SolveResult{};
    clock_ = SolveClock{};
  }

  /// Exchanges the halo of `field`; the time goes to halo_seconds.
  void exchange(std::vector<double>& field) {
    clock_.to_compute(result_);
    plan_.exchange({halo_field<double>(field, grid_.nz)});
    clock_.to_halo(result_);
  }

  /// In-place global sum of `values`; the time goes to allreduce_seconds.
  void sum(std::vector<double>& values) {
    clock_.to_compute(result_);
    global_sum_(comm_, std::span<double>(values));
    clock_.to_allreduce(result_);
  }

  /// This rank's dot products (a[m], b[m]) over the interior (not summed).
  std::vector<double> dots(std::vector<const double*> a, std::vector<const double*> b) {
    return local_dots(comm_, grid_, std::span<const double* const>(a),
                      std::span<const double* const>(b), scratch_);
  }

  /// r = b - A x, with x's halo exchanged first and `ax` as room for A x;
  /// returns the global (r, r).
  template <class Apply>
  double residual_squared(Apply&& apply, std::vector<double>& x, const std::vector<double>& b,
                          std::vector<double>& r, std::vector<double>& ax) {
    exchange(x);
    apply(x, ax);
    for_interior(comm_, grid_, [&](int i, int j, int k) {
      const std::size_t c = grid_.at(i, j, k);
      r[c] = b[c] - ax[c];
    });
    std::vector<double> s = dots({r.data()}, {r.data()});
    sum(s);
    return s[0];
  }

  /// Closes the clock and hands back the result with this rank's interior
  /// of `x` as the solution.
  SolveResult finish(const std::vector<double>& x) {
    clock_.to_compute(result_);
    result_.solution = interior_of(grid_, x);
    result_.nx = grid_.nx;
    result_.ny = grid_.ny;
    result_.nz = grid_.nz;
    result_.x0 = grid_.x0;
    result_.y0 = grid_.y0;
    return std::move(result_);
  }

 private:
  static HaloSpec spec_of(const Decomposition& decomposition, Stencil stencil,
                          HaloAlgorithm algorithm) {
    HaloSpec spec;
    spec.decomposition = decomposition;
    spec.width = 1;
    spec.stencil = stencil;
    spec.algorithm = algorithm;
    return spec;
  }

  const C& comm_;
  HaloPlan<C> plan_;
  LocalGrid grid_;
  GlobalSum global_sum_;
  SolveResult result_;
  SolveClock clock_;
  std::vector<double> scratch_;
};

}  // namespace collectives::solvers
