// What every alltoallv algorithm receives: the caller's buffers, counts and
// displacements (in elements of T), each checked locally by its own rank
// (collectives/alltoallv.hpp), plus scratch kept between calls, and the
// stage that the direct algorithms (burst, pairwise, ring-k) are made of.
//
// Two ways a stage moves blocks (Exchange::verify):
//   trusted   the counts were agreed beforehand (or the caller vouches for
//             them): empty blocks send no message, since both sides know
//             them, and every receive is posted at its recvcount.
//   verified  nothing was agreed: every pair exchanges one message, empty
//             blocks included, and each receiver learns what arrived
//             (BasicComm::post/finish_sized_receives) and compares it with
//             its recvcount. A sender that disagrees with its receiver,
//             even 0 against non-zero, costs neither a hang nor a message
//             left for the next call: every message is received, none
//             overruns its block, every request completes. The first
//             mismatch is kept in the scratch and thrown by
//             throw_if_arrivals_differ once the whole algorithm has run, on
//             the receiving rank only (kTruncate when more was sent than
//             recvcounts says, kCount when less), naming the sender and both
//             counts. Its senders return normally.
// Bruck carries its block sizes anyway and checks them at its end.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/detail/copy_blocks.hpp"
#include "collectives/detail/tags.hpp"
#include "common/datatype.hpp"
#include "common/error.hpp"

namespace collectives::alltoallv_algorithms {

template <class T>
struct Exchange {
  std::span<const T> send;
  std::span<const int> sendcounts;
  std::span<const int> sdispls;
  std::span<T> recv;
  std::span<const int> recvcounts;
  std::span<const int> rdispls;
  bool verify = false;  ///< receivers verify what arrives (see the file comment)

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
  std::vector<SizedReceive> sized;  // verified stages
  std::vector<std::byte> spill;
  std::vector<int> peers_from;
  std::vector<int> peers_to;
  std::optional<SizedReceive> mismatch;  // the first block whose size differed
};

/// Posts the receive of the block from `from` (none for an empty block: both
/// sides know its size).
template <Communicator C, common::HasDatatype T>
void post_recv(const C& comm, const Exchange<T>& x, int from,
               std::vector<typename C::Request>& requests) {
  if (x.recv_count(from) > 0) {
    requests.push_back(irecv(comm, x.recv_span(from), from, detail::kAlltoallvDataTag));
  }
}

/// Posts the send of the block for `to` (none for an empty block).
template <Communicator C, common::HasDatatype T>
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

/// One stage of a direct algorithm: receives from every rank of `from`,
/// sends to every rank of `to`, this rank's own block copied meanwhile when
/// `self`; trusted or verified as x.verify says (see the file comment). A
/// size mismatch is recorded in `s.mismatch`, never thrown here.
template <Communicator C, common::HasDatatype T>
void exchange_stage(const C& comm, const Exchange<T>& x, std::span<const int> from,
                    std::span<const int> to, Scratch<T, typename C::Request>& s, bool self) {
  auto& requests = s.requests;
  requests.clear();
  if (!x.verify) {
    for (const int p : from) post_recv(comm, x, p, requests);
    for (const int p : to) post_send(comm, x, p, requests);
    if (self) copy_self(comm, x, s);
    comm.wait_all(requests);
    requests.clear();
    return;
  }
  s.sized.clear();
  for (const int p : from) s.sized.push_back({x.recv_block(p), x.recv_count(p), p, 0});
  comm.post_sized_receives(std::span<SizedReceive>(s.sized), common::datatype_of<T>(),
                           detail::kAlltoallvDataTag, requests);
  for (const int p : to)
    requests.push_back(isend(comm, x.send_span(p), p, detail::kAlltoallvDataTag));
  if (self) copy_self(comm, x, s);
  comm.finish_sized_receives(std::span<SizedReceive>(s.sized), common::datatype_of<T>(),
                             detail::kAlltoallvDataTag, requests, s.spill);
  for (const SizedReceive& r : s.sized) {
    if (r.received != r.count && !s.mismatch) s.mismatch = r;
  }
}

/// Throws the first size mismatch a verified algorithm recorded (after it
/// completed every stage), naming the sender and both counts. Local.
template <class T, class Request>
void throw_if_arrivals_differ(int rank, const Scratch<T, Request>& s) {
  if (!s.mismatch) return;
  const SizedReceive& r = *s.mismatch;
  const bool longer = r.received == SizedReceive::kLonger || r.received > r.count;
  const std::string sent = r.received == SizedReceive::kLonger
                               ? "more than " + std::to_string(r.count)
                               : std::to_string(r.received);
  throw common::Error(longer ? common::ErrorKind::kTruncate : common::ErrorKind::kCount,
                      "collectives::alltoallv", rank,
                      "recvcounts[" + std::to_string(r.source) + "] = " + std::to_string(r.count) +
                          " but rank " + std::to_string(r.source) + " sent " + sent + " elements");
}

}  // namespace collectives::alltoallv_algorithms
