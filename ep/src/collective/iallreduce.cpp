// MPI_Iallreduce on an endpoint communicator (the mechanism: ireduction.hpp).
#include "collective/ireduction.hpp"
#include "ep/collectives.hpp"

namespace ep {

Request iallreduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  return detail::vector_reduction(comm, "ep::iallreduce", detail::ReductionKind::kAllreduce,
                                  sendbuf, recvbuf, count, datatype, op, options);
}

}  // namespace ep
