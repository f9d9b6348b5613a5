// MPI_Ialltoall, MPI_Ialltoallv and MPI_Ialltoallw on an endpoint
// communicator: each call describes its blocks as BlockArgs and hands them to
// the block exchange of nonblocking_exchange.hpp (one message per process
// pair). ialltoallv with one endpoint per process in process order gives the
// user's arguments to MPI_Ialltoallv directly.
#include <cstddef>
#include <span>
#include <vector>

#include "collective/nonblocking_exchange.hpp"
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
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto [send, recv] = detail::alltoallv_sides(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                    recvcounts, rdispls, recvtype);
  const RankMap& map = call.comm.rank_map();
  if (recvbuf == MPI_IN_PLACE || map.max_endpoints_per_process() != 1 || !map.process_major() ||
      call.comm.settings().check_collectives) {
    return detail::start_block_exchange(comm, call, send, recv, in_place);
  }
  detail::check_block_args(call, recv);
  if (!in_place) detail::check_block_args(call, send);
  const auto n = static_cast<std::ptrdiff_t>(call.size());
  const auto first = [n](std::span<const int> s) {
    return std::vector<int>(s.begin(), s.begin() + n);
  };
  return detail::start_direct_alltoallv(comm, call,
                                        {sendbuf, in_place ? std::vector<int>() : first(sendcounts),
                                         in_place ? std::vector<int>() : first(sdispls), sendtype,
                                         recvbuf, first(recvcounts), first(rdispls), recvtype});
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
