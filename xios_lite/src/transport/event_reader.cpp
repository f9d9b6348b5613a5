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
  walk_ = WireReader(buffer_, "xios_lite::server::receive", inter_.rank());
  corrupt_at_.reset();
  corrupt_why_.clear();
  return source;
}

bool EventReader::next(EventHeader& header, const std::byte*& payload) {
  if (corrupt_at_ || walk_.done()) {
    return false;
  }
  const std::size_t at = walk_.offset();
  try {
    header = walk_.get<EventHeader>();
    if (!header.valid()) {
      corrupt_at_ = at;
      corrupt_why_ = "no event magic at offset " + std::to_string(at);
      return false;
    }
    payload = walk_.get_bytes(header.payload_bytes()).data();
  } catch (const common::Error& e) {
    corrupt_at_ = at;
    corrupt_why_ = e.what();
    return false;
  }
  return true;
}

}  // namespace xios_lite::transport
