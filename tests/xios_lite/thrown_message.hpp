// What a call throws, for the tests that check an error's message, with or
// without MPI: one helper instead of a try/catch in every test.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/error.hpp"

namespace xios_test {

/// The message of the common::Error (ep::Error) that `call` throws, or ""
/// when it throws none. With `kind`, an error of another kind is a test
/// failure (the message is still returned).
template <class F>
std::string thrown_message(F&& call, std::optional<common::ErrorKind> kind = std::nullopt) {
  try {
    call();
  } catch (const common::Error& e) {
    if (kind) {
      EXPECT_EQ(e.kind(), *kind) << e.what();
    }
    return e.what();
  }
  return "";
}

}  // namespace xios_test
