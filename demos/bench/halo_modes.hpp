// What halo_bench and solver_bench share: the halo exchange algorithms they
// measure, the mode name of a (backend, algorithm) point and the targets of
// the endpoint mode over mpi and funneled.
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

/// For each halo algorithm, the targets of the endpoint mode over the other
/// two: "ep <= `ep_vs_mpi_limit` x mpi" (unless `ep_vs_mpi` is null) and
/// "ep <= funneled", for the records of `test` at `bytes` (print_point_target:
/// nothing when one is missing).
inline void print_ep_targets(const Report& report, const std::string& test, std::size_t bytes,
                             const char* ep_vs_mpi, double ep_vs_mpi_limit) {
  for (const collectives::HaloAlgorithm a : kHaloAlgorithms) {
    if (ep_vs_mpi != nullptr) {
      print_point_target(stdout, report, ep_vs_mpi, test, bytes, halo_mode(Backend::kEp, a),
                         halo_mode(Backend::kMpi, a), ep_vs_mpi_limit);
    }
    print_point_target(stdout, report, "ep <= funneled", test, bytes, halo_mode(Backend::kEp, a),
                       halo_mode(Backend::kFunneled, a), 1.0);
  }
}

}  // namespace bench::kernels
