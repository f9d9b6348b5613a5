// MPI_Iscan and MPI_Iexscan on an endpoint communicator (the mechanism:
// ireduction.hpp).
#include "collective/ireduction.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

Request iscan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::iscan");
  return detail::start_vector_reduction(comm, call, detail::ReductionKind::kScan, sendbuf, recvbuf,
                                        count, datatype, op, -1, options);
}

Request iexscan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::iexscan");
  return detail::start_vector_reduction(comm, call, detail::ReductionKind::kExscan, sendbuf,
                                        recvbuf, count, datatype, op, -1, options);
}

}  // namespace ep
