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

/// Rows narrower than this are staged: a row read out of another core's
/// array costs a cache-line transfer or two however few bytes it holds (a
/// column strip of w = 1 is one line per 8 bytes), so the owner packs its
/// narrow rows, from its own cache, into one contiguous block per local
/// reader, which the reader then reads line by line. Wider rows are read
/// straight out of the owner's field. An owner whose readers read only
/// staged rows also waits for their departure at its next call rather
/// than at the end of this one (its own array is free at once): one
/// blocking round per call instead of two, worth an extra local copy of
/// rows up to this size.
inline constexpr std::size_t kStagedRowBytes = 1024;

/// A row copied from a peer in this process (the zero-copy path of a bound
/// plan): `bytes` to byte `to_offset` of this rank's field `field`, from
/// byte `from_offset` of the peer's field `field`, or, for a staged row,
/// of the peer's staging block for this rank.
struct RowDirectCopy {
  int field = 0;
  int thread = 0;  ///< the peer's thread in the process (its board slot)
  bool staged = false;
  std::size_t from_offset = 0;
  std::size_t to_offset = 0;
  std::size_t bytes = 0;
};

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

/// Appends the rows of `transfer` for every field to `rows`, this rank's
/// subdomain being nx x ny, halo `width`; staged rows are numbered within
/// the peer's block for this rank in the order add_staged_rows packs them.
void add_direct_rows(const LocalTransfer& transfer, int nx, int ny, int width,
                     const std::vector<FieldShape>& fields, std::vector<RowDirectCopy>& rows);
/// The owner's side: appends the staged (narrow) rows of `sends` (this
/// rank's rectangles for one local reader) to `rows`, packed from
/// `cursor` on in a staging buffer, advancing `cursor`.
void add_staged_rows(const std::vector<Rect>& sends, int nx, int ny, int width,
                     const std::vector<FieldShape>& fields, std::size_t& cursor,
                     std::vector<RowCopy>& rows);

/// Pack lists of every stage of a subdomain of nx x ny cells, halo width
/// `width`, for `fields`. Throws common::Error (kCount, naming `rank`) when one
/// message would exceed INT_MAX bytes.
std::vector<StageCopies> build_copies(const std::vector<Stage>& stages, int nx, int ny, int width,
                                      const std::vector<FieldShape>& fields, int rank);

}  // namespace collectives::detail
