// The configuration unit tests' one question: what does parsing this XML
// (as iodef.xml) throw? Pure function, no MPI.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ep/error.hpp"
#include "xios_lite/config.hpp"

namespace xios_test {

/// The message of the ep::Error that parsing `xml` as "iodef.xml" throws,
/// or "" when it parses. Every configuration error is of kind kConfig (a
/// test failure otherwise).
inline std::string error_of(const std::string& xml) {
  try {
    (void)xios_lite::parse_config_string(xml, "iodef.xml");
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), ep::ErrorKind::kConfig) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace xios_test
