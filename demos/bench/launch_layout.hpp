// How one benchmark launch places its modes on the processes, and whether
// what it measures can be judged.
//
// A mode is threaded (ep, funneled: processes of T OpenMP threads) or flat
// (mpi, ref: one thread per process). The modes a launch selects decide its
// kind:
//
//   threaded  only threaded modes: each of the N processes runs T threads
//             (P = N); the decomposition has P*T ranks (ep) or P (funneled)
//   flat      only flat modes: the N processes are the N ranks
//   mixed     both, in one job: the first P = N/T processes run the threaded
//             modes while the other N - P sleep in a quiet barrier, and the
//             flat modes use all N processes (N must be a multiple of T)
//
// In every kind the ep and mpi modes decompose the same problem over the same
// number of ranks (grid_ranks): P*T in a threaded launch, N otherwise. So a
// threaded launch of P processes and a flat launch of P*T processes measure
// the same points, and their records can be set side by side.
//
// Fair terms (docs/benchmarks.md): each side runs as its users run it on
// dedicated cores -- OpenMP threads that spin while they wait
// (OMP_WAIT_POLICY=active), MPI that busy-polls -- and nothing else may take a
// core. A mixed launch cannot give both: the idle side's spinning threads or
// processes would take the cores of the measured side, and with waits that
// sleep instead the threaded modes pay for wake-ups no production run pays.
// So only threaded and flat launches whose busy ranks x threads fit the online
// CPUs are judged; run-bench.sh alternates the two and takes medians. Mixed
// launches stay for quick looks and for shapes larger than the machine,
// printed as "not judged".
//
// Thread safety: a value type; of() is a pure function.
#pragma once

#include <string>

namespace bench {

struct LaunchLayout {
  enum class Kind { kThreaded, kFlat, kMixed };

  Kind kind = Kind::kFlat;
  int world_size = 1;          ///< N: processes of the launch
  int threads = 1;             ///< T: threads per process of the threaded modes
  int threaded_processes = 0;  ///< P: processes that run the threaded modes (0: flat)
  int grid_ranks = 1;          ///< ranks of the ep and mpi decomposition

  /// The layout of a launch of `world_size` processes with `threads` threads
  /// per threaded process, given whether threaded and flat modes are selected
  /// (neither: both). Throws std::invalid_argument naming the counts when a
  /// mixed launch's N is not a multiple of T or a count is below 1.
  static LaunchLayout of(int world_size, int threads, bool threaded_modes, bool flat_modes);

  /// Busy cores while the busiest mode runs: P*T (threaded), N (flat), the
  /// larger of the two (mixed).
  [[nodiscard]] int busy_cores() const;
  /// Whether the records of this launch may be judged on `cpus` online CPUs:
  /// not mixed, and busy_cores() <= cpus.
  [[nodiscard]] bool judged(int cpus) const;
  /// One line for a benchmark's header: kind, shape, and whether it is
  /// judged ("fits the N cores" / "oversubscribed, not judged" / ...).
  [[nodiscard]] std::string describe(int cpus) const;
};

const char* launch_kind_name(LaunchLayout::Kind kind);

}  // namespace bench
