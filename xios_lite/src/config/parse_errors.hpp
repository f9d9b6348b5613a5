// The errors of one parse, collected so that a configuration's author sees
// every problem of a file at once rather than one per run.
//
// Each definition (a domain, an axis, a scalar, a grid, a field, a file, a
// file's field) and each independent setting is parsed inside guard(): an
// ep::Error it throws is recorded and parsing goes on with the next one. A
// definition that refers to one that failed is skipped without a message
// (DependsOnFailed): its error would only repeat the first. The messages
// are kept in the order they arose, so the first is the one a parse that
// stopped at the first error would have thrown; a message seen before (a
// forward reference that built a failing definition early) is not repeated.
//
// Used by the configuration parser only. Not thread-safe (one per parse).
#pragma once

#include <cstddef>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "ep/error.hpp"

namespace xios_lite::parser {

// Thrown where a definition refers to one whose parsing failed: guard()
// drops it, the failed one's own error being the one to read.
struct DependsOnFailed : std::exception {
  [[nodiscard]] const char* what() const noexcept override {
    return "depends on a failed definition";
  }
};

class Errors {
 public:
  /// At most this many messages are listed, then "... and N more".
  static constexpr std::size_t kMaxListed = 50;

  /// Runs `parse`; records the ep::Error it throws. Whether it succeeded.
  template <class F>
  bool guard(F&& parse) {
    try {
      parse();
      return true;
    } catch (const ep::Error& e) {
      add(e);
    } catch (const DependsOnFailed&) {
      // the failed definition's own error is the one to read
    }
    ++failures_;
    return false;
  }

  void add(const ep::Error& e);
  /// Guards that failed so far (skipped and repeated errors included).
  [[nodiscard]] std::size_t failures() const { return failures_; }
  /// Throws one ep::Error listing every message, one per line (the first
  /// error's kind and call); nothing when there was none.
  void throw_if_any() const;

 private:
  std::vector<std::string> messages_;  ///< without the call's prefix
  std::set<std::string> seen_;
  ep::ErrorKind kind_ = ep::ErrorKind::kConfig;
  std::string call_;
  std::size_t failures_ = 0;
};

}  // namespace xios_lite::parser
