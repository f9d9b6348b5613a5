// MPI_Iscan and MPI_Iexscan on an endpoint communicator (the mechanism:
// ireduction.hpp).
#include "collective/ireduction.hpp"
#include "ep/collectives.hpp"

namespace ep {

Request iscan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  return detail::vector_reduction(comm, "ep::iscan", detail::ReductionKind::kScan, sendbuf, recvbuf,
                                  count, datatype, op, options);
}

Request iexscan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  return detail::vector_reduction(comm, "ep::iexscan", detail::ReductionKind::kExscan, sendbuf,
                                  recvbuf, count, datatype, op, options);
}

}  // namespace ep
