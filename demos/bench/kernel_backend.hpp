// The three backends the kernel benchmarks run the collectives/ kernels on
// (ep, mpi, funneled; see kernel_bench.hpp and kernel_modes.hpp for how each
// is laid out on the processes), and their names in the modes
// "<backend>.<algorithm>".
//
// Thread safety: constants and a pure function.
#pragma once

namespace bench::kernels {

enum class Backend { kEp, kMpi, kFunneled };
inline constexpr Backend kBackends[] = {Backend::kEp, Backend::kMpi, Backend::kFunneled};

inline const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::kEp:
      return "ep";
    case Backend::kMpi:
      return "mpi";
    case Backend::kFunneled:
      return "funneled";
  }
  return "?";
}

}  // namespace bench::kernels
