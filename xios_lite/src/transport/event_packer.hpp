// The packer: events of the wire format (event.hpp) appended to a client's
// channel to one server (server_channel.hpp). Which events go to which
// server (the cut along the servers' row bands, the markers of empty bands)
// is the client's business; this is only how each one is laid out.
//
// Every function reserves the event's bytes in the channel, which may send
// the channel's active buffer and wait for the other one (back-pressure,
// counted into `blocked_s`), and throws what the channel's wait throws.
// Thread safety: as the channel (one client thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "records/record_time.hpp"
#include "transport/event.hpp"
#include "transport/server_channel.hpp"
#include "xios_lite/client.hpp"

namespace xios_lite::transport {

/// A sub-block in global indices: `nk` levels of `block`.
struct SubBlock {
  int nk = 1;
  Block block;
};

/// The values a data piece is cut from: a block of nk x `nj` x ni values
/// (ni fastest) whose first row is the global row `jbegin`; the piece's
/// rows must lie inside it and its ni must be the block's. `row` and
/// `level` (0: ni and nj x ni) are the strides between the rows and the
/// levels when the values lie in a larger array (the model's, with halos).
struct BlockValues {
  const double* values = nullptr;
  int jbegin = 0;
  int nj = 0;
  std::size_t row = 0;
  std::size_t level = 0;
};

/// A kData or kMissing event of variable `var` for `piece` of record `t`;
/// a data event carries the piece's rows of `from` (nothing when the piece
/// is empty: a marker for a server without rows).
void append_piece(ServerChannel& channel, EventKind kind, int var, const records::RecordTime& t,
                  const SubBlock& piece, const BlockValues& from, double& blocked_s);

/// A control event (kDefinition, kContextDefinition, kClientError,
/// kDefinitionFailed, kFinalise, kAbandon) whose payload is `payload`.
void append_control(ServerChannel& channel, EventKind kind, std::span<const std::byte> payload,
                    double& blocked_s);
/// A control event whose payload is a text.
inline void append_control(ServerChannel& channel, EventKind kind, std::string_view text,
                           double& blocked_s) {
  append_control(channel, kind, std::as_bytes(std::span<const char>(text)), blocked_s);
}

/// A heartbeat: the client is alive at `step`.
void append_heartbeat(ServerChannel& channel, std::int64_t step, double& blocked_s);

/// A kReadRequest for `piece` of record `record` of input variable `input`;
/// `number` comes back in the answer's `time` (it tells answers apart).
void append_read_request(ServerChannel& channel, int input, std::int64_t record,
                         const SubBlock& piece, double number, double& blocked_s);

}  // namespace xios_lite::transport
