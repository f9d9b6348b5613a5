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

class RankMap {
 public:
  RankMap() = default;
  /// `endpoints_per_process[p]` is the endpoint count of parent rank p.
  explicit RankMap(std::span<const int> endpoints_per_process);

  [[nodiscard]] int size() const noexcept { return static_cast<int>(process_of_.size()); }
  [[nodiscard]] int num_processes() const noexcept {
    return static_cast<int>(offsets_.size()) - 1;
  }
  [[nodiscard]] int endpoints_of(int process) const {
    return offsets_[process + 1] - offsets_[process];
  }
  /// EP rank of the first endpoint of `process`.
  [[nodiscard]] int first_rank_of(int process) const { return offsets_[process]; }
  [[nodiscard]] Location locate(int ep_rank) const {
    const int p = process_of_[ep_rank];
    return {p, ep_rank - offsets_[p]};
  }
  [[nodiscard]] int ep_rank(int process, int thread) const { return offsets_[process] + thread; }
  [[nodiscard]] int ep_rank(Location where) const { return ep_rank(where.process, where.thread); }
  /// Largest endpoint count of any process.
  [[nodiscard]] int max_endpoints_per_process() const noexcept { return max_per_process_; }

 private:
  std::vector<int> offsets_{0};  // prefix sums: offsets_[p] = first EP rank of process p
  std::vector<int> process_of_;  // EP rank -> process (O(1) reverse lookup)
  int max_per_process_ = 0;
};

}  // namespace ep
