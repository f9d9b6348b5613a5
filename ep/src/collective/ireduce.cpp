// MPI_Ireduce on an endpoint communicator (the mechanism: ireduction.hpp).
#include "checks.hpp"
#include "collective/ireduction.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

Request ireduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, const ReduceOptions& options) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::ireduce");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_in_place_only_at_root(sendbuf, root, call.name, call.rank);
  return detail::start_vector_reduction(comm, call, detail::ReductionKind::kReduce, sendbuf,
                                        recvbuf, count, datatype, op, root, options);
}

}  // namespace ep
