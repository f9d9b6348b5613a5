// What a neighbourhood collective moves, shared by the blocking
// (neighbor_collectives.cpp) and the nonblocking (ineighbor_collectives.cpp)
// forms: the argument checks and the typed block per neighbour slot that
// every variant reduces to, the check of a block between two threads of one
// process, and the tag of the aggregated messages.
//
// Thread safety: a NeighborBlocks is filled by its endpoint before it is
// shared and only read afterwards.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collective/internal_tags.hpp"
#include "datatype.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/request.hpp"
#include "team/collective_call.hpp"
#include "topology/topology.hpp"

namespace ep::detail {

/// One endpoint's share of a neighbour collective.
struct NeighborBlocks {
  std::vector<TypedBuffer> send;  // by destination slot
  std::vector<TypedBuffer> recv;  // by source slot
  std::string error;              // argument problem found while preparing
  ErrorKind error_kind = ErrorKind::kArgument;
};

/// What follows "call: ep rank r: " in the message of an Error thrown by `call`.
std::string detail_of(const Error& e, const CollectiveCall& call);

/// Argument checks and block lists of one call. Problems are recorded in the
/// blocks (not thrown), so that the blocking form can make every local
/// endpoint throw together.
class NeighborPreparation {
 public:
  NeighborPreparation(const CollectiveCall& call, const EndpointNeighbors& me);

  [[nodiscard]] std::size_t indegree() const { return indegree_; }
  [[nodiscard]] std::size_t outdegree() const { return outdegree_; }

  /// Runs `fill` and records any ep::Error it throws.
  template <typename Fill>
  NeighborBlocks run(Fill&& fill) {
    try {
      fill(*this);
    } catch (const Error& e) {
      blocks_.error = detail_of(e, call_);
      blocks_.error_kind = e.kind();
    }
    return std::move(blocks_);
  }

  void require_buffer(const void* buf, const char* what) const;
  void require_count(int count, const char* what) const;
  template <typename T>
  void require_entries(std::span<const T> values, std::size_t needed, const char* what) const {
    if (values.size() < needed) {
      fail(ErrorKind::kArgument, std::string(what) + " has " + std::to_string(values.size()) +
                                     " entries for " + std::to_string(needed) + " neighbours");
    }
  }
  [[noreturn]] void fail(ErrorKind kind, const std::string& detail) const;

  /// Layout of `type`, computed once per distinct handle.
  const TypeLayout& layout(MPI_Datatype type);
  [[nodiscard]] MPI_Aint offset(MPI_Datatype type, MPI_Aint elements) const;

  void set_send(std::size_t slot, const void* base, MPI_Aint byte_offset, int count,
                MPI_Datatype type);
  void set_recv(std::size_t slot, void* base, MPI_Aint byte_offset, int count, MPI_Datatype type);

 private:
  const CollectiveCall& call_;
  std::size_t indegree_;
  std::size_t outdegree_;
  NeighborBlocks blocks_;
  std::vector<std::pair<MPI_Datatype, TypeLayout>> layouts_;
};

// The five variants, as fills for NeighborPreparation::run (MPI's arguments).
void fill_neighbor_allgather(NeighborPreparation& p, const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype);
void fill_neighbor_allgatherv(NeighborPreparation& p, const void* sendbuf, int sendcount,
                              MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                              std::span<const int> displs, MPI_Datatype recvtype);
void fill_neighbor_alltoall(NeighborPreparation& p, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype);
void fill_neighbor_alltoallv(NeighborPreparation& p, const void* sendbuf,
                             std::span<const int> sendcounts, std::span<const int> sdispls,
                             MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                             std::span<const int> rdispls, MPI_Datatype recvtype);
void fill_neighbor_alltoallw(NeighborPreparation& p, const void* sendbuf,
                             std::span<const int> sendcounts, std::span<const MPI_Aint> sdispls,
                             std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                             std::span<const int> recvcounts, std::span<const MPI_Aint> rdispls,
                             std::span<const MPI_Datatype> recvtypes);

/// Starts the part of the nonblocking exchange of `blocks` (prepared and
/// checked already, by an *_init call) that involves other processes, as
/// ineighbor_* would: one instance of the communicator's nonblocking
/// collectives, named `name` in errors. The blocks between endpoints of this
/// process are left to the caller. Collective like ineighbor_*. Defined in
/// ineighbor_collectives.cpp.
Request start_ineighbor_remote(const Communicator& comm, const char* name, NeighborBlocks blocks);

/// The problem with the block of a local edge into thread `recv_thread` whose
/// sender gives `sent` bytes and receiver has room for `room` (MPI requires
/// equal type signatures; sizes are what can be checked): empty when they
/// agree, otherwise the message and in `kind` kTruncate or kCount.
std::string local_edge_mismatch(const CollectiveCall& call, const LocalEdge& edge, int recv_thread,
                                std::size_t sent, std::size_t room, ErrorKind& kind);

}  // namespace ep::detail
