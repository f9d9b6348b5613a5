// The endpoint layer's C codes (ep/ep.h) for the one C shim of the project
// (common/c_status.hpp), for ep's C interface and the C interfaces of the
// libraries whose calls report ep's codes (collectives/collectives.h). C++
// only.
//
//   int collectives_call(...) {
//     return ep::c_api::guarded("collectives", [&] { ... });
//   }
#pragma once

#include <utility>

#include "common/c_status.hpp"
#include "ep/ep.h"
#include "ep/error.hpp"

namespace ep::c_api {

/// The EP_ERR_* code of every kind. kIo and kConfig are the output
/// library's (xios_lite/xios_lite.h has their codes): ep never throws them,
/// and a library reporting through this table that did would give EP_ERR_OTHER.
inline constexpr common::c_api::CodeTable kCodes{
    {{
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
        {ErrorKind::kIo, EP_ERR_OTHER},
        {ErrorKind::kConfig, EP_ERR_OTHER},
    }},
    EP_OK,
    EP_ERR_NO_MEMORY,
    EP_ERR_OTHER};
static_assert(common::c_api::is_complete(kCodes),
              "kCodes must give every ErrorKind, in order, a code of its own in ep/ep.h");

/// The EP_ERR_* code of `kind`.
[[nodiscard]] constexpr int code_of(ErrorKind kind) noexcept {
  return common::c_api::code_of(kCodes, kind);
}

/// common::c_api::guarded() with ep's codes.
template <typename Body>
int guarded(const char* library, Body&& body) noexcept {
  return common::c_api::guarded(kCodes, library, std::forward<Body>(body));
}

/// The calling thread's last failure in any C interface ("" when none).
[[nodiscard]] inline const char* last_error() noexcept { return common::c_api::last_error(); }

}  // namespace ep::c_api
