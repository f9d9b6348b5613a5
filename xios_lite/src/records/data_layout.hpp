// How a model array holds a client's block: made by the client
// (client/layout.hpp, data_layout), read by the temporal operations when
// they fold the model's values without a copy first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xios_lite::records {

/// How a client's array holds its block of a domain, per level (XIOS's
/// data_dim, data_ibegin, data_ni, data_jbegin, data_nj, data_i_index,
/// data_j_index, with XIOS's meaning):
///   data_dim 2: a data_ni x data_nj array whose value (ki, kj) is the
///     block's point (ki + data_ibegin, kj + data_jbegin) (negative
///     begins: a halo);
///   data_dim 1 (XIOS's default): data_ni values, value k being the block's
///     point k + data_ibegin, points numbered i fastest;
///   data_i_index (and with data_dim 2 data_j_index): one value per index,
///     value k being the point data_i_index[k] + data_ibegin (and
///     data_j_index[k] + data_jbegin); the indices are 0-based.
/// Values outside the block are ignored; points of the block no value gives
/// are missing (_FillValue, as masked points). The levels follow each other.
struct DataLayout {
  std::size_t per_level = 0;  ///< values per level in the model's array
  /// Per point of the block (j * ni + i): the position of its value in a
  /// level, -1 when no value gives it. Empty: the array is the block.
  std::vector<std::int32_t> source;
  /// The array holds the whole block as rows (a halo'd 2-D array, or a 1-D
  /// one holding at least the block): point (i, j) of level k is at
  /// first + j * row + i + k * per_level. Every send can then be read row
  /// by row, like the block itself.
  bool rows = true;
  std::size_t first = 0;
  std::size_t row = 0;
  /// What the model set, for messages ("data_dim 2, data_ibegin -1, ...").
  std::string text;
  /// The array is the block itself (then `source` is empty). An empty
  /// block's array may still hold values (a halo, or the whole axis a
  /// client without a part of it sends): they are not the block.
  bool whole_block = true;
  [[nodiscard]] bool is_block() const { return whole_block; }
};

}  // namespace xios_lite::records
