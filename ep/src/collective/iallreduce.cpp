// MPI_Iallreduce on an endpoint communicator (the mechanism: ireduction.hpp).
#include "collective/ireduction.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

Request iallreduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::iallreduce");
  return detail::start_vector_reduction(comm, call, detail::ReductionKind::kAllreduce, sendbuf,
                                        recvbuf, count, datatype, op, -1, options);
}

}  // namespace ep
