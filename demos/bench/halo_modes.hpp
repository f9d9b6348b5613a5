// What halo_bench and solver_bench share: the halo exchange algorithms they
// measure, the mode name of an (backend, algorithm) point and the targets
// that compare one algorithm across two backends.
//
// Thread safety: constants and functions of their arguments.
#pragma once

#include <array>
#include <cstddef>
#include <cstdio>
#include <string>

#include "collectives/halo.hpp"
#include "kernel_bench.hpp"

namespace bench::kernels {

inline constexpr std::array kHaloAlgorithms{
    collectives::HaloAlgorithm::kTwoSweep, collectives::HaloAlgorithm::kNeighbor,
    collectives::HaloAlgorithm::kDirect, collectives::HaloAlgorithm::kSplit};

/// "<backend>.<halo algorithm>", e.g. "ep.neighbor".
inline std::string halo_mode(Backend backend, collectives::HaloAlgorithm algorithm) {
  return mode_name(backend, collectives::halo_algorithm_name(algorithm));
}

/// The target "`a` with `algorithm` <= `limit` x `b` with the same algorithm"
/// for the records of `test` at `bytes` (print_point_target: nothing when one
/// is missing).
inline bool print_halo_target(const Report& report, const std::string& what,
                              const std::string& test, std::size_t bytes,
                              collectives::HaloAlgorithm algorithm, Backend a, Backend b,
                              double limit) {
  return print_point_target(stdout, report, what, test, bytes, halo_mode(a, algorithm),
                            halo_mode(b, algorithm), limit);
}

}  // namespace bench::kernels
