// Point-to-point stages of HaloPlan (kTwoSweep: two stages; kDirect and
// kSplit: one): every receive is posted before any send, one packed message
// per peer, the stage index as tag on the plan's private communicator (one
// message per peer pair and stage, so the tag alone keeps stages apart).
// Included by halo/plan_impl.hpp only.
#pragma once

#include <cstddef>
#include <span>
#include <utility>

#include "collectives/halo.hpp"

namespace collectives {

template <Communicator C>
void HaloPlan<C>::post_stage(std::size_t s) {
  // A bound plan's local peers may read this stage's cells from now on.
  if (bound_) arrive(s);
  const detail::StageCopies& copies = copies_[s];
  const int tag = static_cast<int>(s);
  // The `count` bytes at `displ` of a stage buffer: one peer's message.
  const auto part = [](auto& buffer, int displ, int count) {
    return std::span(buffer).subspan(static_cast<std::size_t>(displ),
                                     static_cast<std::size_t>(count));
  };
  requests_.clear();
  for (std::size_t p = 0; p < copies.peers.size(); ++p) {
    if (copies.recv_counts[p] == 0) continue;
    requests_.push_back(irecv(comm_,
                              part(recv_buffers_[s], copies.recv_displs[p], copies.recv_counts[p]),
                              copies.peers[p], tag));
  }
  detail::pack_rows(comm_, copies.pack, fields_, send_buffers_[s].data());
  for (std::size_t p = 0; p < copies.peers.size(); ++p) {
    if (copies.send_counts[p] == 0) continue;
    requests_.push_back(isend(
        comm_, part(std::as_const(send_buffers_[s]), copies.send_displs[p], copies.send_counts[p]),
        copies.peers[p], tag));
  }
  detail::copy_and_fill(comm_, copies, fields_);
}

template <Communicator C>
void HaloPlan<C>::complete_stage(std::size_t s) {
  comm_.wait_all(requests_);
  requests_.clear();
  detail::unpack_rows(comm_, copies_[s].unpack, fields_, recv_buffers_[s].data());
  // Local peers last: this rank holds no request while it waits for them.
  if (bound_) copy_local(s);
}

}  // namespace collectives
