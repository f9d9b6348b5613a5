// The one byte codec of xios_lite: everything that travels between clients,
// and between clients and servers, is written by a WireWriter and read back
// by a WireReader in the same order -- the events (event.hpp), the client
// meeting's entries and verdicts, the definitions (config/model_definitions),
// the context announcements, the finalise acknowledgements.
//
// The form, value by value, nothing between them:
//
//   put(x)        x trivially copyable (an integer, a real, an enum, a fixed
//                 header such as EventHeader): its sizeof(x) bytes
//   put(string)   u64 n | n chars
//   put(vector<T>), put_vector(span<const T>)
//                 u64 n | n * sizeof(T) bytes (T trivially copyable)
//   put(bool)     one byte, 0 or 1
//   put(vector<bool>)
//                 u64 n | n bytes, 0 or 1
//   put_raw(span) the elements' bytes alone: their count travels elsewhere
//                 (a header field, or the rest of the message)
//
// Host byte order and layout: both ends are the same build on the same kind
// of machine (an MPMD launch of one installation).
//
// A reader checks every read against the end of its buffer and throws a
// common::Error of kind kIo naming its call, its rank, the offset, the bytes
// wanted and the bytes available, e.g.
//   "xios_lite::server::receive: ep rank 2: short buffer: 56 bytes wanted at
//    offset 112, 20 available (of 132)".
// A count that the rest of the buffer cannot hold is refused the same way
// before anything is allocated for it.
//
// A writer either grows its own buffer or writes into a fixed one that the
// caller reserved (a channel's send buffer: the events are written in place,
// no copy between the model's values and the MPI message); writing past a
// fixed buffer's end is a programming error, thrown as kArgument.
//
// Pure value types, no MPI; one writer or reader per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/error.hpp"

namespace xios_lite::transport {

/// Values that travel as their bytes. Not a pointer or a view (an address
/// means nothing in another process), not a bool (put/get below: one byte,
/// checked to be 0 or 1 on the way in).
template <class T>
concept WireValue = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> &&
                    !std::is_same_v<T, bool> && !std::is_same_v<T, std::string_view>;

class WireWriter {
 public:
  /// A writer that grows its own buffer (bytes(), take()).
  WireWriter() = default;
  /// A writer into `into`, which the caller owns and which must hold every
  /// value written (written() tells how much was).
  explicit WireWriter(std::span<std::byte> into)
      : fixed_(true), start_(into.data()), at_(into.data()), end_(into.data() + into.size()) {}

  template <WireValue T>
  void put(const T& v) {
    std::memcpy(room(sizeof v), &v, sizeof v);
  }
  void put(bool b) { put(static_cast<std::uint8_t>(b ? 1 : 0)); }
  void put(std::string_view s) {
    count(s.size());
    put_raw(std::span<const char>(s));
  }
  void put(const std::string& s) { put(std::string_view(s)); }
  void put(const char* s) = delete;  // a pointer would travel as an address
  void put(const std::vector<bool>& v) {
    count(v.size());
    for (const bool b : v) put(static_cast<std::uint8_t>(b ? 1 : 0));
  }
  template <WireValue T>
  void put(const std::vector<T>& v) {
    put_vector(std::span<const T>(v));
  }
  /// A count, then the elements.
  template <WireValue T>
  void put_vector(std::span<const T> v) {
    count(v.size());
    put_raw(v);
  }
  /// The elements alone (no count).
  template <WireValue T>
  void put_raw(std::span<const T> v) {
    if (!v.empty()) {  // data() of an empty span may be null, which memcpy must not see
      std::memcpy(room(v.size_bytes()), v.data(), v.size_bytes());
    }
  }

  /// Bytes written so far.
  [[nodiscard]] std::size_t written() const noexcept {
    return fixed_ ? static_cast<std::size_t>(at_ - start_) : bytes_.size();
  }
  /// The growing writer's bytes.
  [[nodiscard]] const std::vector<std::byte>& bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  void count(std::size_t n) { put(static_cast<std::uint64_t>(n)); }
  std::byte* room(std::size_t n) {
    if (fixed_) {
      if (n > static_cast<std::size_t>(end_ - at_)) {
        throw common::Error(common::ErrorKind::kArgument, "xios_lite::WireWriter::put", -1,
                            std::to_string(n) + " bytes at offset " + std::to_string(at_ - start_) +
                                " overrun the reserved " + std::to_string(end_ - start_));
      }
      std::byte* p = at_;
      at_ += n;
      return p;
    }
    const std::size_t old = bytes_.size();
    bytes_.resize(old + n);
    return bytes_.data() + old;
  }

