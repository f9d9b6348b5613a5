// Pack lists of a halo exchange (layouts: collectives/halo/copy_lists.hpp).
#include "collectives/halo/copy_lists.hpp"

#include <climits>
#include <string>

#include "common/error.hpp"

namespace collectives::detail {

namespace {

class FieldFrame {
 public:
  FieldFrame(int nx, int ny, int width)
      : row_(static_cast<std::size_t>(nx + 2 * width)),
        plane_(static_cast<std::size_t>(ny + 2 * width) * row_),
        w_(width) {}

  /// Byte offset of cell (i, j, k) in a field of `element_bytes` elements.
  [[nodiscard]] std::size_t offset(int i, int j, int k, std::size_t element_bytes) const {
    return (static_cast<std::size_t>(k) * plane_ + static_cast<std::size_t>(j + w_) * row_ +
            static_cast<std::size_t>(i + w_)) *
           element_bytes;
  }
  /// Bytes from one row of a level to the next.
  [[nodiscard]] std::size_t row_bytes(std::size_t element_bytes) const {
    return row_ * element_bytes;
  }

 private:
  std::size_t row_;
  std::size_t plane_;
  int w_;
};

/// Appends the rows of `rects` for every field to `rows`, advancing `cursor`
/// through the message.
void add_rows(const std::vector<Rect>& rects, const std::vector<FieldShape>& fields,
              const FieldFrame& frame, std::size_t& cursor, std::vector<RowCopy>& rows) {
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const FieldShape& field = fields[f];
    for (const Rect& r : rects) {
      const std::size_t row_bytes = static_cast<std::size_t>(r.width) * field.element_bytes;
      for (int k = 0; k < field.levels; ++k) {
        for (int j = r.j0; j < r.j0 + r.height; ++j) {
          rows.push_back({static_cast<int>(f), frame.offset(r.i0, j, k, field.element_bytes),
                          cursor, row_bytes});
          cursor += row_bytes;
        }
      }
    }
  }
}

int message_count(std::size_t bytes, int rank, int peer) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw common::Error(common::ErrorKind::kCount, "collectives::HaloPlan", rank,
                        "halo message to rank " + std::to_string(peer) + " of " +
                            std::to_string(bytes) + " bytes exceeds INT_MAX");
  }
  return static_cast<int>(bytes);
}

}  // namespace

std::size_t staged_row_limit(const std::vector<Rect>& rects,
                             const std::vector<FieldShape>& fields) {
  std::size_t wide_bytes = 0;  // of the rows that only a small pair stages
  for (const FieldShape& field : fields) {
    for (const Rect& r : rects) {
      const std::size_t row_bytes = static_cast<std::size_t>(r.width) * field.element_bytes;
      if (row_bytes >= kStagedRowBytes && row_bytes < kStagedWideRowBytes) {
        wide_bytes +=
            row_bytes * static_cast<std::size_t>(r.height) * static_cast<std::size_t>(field.levels);
      }
    }
  }
  return wide_bytes <= kStagedPairBytes ? kStagedWideRowBytes : kStagedRowBytes;
}

void add_direct_strips(const LocalTransfer& transfer, int nx, int ny, int width,
                       const std::vector<FieldShape>& fields, std::vector<StripCopy>& strips) {
  const FieldFrame peer_frame(transfer.nx, transfer.ny, width);
  const FieldFrame my_frame(nx, ny, width);
  std::size_t staged = 0;  // within the peer's block for this rank
  const std::size_t limit = staged_row_limit(transfer.to, fields);
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const FieldShape& field = fields[f];
    const std::size_t peer_stride = peer_frame.row_bytes(field.element_bytes);
    const std::size_t my_stride = my_frame.row_bytes(field.element_bytes);
    for (std::size_t n = 0; n < transfer.to.size(); ++n) {
      const Rect& from = transfer.from[n];
      const Rect& to = transfer.to[n];
      const std::size_t row_bytes = static_cast<std::size_t>(to.width) * field.element_bytes;
      const bool narrow = row_bytes < limit;
      for (int k = 0; k < field.levels; ++k) {
        StripCopy strip;
        strip.field = static_cast<int>(f);
        strip.thread = transfer.thread;
        strip.staged = narrow;
        strip.rows = to.height;
        strip.row_bytes = row_bytes;
        strip.from_offset =
            narrow ? staged : peer_frame.offset(from.i0, from.j0, k, field.element_bytes);
        strip.from_stride = narrow ? row_bytes : peer_stride;
        strip.to_offset = my_frame.offset(to.i0, to.j0, k, field.element_bytes);
        strip.to_stride = my_stride;
        if (narrow) staged += row_bytes * static_cast<std::size_t>(to.height);
        strips.push_back(strip);
      }
    }
  }
}

