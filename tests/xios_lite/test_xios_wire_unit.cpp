// The wire codec (xios_lite/src/transport/wire_codec.hpp): values round
// trip in the form the header draws, a short or malformed buffer is refused
// with a kIo error naming the offset and the bytes wanted and available, and
// a fixed writer (an event written in place) refuses to overrun.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "thrown_message.hpp"
#include "transport/event.hpp"
#include "transport/wire_codec.hpp"

namespace {

using xios_lite::transport::WireReader;
using xios_lite::transport::WireWriter;

// Runs `read` and returns the kIo error's message ("" when nothing was thrown).
template <class Read>
std::string refusal(Read&& read) {
  return xios_test::thrown_message(std::forward<Read>(read), common::ErrorKind::kIo);
}

TEST(XiosWire, ValuesRoundTrip) {
  xios_lite::transport::EventHeader h;
  h.magic_kind = xios_lite::transport::make_magic_kind(xios_lite::transport::EventKind::kData);
  h.var = 7;
  h.nk = 2;
  h.ni = 3;
  h.nj = 1;
  h.time = 3600.5;
  const std::vector<double> values{1.5, -2.25, 1e300};
  const std::vector<int> ints{-1, 0, 2147483647};
  const std::vector<bool> flags{true, false, true, true};
  const std::vector<std::byte> blob{std::byte{0}, std::byte{0xff}};
  const std::string text("with\0nul", 8);

  WireWriter w;
  w.put(std::int32_t{-42});
  w.put(std::uint64_t{1} << 60);
  w.put(0.1);
  w.put(true);
  w.put(h);
  w.put(text);
  w.put(std::string());
  w.put(values);
  w.put(ints);
  w.put(flags);
  w.put_vector(std::span<const std::byte>(blob));
  w.put_raw(std::span<const double>(values));
  const std::vector<std::byte> bytes = w.take();
  const std::size_t expected = 4 + 8 + 8 + 1 + sizeof h + (8 + text.size()) + 8 + (8 + 3 * 8) +
                               (8 + 3 * 4) + (8 + 4) + (8 + 2) + 3 * 8;
  ASSERT_EQ(bytes.size(), expected);

  WireReader r(bytes);
  EXPECT_EQ(r.get<std::int32_t>(), -42);
  EXPECT_EQ(r.get<std::uint64_t>(), std::uint64_t{1} << 60);
  EXPECT_EQ(r.get<double>(), 0.1);
  bool b = false;
  r.get(b);
  EXPECT_TRUE(b);
  const auto back = r.get<xios_lite::transport::EventHeader>();
  EXPECT_TRUE(back.valid());
  EXPECT_EQ(back.kind(), xios_lite::transport::EventKind::kData);
  EXPECT_EQ(back.var, 7);
  EXPECT_EQ(back.points(), 6U);
  EXPECT_EQ(back.time, 3600.5);
  EXPECT_EQ(r.get_string(), text);
  EXPECT_EQ(r.get_string(), "");
  EXPECT_EQ(r.get_vector<double>(), values);
  EXPECT_EQ(r.get_vector<int>(), ints);
  std::vector<bool> flags_back;
  r.get(flags_back);
  EXPECT_EQ(flags_back, flags);
  EXPECT_EQ(r.get_vector<std::byte>(), blob);
  std::vector<double> raw(3);
  r.get_raw(std::span<double>(raw));
  EXPECT_EQ(raw, values);
  EXPECT_TRUE(r.done());
  EXPECT_NO_THROW(r.expect_done());
}

// The length prefix is what lets two strings (or vectors) follow each other:
// without it "ab" then "c" would read back as one "abc".
TEST(XiosWire, LengthPrefixSeparatesValues) {
  WireWriter w;
  w.put(std::string("ab"));
  w.put(std::string("c"));
  w.put(std::vector<int>{1, 2});
  w.put(std::vector<int>{3});
  const std::vector<std::byte> bytes = w.take();
  // Two u64 counts per pair, then the elements.
  ASSERT_EQ(bytes.size(), (8 + 2) + (8 + 1) + (8 + 8) + (8 + 4));
  std::uint64_t count = 0;
  std::memcpy(&count, bytes.data(), sizeof count);
  EXPECT_EQ(count, 2U);

  WireReader r(bytes);
  EXPECT_EQ(r.get_string(), "ab");
  EXPECT_EQ(r.get_string(), "c");
  EXPECT_EQ(r.get_vector<int>(), (std::vector<int>{1, 2}));
  EXPECT_EQ(r.get_vector<int>(), (std::vector<int>{3}));
  EXPECT_TRUE(r.done());
}

TEST(XiosWire, TruncatedBufferIsRefusedWithOffsetAndCounts) {
  WireWriter w;
  w.put(std::int32_t{5});
  w.put(std::string("hello"));
  const std::vector<std::byte> bytes = w.take();  // 4 + 8 + 5 bytes
  ASSERT_EQ(bytes.size(), 17U);

  // Cut inside the string's characters: 5 wanted at offset 12, 3 there.
  {
    WireReader r(std::span<const std::byte>(bytes.data(), 15), "test::read", 3);
    EXPECT_EQ(r.get<std::int32_t>(), 5);
    const std::string why = refusal([&] { (void)r.get_string(); });
    EXPECT_NE(why.find("test::read"), std::string::npos) << why;
    EXPECT_NE(why.find("rank 3"), std::string::npos) << why;
    EXPECT_NE(why.find("a count of 5 at offset 4 wants 5 bytes, 3 available (of 15)"),
              std::string::npos)
        << why;
  }
  // Cut inside the count itself: 8 wanted at offset 4, 2 there.
  {
    WireReader r(std::span<const std::byte>(bytes.data(), 6));
    (void)r.get<std::int32_t>();
    const std::string why = refusal([&] { (void)r.get_string(); });
    EXPECT_NE(why.find("short buffer: 8 bytes wanted at offset 4, 2 available (of 6)"),
              std::string::npos)
        << why;
  }
  // Every cut of a message is refused, none reads past the end.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    WireReader r(std::span<const std::byte>(bytes.data(), n));
    EXPECT_NE(refusal([&] {
                (void)r.get<std::int32_t>();
                (void)r.get_string();
              }),
              "")
        << n;
  }
}

