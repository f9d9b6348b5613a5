// Benchmark buffers: page-aligned send and receive areas that grow on demand
// and are reused across points, so allocation and first touch stay out of the
// timing.
//
// Thread safety: a Buffers object belongs to one participant (thread or
// process); reserve() from the thread that will use it, so that first touch
// places the pages near that thread.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace bench {

/// Page-aligned send and receive areas of one participant, grown on demand and
/// reused across points (allocation and first touch stay out of the timing).
class Buffers {
 public:
  void reserve(std::size_t bytes) {
    if (bytes <= capacity_) return;
    send_ = allocate(bytes);
    recv_ = allocate(bytes);
    capacity_ = bytes;
  }
  [[nodiscard]] std::byte* send(std::size_t offset = 0) { return send_.get() + offset; }
  [[nodiscard]] std::byte* recv(std::size_t offset = 0) { return recv_.get() + offset; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  using Area = std::unique_ptr<std::byte[], Free>;

  static Area allocate(std::size_t bytes) {
    constexpr std::size_t kPage = 4096;
    const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
    auto* p = static_cast<std::byte*>(std::aligned_alloc(kPage, rounded));
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, rounded);  // first touch by the thread that will use it
    return Area(p);
  }

  Area send_;
  Area recv_;
  std::size_t capacity_ = 0;
};

}  // namespace bench
