// The backends the kernel benchmarks run the collectives/ kernels on, and
// their names in the modes "<backend>.<algorithm>":
//
//   ep        every OpenMP thread an endpoint rank (collectives::EpComm)
//   mpi       one MPI process per rank (collectives::MpiComm)
//   funneled  one MPI rank per process, its threads share the loops, the
//             master alone calls MPI (collectives::FunneledComm)
//   ref       the plain-MPI code an MPI expert writes by hand for the kernel
//             (demos/bench/reference/), on one MPI process per rank: what the
//             library's layers are measured against
//
// ep and funneled are threaded modes, mpi and ref flat ones (launch_layout.hpp
// says how each kind is placed on the processes).
//
// Thread safety: constants and pure functions.
#pragma once

#include <iterator>
#include <string>
#include <string_view>

namespace bench::kernels {

enum class Backend { kEp, kMpi, kFunneled, kRef };
inline constexpr Backend kBackends[] = {Backend::kEp, Backend::kMpi, Backend::kFunneled,
                                        Backend::kRef};
inline constexpr std::string_view kBackendNames[] = {"ep", "mpi", "funneled", "ref"};
static_assert(std::size(kBackendNames) == std::size(kBackends), "a name for every backend");

/// The backend's name (kBackendNames, in the order of the enumerators).
inline const char* backend_name(Backend backend) {
  return kBackendNames[static_cast<int>(backend)].data();
}

/// The mode "<backend>.<algorithm>" that names a measurement in the reports.
inline std::string mode_name(Backend backend, std::string_view algorithm) {
  return std::string(backend_name(backend)) + "." + std::string(algorithm);
}

/// ep and funneled run processes of T threads; mpi and ref one thread each.
inline constexpr bool is_threaded(Backend backend) {
  return backend == Backend::kEp || backend == Backend::kFunneled;
}

}  // namespace bench::kernels
