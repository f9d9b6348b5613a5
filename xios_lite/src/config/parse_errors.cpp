#include "parse_errors.hpp"

#include <string>

namespace xios_lite::parser {

void Errors::add(const ep::Error& e) {
  std::string text = e.what();
  if (messages_.empty()) {
    kind_ = e.kind();
    call_ = e.call();
  }
  // The call's prefix is said once, on the first line (as ep::Error says it).
  const std::string prefix = call_ + ": ";
  if (e.call() == call_ && e.ep_rank() < 0 && text.compare(0, prefix.size(), prefix) == 0) {
    text.erase(0, prefix.size());
  }
  if (seen_.insert(text).second) {
    messages_.push_back(std::move(text));
  }
}

void Errors::throw_if_any() const {
  if (messages_.empty()) {
    return;
  }
  std::string text;
  for (std::size_t i = 0; i < messages_.size() && i < kMaxListed; ++i) {
    text += (i == 0 ? "" : "\n") + messages_[i];
  }
  if (messages_.size() > kMaxListed) {
    text += "\n... and " + std::to_string(messages_.size() - kMaxListed) + " more";
  }
  throw ep::Error(kind_, call_, -1, text);
}

}  // namespace xios_lite::parser
