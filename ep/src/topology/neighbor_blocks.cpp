#include "topology/neighbor_blocks.hpp"

#include <string>
#include <type_traits>

namespace ep::detail {

std::string detail_of(const Error& e, const CollectiveCall& call) {
  const std::string text = e.what();
  const std::string prefix =
      std::string(call.name) + ": ep rank " + std::to_string(call.rank) + ": ";
  return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
}

// ---- NeighborPreparation ----------------------------------------------------

NeighborPreparation::NeighborPreparation(const CollectiveCall& call, const EndpointNeighbors& me)
    : call_(call), indegree_(me.sources.size()), outdegree_(me.destinations.size()) {
  blocks_.send.resize(outdegree_);
  blocks_.recv.resize(indegree_);
}

void NeighborPreparation::require_buffer(const void* buf, const char* what) const {
  if (buf == MPI_IN_PLACE) {
    fail(ErrorKind::kArgument,
         std::string(what) + " is MPI_IN_PLACE, which neighbour collectives do not allow");
  }
}

void NeighborPreparation::require_count(int count, const char* what) const {
  if (count < 0) {
    fail(ErrorKind::kCount, std::string(what) + " " + std::to_string(count) + " is negative");
  }
}

void NeighborPreparation::fail(ErrorKind kind, const std::string& detail) const {
  throw Error(kind, call_.name, call_.rank, detail);
}

const TypeLayout& NeighborPreparation::layout(MPI_Datatype type) {
  for (const auto& [known, layout] : layouts_) {
    if (known == type) return layout;
  }
  layouts_.emplace_back(type, layout_of(type, call_.name, call_.rank));
  return layouts_.back().second;
}

MPI_Aint NeighborPreparation::offset(MPI_Datatype type, MPI_Aint elements) const {
  return element_offset(type, elements, call_.name, call_.rank);
}

void NeighborPreparation::set_send(std::size_t slot, const void* base, MPI_Aint byte_offset,
                                   int count, MPI_Datatype type) {
  blocks_.send[slot] = {static_cast<const std::byte*>(base) + byte_offset, count, type,
                        layout(type)};
}

void NeighborPreparation::set_recv(std::size_t slot, void* base, MPI_Aint byte_offset, int count,
                                   MPI_Datatype type) {
  blocks_.recv[slot] = {static_cast<std::byte*>(base) + byte_offset, count, type, layout(type)};
}

// ---- the variants -----------------------------------------------------------

namespace {

// The send side of the allgather variants: the same block to every destination.
void fill_same_block_to_all(NeighborPreparation& p, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype) {
  p.require_buffer(sendbuf, "sendbuf");
  p.require_count(sendcount, "sendcount");
  for (std::size_t i = 0; i < p.outdegree(); ++i) p.set_send(i, sendbuf, 0, sendcount, sendtype);
}

// Which side of the exchange a fill below prepares: the send blocks (one per
// destination, from a const buffer) or the receive blocks (one per source).
enum class Side { kSend, kRecv };
template <Side Which>
using SideBuffer = std::conditional_t<Which == Side::kSend, const void*, void*>;

template <Side Which>
void set_block(NeighborPreparation& p, std::size_t slot, SideBuffer<Which> buf, MPI_Aint offset,
               int count, MPI_Datatype type) {
  if constexpr (Which == Side::kSend) {
    p.set_send(slot, buf, offset, count, type);
  } else {
    p.set_recv(slot, buf, offset, count, type);
  }
}

template <Side Which>
std::size_t degree(const NeighborPreparation& p) {
  return Which == Side::kSend ? p.outdegree() : p.indegree();
}

// Blocks of `count` elements, one after the other: slot i at element i * count.
template <Side Which>
void fill_consecutive(NeighborPreparation& p, SideBuffer<Which> buf, int count, MPI_Datatype type) {
  constexpr bool kSend = Which == Side::kSend;
  p.require_buffer(buf, kSend ? "sendbuf" : "recvbuf");
  p.require_count(count, kSend ? "sendcount" : "recvcount");
  for (std::size_t slot = 0; slot < degree<Which>(p); ++slot) {
    set_block<Which>(p, slot, buf, p.offset(type, static_cast<MPI_Aint>(slot) * count), count,
                     type);
  }
}

// Blocks at displacements in elements of one type (`displs_name`: the
// argument's name in errors).
template <Side Which>
void fill_displaced(NeighborPreparation& p, SideBuffer<Which> buf, std::span<const int> counts,
                    std::span<const int> displs, const char* displs_name, MPI_Datatype type) {
  constexpr bool kSend = Which == Side::kSend;
  p.require_buffer(buf, kSend ? "sendbuf" : "recvbuf");
  p.require_entries(counts, degree<Which>(p), kSend ? "sendcounts" : "recvcounts");
  p.require_entries(displs, degree<Which>(p), displs_name);
  for (std::size_t slot = 0; slot < degree<Which>(p); ++slot) {
    p.require_count(counts[slot], kSend ? "sendcounts entry" : "recvcounts entry");
    set_block<Which>(p, slot, buf, p.offset(type, displs[slot]), counts[slot], type);
  }
}

}  // namespace

void fill_neighbor_allgather(NeighborPreparation& p, const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype) {
  fill_same_block_to_all(p, sendbuf, sendcount, sendtype);
  fill_consecutive<Side::kRecv>(p, recvbuf, recvcount, recvtype);
}

void fill_neighbor_allgatherv(NeighborPreparation& p, const void* sendbuf, int sendcount,
                              MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                              std::span<const int> displs, MPI_Datatype recvtype) {
  fill_same_block_to_all(p, sendbuf, sendcount, sendtype);
  fill_displaced<Side::kRecv>(p, recvbuf, recvcounts, displs, "displs", recvtype);
}

void fill_neighbor_alltoall(NeighborPreparation& p, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype) {
  fill_consecutive<Side::kSend>(p, sendbuf, sendcount, sendtype);
  fill_consecutive<Side::kRecv>(p, recvbuf, recvcount, recvtype);
}

void fill_neighbor_alltoallv(NeighborPreparation& p, const void* sendbuf,
                             std::span<const int> sendcounts, std::span<const int> sdispls,
                             MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                             std::span<const int> rdispls, MPI_Datatype recvtype) {
  fill_displaced<Side::kSend>(p, sendbuf, sendcounts, sdispls, "sdispls", sendtype);
  fill_displaced<Side::kRecv>(p, recvbuf, recvcounts, rdispls, "rdispls", recvtype);
}

void fill_neighbor_alltoallw(NeighborPreparation& p, const void* sendbuf,
                             std::span<const int> sendcounts, std::span<const MPI_Aint> sdispls,
                             std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                             std::span<const int> recvcounts, std::span<const MPI_Aint> rdispls,
                             std::span<const MPI_Datatype> recvtypes) {
  p.require_buffer(sendbuf, "sendbuf");
  p.require_buffer(recvbuf, "recvbuf");
  p.require_entries(sendcounts, p.outdegree(), "sendcounts");
  p.require_entries(sdispls, p.outdegree(), "sdispls");
  p.require_entries(sendtypes, p.outdegree(), "sendtypes");
  p.require_entries(recvcounts, p.indegree(), "recvcounts");
  p.require_entries(rdispls, p.indegree(), "rdispls");
  p.require_entries(recvtypes, p.indegree(), "recvtypes");
  for (std::size_t i = 0; i < p.outdegree(); ++i) {
    p.require_count(sendcounts[i], "sendcounts entry");
    p.set_send(i, sendbuf, sdispls[i], sendcounts[i], sendtypes[i]);
  }
  for (std::size_t j = 0; j < p.indegree(); ++j) {
    p.require_count(recvcounts[j], "recvcounts entry");
    p.set_recv(j, recvbuf, rdispls[j], recvcounts[j], recvtypes[j]);
  }
}

std::string local_edge_mismatch(const CollectiveCall& call, const LocalEdge& edge, int recv_thread,
                                std::size_t sent, std::size_t room, ErrorKind& kind) {
  if (sent == room) return {};
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  kind = sent > room ? ErrorKind::kTruncate : ErrorKind::kCount;
  return "ep rank " + std::to_string(map.ep_rank(me, edge.send_thread)) + " sends " +
         std::to_string(sent) + " bytes to ep rank " +
         std::to_string(map.ep_rank(me, recv_thread)) + ", whose receive slot " +
         std::to_string(edge.recv_slot) + " holds " + std::to_string(room);
}

}  // namespace ep::detail
