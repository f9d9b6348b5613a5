// MPI_Ialltoall, MPI_Ialltoallv and MPI_Ialltoallw on an endpoint
// communicator: each call describes its blocks as BlockArgs and hands them to
// the block exchange of block_exchange.hpp (one message per process
// pair, in every layout).
#include <span>

#include "collective/block_exchange.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

Request ialltoall(const Communicator& comm, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::ialltoall");
  const auto [send, recv] =
      detail::alltoall_sides(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return detail::start_block_exchange(comm, call, send, recv, sendbuf == MPI_IN_PLACE);
}

Request ialltoallv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
                   std::span<const int> sdispls, MPI_Datatype sendtype, void* recvbuf,
                   std::span<const int> recvcounts, std::span<const int> rdispls,
                   MPI_Datatype recvtype) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::ialltoallv");
  const auto [send, recv] = detail::alltoallv_sides(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                    recvcounts, rdispls, recvtype);
  return detail::start_block_exchange(comm, call, send, recv, sendbuf == MPI_IN_PLACE);
}

Request ialltoallw(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
                   std::span<const int> sdispls, std::span<const MPI_Datatype> sendtypes,
                   void* recvbuf, std::span<const int> recvcounts, std::span<const int> rdispls,
                   std::span<const MPI_Datatype> recvtypes) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::ialltoallw");
  const auto [send, recv] = detail::alltoallw_sides(sendbuf, sendcounts, sdispls, sendtypes,
                                                    recvbuf, recvcounts, rdispls, recvtypes);
  return detail::start_block_exchange(comm, call, send, recv, sendbuf == MPI_IN_PLACE);
}

}  // namespace ep
