// Small text helpers of xios_lite's parsers (the XML configuration and the
// calendar's dates and durations). Pure functions: thread-safe.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace xios_lite {

/// `s` without leading and trailing white space.
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

/// 'text', for messages (built by appending: GCC 12 warns, -Wrestrict, on
/// "'" + std::string).
inline std::string quote(std::string_view text) {
  std::string q(1, '\'');
  q.append(text);
  q.append(1, '\'');
  return q;
}

}  // namespace xios_lite