  std::vector<std::byte> bytes_;  // growing mode
  bool fixed_ = false;
  std::byte* start_ = nullptr;  // fixed mode: [start_, end_), the next write at at_
  std::byte* at_ = nullptr;
  std::byte* end_ = nullptr;
};

class WireReader {
 public:
  /// A reader of `in`; its errors name `call` and `rank` (-1: none).
  explicit WireReader(std::span<const std::byte> in, const char* call = "xios_lite::WireReader",
                      int rank = -1) noexcept
      : in_(in), call_(call), rank_(rank) {}

  /// Whether every byte has been read.
  [[nodiscard]] bool done() const noexcept { return at_ == in_.size(); }
  [[nodiscard]] std::size_t offset() const noexcept { return at_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - at_; }

  template <WireValue T>
  [[nodiscard]] T get() {
    T v;
    std::memcpy(&v, take(sizeof v).data(), sizeof v);
    return v;
  }
  template <WireValue T>
  void get(T& v) {
    v = get<T>();
  }
  void get(bool& b) {
    const auto v = get<std::uint8_t>();
    if (v > 1) {
      at_ -= 1;
      malformed("a bool of value " + std::to_string(v));
    }
    b = v != 0;
  }
  void get(std::string& s) {
    const std::span<const std::byte> b = take(count(1));
    s.assign(reinterpret_cast<const char*>(b.data()), b.size());
  }
  void get(std::vector<bool>& v) {
    const std::span<const std::byte> b = take(count(1));
    v.assign(b.size(), false);
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (b[i] > std::byte{1}) {
        at_ -= b.size() - i;
        malformed("a bool of value " + std::to_string(static_cast<int>(b[i])));
      }
      v[i] = b[i] != std::byte{0};
    }
  }
  template <WireValue T>
  void get(std::vector<T>& v) {
    const std::size_t n = count(sizeof(T));
    v.resize(n);
    get_raw(std::span<T>(v));
  }
  [[nodiscard]] std::string get_string() {
    std::string s;
    get(s);
    return s;
  }
  template <WireValue T>
  [[nodiscard]] std::vector<T> get_vector() {
    std::vector<T> v;
    get(v);
    return v;
  }
  /// Fills `out` with out.size() elements (no count: put_raw's form).
  template <WireValue T>
  void get_raw(std::span<T> out) {
    const std::span<const std::byte> b = take(out.size_bytes());
    if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
  }
  /// The next `n` bytes, in place (valid while the buffer is).
  [[nodiscard]] std::span<const std::byte> get_bytes(std::size_t n) { return take(n); }
  /// Every byte not read yet, in place; the reader is then done().
  [[nodiscard]] std::span<const std::byte> rest() noexcept {
    const std::span<const std::byte> r = in_.subspan(at_);
    at_ = in_.size();
    return r;
  }

  /// Throws unless every byte has been read (a fixed-size message).
  void expect_done() const {
    if (!done()) {
      malformed(std::to_string(remaining()) + " bytes left over after the last value");
    }
  }
  /// Throws the reader's kIo error: `what` at the current offset.
  [[noreturn]] void malformed(const std::string& what) const {
    throw common::Error(common::ErrorKind::kIo, call_, rank_,
                        "malformed buffer: " + what + " at offset " + std::to_string(at_) +
                            " (of " + std::to_string(in_.size()) + ")");
  }

 private:
  std::span<const std::byte> take(std::size_t n) {
    if (n > remaining()) {
      throw common::Error(common::ErrorKind::kIo, call_, rank_,
                          "short buffer: " + std::to_string(n) + " bytes wanted at offset " +
                              std::to_string(at_) + ", " + std::to_string(remaining()) +
                              " available (of " + std::to_string(in_.size()) + ")");
    }
    const std::span<const std::byte> b = in_.subspan(at_, n);
    at_ += n;
    return b;
  }
  // A count of elements of `each` bytes, refused (before anything is
  // allocated for it) when the rest of the buffer cannot hold them.
  std::size_t count(std::size_t each) {
    const std::size_t at = at_;
    const auto n = get<std::uint64_t>();
    if (n > remaining() / each) {
      throw common::Error(
          common::ErrorKind::kIo, call_, rank_,
          "malformed buffer: a count of " + std::to_string(n) + " at offset " + std::to_string(at) +
              " wants " +
              (n > SIZE_MAX / each ? std::string("more than SIZE_MAX") : std::to_string(n * each)) +
              " bytes, " + std::to_string(remaining()) + " available (of " +
              std::to_string(in_.size()) + ")");
    }
    return static_cast<std::size_t>(n);
  }

  std::span<const std::byte> in_;
  std::size_t at_ = 0;
  const char* call_;
  int rank_;
};

}  // namespace xios_lite::transport
