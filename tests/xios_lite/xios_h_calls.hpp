// Calls of xios.h (the C interface under XIOS's Fortran module) as the
// tests that play a Fortran model make them: every call checked, handles by
// kind and id, strings with Fortran's blank padding taken off.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "xios_lite/xios.h"

namespace xios_test {

/// Every xios.h call returns 0, else the failure is named (a non-fatal
/// expectation: the model goes on, and its collective calls with it).
inline void ok(int rc, const std::string& what) {
  EXPECT_EQ(rc, 0) << what << ": " << cxios_last_error();
}

/// The handle of element `id` of `kind` ("file", "domain", ...).
inline xios_handle_t handle(const char* kind, const std::string& id) {
  xios_handle_t h = nullptr;
  ok(cxios_handle_create(kind, id.c_str(), static_cast<int>(id.size()), &h),
     std::string(kind) + " " + id);
  return h;
}

/// A string attribute read by `get` (a cxios_get_*_attr of a string),
/// without the blank padding Fortran's fixed-length strings carry.
inline std::string get_text(int (*get)(xios_handle_t, char*, int), xios_handle_t h) {
  std::array<char, 256> text{};
  ok(get(h, text.data(), static_cast<int>(text.size())), "get");
  std::string out(text.data(), text.size());
  out.erase(out.find_last_not_of(std::string(" \0", 2)) + 1);
  return out;
}

/// Replaces every `key` in `text` by `value` (NEMO's @placeholder@ names).
inline void replace_all(std::string& text, const std::string& key, const std::string& value) {
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
}

}  // namespace xios_test