TEST(XiosWire, MalformedValuesAreRefused) {
  // A count far beyond the buffer is refused before anything is allocated.
  {
    WireWriter w;
    w.put(std::uint64_t{1} << 62);
    const std::vector<std::byte> bytes = w.take();
    WireReader r(bytes);
    const std::string why = refusal([&] { (void)r.get_vector<double>(); });
    EXPECT_NE(why.find("a count of 4611686018427387904 at offset 0"), std::string::npos) << why;
    EXPECT_NE(why.find("0 available (of 8)"), std::string::npos) << why;
  }
  // A bool is 0 or 1.
  {
    WireWriter w;
    w.put(std::uint8_t{2});
    const std::vector<std::byte> bytes = w.take();
    WireReader r(bytes);
    bool b = false;
    const std::string why = refusal([&] { r.get(b); });
    EXPECT_NE(why.find("a bool of value 2 at offset 0"), std::string::npos) << why;
  }
  // Bytes left over after a fixed-size message.
  {
    WireWriter w;
    w.put(1.0);
    w.put(std::uint8_t{0});
    const std::vector<std::byte> bytes = w.take();
    WireReader r(bytes);
    (void)r.get<double>();
    const std::string why = refusal([&] { r.expect_done(); });
    EXPECT_NE(why.find("1 bytes left over"), std::string::npos) << why;
  }
}

TEST(XiosWire, FixedWriterWritesInPlaceAndRefusesToOverrun) {
  std::vector<std::byte> room(12);
  WireWriter w(room);
  w.put(std::int32_t{9});
  w.put(2.0);
  EXPECT_EQ(w.written(), 12U);
  EXPECT_TRUE(w.bytes().empty());  // nothing of its own: the bytes are in `room`
  WireReader r(room);
  EXPECT_EQ(r.get<std::int32_t>(), 9);
  EXPECT_EQ(r.get<double>(), 2.0);
  try {
    w.put(std::uint8_t{1});
    ADD_FAILURE() << "a write past the reserved bytes was taken";
  } catch (const common::Error& e) {
    EXPECT_EQ(e.kind(), common::ErrorKind::kArgument);
    EXPECT_NE(std::string(e.what()).find("1 bytes at offset 12 overrun the reserved 12"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
