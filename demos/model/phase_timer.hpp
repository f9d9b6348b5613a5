// Wall time per phase of a model step, and the table printed at the end.
//
// Thread safety: a PhaseTimer belongs to one rank (one endpoint thread, or a
// process's master thread). summarise_phases is collective over `comm`.
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdio>

namespace model {

enum class Phase { kCompute = 0, kHalo, kTranspose, kSolver, kOutput, kCount };
inline constexpr std::array<const char*, 5> kPhaseNames{"compute", "halo", "transpose", "solver",
                                                        "output-blocked"};

/// Time between marks goes to the phase named at the mark.
class PhaseTimer {
 public:
  PhaseTimer() : last_(std::chrono::steady_clock::now()) {}
  /// Adds the time since the previous mark to `phase`.
  void mark(Phase phase) {
    const auto now = std::chrono::steady_clock::now();
    seconds_[static_cast<std::size_t>(phase)] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  /// Restarts the stopwatch without charging anything.
  void restart() { last_ = std::chrono::steady_clock::now(); }
  [[nodiscard]] const std::array<double, 5>& seconds() const noexcept { return seconds_; }

 private:
  std::chrono::steady_clock::time_point last_;
  std::array<double, 5> seconds_{};
};

/// Per phase: the mean, minimum and maximum over the ranks. Collective over comm.
struct PhaseSummary {
  std::array<double, 5> mean{};
  std::array<double, 5> min{};
  std::array<double, 5> max{};
  double wall = 0.0;  ///< longest time loop over the ranks
  int ranks = 0;
};

template <class C>
PhaseSummary summarise_phases(const C& comm, const PhaseTimer& timer, double wall) {
  PhaseSummary s;
  std::array<double, 6> sum{}, min{}, max{};
  for (std::size_t p = 0; p < 5; ++p) sum[p] = min[p] = max[p] = timer.seconds()[p];
  sum[5] = min[5] = max[5] = wall;
  comm.library_allreduce(MPI_IN_PLACE, sum.data(), 6, MPI_DOUBLE, MPI_SUM);
  comm.library_allreduce(MPI_IN_PLACE, min.data(), 6, MPI_DOUBLE, MPI_MIN);
  comm.library_allreduce(MPI_IN_PLACE, max.data(), 6, MPI_DOUBLE, MPI_MAX);
  s.ranks = comm.size();
  for (std::size_t p = 0; p < 5; ++p) {
    s.mean[p] = sum[p] / s.ranks;
    s.min[p] = min[p];
    s.max[p] = max[p];
  }
  s.wall = max[5];
  return s;
}

inline void print_phase_table(std::FILE* out, const PhaseSummary& s, int steps) {
  double total = 0.0;
  for (const double m : s.mean) total += m;
  std::fprintf(out, "\n# time per phase over %d model ranks, %d steps (wall %.3f s)\n", s.ranks,
               steps, s.wall);
  std::fprintf(out, "%-16s %12s %12s %14s %8s\n", "phase", "mean [s]", "max [s]", "mean/step [ms]",
               "share");
  for (std::size_t p = 0; p < 5; ++p) {
    std::fprintf(out, "%-16s %12.4f %12.4f %14.3f %7.1f%%\n", kPhaseNames[p], s.mean[p], s.max[p],
                 1e3 * s.mean[p] / steps, total > 0 ? 100.0 * s.mean[p] / total : 0.0);
  }
  std::fprintf(out, "%-16s %12.4f\n", "total", total);
}

}  // namespace model
