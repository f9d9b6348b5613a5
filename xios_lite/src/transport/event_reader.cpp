#include "event_reader.hpp"

#include <mpi.h>

#include "ep/typed.hpp"

namespace xios_lite::transport {

bool EventReader::poll() {
  if (!message_) {
    message_ = inter_.improbe(ep::kAnySource, kEventsTag);
  }
  return message_.has_value();
}

int EventReader::take() {
  const int source = message_->status().source;
  buffer_.resize(message_->status().bytes);
  ep::mrecv(buffer_.data(), static_cast<int>(buffer_.size()), MPI_BYTE, *message_);
  message_.reset();
  offset_ = 0;
  corrupt_at_.reset();
  return source;
}

bool EventReader::next(EventHeader& header, const std::byte*& payload) {
  if (corrupt_at_ || offset_ + sizeof(EventHeader) > buffer_.size()) {
    return false;
  }
  header = read_header(buffer_, offset_);
  const std::size_t end = offset_ + (header.valid() ? header.wire_bytes() : 0);
  if (!header.valid() || end > buffer_.size()) {
    corrupt_at_ = offset_;
    return false;
  }
  payload = buffer_.data() + offset_ + sizeof header;
  offset_ = end;
  return true;
}

}  // namespace xios_lite::transport
