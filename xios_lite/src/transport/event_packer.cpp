#include "event_packer.hpp"

#include <cstddef>
#include <span>

#include "transport/wire_codec.hpp"

namespace xios_lite::transport {
namespace {

EventHeader header_of(EventKind kind, int var, const SubBlock& piece) {
  const Block& b = piece.block;
  return {make_magic_kind(kind),
          static_cast<std::uint16_t>(var),
          0,
          0,
          piece.nk,
          b.ibegin,
          b.ni,
          b.jbegin,
          b.nj};
}

// A writer into `bytes` reserved in the channel's active buffer: the event
// is written in place, the buffer is the MPI message.
WireWriter reserved(ServerChannel& channel, std::size_t bytes, double& blocked_s) {
  return WireWriter(std::span<std::byte>(channel.reserve(bytes, blocked_s), bytes));
}

// A header-only event.
void append_header(ServerChannel& channel, const EventHeader& h, double& blocked_s) {
  reserved(channel, sizeof h, blocked_s).put(h);
}

}  // namespace

void append_piece(ServerChannel& channel, EventKind kind, int var, const records::RecordTime& t,
                  const SubBlock& piece, const BlockValues& from, double& blocked_s) {
  EventHeader h = header_of(kind, var, piece);
  h.record = static_cast<std::uint32_t>(t.record);
  h.time = t.time;
  h.bound_lo = t.lo;
  h.bound_hi = t.hi;
  WireWriter out = reserved(channel, h.wire_bytes(), blocked_s);
  out.put(h);
  if (kind != EventKind::kData) {
    return;
  }
  const Block& b = piece.block;
  const auto ni = static_cast<std::size_t>(b.ni);
  const std::size_t row = from.row > 0 ? from.row : static_cast<std::size_t>(b.ni);
  const std::size_t level =
      from.level > 0 ? from.level
                     : static_cast<std::size_t>(from.nj) * static_cast<std::size_t>(b.ni);
  for (int k = 0; k < piece.nk; ++k) {
    for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
      const double* src = from.values + static_cast<std::size_t>(k) * level +
                          static_cast<std::size_t>(j - from.jbegin) * row;
      out.put_raw(std::span<const double>(src, ni));
    }
  }
}

void append_control(ServerChannel& channel, EventKind kind, std::span<const std::byte> payload,
                    double& blocked_s) {
  EventHeader h;
  h.magic_kind = make_magic_kind(kind);
  h.record = static_cast<std::uint32_t>(payload.size());
  WireWriter out = reserved(channel, h.wire_bytes(), blocked_s);
  out.put(h);
  out.put_raw(payload);
}

void append_heartbeat(ServerChannel& channel, std::int64_t step, double& blocked_s) {
  EventHeader h;
  h.magic_kind = make_magic_kind(EventKind::kHeartbeat);
  h.time = static_cast<double>(step);
  append_header(channel, h, blocked_s);
}

void append_read_request(ServerChannel& channel, int input, std::int64_t record,
                         const SubBlock& piece, double number, double& blocked_s) {
  EventHeader h = header_of(EventKind::kReadRequest, input, piece);
  h.record = static_cast<std::uint32_t>(record);
  h.time = number;
  append_header(channel, h, blocked_s);
}

}  // namespace xios_lite::transport
