// The one shim of the C interfaces built on the endpoint layer (ep/ep.h,
// xios_lite/xios_lite.h): each C function runs its body through guarded(),
// which turns whatever it throws into an EP_ERR_* code and the calling
// thread's message (ep_last_error(), xios_lite_last_error()). C++ only.
//
//   int xios_lite_close_definition(xios_lite_client_t client) {
//     return ep::c_api::guarded("xios_lite", [&] { ... });
//   }
#pragma once

#include <array>
#include <cstddef>
#include <exception>
#include <new>

#include "ep/ep.h"
#include "ep/error.hpp"

namespace ep::c_api {

/// The C code of every ErrorKind, entry i for kind i.
struct KindCode {
  ErrorKind kind;
  int code;
};
inline constexpr std::array<KindCode, kErrorKindCount> kKindCodes{{
    {ErrorKind::kRank, EP_ERR_RANK},
    {ErrorKind::kTag, EP_ERR_TAG},
    {ErrorKind::kCount, EP_ERR_COUNT},
    {ErrorKind::kTruncate, EP_ERR_TRUNCATE},
    {ErrorKind::kTooManyEndpoints, EP_ERR_TOO_MANY_ENDPOINTS},
    {ErrorKind::kThreadLevel, EP_ERR_THREAD_LEVEL},
    {ErrorKind::kFreedComm, EP_ERR_FREED_COMM},
    {ErrorKind::kArgument, EP_ERR_ARGUMENT},
    {ErrorKind::kRequest, EP_ERR_REQUEST},
    {ErrorKind::kMpi, EP_ERR_MPI},
    {ErrorKind::kNoMemory, EP_ERR_NO_MEMORY},
    {ErrorKind::kIo, EP_ERR_IO},
    {ErrorKind::kConfig, EP_ERR_CONFIG},
}};

namespace detail {
// Every kind in its place (a kind added to the enum without an entry leaves
// a value-initialised entry {kRank, 0} at the end), and every code its own:
// not EP_OK, not EP_ERR_OTHER, not another kind's.
constexpr bool kind_codes_complete() {
  for (std::size_t i = 0; i < kKindCodes.size(); ++i) {
    const KindCode& entry = kKindCodes[i];
    if (static_cast<std::size_t>(entry.kind) != i || entry.code == EP_OK ||
        entry.code == EP_ERR_OTHER) {
      return false;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (kKindCodes[j].code == entry.code) return false;
    }
  }
  return true;
}
}  // namespace detail
static_assert(detail::kind_codes_complete(),
              "kKindCodes must give every ErrorKind, in order, a code of its own in ep/ep.h");

/// The EP_ERR_* code of `kind`.
[[nodiscard]] constexpr int code_of(ErrorKind kind) noexcept {
  return kKindCodes[static_cast<std::size_t>(kind)].code;
}

/// Records `message` as the calling thread's last failure and returns `code`
/// (with no memory to copy the message, an empty one).
int fail(int code, const char* message) noexcept;
/// fail(EP_ERR_OTHER, "<library>: unknown exception").
int fail_unknown(const char* library) noexcept;
/// The calling thread's last failure in any C interface ("" when none); valid
/// until the thread's next failing call.
[[nodiscard]] const char* last_error() noexcept;

/// Runs `body()`: EP_OK, or the code and message of what it threw: an
/// ep::Error its kind's code, std::bad_alloc EP_ERR_NO_MEMORY, any other
/// exception EP_ERR_OTHER (named after `library` when it has no message).
template <typename Body>
int guarded(const char* library, Body&& body) noexcept {
  try {
    body();
    return EP_OK;
  } catch (const Error& e) {
    return fail(code_of(e.kind()), e.what());
  } catch (const std::bad_alloc& e) {
    return fail(EP_ERR_NO_MEMORY, e.what());
  } catch (const std::exception& e) {
    return fail(EP_ERR_OTHER, e.what());
  } catch (...) {
    return fail_unknown(library);
  }
}

}  // namespace ep::c_api
