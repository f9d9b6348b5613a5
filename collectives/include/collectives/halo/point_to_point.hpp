// Point-to-point stages of HaloPlan (kTwoSweep: two stages; kDirect and
// kSplit: one): every receive is posted before any send, one packed message
// per peer, the stage index as tag on the plan's private communicator (one
// message per peer pair and stage, so the tag alone keeps stages apart).
// Included by halo/plan_impl.hpp only.
#pragma once

#include "collectives/halo.hpp"

namespace collectives {

template <Communicator C>
void HaloPlan<C>::post_stage(std::size_t s) {
  const detail::StageCopies& copies = copies_[s];
  const int tag = static_cast<int>(s);
  requests_.clear();
  std::byte* recv = recv_buffers_[s].data();
  std::byte* send = send_buffers_[s].data();
  for (std::size_t p = 0; p < copies.peers.size(); ++p) {
    if (copies.recv_counts[p] == 0) continue;
    requests_.push_back(comm_.irecv(recv + copies.recv_displs[p], copies.recv_counts[p], MPI_BYTE,
                                    copies.peers[p], tag));
  }
  detail::pack_rows(comm_, copies.pack, fields_, send);
  for (std::size_t p = 0; p < copies.peers.size(); ++p) {
    if (copies.send_counts[p] == 0) continue;
    requests_.push_back(comm_.isend(send + copies.send_displs[p], copies.send_counts[p], MPI_BYTE,
                                    copies.peers[p], tag));
  }
  detail::copy_and_fill(comm_, copies, fields_);
}

template <Communicator C>
void HaloPlan<C>::complete_stage(std::size_t s) {
  comm_.wait_all(requests_);
  requests_.clear();
  detail::unpack_rows(comm_, copies_[s].unpack, fields_, recv_buffers_[s].data());
}

}  // namespace collectives
