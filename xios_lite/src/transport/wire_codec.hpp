// A small typed byte codec for what travels between the clients and the
// servers of one build: WireWriter appends values, WireReader reads them back
// in the same order, checking every read against the end of the buffer.
//
// The form: integers as 8-byte int64, reals as 8-byte doubles, a byte as
// itself, strings and arrays as an int64 count then their elements (bools
// one byte each). Host byte order: both ends are the same build on the same
// kind of machine.
//
// Pure value types, no MPI; one writer or reader per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace xios_lite::transport {

class WireWriter {
 public:
  void put(std::uint8_t v) { raw(&v, 1); }
  void put(std::int64_t v) { raw(&v, sizeof v); }
  void put(int v) { put(static_cast<std::int64_t>(v)); }
  void put(double v) { raw(&v, sizeof v); }
  void put(bool v) { put(static_cast<std::uint8_t>(v ? 1 : 0)); }
  void put(const std::string& s) {
    count(s.size());
    raw(s.data(), s.size());
  }
  void put(const std::vector<bool>& v) {
    count(v.size());
    for (const bool b : v) put(b);
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  void put(const std::vector<T>& v) {
    count(v.size());
    for (const T& x : v) put(x);
  }

  [[nodiscard]] const std::vector<std::byte>& bytes() const { return bytes_; }
  [[nodiscard]] std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  void count(std::size_t n) { put(static_cast<std::int64_t>(n)); }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<std::byte> bytes_;
};

/// Every get returns false, and leaves the reader where it was, when the
/// buffer ends before the value does or a count is negative; an int that
/// does not fit an int is false too.
class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> in) : in_(in) {}

  [[nodiscard]] bool done() const { return at_ >= in_.size(); }

  [[nodiscard]] bool get(std::uint8_t& v) { return raw(&v, 1); }
  [[nodiscard]] bool get(std::int64_t& v) { return raw(&v, sizeof v); }
  [[nodiscard]] bool get(int& v) {
    std::int64_t x = 0;
    if (!fits(sizeof x)) return false;
    std::memcpy(&x, in_.data() + at_, sizeof x);
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) return false;
    at_ += sizeof x;
    v = static_cast<int>(x);
    return true;
  }
  [[nodiscard]] bool get(double& v) { return raw(&v, sizeof v); }
  [[nodiscard]] bool get(bool& v) {
    std::uint8_t b = 0;
    if (!get(b)) return false;
    v = b != 0;
    return true;
  }
  [[nodiscard]] bool get(std::string& s) {
    const std::size_t start = at_;
    std::size_t n = 0;
    if (!count(n, 1)) return false;
    s.resize(n);
    if (!raw(s.data(), n)) {
      at_ = start;
      return false;
    }
    return true;
  }
  [[nodiscard]] bool get(std::vector<bool>& v) {
    const std::size_t start = at_;
    std::size_t n = 0;
    if (!count(n, 1)) return false;
    v.assign(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      bool b = false;
      if (!get(b)) {
        at_ = start;
        return false;
      }
      v[i] = b;
    }
    return true;
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  [[nodiscard]] bool get(std::vector<T>& v) {
    const std::size_t start = at_;
    std::size_t n = 0;
    if (!count(n, std::is_same_v<T, std::uint8_t> ? 1 : 8)) return false;
    v.resize(n);
    for (T& x : v) {
      if (!get(x)) {
        at_ = start;
        return false;
      }
    }
    return true;
  }

 private:
  [[nodiscard]] bool fits(std::size_t n) const { return n <= in_.size() - at_; }
  bool raw(void* p, std::size_t n) {
    if (!fits(n)) return false;
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
    return true;
  }
  // A count of elements of `each` bytes that the rest of the buffer can hold.
  bool count(std::size_t& n, std::size_t each) {
    std::int64_t x = 0;
    if (!fits(sizeof x)) return false;
    std::memcpy(&x, in_.data() + at_, sizeof x);
    if (x < 0 || static_cast<std::uint64_t>(x) > (in_.size() - at_ - sizeof x) / each) return false;
    at_ += sizeof x;
    n = static_cast<std::size_t>(x);
    return true;
  }

  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

}  // namespace xios_lite::transport