void add_staged_strips(const std::vector<Rect>& sends, int nx, int ny, int width,
                       const std::vector<FieldShape>& fields, std::size_t& cursor,
                       std::vector<StripCopy>& strips) {
  const FieldFrame frame(nx, ny, width);
  const std::size_t limit = staged_row_limit(sends, fields);
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const FieldShape& field = fields[f];
    for (const Rect& r : sends) {
      const std::size_t row_bytes = static_cast<std::size_t>(r.width) * field.element_bytes;
      if (row_bytes >= limit) continue;
      for (int k = 0; k < field.levels; ++k) {
        StripCopy strip;
        strip.field = static_cast<int>(f);
        strip.rows = r.height;
        strip.row_bytes = row_bytes;
        strip.from_offset = frame.offset(r.i0, r.j0, k, field.element_bytes);
        strip.from_stride = frame.row_bytes(field.element_bytes);
        strip.to_offset = cursor;
        strip.to_stride = row_bytes;
        cursor += row_bytes * static_cast<std::size_t>(r.height);
        strips.push_back(strip);
      }
    }
  }
}

std::vector<StageCopies> build_copies(const std::vector<Stage>& stages, int nx, int ny, int width,
                                      const std::vector<FieldShape>& fields, int rank) {
  const FieldFrame frame(nx, ny, width);
  std::vector<StageCopies> out(stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const Stage& stage = stages[s];
    StageCopies& copies = out[s];
    for (const PeerTransfer& t : stage.peers) {
      copies.peers.push_back(t.peer);
      const std::size_t send_start = copies.send_bytes;
      add_rows(t.sends, fields, frame, copies.send_bytes, copies.pack);
      copies.send_displs.push_back(message_count(send_start, rank, t.peer));
      copies.send_counts.push_back(message_count(copies.send_bytes - send_start, rank, t.peer));
      const std::size_t recv_start = copies.recv_bytes;
      add_rows(t.receives, fields, frame, copies.recv_bytes, copies.unpack);
      copies.recv_displs.push_back(message_count(recv_start, rank, t.peer));
      copies.recv_counts.push_back(message_count(copies.recv_bytes - recv_start, rank, t.peer));
    }
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const FieldShape& field = fields[f];
      for (const RectCopy& c : stage.self) {
        const std::size_t row_bytes = static_cast<std::size_t>(c.to.width) * field.element_bytes;
        for (int k = 0; k < field.levels; ++k) {
          for (int dj = 0; dj < c.to.height; ++dj) {
            copies.self.push_back({static_cast<int>(f),
                                   frame.offset(c.from.i0, c.from.j0 + dj, k, field.element_bytes),
                                   frame.offset(c.to.i0, c.to.j0 + dj, k, field.element_bytes),
                                   row_bytes});
          }
        }
      }
      for (const Rect& r : stage.fill) {
        for (int k = 0; k < field.levels; ++k) {
          for (int j = r.j0; j < r.j0 + r.height; ++j) {
            copies.fill.push_back(
                {static_cast<int>(f), frame.offset(r.i0, j, k, field.element_bytes), r.width});
          }
        }
      }
    }
  }
  return out;
}

}  // namespace collectives::detail
