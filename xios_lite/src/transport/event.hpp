// Wire format of the client -> server event stream.
//
// A client packs events back to back into a send buffer; one MPI message is
// one buffer, so a message holds one or more events. Each event is a fixed
// 56-byte header followed by its payload:
//
//   byte  0      4      6      8       12      16      20      24      28      32
//         +------+------+------+-------+-------+-------+-------+-------+-------+
//         | magic|kind  | var  |flags  |record |  nk   |ibegin |  ni   |jbegin | ...
//         +------+------+------+-------+-------+-------+-------+-------+-------+
//   byte 28      32             40             48             56
//         | nj    |  time (f64)  | bound_lo f64 | bound_hi f64 | payload ...
//
//   magic_kind (u32): bits 31..8 the magic 0x584C49 ("XLI"), bits 7..0 the kind.
//   var (u16):  index of the output variable in the server's variable table
//               (Config order: file by file, variable by variable).
//   flags (u16): 0; a kReadReply carrying an error text instead of values: 1.
//   record (u32): data and missing events: the output record of that
//               variable, which is the index of its output period (period k
//               covers (boundary(k), boundary(k+1)]), never a count of
//               records sent; control events: the payload's length in bytes.
//   nk, ibegin, ni, jbegin, nj (i32): the sub-block carried, in global indices.
//   time, bound_lo, bound_hi (f64): seconds since the calendar start; a
//               heartbeat carries the client's current step in `time`.
//
// Payload by kind: kData nk*nj*ni f64 values; kMissing nothing (the points
// of the sub-block will not come: their client did not send the field when
// it was due); the control events a text or, for kDefinition, the client's
// blocks (see RecordAssembly::define), for kContextDefinition the
// definitions the model completed (sizes, coordinates, calendar).
//
// Written and read with the codec (wire_codec.hpp): the header as one
// value (put(h), get<EventHeader>()), the payload as raw elements.
//
// Events of one client reach one server in the order they were packed (MPI
// non-overtaking on one communicator); the server does not depend on the
// order between clients.
//
// Server -> client messages are separate tags: kErrorTag (a text),
// kAckTag (a FinaliseAck, the vector of the EP ranks of the clients the
// server stopped waiting for, then a string, empty when all went well) and
// kReadTag (the answer to a kReadRequest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "xios_lite/report.hpp"

namespace xios_lite::transport {

enum class EventKind : std::uint8_t {
  kData = 1,              ///< a sub-block of one record of one variable
  kFinalise = 2,          ///< the client finalised: it sends nothing more
  kDefinitionFailed = 3,  ///< close_definition failed on the clients (text: why)
  kDefinition = 4,        ///< close_definition succeeded (payload: the client's blocks)
  kMissing = 5,           ///< a sub-block of a record that will not come (no payload)
  kClientError = 6,       ///< an error the client raised (text), for every client to hear
  kAbandon = 7,           ///< the client left without finalise (text: why); sends nothing more
  kHeartbeat = 8,         ///< the client is alive (time: its step); no payload
  /// Client 0's completed definitions (payload: the digest of their
  /// definition_text as a u64, then config::pack of global_definitions):
  /// the first event of client 0 in every channel after close_definition.
  kContextDefinition = 9,
  /// recv_field: the sub-block (nk, ibegin, ni, jbegin, nj) of record
  /// `record` of input variable `var` (Config::find_input numbering),
  /// inside the server's band; no payload. The answer is a kReadReply on
  /// kReadTag.
  kReadRequest = 10,
  /// Server -> client on kReadTag: the header of the request with this
  /// kind, then nk*nj*ni f64 values, or with flags 1 an error text (the
  /// codec's string: u64 length, chars).
  kReadReply = 11,
};

inline constexpr std::uint32_t kMagic = 0x584C49;  // "XLI"

struct EventHeader {
  std::uint32_t magic_kind = 0;
  std::uint16_t var = 0;
  std::uint16_t flags = 0;
  std::uint32_t record = 0;
  std::int32_t nk = 0;
  std::int32_t ibegin = 0;
  std::int32_t ni = 0;
  std::int32_t jbegin = 0;
  std::int32_t nj = 0;
  double time = 0.0;
  double bound_lo = 0.0;
  double bound_hi = 0.0;

  [[nodiscard]] constexpr EventKind kind() const noexcept {
    return static_cast<EventKind>(magic_kind & 0xFFu);
  }
  [[nodiscard]] constexpr bool valid() const noexcept { return (magic_kind >> 8) == kMagic; }
  [[nodiscard]] constexpr std::size_t points() const noexcept {
    return static_cast<std::size_t>(nk) * static_cast<std::size_t>(nj) *
           static_cast<std::size_t>(ni);
  }
  /// Whether the event names a sub-block of a record (data or missing).
  [[nodiscard]] constexpr bool is_piece() const noexcept {
    return kind() == EventKind::kData || kind() == EventKind::kMissing;
  }
  /// Payload bytes: the values of a data event, nothing for a missing one,
  /// `record` bytes for the control events.
  [[nodiscard]] constexpr std::size_t payload_bytes() const noexcept {
    if (kind() == EventKind::kData) return points() * sizeof(double);
    if (kind() == EventKind::kMissing || kind() == EventKind::kHeartbeat ||
        kind() == EventKind::kReadRequest) {
      return 0;
    }
    return record;
  }
  /// Header plus payload in bytes.
  [[nodiscard]] constexpr std::size_t wire_bytes() const noexcept {
    return sizeof(EventHeader) + payload_bytes();
  }
};

[[nodiscard]] constexpr std::uint32_t make_magic_kind(EventKind kind) noexcept {
  return (kMagic << 8) | static_cast<std::uint32_t>(kind);
}

static_assert(sizeof(EventHeader) == 56, "the wire header is 56 bytes");
static_assert(offsetof(EventHeader, record) == 8 && offsetof(EventHeader, nk) == 12);
static_assert(offsetof(EventHeader, nj) == 28 && offsetof(EventHeader, time) == 32);
static_assert(offsetof(EventHeader, bound_hi) == 48);
static_assert(EventHeader{make_magic_kind(EventKind::kData)}.kind() == EventKind::kData);
static_assert(EventHeader{make_magic_kind(EventKind::kFinalise)}.valid());
static_assert(EventHeader{make_magic_kind(EventKind::kMissing), 0, 0, 0, 1, 0, 4, 0, 2}
                  .wire_bytes() == sizeof(EventHeader));
static_assert(EventHeader{make_magic_kind(EventKind::kData), 0, 0, 0, 1, 0, 4, 0, 2}.wire_bytes() ==
              sizeof(EventHeader) + 8 * sizeof(double));
static_assert(EventHeader{make_magic_kind(EventKind::kAbandon), 0, 0, 5}.wire_bytes() ==
              sizeof(EventHeader) + 5);

/// MPI tags on the client/server intercommunicator.
inline constexpr int kEventsTag = 11;  ///< client -> server: a buffer of events
inline constexpr int kErrorTag = 12;   ///< server -> client: an error text
inline constexpr int kAckTag = 13;     ///< server -> client: finalise done
inline constexpr int kReadTag = 14;    ///< server -> client: a kReadReply (recv_field)

/// The fixed part of the finalise acknowledgement: the server endpoint's
/// report and whether the string after the gone list is its error. Bytes
/// between builds of the same library, like every event.
struct FinaliseAck {
  ServerReport report;
  std::int32_t failed = 0;  ///< 1: the string after the gone list is the error
};
static_assert(std::is_trivially_copyable_v<FinaliseAck>);

}  // namespace xios_lite::transport
