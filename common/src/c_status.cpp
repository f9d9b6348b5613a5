// The calling thread's last failure, one slot for every C interface built
// on common/c_status.hpp.
#include "common/c_status.hpp"

#include <string>

namespace common::c_api {

namespace {
thread_local std::string last_failure;
}  // namespace

int fail(int code, const char* message) noexcept {
  try {
    last_failure = message;
  } catch (...) {
    // No memory for the message: an empty one, the code still says what failed.
    last_failure.clear();
  }
  return code;
}

int fail_unknown(int code, const char* library) noexcept {
  try {
    return fail(code, (std::string(library) + ": unknown exception").c_str());
  } catch (...) {
    return fail(code, "unknown exception");
  }
}

const char* last_error() noexcept { return last_failure.c_str(); }

}  // namespace common::c_api
