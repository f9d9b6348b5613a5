// Pack lists of a halo exchange: the byte-level row copies that turn the
// rectangles of a schedule (geometry.hpp) into one packed message per peer
// and stage, for a given set of fields. Built when a plan first sees a set of
// fields (and again only when the set changes); every exchange after that is
// a loop of memcpy over these lists.
//
// Field memory layout: level-major planes of (nx + 2w) x (ny + 2w) cells, i
// fastest: cell (i, j, k) of a field is element
//     (k * (ny + 2w) + (j + w)) * (nx + 2w) + (i + w).
//
// Message layout (one per peer and stage, MPI_BYTE):
//     for each field f (in the order given)
//       for each rectangle of the transfer (PeerTransfer order)
//         for each level k, for each row j: the row's width * sizeof(T_f) bytes
// Sender and receiver walk the same nesting, so nothing else travels.
//
// Thread safety: immutable after construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include "collectives/halo/geometry.hpp"

namespace collectives::detail {

/// What the pack lists need to know about one field.
struct FieldShape {
  int levels = 1;
  std::size_t element_bytes = 0;
};

/// `bytes` from field `field` at byte `field_offset` to (or from) byte
/// `buffer_offset` of a stage buffer.
struct RowCopy {
  int field = 0;
  std::size_t field_offset = 0;
  std::size_t buffer_offset = 0;
  std::size_t bytes = 0;
};

/// A row copied within one field (periodic wrap onto the rank itself).
struct RowSelfCopy {
  int field = 0;
  std::size_t from_offset = 0;
  std::size_t to_offset = 0;
  std::size_t bytes = 0;
};

/// `cells` cells of field `field` from byte `field_offset` set to its fill value.
struct RowFill {
  int field = 0;
  std::size_t field_offset = 0;
  int cells = 0;
};

/// One stage's pack lists and message sizes (bytes, per peer in the order of
/// Stage::peers; peers that exchange nothing in one direction have count 0).
struct StageCopies {
  std::vector<int> peers;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  std::size_t send_bytes = 0;
  std::size_t recv_bytes = 0;
  std::vector<RowCopy> pack;
  std::vector<RowCopy> unpack;
  std::vector<RowSelfCopy> self;
  std::vector<RowFill> fill;
};

/// Rows narrower than this (two cache lines) are staged: a row read out of
/// another core's array costs a cache-line transfer or two however few
/// bytes it holds (a column strip of w = 1 is one line per 8 bytes), so the
/// owner packs its narrow rows, from its own cache, into one contiguous
/// block per local reader, which the reader then reads line by line.
/// Wider rows are read straight out of the owner's field: they cost the
/// reader their own lines plus at most one, where staging would add a
/// whole extra copy of them. An owner whose readers read only staged rows
/// also waits for their departure at its next call rather than at the end
/// of this one (its own array is free at once): one blocking round per
/// call instead of two. Measured at 1 x 2 (halo_bench, t_min, load 4-6):
/// with 1 KiB here, w = 20 on 16 x 16 blocks (rows of 160 B, staged) took
/// 4.8-4.9 us in one stage; read in place, 2.0-2.3 us; w = 1 and 3 (8 and
/// 24 B) stay staged: read in place they took 7.0 and 5.5 us against 1.5
/// and 2.6 us staged.
inline constexpr std::size_t kStagedRowBytes = 128;
/// Rows from kStagedRowBytes up to this are staged as well when all of
/// them from one owner to one reader add up to kStagedPairBytes at most:
/// reading in place costs the owner a second blocking wait per call (its
/// readers' departure, about 1 us at 1 x 2), staging costs a copy of
/// those bytes, so a few KiB are cheaper staged (halo_bench at 1 x 2, w =
/// 20 on 16 x 16 blocks, t_min: the two-stage sweep's 4 KiB per reader,
/// 2.2 us staged against 3.1 in place) and tens of KiB in place (one stage
/// there: 14 KiB per reader, 4.8 us staged against 2.3 in place).
inline constexpr std::size_t kStagedWideRowBytes = 1024;
inline constexpr std::size_t kStagedPairBytes = 8192;

/// The row size from which the rows of `rects` (what one owner sends one
/// local reader in one stage, in either frame: the sizes are the same) are
/// read in place rather than staged, for `fields`. Owner and reader call
/// it on the same rectangles, so they agree on every row.
std::size_t staged_row_limit(const std::vector<Rect>& rects, const std::vector<FieldShape>& fields);

/// A strip copied on the zero-copy path of a bound plan: `rows` rows of
/// `row_bytes` bytes, from byte `from_offset` of a source whose rows are
/// `from_stride` bytes apart to byte `to_offset` of field `field`, whose
/// rows are `to_stride` apart. One per field, rectangle and level, so the
/// copy is one strided loop (copy_strip) rather than a descriptor per row:
/// a column strip of w <= 3 doubles is 8 to 24 bytes a row, where a list of
/// rows spent some 30 instructions per row on descriptors and calls of
/// memcpy. A reader's strip comes from peer `thread` (its board slot): out
/// of the peer's field `field` itself, or, when `staged`, out of the peer's
/// staging block for this rank. An owner's staged strip (what it packs for
/// a local reader) goes from its field to its staging buffer instead.
struct StripCopy {
  int field = 0;
  int thread = 0;
  bool staged = false;
  int rows = 0;
  std::size_t row_bytes = 0;
  std::size_t from_offset = 0;
  std::size_t from_stride = 0;
  std::size_t to_offset = 0;
  std::size_t to_stride = 0;
};

namespace strip_detail {
template <std::size_t RowBytes>
inline void copy_fixed_rows(std::byte* to, std::size_t to_stride, const std::byte* from,
                            std::size_t from_stride, int rows) {
  // A constant size: the compiler emits plain moves, no call per row.
  for (int r = 0; r < rows; ++r, to += to_stride, from += from_stride) {
    std::memcpy(to, from, RowBytes);
  }
}

/// Copies with copy_fixed_rows<W> for the W among `Widths` equal to
/// `row_bytes`; false (nothing copied) when none is.
template <std::size_t... Widths>
inline bool copy_if_fixed(std::byte* to, std::size_t to_stride, const std::byte* from,
                          std::size_t from_stride, std::size_t row_bytes, int rows) {
  return ((row_bytes == Widths &&
           (copy_fixed_rows<Widths>(to, to_stride, from, from_stride, rows), true)) ||
          ...);
}
}  // namespace strip_detail

/// Copies `rows` rows of `row_bytes` bytes from `from` (rows `from_stride`
/// apart) to `to` (rows `to_stride` apart); the ranges must not overlap.
inline void copy_strip(std::byte* to, std::size_t to_stride, const std::byte* from,
                       std::size_t from_stride, std::size_t row_bytes, int rows) {
  if (to_stride == row_bytes && from_stride == row_bytes) {
    std::memcpy(to, from, row_bytes * static_cast<std::size_t>(rows));
    return;
  }
  // The column strips of w = 1 to 4 of 4- and 8-byte types get a loop of
  // their own constant size; any other width a memcpy per row.
  const bool fixed = strip_detail::copy_if_fixed<4, 8, 12, 16, 24, 32>(
      to, to_stride, from, from_stride, row_bytes, rows);
  if (fixed) return;
  for (int r = 0; r < rows; ++r, to += to_stride, from += from_stride) {
    std::memcpy(to, from, row_bytes);
  }
}

/// What a peer in this process sends this rank in one stage: its rectangles
/// in its own frame (a subdomain of nx x ny) and the matching rectangles of
/// this rank's frame (same order, same sizes).
struct LocalTransfer {
  int thread = 0;
  int nx = 0;
  int ny = 0;
  std::vector<Rect> from;  ///< the peer's frame
  std::vector<Rect> to;    ///< this rank's frame
};

/// Appends the strips of `transfer` for every field to `strips`, this
/// rank's subdomain being nx x ny, halo `width`; staged strips are placed
/// within the peer's block for this rank in the order add_staged_strips
/// packs them.
void add_direct_strips(const LocalTransfer& transfer, int nx, int ny, int width,
                       const std::vector<FieldShape>& fields, std::vector<StripCopy>& strips);
/// The owner's side: appends the staged (narrow) strips of `sends` (this
/// rank's rectangles for one local reader) to `strips`, packed from
/// `cursor` on in a staging buffer, advancing `cursor`.
void add_staged_strips(const std::vector<Rect>& sends, int nx, int ny, int width,
                       const std::vector<FieldShape>& fields, std::size_t& cursor,
                       std::vector<StripCopy>& strips);

/// Pack lists of every stage of a subdomain of nx x ny cells, halo width
/// `width`, for `fields`. Throws common::Error (kCount, naming `rank`) when one
/// message would exceed INT_MAX bytes.
std::vector<StageCopies> build_copies(const std::vector<Stage>& stages, int nx, int ny, int width,
                                      const std::vector<FieldShape>& fields, int rank);

}  // namespace collectives::detail
