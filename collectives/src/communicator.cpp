// Backends of the kernels' communicator interface (see communicator.hpp).
#include "collectives/communicator.hpp"

#include <cstdio>
#include <exception>
#include <vector>

#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/topology.hpp"

namespace collectives {

namespace {

// A span of counts must hold one entry per rank (or per neighbour): shorter
// ones would make MPI read past the caller's array.
void check_entries(std::span<const int> values, int needed, const char* call, const char* what,
                   int rank) {
  if (static_cast<int>(values.size()) < needed) {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank,
                    std::string(what) + " has " + std::to_string(values.size()) +
                        " entries, needs " + std::to_string(needed));
  }
}

int finalized() {
  int flag = 0;
  MPI_Finalized(&flag);
  return flag;
}

}  // namespace

// ---- MpiComm ----

MpiComm::MpiComm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  comm_ = std::make_shared<MPI_Comm>(comm);
  ep::check_mpi(MPI_Comm_rank(comm, &rank_), "collectives::MpiComm (MPI_Comm_rank)", -1);
  ep::check_mpi(MPI_Comm_size(comm, &size_), "collectives::MpiComm (MPI_Comm_size)", -1);
}

MpiComm MpiComm::adopt(MPI_Comm comm) {
  MpiComm wrapped(comm);
  if (comm == MPI_COMM_NULL) return wrapped;
  // The last copy frees the communicator. MPI_Comm_free after MPI_Finalize
  // is erroneous, so a handle outliving MPI only leaks (nothing to free then).
  wrapped.comm_ = std::shared_ptr<MPI_Comm>(new MPI_Comm(comm), [](MPI_Comm* owned) {
    if (finalized() == 0) {
      const int rc = MPI_Comm_free(owned);
      if (rc != MPI_SUCCESS) std::fprintf(stderr, "collectives::MpiComm: MPI_Comm_free failed\n");
    }
    delete owned;
  });
  return wrapped;
}

MpiComm::Request MpiComm::isend(const void* buf, int count, MPI_Datatype type, int dest,
                                int tag) const {
  MPI_Request request = MPI_REQUEST_NULL;
  ep::check_mpi(MPI_Isend(buf, count, type, dest, tag, get(), &request), "collectives::isend",
                rank_);
  return request;
}

MpiComm::Request MpiComm::irecv(void* buf, int count, MPI_Datatype type, int source,
                                int tag) const {
  MPI_Request request = MPI_REQUEST_NULL;
  ep::check_mpi(MPI_Irecv(buf, count, type, source, tag, get(), &request), "collectives::irecv",
                rank_);
  return request;
}

void MpiComm::wait_all(std::span<Request> requests) const {
  ep::check_mpi(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
      "collectives::wait_all", rank_);
}

MpiComm MpiComm::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  ep::check_mpi(MPI_Comm_split(get(), color, key, &out), "collectives::split", rank_);
  return adopt(out);
}

MpiComm MpiComm::dist_graph(std::span<const int> sources, std::span<const int> destinations) const {
  MPI_Comm out = MPI_COMM_NULL;
  ep::check_mpi(
      MPI_Dist_graph_create_adjacent(get(), static_cast<int>(sources.size()), sources.data(),
                                     MPI_UNWEIGHTED, static_cast<int>(destinations.size()),
                                     destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out),
      "collectives::dist_graph", rank_);
  return adopt(out);
}

void MpiComm::library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                std::span<const int> sdispls, void* recvbuf,
                                std::span<const int> recvcounts, std::span<const int> rdispls,
                                MPI_Datatype type) const {
  const char* call = "collectives::library_alltoallv";
  check_entries(sendcounts, size_, call, "sendcounts", rank_);
  check_entries(sdispls, size_, call, "sdispls", rank_);
  check_entries(recvcounts, size_, call, "recvcounts", rank_);
  check_entries(rdispls, size_, call, "rdispls", rank_);
  ep::check_mpi(MPI_Alltoallv(sendbuf, sendcounts.data(), sdispls.data(), type, recvbuf,
                              recvcounts.data(), rdispls.data(), type, get()),
                call, rank_);
}

void MpiComm::library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                                MPI_Op op) const {
  ep::check_mpi(MPI_Allreduce(sendbuf, recvbuf, count, type, op, get()),
                "collectives::library_allreduce", rank_);
}

void MpiComm::neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                 std::span<const int> sdispls, void* recvbuf,
                                 std::span<const int> recvcounts, std::span<const int> rdispls,
                                 MPI_Datatype type) const {
  ep::check_mpi(MPI_Neighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), type, recvbuf,
                                       recvcounts.data(), rdispls.data(), type, get()),
                "collectives::neighbor_alltoallv", rank_);
}

// ---- FunneledComm ----

FunneledComm::FunneledComm(MPI_Comm comm, int threads) : MpiComm(comm), threads_(threads) {
  if (threads < 1) {
    throw ep::Error(ep::ErrorKind::kArgument, "collectives::FunneledComm", rank(),
                    "thread count " + std::to_string(threads) + " is below 1");
  }
}

FunneledComm FunneledComm::split(int color, int key) const {
  return {MpiComm::split(color, key), threads_};
}

FunneledComm FunneledComm::dist_graph(std::span<const int> sources,
                                      std::span<const int> destinations) const {
  return {MpiComm::dist_graph(sources, destinations), threads_};
}

// ---- EpComm ----

EpComm::EpComm(const ep::Communicator& comm) {
  if (comm.is_null()) return;
  comm_ = std::make_shared<ep::Communicator>(comm);
  rank_ = comm.rank();
  size_ = comm.size();
}

EpComm EpComm::adopt(ep::Communicator comm) {
  EpComm wrapped(comm);
  if (comm.is_null()) return wrapped;
  // The last copy frees this endpoint's handle (collective over the
  // endpoints, which every rank reaches by destroying its copies).
  wrapped.comm_ = std::shared_ptr<ep::Communicator>(
      new ep::Communicator(std::move(comm)), [](ep::Communicator* owned) {
        try {
          owned->free();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "collectives::EpComm: free failed: %s\n", e.what());
        }
        delete owned;
      });
  return wrapped;
}

void EpComm::wait_all(std::span<Request> requests) const { ep::wait_all(requests); }

EpComm EpComm::split(int color, int key) const { return adopt(ep::split(*comm_, color, key)); }

EpComm EpComm::dist_graph(std::span<const int> sources, std::span<const int> destinations) const {
  return adopt(ep::dist_graph_create_adjacent(*comm_, sources, destinations));
}

void EpComm::library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                               std::span<const int> sdispls, void* recvbuf,
                               std::span<const int> recvcounts, std::span<const int> rdispls,
                               MPI_Datatype type) const {
  ep::alltoallv(*comm_, sendbuf, sendcounts, sdispls, type, recvbuf, recvcounts, rdispls, type);
}

void EpComm::library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                               MPI_Op op) const {
  ep::allreduce(*comm_, sendbuf, recvbuf, count, type, op);
}

void EpComm::neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                std::span<const int> sdispls, void* recvbuf,
                                std::span<const int> recvcounts, std::span<const int> rdispls,
                                MPI_Datatype type) const {
  ep::neighbor_alltoallv(*comm_, sendbuf, sendcounts, sdispls, type, recvbuf, recvcounts, rdispls,
                         type);
}

}  // namespace collectives
