// Bruck alltoallv with variable block sizes: ceil(log2 n) stages, blocks
// forwarded through intermediate ranks, their sizes carried along.
//
// Positions: rank i keeps its blocks by position p = (destination - i) mod n.
//   stage b (distance 2^b, b = 0 .. ceil(log2 n)-1):
//     send every block whose position has bit b set to i + 2^b, receive the
//     same positions from i - 2^b (they replace the ones sent);
//     first the block sizes (one int per position moved: the receiver cannot
//     know the sizes of blocks passing through it), then the data.
//   end: position p holds the block from rank i - p, destined to i.
//
//   n = 5, rank 0, positions 0..4:  stage 0 moves 1,3   stage 1 moves 2,3
//                                   stage 2 moves 4
//
// Each block travels once per set bit of its position: ~log2(n)/2 times the
// data volume of the direct algorithms, in log2(n) stages instead of n-1, so
// it wins for small blocks. Two messages per stage (sizes, data).
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "collectives/alltoallv_algorithms/exchange.hpp"
#include "collectives/detail/tags.hpp"
#include "common/datatype.hpp"
#include "common/error.hpp"

namespace collectives::alltoallv_algorithms {

/// Collective over `comm`; arguments checked locally (alltoallv.hpp). Every
/// rank learns the size of each block it receives, so it always verifies:
/// a block whose size differs from recvcounts throws on its receiver alone,
/// after the last stage (kTruncate when more, kCount when less).
template <Communicator C, common::HasDatatype T>
void bruck(const C& comm, const Exchange<T>& x, Scratch<T, typename C::Request>& s) {
  const int n = comm.size();
  const int me = comm.rank();
  const auto un = static_cast<std::size_t>(n);

  // Local rotation: position p <- the block for rank me + p.
  s.counts.resize(un);
  s.offsets.resize(un + 1);
  s.offsets[0] = 0;
  for (int p = 0; p < n; ++p) {
    const auto up = static_cast<std::size_t>(p);
    s.counts[up] = x.send_count((me + p) % n);
    s.offsets[up + 1] = s.offsets[up] + static_cast<std::size_t>(s.counts[up]);
  }
  s.blocks.resize(s.offsets[un]);
  s.copies.clear();
  for (int p = 0; p < n; ++p) {
    const auto up = static_cast<std::size_t>(p);
    s.copies.push_back({x.send_block((me + p) % n), s.blocks.data() + s.offsets[up],
                        static_cast<std::size_t>(s.counts[up])});
  }
  detail::copy_blocks(comm, std::span<const detail::BlockCopy<T>>(s.copies), s.chunks);

  for (int dist = 1; dist < n; dist <<= 1) {
    const int to = (me + dist) % n;
    const int from = (me - dist + n) % n;
    // Sizes of the moving positions, then the data packed in position order.
    s.stage_counts_send.clear();
    s.copies.clear();
    std::size_t send_total = 0;
    for (int p = dist; p < n; ++p) {
      if ((p & dist) == 0) continue;
      const auto up = static_cast<std::size_t>(p);
      s.stage_counts_send.push_back(s.counts[up]);
      send_total += static_cast<std::size_t>(s.counts[up]);
    }
    s.stage_send.resize(send_total);
    std::size_t packed = 0;
    for (int p = dist; p < n; ++p) {
      if ((p & dist) == 0) continue;
      const auto up = static_cast<std::size_t>(p);
      s.copies.push_back({s.blocks.data() + s.offsets[up], s.stage_send.data() + packed,
                          static_cast<std::size_t>(s.counts[up])});
      packed += static_cast<std::size_t>(s.counts[up]);
    }
    detail::copy_blocks(comm, std::span<const detail::BlockCopy<T>>(s.copies), s.chunks);

    s.stage_counts_recv.resize(s.stage_counts_send.size());
    s.requests.clear();
    s.requests.push_back(
        irecv(comm, std::span<int>(s.stage_counts_recv), from, detail::kAlltoallvCountsTag));
    s.requests.push_back(
        isend(comm, std::span<const int>(s.stage_counts_send), to, detail::kAlltoallvCountsTag));
    comm.wait_all(s.requests);
    s.requests.clear();
    const std::size_t recv_total =
        std::accumulate(s.stage_counts_recv.begin(), s.stage_counts_recv.end(), std::size_t{0},
                        [](std::size_t a, int c) { return a + static_cast<std::size_t>(c); });
    s.stage_recv.resize(recv_total);
    // Checked here so that an oversized stage names the collective.
    const int recv_count = common::count_of(recv_total, "collectives::alltoallv (bruck)", me);
    const int send_count = common::count_of(send_total, "collectives::alltoallv (bruck)", me);
    if (recv_count > 0) {
      s.requests.push_back(
          irecv(comm, std::span<T>(s.stage_recv), from, detail::kAlltoallvDataTag));
    }
    if (send_count > 0) {
      s.requests.push_back(
          isend(comm, std::span<const T>(s.stage_send), to, detail::kAlltoallvDataTag));
    }
    comm.wait_all(s.requests);
    s.requests.clear();

    // New layout: moved positions from the stage buffer, the others kept.
    s.next_counts.resize(un);
    s.next_offsets.resize(un + 1);
    s.next_offsets[0] = 0;
    for (int p = 0, moved = 0; p < n; ++p) {
      const auto up = static_cast<std::size_t>(p);
      s.next_counts[up] =
          (p & dist) != 0 ? s.stage_counts_recv[static_cast<std::size_t>(moved++)] : s.counts[up];
      s.next_offsets[up + 1] = s.next_offsets[up] + static_cast<std::size_t>(s.next_counts[up]);
    }
    s.next_blocks.resize(s.next_offsets[un]);
    s.copies.clear();
    std::size_t unpacked = 0;
    for (int p = 0; p < n; ++p) {
      const auto up = static_cast<std::size_t>(p);
      const T* source =
          (p & dist) != 0 ? s.stage_recv.data() + unpacked : s.blocks.data() + s.offsets[up];
      if ((p & dist) != 0) unpacked += static_cast<std::size_t>(s.next_counts[up]);
      s.copies.push_back({source, s.next_blocks.data() + s.next_offsets[up],
                          static_cast<std::size_t>(s.next_counts[up])});
    }
    detail::copy_blocks(comm, std::span<const detail::BlockCopy<T>>(s.copies), s.chunks);
    std::swap(s.blocks, s.next_blocks);
    std::swap(s.counts, s.next_counts);
    std::swap(s.offsets, s.next_offsets);
  }

  // Position p now holds the block from rank me - p.
  s.copies.clear();
  for (int p = 0; p < n; ++p) {
    const auto up = static_cast<std::size_t>(p);
    const int source = (me - p + n) % n;
    if (s.counts[up] != x.recv_count(source)) {
      // Every stage is done: the other ranks return, this one throws.
      throw common::Error(s.counts[up] > x.recv_count(source) ? common::ErrorKind::kTruncate
                                                              : common::ErrorKind::kCount,
                          "collectives::alltoallv (bruck)", me,
                          "recvcounts[" + std::to_string(source) +
                              "] = " + std::to_string(x.recv_count(source)) + " but rank " +
                              std::to_string(source) + " sent " + std::to_string(s.counts[up]) +
                              " elements");
    }
    s.copies.push_back({s.blocks.data() + s.offsets[up], x.recv_block(source),
                        static_cast<std::size_t>(s.counts[up])});
  }
  detail::copy_blocks(comm, std::span<const detail::BlockCopy<T>>(s.copies), s.chunks);
}

}  // namespace collectives::alltoallv_algorithms
