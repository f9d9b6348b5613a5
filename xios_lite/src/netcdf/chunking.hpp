// Chunk shapes of the variables in the files, from a target size (XIOS's
// chunking_blocksize_target). A chunk is one record (time 1) of a box of
// levels x rows x columns: the whole record when it fits the target, else
// the largest of the three extents is halved (rounding up) until it fits.
// HDF5 refuses chunks of 4 GiB or more: the target is capped below that,
// so a 75-level ORCA12 record of doubles (7.9 GB) becomes chunks of at most
// the target instead of one chunk HDF5 cannot make.
//
// Pure functions: thread-safe, no NetCDF.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace xios_lite::netcdf {

/// HDF5's limit on a chunk's size in bytes (2^32 - 1).
inline constexpr std::uint64_t kMaxChunkBytes = 0xFFFFFFFFULL;

/// The chunk extents (levels, rows, columns) of a record of `extents`
/// values of `value_bytes` each, for a target of `target_bytes`. Every
/// chunk extent is at least 1 and at most the record's extent.
[[nodiscard]] constexpr std::array<std::uint64_t, 3> chunk_extents(
    std::array<std::uint64_t, 3> extents, std::uint64_t value_bytes, double target_bytes) {
  const double cap = static_cast<double>(kMaxChunkBytes);
  const double target = std::min(std::max(target_bytes, static_cast<double>(value_bytes)), cap);
  std::array<std::uint64_t, 3> c{};
  for (std::size_t d = 0; d < 3; ++d) {
    c[d] = std::max<std::uint64_t>(extents[d], 1);
  }
  auto bytes = [&] { return static_cast<double>(c[0] * c[1] * c[2] * value_bytes); };
  while (bytes() > target && (c[0] > 1 || c[1] > 1 || c[2] > 1)) {
    const std::size_t largest =
        static_cast<std::size_t>(std::max_element(c.begin(), c.end()) - c.begin());
    c[largest] = (c[largest] + 1) / 2;
  }
  return c;
}

// A record that fits is one chunk; the ORCA12 75-level record of doubles
// (4322 x 3059 x 75 x 8 B = 7.9 GB) fits a 20 MiB target once split.
static_assert(chunk_extents({3, 6, 12}, 8, 20.0 * 1024 * 1024)[1] == 6);
static_assert(chunk_extents({75, 3059, 4322}, 8, 20.0 * 1024 * 1024)[0] *
                  chunk_extents({75, 3059, 4322}, 8, 20.0 * 1024 * 1024)[1] *
                  chunk_extents({75, 3059, 4322}, 8, 20.0 * 1024 * 1024)[2] * 8 <=
              20ULL * 1024 * 1024);
static_assert(chunk_extents({1, 1, 1}, 8, 1.0)[2] == 1);

}  // namespace xios_lite::netcdf
