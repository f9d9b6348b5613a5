// MPI_Ireduce_scatter and MPI_Ireduce_scatter_block on an endpoint
// communicator (the mechanism: ireduction.hpp).
#include <cstddef>
#include <span>
#include <vector>

#include "checks.hpp"
#include "collective/ireduction.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

Request ireduce_scatter(const Communicator& comm, const void* sendbuf, void* recvbuf,
                        std::span<const int> recvcounts, MPI_Datatype datatype, MPI_Op op,
                        const ReduceOptions& options) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::ireduce_scatter");
  detail::check_counts(recvcounts, call.size(), "recvcounts", call.name, call.rank);
  const auto size = static_cast<std::size_t>(call.size());
  return detail::start_reduce_scatter(
      comm, call, sendbuf, recvbuf,
      std::vector<int>(recvcounts.begin(), recvcounts.begin() + static_cast<std::ptrdiff_t>(size)),
      datatype, op, options);
}

Request ireduce_scatter_block(const Communicator& comm, const void* sendbuf, void* recvbuf,
                              int recvcount, MPI_Datatype datatype, MPI_Op op,
                              const ReduceOptions& options) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::ireduce_scatter_block");
  detail::check_count(recvcount, call.name, call.rank);
  return detail::start_reduce_scatter(
      comm, call, sendbuf, recvbuf,
      std::vector<int>(static_cast<std::size_t>(call.size()), recvcount), datatype, op, options);
}

}  // namespace ep
