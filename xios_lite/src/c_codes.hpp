// xios_lite's C codes for the one C shim of the project
// (common/c_status.hpp), shared by its two C interfaces (xios_lite/xios_lite.h
// and the XIOS-named xios_lite/xios.h): the endpoint layer's codes for the
// kinds they share (ep/ep.h: a bad rank or an MPI failure reads the same in
// every interface), and XIOS_LITE_ERR_IO and XIOS_LITE_ERR_CONFIG for the
// output library's own. C++ only, not installed.
#pragma once

#include <utility>

#include "common/c_status.hpp"
#include "ep/c_shim.hpp"
#include "xios_lite/xios_lite.h"

namespace xios_lite::c_api {

inline constexpr common::c_api::CodeTable kCodes = [] {
  common::c_api::CodeTable table = ep::c_api::kCodes;
  table.kinds[static_cast<std::size_t>(common::ErrorKind::kIo)].code = XIOS_LITE_ERR_IO;
  table.kinds[static_cast<std::size_t>(common::ErrorKind::kConfig)].code = XIOS_LITE_ERR_CONFIG;
  return table;
}();
static_assert(common::c_api::is_complete(kCodes),
              "kCodes must give every ErrorKind, in order, a code of its own");
static_assert(kCodes.kinds[static_cast<std::size_t>(common::ErrorKind::kIo)].code != kCodes.other &&
                  kCodes.kinds[static_cast<std::size_t>(common::ErrorKind::kConfig)].code !=
                      kCodes.other,
              "the output library's kinds have codes of their own");

/// common::c_api::guarded() with xios_lite's codes.
template <typename Body>
int guarded(const char* library, Body&& body) noexcept {
  return common::c_api::guarded(kCodes, library, std::forward<Body>(body));
}

}  // namespace xios_lite::c_api
