// The one shim of the project's C interfaces (ep/ep.h, collectives/
// collectives.h, xios_lite/xios_lite.h, xios_lite/xios.h): each C function
// runs its body through guarded(), which turns whatever it throws into the
// library's code for it and the calling thread's message (ep_last_error(),
// xios_lite_last_error(), ... all read the same slot). Each library says its
// codes in one CodeTable, checked at compile time. C++ only.
//
//   inline constexpr common::c_api::CodeTable kCodes = {...};
//   int mylib_call(int n) {
//     return common::c_api::guarded(kCodes, "mylib", [&] { ... });
//   }
#pragma once

#include <array>
#include <cstddef>
#include <exception>
#include <new>

#include "common/error.hpp"

namespace common::c_api {

/// One entry of a code table: a kind and the library's code for it.
struct KindCode {
  ErrorKind kind;
  int code;
};

/// A C interface's codes: one per ErrorKind (entry i for kind i), and its
/// codes for success and for an exception that is not a common::Error. A
/// kind that the library never reports (ep does not read files) may share
/// `other`; every other kind has a code of its own.
struct CodeTable {
  std::array<KindCode, kErrorKindCount> kinds;
  int ok;
  int no_memory;  ///< std::bad_alloc
  int other;      ///< any other exception
};

/// Every kind in its place (a kind added to the enum without an entry
/// leaves a value-initialised entry {kRank, 0} at the end), no kind coded as
/// success, and no two kinds sharing a code unless it is `other`. For
/// static_assert next to each table.
constexpr bool is_complete(const CodeTable& table) {
  for (std::size_t i = 0; i < table.kinds.size(); ++i) {
    const KindCode& entry = table.kinds[i];
    if (static_cast<std::size_t>(entry.kind) != i || entry.code == table.ok) return false;
    if (entry.code == table.other) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (table.kinds[j].code == entry.code) return false;
    }
  }
  return true;
}

/// The code of `kind` in `table`.
[[nodiscard]] constexpr int code_of(const CodeTable& table, ErrorKind kind) noexcept {
  return table.kinds[static_cast<std::size_t>(kind)].code;
}

/// Records `message` as the calling thread's last failure and returns `code`
/// (with no memory to copy the message, an empty one).
int fail(int code, const char* message) noexcept;
/// fail(code, "<library>: unknown exception").
int fail_unknown(int code, const char* library) noexcept;
/// The calling thread's last failure in any C interface ("" when none); valid
/// until the thread's next failing call.
[[nodiscard]] const char* last_error() noexcept;

/// Runs `body()`: table.ok, or the code and message of what it threw: a
/// common::Error its kind's code, std::bad_alloc `no_memory`, any other
/// exception `other` (named after `library` when it has no message).
template <typename Body>
int guarded(const CodeTable& table, const char* library, Body&& body) noexcept {
  try {
    body();
    return table.ok;
  } catch (const Error& e) {
    return fail(code_of(table, e.kind()), e.what());
  } catch (const std::bad_alloc& e) {
    return fail(table.no_memory, e.what());
  } catch (const std::exception& e) {
    return fail(table.other, e.what());
  } catch (...) {
    return fail_unknown(table.other, library);
  }
}

}  // namespace common::c_api
