// Copies many blocks, the chunks shared by the communicator's threads
// (comm.parallel_for: one thread for EP and MPI ranks, the OpenMP team for
// funneled). Blocks are cut into chunks so that a few large blocks still keep
// every thread busy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "collectives/communicator.hpp"

namespace collectives::detail {

template <class T>
struct BlockCopy {
  const T* source = nullptr;
  T* target = nullptr;
  std::size_t count = 0;  ///< elements
};

/// Elements per chunk: 64 KiB, enough to amortise the loop's scheduling.
template <class T>
inline constexpr std::size_t kCopyChunk = std::max<std::size_t>(1, 65536 / sizeof(T));

/// Performs every copy in `blocks` (non-overlapping). `first_chunk` is scratch
/// reused between calls. Not collective.
template <Communicator C, class T>
void copy_blocks(const C& comm, std::span<const BlockCopy<T>> blocks,
                 std::vector<std::size_t>& first_chunk) {
  first_chunk.resize(blocks.size() + 1);
  first_chunk[0] = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    first_chunk[b + 1] = first_chunk[b] + (blocks[b].count + kCopyChunk<T> - 1) / kCopyChunk<T>;
  }
  const int chunks = static_cast<int>(first_chunk.back());
  if (chunks == 0) return;
  if (chunks == 1) {  // one chunk (the other blocks are empty): not worth waking a team
    for (const BlockCopy<T>& b : blocks) {
      if (b.count > 0) std::memcpy(b.target, b.source, b.count * sizeof(T));
    }
    return;
  }
  const std::size_t* starts = first_chunk.data();
  const std::size_t nblocks = blocks.size();
  comm.parallel_for(chunks, [&](int c) {
    const auto chunk = static_cast<std::size_t>(c);
    const std::size_t b =
        static_cast<std::size_t>(std::upper_bound(starts, starts + nblocks + 1, chunk) - starts) -
        1;
    const std::size_t begin = (chunk - starts[b]) * kCopyChunk<T>;
    const std::size_t n = std::min(kCopyChunk<T>, blocks[b].count - begin);
    std::memcpy(blocks[b].target + begin, blocks[b].source + begin, n * sizeof(T));
  });
}

}  // namespace collectives::detail
