// Calls of xios.h (the C interface under XIOS's Fortran module) as the
// tests that play a Fortran model make them: every call checked, handles by
// kind and id, strings with Fortran's blank padding taken off.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "xios_h_nemo.hpp"
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

/// set_domain_block with every call checked by ok above.
template <class Block>
void set_domain_block(xios_handle_t d, const std::string& id, int ni_glo, int nj_glo,
                      const Block& block) {
  set_domain_block(d, id, ni_glo, nj_glo, block,
                   [](int rc, const std::string& what) { ok(rc, what); });
}

/// init_nemo_client with every call checked by ok above.
inline NemoClient init_nemo_client() {
  return init_nemo_client([](int rc, const std::string& what) { ok(rc, what); });
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

/// NEMO's iom_update_file_name: the placeholders of file `id`'s name and
/// name_suffix (as inherited) replaced, then set. @freq@ is written from the
/// file's output_freq as NEMO writes it ("1m", "5d", "6h").
inline void update_file_name(const std::string& id, const std::string& expname,
                             const std::string& startdate, const std::string& enddate) {
  const xios_handle_t f = handle("file", id);
  cxios_duration freq{};
  ok(cxios_get_file_output_freq(f, &freq), "output_freq " + id);
  const std::string freq_text = freq.month > 0 ? std::to_string(static_cast<int>(freq.month)) + "m"
                                : freq.day > 0 ? std::to_string(static_cast<int>(freq.day)) + "d"
                                               : std::to_string(static_cast<int>(freq.hour)) + "h";
  for (const bool suffix : {false, true}) {
    std::string name = get_text(suffix ? cxios_get_file_name_suffix : cxios_get_file_name, f);
    replace_all(name, "@expname@", expname);
    replace_all(name, "@freq@", freq_text);
    replace_all(name, "@startdate@", startdate);
    replace_all(name, "@enddate@", enddate);
    ok((suffix ? cxios_set_file_name_suffix : cxios_set_file_name)(f, name.c_str(),
                                                                   static_cast<int>(name.size())),
       "name " + id);
  }
}

}  // namespace xios_test
