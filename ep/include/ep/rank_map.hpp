// Rank map of an endpoint communicator: EP rank <-> (process, local thread),
// both directions O(1).
//
// Thread safety: immutable after construction; read concurrently by all threads.
#pragma once

#include <span>
#include <vector>

namespace ep {

/// Where an endpoint lives: the rank of its process in the parent
/// communicator and its thread index within that process.
struct Location {
  int process = -1;
  int thread = -1;
  friend bool operator==(const Location&, const Location&) = default;
};

/// Both directions are table look-ups. A communicator made by create_endpoints
/// numbers its endpoints process-major; one made by split may order them in
/// any way (by key), so the map stores the full permutation.
class RankMap {
 public:
  RankMap() = default;
  /// Process-major numbering: `endpoints_per_process[p]` endpoints of process p.
  explicit RankMap(std::span<const int> endpoints_per_process);
  /// Arbitrary numbering: `locations[r]` is where EP rank r lives. The threads
  /// of each of the `num_processes` processes must be 0..k-1 without gaps;
  /// otherwise throws ep::Error(kArgument).
  RankMap(std::span<const Location> locations, int num_processes);

  [[nodiscard]] int size() const noexcept { return static_cast<int>(locations_.size()); }
  [[nodiscard]] int num_processes() const noexcept { return static_cast<int>(offsets_.size()) - 1; }
  [[nodiscard]] int endpoints_of(int process) const {
    return offsets_[process + 1] - offsets_[process];
  }
  /// EP rank of thread 0 of `process` (its first endpoint when process_major()).
  [[nodiscard]] int first_rank_of(int process) const { return ep_rank(process, 0); }
  [[nodiscard]] Location locate(int ep_rank) const { return locations_[ep_rank]; }
  [[nodiscard]] int ep_rank(int process, int thread) const {
    return rank_of_[offsets_[process] + thread];
  }
  /// True when EP ranks run process-major (all of process 0, then 1, ...)
  /// with threads in order, as create_endpoints numbers them.
  [[nodiscard]] bool process_major() const noexcept { return process_major_; }
  [[nodiscard]] int ep_rank(Location where) const { return ep_rank(where.process, where.thread); }
  /// Largest endpoint count of any process.
  [[nodiscard]] int max_endpoints_per_process() const noexcept { return max_per_process_; }

 private:
  std::vector<int> offsets_{0};      // offsets_[p]: start of process p's threads in rank_of_
  std::vector<int> rank_of_;         // (process, thread) -> EP rank, process-major
  std::vector<Location> locations_;  // EP rank -> (process, thread)
  int max_per_process_ = 0;
  bool process_major_ = true;
};

}  // namespace ep
