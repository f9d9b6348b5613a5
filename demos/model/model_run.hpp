// One model rank's time loop, written once over collectives::Communicator so
// that MPI processes, endpoint threads and funneled processes run the same
// code (see model_options.hpp for the backends).
//
// Per step: one wide halo exchange of the tracers, the conservative
// semi-Lagrangian sweeps (advection.hpp), every N steps a spectral
// transposition round trip of tracer 1 that must give the field back bit for
// bit, a GCR solve of a Helmholtz problem whose shift follows the model time,
// and the step's output through this rank's xios_lite client.
//
// Collective over `comm` (and over the output clients, which are all the
// model's clients). Thread safety: one call per rank, on the thread that owns
// the rank (an endpoint's thread, or the master thread outside parallel
// regions for MPI and funneled ranks).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "advection.hpp"
#include "collectives/halo.hpp"
#include "collectives/solvers/gcr.hpp"
#include "collectives/transpose.hpp"
#include "model_options.hpp"
#include "phase_timer.hpp"
#include "xios_lite/client.hpp"

namespace model {

inline constexpr int kTracers = 3;

/// A failed model check (not bad input): "call: rank r: what".
inline std::runtime_error model_failure(const char* call, int rank, const std::string& what) {
  return std::runtime_error(std::string(call) + ": rank " + std::to_string(rank) + ": " + what);
}

/// What every rank knows before the run: the grid from the configuration.
struct Grid {
  int ni = 0, nj = 0, levels = 0;
  double timestep_s = 0.0;
};

/// Near-square px x py = n with px >= py (the halo and transpose grid).
inline std::array<int, 2> process_grid(int n) {
  int py = 1;
  for (int d = 1; d * d <= n; ++d) {
    if (n % d == 0) py = d;
  }
  return {n / py, py};
}

/// Courant number of level k (0 = bottom): the wind grows with height.
inline double level_courant(double top, int k, int levels) {
  return top * (0.5 + 0.5 * (k + 1) / levels);
}

/// Initial tracer t at global cell (gi, gj, k): smooth, positive, distinct.
inline double initial_tracer(int t, const Grid& g, int gi, int gj, int k) {
  constexpr double kPi = 3.14159265358979323846;
  const double x = (gi + 0.5) / g.ni;
  const double y = (gj + 0.5) / g.nj;
  switch (t) {
    case 0: {  // a Gaussian blob on a background, peak rising with height
      const double dx = x - 0.3, dy = y - 0.5;
      return 1.0 + (1.0 + 0.1 * k) * std::exp(-(dx * dx + dy * dy) / 0.01);
    }
    case 1: {  // a sharp-edged square (tests the limiter)
      return (x > 0.55 && x < 0.8 && y > 0.25 && y < 0.6) ? 2.0 : 0.5;
    }
    default:  // waves
      return 1.5 + 0.5 * std::sin(2 * kPi * x) * std::cos(2 * kPi * y) + 0.05 * k;
  }
}

template <collectives::Communicator C>
class ModelRank {
 public:
  ModelRank(const C& comm, const Grid& grid, const ModelOptions& options)
      : comm_(comm),
        grid_(grid),
        options_(options),
        layout_(process_grid(comm.size())),
        width_(halo_width_for(std::max(std::abs(options.courant_x), std::abs(options.courant_y)))),
        halo_(comm, halo_spec()),
        transpose_(comm, {grid.ni, grid.nj, grid.levels, layout_[0], layout_[1]}),
        solver_(comm_, halo_.spec().decomposition, grid.levels, solver_options(options)) {
    const collectives::Box box = transpose_.box(collectives::Space::kGrid);
    if (box.lo[0] != halo_.x0() || box.n[0] != halo_.nx() || box.lo[1] != halo_.y0() ||
        box.n[1] != halo_.ny() || box.n[2] != grid.levels) {
      throw model_failure("model::ModelRank", comm.rank(),
                          "the transpose grid box differs from the halo subdomain");
    }
    for (auto& q : tracers_) q.assign(halo_.field_elements(grid.levels), 0.0);
    for (int t = 0; t < kTracers; ++t) {
      for_cells([&](int i, int j, int k) {
        tracers_[static_cast<std::size_t>(t)][at(i, j, k)] =
            initial_tracer(t, grid_, halo_.x0() + i, halo_.y0() + j, k);
      });
    }
    // Both plans are persistent: bound once to arrays that live as long as
    // the model, so that each step's exchange copies straight out of the
    // arrays of ranks in the same process (collectives/halo.hpp, bind).
    halo_.bind({collectives::halo_field<double>(tracers_[0], grid.levels),
                collectives::halo_field<double>(tracers_[1], grid.levels),
                collectives::halo_field<double>(tracers_[2], grid.levels)});
    grid_field_.resize(transpose_.local_size(collectives::Space::kGrid));
    spectral_.resize(transpose_.local_size(collectives::Space::kSpectral));
    transpose_.bind(grid_field_, spectral_);
  }

