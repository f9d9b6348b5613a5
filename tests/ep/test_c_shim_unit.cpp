// The C interfaces' shim (common/c_status.hpp) with ep's codes
// (ep/c_shim.hpp): every kind of the endpoint layer becomes its own EP_ERR_*
// code of ep/ep.h, the output library's kinds (kIo, kConfig) EP_ERR_OTHER,
// foreign exceptions EP_ERR_NO_MEMORY or EP_ERR_OTHER, and the message lands
// in the one slot per thread that ep_last_error() reads. No MPI.
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/c_status.hpp"
#include "ep/c_shim.hpp"
#include "ep/ep.h"
#include "ep/error.hpp"

namespace {

using ep::ErrorKind;
using ep::c_api::guarded;

// The code and message of a body that throws ep::Error(kind).
int code_of_throwing(ErrorKind kind) {
  return guarded("test", [kind] { throw ep::Error(kind, "ep::test_call", 3, "the detail"); });
}

// The kinds that are not the endpoint layer's: ep/ep.h has no code for them.
bool is_output_kind(ErrorKind kind) { return kind == ErrorKind::kIo || kind == ErrorKind::kConfig; }

TEST(CShim, EveryEndpointKindHasItsOwnCodeAndEveryKindAName) {
  std::set<int> codes;
  std::set<std::string> names;
  std::size_t endpoint_kinds = 0;
  for (std::size_t k = 0; k < ep::kErrorKindCount; ++k) {
    const auto kind = static_cast<ErrorKind>(k);
    const int code = code_of_throwing(kind);
    EXPECT_EQ(code, ep::c_api::code_of(kind)) << ep::name_of(kind);
    EXPECT_NE(code, EP_OK) << ep::name_of(kind);
    if (is_output_kind(kind)) {
      EXPECT_EQ(code, EP_ERR_OTHER) << ep::name_of(kind);
    } else {
      EXPECT_NE(code, EP_ERR_OTHER) << ep::name_of(kind);
      codes.insert(code);
      ++endpoint_kinds;
    }
    names.insert(ep::name_of(kind));
    EXPECT_STREQ(ep_last_error(), "ep::test_call: ep rank 3: the detail");
  }
  EXPECT_EQ(codes.size(), endpoint_kinds) << "two kinds share a code";
  EXPECT_EQ(names.size(), ep::kErrorKindCount) << "two kinds share a name";
  EXPECT_EQ(names.count("an unknown ErrorKind"), 0U);
}

// A table that leaves a kind out, codes one as success or gives two kinds
// one code is refused (is_complete, the static_assert beside each table).
TEST(CShim, IncompleteTablesAreRefused) {
  common::c_api::CodeTable table = ep::c_api::kCodes;
  EXPECT_TRUE(common::c_api::is_complete(table));
  table.kinds[1].code = table.kinds[0].code;
  EXPECT_FALSE(common::c_api::is_complete(table)) << "two kinds, one code";
  table = ep::c_api::kCodes;
  table.kinds[2].code = EP_OK;
  EXPECT_FALSE(common::c_api::is_complete(table)) << "a kind coded as success";
  table = ep::c_api::kCodes;
  table.kinds.back() = common::c_api::KindCode{};
  EXPECT_FALSE(common::c_api::is_complete(table)) << "the last kind left out";
}

// The codes ep/ep.h documents.
TEST(CShim, CodesOfEpH) {
  EXPECT_EQ(code_of_throwing(ErrorKind::kRank), EP_ERR_RANK);
  EXPECT_EQ(code_of_throwing(ErrorKind::kMpi), EP_ERR_MPI);
  EXPECT_EQ(code_of_throwing(ErrorKind::kNoMemory), EP_ERR_NO_MEMORY);
  EXPECT_EQ(code_of_throwing(ErrorKind::kIo), EP_ERR_OTHER);
  EXPECT_EQ(code_of_throwing(ErrorKind::kConfig), EP_ERR_OTHER);
}

TEST(CShim, ForeignExceptions) {
  EXPECT_EQ(guarded("test", [] { throw std::bad_alloc(); }), EP_ERR_NO_MEMORY);
  EXPECT_EQ(guarded("test", [] { throw std::runtime_error("plain failure"); }), EP_ERR_OTHER);
  EXPECT_STREQ(ep::c_api::last_error(), "plain failure");
  EXPECT_EQ(guarded("mylib", [] { throw 42; }), EP_ERR_OTHER);
  EXPECT_STREQ(ep::c_api::last_error(), "mylib: unknown exception");
  EXPECT_EQ(guarded("test", [] {}), EP_OK);
  EXPECT_STREQ(ep::c_api::last_error(), "mylib: unknown exception") << "a success keeps it";
}

TEST(CShim, OneMessagePerThread) {
  EXPECT_EQ(code_of_throwing(ErrorKind::kTag), EP_ERR_TAG);
  std::thread other([] {
    EXPECT_STREQ(ep_last_error(), "");
    EXPECT_EQ(guarded("other", [] { throw std::runtime_error("the other thread's"); }),
              EP_ERR_OTHER);
    EXPECT_STREQ(ep_last_error(), "the other thread's");
  });
  other.join();
  EXPECT_STREQ(ep_last_error(), "ep::test_call: ep rank 3: the detail");
}

}  // namespace
