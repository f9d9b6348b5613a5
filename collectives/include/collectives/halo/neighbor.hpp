// Neighbourhood-collective form of HaloPlan (kNeighbor), as NEMO does it: one
// neighbor_alltoallv of packed bytes on the distributed graph built with the
// plan (sources = destinations = the peers, in rank order; land ranks are
// not in the graph). Works on MPI communicators and on endpoint topologies.
// A bound plan sends nothing to its peers in this process (counts 0, their
// cells are copied directly) and skips the collective when no rank of the
// plan has a peer in another process.
// Included by halo/plan_impl.hpp only.
#pragma once

#include "collectives/halo.hpp"

namespace collectives {

template <Communicator C>
void HaloPlan<C>::neighbor_exchange() {
  const detail::StageCopies& copies = copies_.front();
  if (bound_) arrive(0);
  if (neighbor_messages_) {
    detail::pack_rows(comm_, copies.pack, fields_, send_buffers_.front().data());
    graph_.neighbor_alltoallv(send_buffers_.front().data(), copies.send_counts, copies.send_displs,
                              recv_buffers_.front().data(), copies.recv_counts, copies.recv_displs,
                              MPI_BYTE);
  }
  detail::copy_and_fill(comm_, copies, fields_);
  detail::unpack_rows(comm_, copies.unpack, fields_, recv_buffers_.front().data());
  if (bound_) copy_local(0);
}

}  // namespace collectives