  // The solver refers to comm_: a ModelRank stays where it was made.
  ModelRank(const ModelRank&) = delete;
  ModelRank& operator=(const ModelRank&) = delete;

  [[nodiscard]] int halo_width() const noexcept { return width_; }
  [[nodiscard]] std::array<int, 2> layout() const noexcept { return layout_; }
  [[nodiscard]] xios_lite::Block block() const {
    return {halo_.x0(), halo_.nx(), halo_.y0(), halo_.ny()};
  }

  /// Global total of each tracer (sum over cells, all cells have equal
  /// volume). Collective.
  std::array<double, kTracers> total_mass() const {
    std::array<double, kTracers> mass{};
    for (int t = 0; t < kTracers; ++t) {
      const auto& q = tracers_[static_cast<std::size_t>(t)];
      double s = 0.0;
      for (int k = 0; k < grid_.levels; ++k) {
        for (int j = 0; j < halo_.ny(); ++j) {
          for (int i = 0; i < halo_.nx(); ++i) s += q[at(i, j, k)];
        }
      }
      mass[static_cast<std::size_t>(t)] = s;
    }
    comm_.library_allreduce(MPI_IN_PLACE, mass.data(), kTracers, MPI_DOUBLE, MPI_SUM);
    return mass;
  }

  /// Runs the time loop, sending output through `out` (already defined and
  /// closed; nullptr: a run without output). Returns this rank's phase
  /// times. Collective.
  PhaseTimer run(xios_lite::Client* out, bool print_progress) {
    PhaseTimer timer;
    std::vector<double> original(grid_field_.size());
    std::vector<double> packed(static_cast<std::size_t>(halo_.nx()) * halo_.ny() * grid_.levels);
    std::vector<double> column(static_cast<std::size_t>(halo_.nx()) * halo_.ny());
    auto last_print = std::chrono::steady_clock::now();
    int last_print_step = 0;
    timer.restart();
    for (int step = 1; step <= options_.steps; ++step) {
      halo_.exchange();
      timer.mark(Phase::kHalo);
      advect();
      timer.mark(Phase::kCompute);

      if (options_.transpose_every > 0 && step % options_.transpose_every == 0) {
        pack_interior(tracers_[0], grid_field_);
        std::copy(grid_field_.begin(), grid_field_.end(), original.begin());
        timer.mark(Phase::kCompute);
        transpose_.forward(grid_field_, spectral_);
        transpose_.backward(spectral_, grid_field_);
        timer.mark(Phase::kTranspose);
        if (grid_field_ != original) {
          throw model_failure("model::ModelRank::run", comm_.rank(),
                              "step " + std::to_string(step) +
                                  ": the spectral round trip did not return the field exactly");
        }
      }

      collectives::solvers::HelmholtzProblem problem;
      problem.decomposition = halo_.spec().decomposition;
      problem.levels = grid_.levels;
      problem.alpha = 0.5 + 0.25 * std::sin(0.2 * step);  // the shift follows model time
      timer.mark(Phase::kCompute);
      collectives::solvers::SolveResult solve = solver_.solve(problem);
      timer.mark(Phase::kSolver);
      if (!solve.converged) {
        throw model_failure("model::ModelRank::run", comm_.rank(),
                            "step " + std::to_string(step) + ": GCR did not converge in " +
                                std::to_string(solve.iterations) + " iterations");
      }

      if (out != nullptr) {
        out->update_calendar(step);
        timer.mark(Phase::kOutput);
        for (int t = 0; t < kTracers; ++t) {
          pack_interior(tracers_[static_cast<std::size_t>(t)], packed);
          timer.mark(Phase::kCompute);
          out->send_field("q" + std::to_string(t + 1), packed);
          timer.mark(Phase::kOutput);
        }
        column_integral(tracers_[0], column);
        timer.mark(Phase::kCompute);
        out->send_field("q1_col", column);
        out->send_field("phi", solve.solution);
        timer.mark(Phase::kOutput);
      }

      if (print_progress && options_.progress_every > 0 &&
          (step % options_.progress_every == 0 || step == options_.steps)) {
        const auto now = std::chrono::steady_clock::now();
        const double per_step =
            std::chrono::duration<double>(now - last_print).count() / (step - last_print_step);
        std::printf("step %5d/%d  t = %8.2f h  %8.3f ms/step  (GCR %d iterations)\n", step,
                    options_.steps, step * grid_.timestep_s / 3600.0, 1e3 * per_step,
                    solve.iterations);
        std::fflush(stdout);
        last_print = now;
        last_print_step = step;
        timer.restart();  // the print is not a phase
      }
    }
    return timer;
  }

