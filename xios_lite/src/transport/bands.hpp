// How several servers split a domain: server s of S holds the rows
// [jbegin(s), jbegin(s) + nj(s)) of every domain, the first nj_glo % S
// servers one row more. Clients use it to route sub-blocks, servers to size
// their records and files. With fewer rows than servers (nj_glo < S) the
// last S - nj_glo servers hold no row (an empty band starting at nj_glo).
#pragma once

#include "records/row_range.hpp"

namespace xios_lite::transport {

[[nodiscard]] constexpr records::RowRange band_of(int nj_glo, int server, int servers) noexcept {
  const int base = nj_glo / servers;
  const int extra = nj_glo % servers;
  return {server * base + (server < extra ? server : extra), base + (server < extra ? 1 : 0)};
}

static_assert(band_of(10, 0, 3).nj == 4 && band_of(10, 1, 3).jbegin == 4 &&
              band_of(10, 2, 3).jbegin == 7 && band_of(10, 2, 3).nj == 3);
static_assert(band_of(2, 1, 4).jbegin == 1 && band_of(2, 1, 4).nj == 1 &&
              band_of(2, 3, 4).jbegin == 2 && band_of(2, 3, 4).nj == 0);

/// The rows of `count` consecutive servers from `first` (a server process
/// with several receiving endpoints): their bands are adjacent, so the union
/// is one range.
[[nodiscard]] constexpr records::RowRange bands_of(int nj_glo, int first, int count,
                                                   int servers) noexcept {
  const records::RowRange head = band_of(nj_glo, first, servers);
  const records::RowRange tail = band_of(nj_glo, first + count - 1, servers);
  return {head.jbegin, tail.jbegin + tail.nj - head.jbegin};
}

static_assert(bands_of(10, 1, 2, 3).jbegin == 4 && bands_of(10, 1, 2, 3).nj == 6 &&
              bands_of(10, 0, 1, 3).nj == band_of(10, 0, 3).nj);

}  // namespace xios_lite::transport
