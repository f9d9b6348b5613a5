// What every alltoallv algorithm receives: the caller's buffers, counts and
// displacements (in elements of T), already checked and agreed by all ranks
// (collectives/alltoallv.hpp), plus scratch kept between calls.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/detail/copy_blocks.hpp"
#include "collectives/detail/tags.hpp"

namespace collectives::alltoallv_algorithms {

template <class T>
struct Exchange {
  std::span<const T> send;
  std::span<const int> sendcounts;
  std::span<const int> sdispls;
  std::span<T> recv;
  std::span<const int> recvcounts;
  std::span<const int> rdispls;

  [[nodiscard]] const T* send_block(int peer) const {
    return send.data() + sdispls[static_cast<std::size_t>(peer)];
  }
  [[nodiscard]] T* recv_block(int peer) const {
    return recv.data() + rdispls[static_cast<std::size_t>(peer)];
  }
  [[nodiscard]] int send_count(int peer) const {
    return sendcounts[static_cast<std::size_t>(peer)];
  }
  [[nodiscard]] int recv_count(int peer) const {
    return recvcounts[static_cast<std::size_t>(peer)];
  }
  [[nodiscard]] std::span<const T> send_span(int peer) const {
    return {send_block(peer), static_cast<std::size_t>(send_count(peer))};
  }
  [[nodiscard]] std::span<T> recv_span(int peer) const {
    return {recv_block(peer), static_cast<std::size_t>(recv_count(peer))};
  }
};

/// Buffers an algorithm may keep between calls (a transposition plan owns one,
/// so that repeated steps allocate nothing once the sizes have been seen).
template <class T, class Request>
struct Scratch {
  std::vector<Request> requests;
  std::vector<std::size_t> chunks;  // detail::copy_blocks
  std::vector<detail::BlockCopy<T>> copies;
  std::vector<T> stage_send;  // Bruck
  std::vector<T> stage_recv;
  std::vector<T> blocks;
  std::vector<T> next_blocks;
  std::vector<int> counts;  // Bruck: block sizes
  std::vector<int> next_counts;
  std::vector<std::size_t> offsets;
  std::vector<std::size_t> next_offsets;
  std::vector<int> stage_counts_send;
  std::vector<int> stage_counts_recv;
};

/// Posts the receive of the block from `from` (none for an empty block: both
/// sides know its size).
template <Communicator C, ep::HasDatatype T>
void post_recv(const C& comm, const Exchange<T>& x, int from,
               std::vector<typename C::Request>& requests) {
  if (x.recv_count(from) > 0) {
    requests.push_back(irecv(comm, x.recv_span(from), from, detail::kAlltoallvDataTag));
  }
}

/// Posts the send of the block for `to` (none for an empty block).
template <Communicator C, ep::HasDatatype T>
void post_send(const C& comm, const Exchange<T>& x, int to,
               std::vector<typename C::Request>& requests) {
  if (x.send_count(to) > 0) {
    requests.push_back(isend(comm, x.send_span(to), to, detail::kAlltoallvDataTag));
  }
}

/// Copies this rank's block to itself (through the communicator's threads).
template <Communicator C, class T, class Request>
void copy_self(const C& comm, const Exchange<T>& x, Scratch<T, Request>& scratch) {
  const int me = comm.rank();
  const detail::BlockCopy<T> copy{x.send_block(me), x.recv_block(me),
                                  static_cast<std::size_t>(x.send_count(me))};
  detail::copy_blocks(comm, std::span<const detail::BlockCopy<T>>(&copy, 1), scratch.chunks);
}

}  // namespace collectives::alltoallv_algorithms
