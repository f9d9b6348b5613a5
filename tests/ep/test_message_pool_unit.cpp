// The per-thread message pools (ep/src/p2p/message_pool.hpp), without MPI:
// blocks dropped by another thread go back to their maker and are reused,
// blocks outlive the thread that made them, and sizes past the largest class
// still work; and an eager payload, inside its envelope or in the pool. Run by the TSan tier too
// (label loopback), where the cross-thread hand-offs are checked for races.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "p2p/matching_engine.hpp"
#include "p2p/message_pool.hpp"

namespace {

namespace pool = ep::detail::message_pool;

bool aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t) == 0;
}

// Blocks made by one thread and dropped by another come back to the maker:
// its next allocations of the same class return the same addresses. The
// maker is a fresh thread, so its pool starts empty.
TEST(MessagePool, BlocksDroppedElsewhereGoBackToTheirMaker) {
  constexpr int kBlocks = 32;
  std::vector<void*> made;
  std::vector<void*> again;
  std::thread maker([&] {
    for (int i = 0; i < kBlocks; ++i) {
      void* p = pool::allocate(100);
      std::memset(p, i, 100);
      made.push_back(p);
    }
    std::thread dropper([&] {
      for (void* p : made) pool::deallocate(p);
    });
    dropper.join();
    for (int i = 0; i < kBlocks; ++i) again.push_back(pool::allocate(120));  // same class
    for (void* p : again) pool::deallocate(p);  // the maker's own drops: its free list
  });
  maker.join();
  for (void* p : made) EXPECT_TRUE(aligned(p));
  std::vector<void*> a = made;
  std::vector<void*> b = again;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b) << "the blocks dropped by the other thread were not reused";
}

// A block may outlive its maker: dropped after the making thread ended, it
// is freed, not pushed to a pool nobody reads.
TEST(MessagePool, BlocksOutliveTheirMakerThread) {
  std::vector<void*> made;
  std::thread maker([&] {
    for (std::size_t bytes : {1U, 64U, 65U, 4096U, 16384U, 32768U, 40000U}) {
      void* p = pool::allocate(bytes);
      std::memset(p, 0xab, bytes);
      made.push_back(p);
    }
    // Some dropped by the maker itself before it ends: they go on its free
    // list, which its end frees.
    pool::deallocate(pool::allocate(64));
  });
  maker.join();
  for (void* p : made) {
    EXPECT_TRUE(aligned(p));
    pool::deallocate(p);
  }
}

// Producer and consumer at full rate, the pattern of a streaming sender and
// its receiver: every block arrives intact and goes back.
TEST(MessagePool, ProducerConsumerHandOff) {
  constexpr int kMessages = 20000;
  constexpr int kSlots = 64;
  std::vector<std::atomic<unsigned char*>> slots(kSlots);
  for (auto& s : slots) s.store(nullptr);
  std::atomic<int> wrong{0};
  std::thread consumer([&] {
    for (int i = 0; i < kMessages; ++i) {
      auto& slot = slots[static_cast<std::size_t>(i % kSlots)];
      unsigned char* p = nullptr;
      while ((p = slot.exchange(nullptr, std::memory_order_acquire)) == nullptr) {
        std::this_thread::yield();
      }
      const std::size_t bytes = 8 + static_cast<std::size_t>(i % 5) * 500;
      for (std::size_t k = 0; k < bytes; ++k) {
        if (p[k] != static_cast<unsigned char>(i + k)) {
          wrong.fetch_add(1);
          break;
        }
      }
      pool::deallocate(p);
    }
  });
  for (int i = 0; i < kMessages; ++i) {
    const std::size_t bytes = 8 + static_cast<std::size_t>(i % 5) * 500;
    auto* p = static_cast<unsigned char*>(pool::allocate(bytes));
    for (std::size_t k = 0; k < bytes; ++k) p[k] = static_cast<unsigned char>(i + k);
    auto& slot = slots[static_cast<std::size_t>(i % kSlots)];
    unsigned char* expected = nullptr;
    while (!slot.compare_exchange_weak(expected, p, std::memory_order_release)) {
      expected = nullptr;
      std::this_thread::yield();
    }
  }
  consumer.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The allocator adapter: containers and allocate_shared over the pool.
TEST(MessagePool, AllocatorServesContainersAndSharedObjects) {
  std::vector<std::byte, ep::detail::PoolAllocator<std::byte>> bytes(1000);
  std::memset(bytes.data(), 7, bytes.size());
  bytes.resize(70000);  // past the largest class
  EXPECT_EQ(bytes[999], std::byte{7});
  struct Thing {
    int value = 42;
    std::vector<int> items{1, 2, 3};
  };
  auto thing = std::allocate_shared<Thing>(ep::detail::PoolAllocator<Thing>{});
  EXPECT_EQ(thing->value, 42);  // value-initialised, not left raw
  EXPECT_EQ(thing->items.size(), 3U);
  std::shared_ptr<Thing> elsewhere;
  std::thread([&] { elsewhere = std::move(thing); }).join();
  EXPECT_EQ(elsewhere->value, 42);
}

// A payload keeps its bytes through every move between the envelope's own
// storage and the pool: written at each size, and with a header dropped
// from the front (the source-header layout), across the inline limit too.
TEST(EagerPayload, KeepsItsBytesInlineAndInThePool) {
  using ep::detail::Payload;
  constexpr std::size_t kInline = Payload::kInlineBytes;
  auto fill = [](Payload& payload, std::size_t bytes) {
    std::byte* p = payload.resize(bytes);
    for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<std::byte>(i * 7 + 3);
  };
  auto holds_from = [](const Payload& payload, std::size_t first) {
    for (std::size_t i = 0; i < payload.size(); ++i) {
      if (payload.data()[i] != static_cast<std::byte>((i + first) * 7 + 3)) return false;
    }
    return true;
  };
  for (const std::size_t bytes :
       {std::size_t{0}, std::size_t{1}, kInline, kInline + 1, std::size_t{4096}}) {
    Payload payload;
    fill(payload, bytes);
    EXPECT_EQ(payload.size(), bytes);
    EXPECT_TRUE(holds_from(payload, 0)) << bytes << " bytes";
  }
  struct Drop {
    std::size_t bytes;
    std::size_t header;
  };
  for (const Drop drop : {Drop{kInline, 24}, Drop{kInline + 24, 24}, Drop{kInline + 25, 24},
                          Drop{1000, 24}, Drop{24, 24}}) {
    Payload payload;
    fill(payload, drop.bytes);
    payload.drop_front(drop.header);
    EXPECT_EQ(payload.size(), drop.bytes - drop.header);
    EXPECT_TRUE(holds_from(payload, drop.header))
        << drop.bytes << " bytes less a header of " << drop.header;
  }
  // Smaller again after a large message: the new size's storage is used.
  Payload payload;
  fill(payload, 1000);
  fill(payload, 8);
  EXPECT_TRUE(holds_from(payload, 0));
}

}  // namespace