 private:
  collectives::HaloSpec halo_spec() const {
    collectives::HaloSpec spec;
    spec.decomposition =
        collectives::Decomposition::even(grid_.ni, grid_.nj, layout_[0], layout_[1], true, true);
    spec.width = width_;
    spec.stencil = collectives::Stencil::kNinePoint;
    spec.algorithm = collectives::HaloAlgorithm::kTwoSweep;
    return spec;
  }

  [[nodiscard]] std::ptrdiff_t row() const { return halo_.nx() + 2 * width_; }
  [[nodiscard]] std::ptrdiff_t plane() const { return row() * (halo_.ny() + 2 * width_); }
  /// Index of cell (i, j, k); i, j may lie in the halo.
  [[nodiscard]] std::size_t at(int i, int j, int k) const {
    return static_cast<std::size_t>(k * plane() + (j + width_) * row() + (i + width_));
  }

  template <class F>
  void for_cells(F&& f) const {
    comm_.parallel_for(grid_.levels * halo_.ny(), [&](int r) {
      const int k = r / halo_.ny();
      const int j = r % halo_.ny();
      for (int i = 0; i < halo_.nx(); ++i) f(i, j, k);
    });
  }

  /// x sweep on every row of the extended y range, then y sweep on the
  /// interior columns (see advection.hpp for why that needs one exchange).
  void advect() {
    const int rows_x = halo_.ny() + 2 * width_;
    const int levels = grid_.levels;
    comm_.parallel_for(kTracers * levels * rows_x, [&](int r) {
      const int t = r / (levels * rows_x);
      const int k = (r / rows_x) % levels;
      const int j = r % rows_x - width_;
      thread_local std::vector<double> flux;
      Line line{tracers_[static_cast<std::size_t>(t)].data(),
                static_cast<std::ptrdiff_t>(at(0, j, k)), 1};
      advect_line(line, halo_.nx(), level_courant(options_.courant_x, k, levels), flux);
    });
    comm_.parallel_for(kTracers * levels * halo_.nx(), [&](int r) {
      const int t = r / (levels * halo_.nx());
      const int k = (r / halo_.nx()) % levels;
      const int i = r % halo_.nx();
      thread_local std::vector<double> flux;
      Line line{tracers_[static_cast<std::size_t>(t)].data(),
                static_cast<std::ptrdiff_t>(at(i, 0, k)), row()};
      advect_line(line, halo_.ny(), level_courant(options_.courant_y, k, levels), flux);
    });
  }

  /// The interior, i fastest then j then k (xios_lite's and the transpose's order).
  void pack_interior(const std::vector<double>& field, std::vector<double>& out) const {
    const int nx = halo_.nx();
    const int ny = halo_.ny();
    comm_.parallel_for(grid_.levels * ny, [&](int r) {
      const int k = r / ny;
      const int j = r % ny;
      for (int i = 0; i < nx; ++i) {
        out[(static_cast<std::size_t>(k) * ny + j) * nx + i] = field[at(i, j, k)];
      }
    });
  }

  /// Sum over the levels (the column burden of a tracer).
  void column_integral(const std::vector<double>& field, std::vector<double>& out) const {
    const int nx = halo_.nx();
    comm_.parallel_for(halo_.ny(), [&](int j) {
      for (int i = 0; i < nx; ++i) {
        double s = 0.0;
        for (int k = 0; k < grid_.levels; ++k) s += field[at(i, j, k)];
        out[static_cast<std::size_t>(j) * nx + i] = s;
      }
    });
  }

  static collectives::solvers::GcrOptions solver_options(const ModelOptions& options) {
    collectives::solvers::GcrOptions gcr;
    gcr.restart = options.solver_restart;
    gcr.tolerance = options.solver_tolerance;
    return gcr;
  }

  C comm_;
  Grid grid_;
  ModelOptions options_;
  std::array<int, 2> layout_;
  int width_;
  collectives::HaloPlan<C> halo_;
  collectives::TransposePlan<C, double> transpose_;
  std::array<std::vector<double>, kTracers> tracers_;
  // The transposition's bound arrays: tracer 1's interior and its spectral form.
  std::vector<double> grid_field_, spectral_;
  // Made once: each step's solve reuses its plan and vectors.
  collectives::solvers::GcrSolver<C> solver_;
};

}  // namespace model
