// The reader: the server end of the client -> server event stream. It takes
// buffers of events (kEventsTag) from any client of the intercommunicator
// and walks them event by event, checking each header (the magic, the
// length) against the buffer. What the events mean is the server's business.
//
// Thread safety: one reader per receiving endpoint, used by its thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "ep/request.hpp"
#include "transport/event.hpp"
#include "transport/wire_codec.hpp"

namespace xios_lite::transport {

class EventReader {
 public:
  /// `inter` outlives the reader.
  explicit EventReader(const ep::InterCommunicator& inter) : inter_(inter) {}

  /// Whether a buffer of events from some client is waiting (does not
  /// block); take() receives that one.
  [[nodiscard]] bool poll();
  /// Receives the buffer poll() found and returns its client (a rank of the
  /// remote group); the walk starts at its first event.
  int take();
  /// Bytes of the buffer take() received.
  [[nodiscard]] std::size_t size() const noexcept { return buffer_.size(); }
  /// The next event of the buffer: its header and its payload (header.
  /// payload_bytes() bytes, valid until the next take()). False at the end
  /// of the buffer, or at an event that is corrupt (see corrupt_at()).
  bool next(EventHeader& header, const std::byte*& payload);
  /// The byte at which next() met a corrupt event (a wrong magic, or a
  /// header or payload past the end of the buffer); empty when none.
  [[nodiscard]] std::optional<std::size_t> corrupt_at() const noexcept { return corrupt_at_; }
  /// What was wrong there (the codec's message: offset, bytes wanted and
  /// available); empty when nothing was.
  [[nodiscard]] const std::string& corrupt_why() const noexcept { return corrupt_why_; }

 private:
  const ep::InterCommunicator& inter_;
  std::optional<ep::Message> message_;
  std::vector<std::byte> buffer_;
  WireReader walk_{{}};
  std::optional<std::size_t> corrupt_at_;
  std::string corrupt_why_;
};

}  // namespace xios_lite::transport
