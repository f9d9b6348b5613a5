// Per-thread pools of the memory that queued messages live in: an envelope
// with its shared_ptr control block, and the payload of an eager copy.
//
// Why: a message is made by one thread (the sender, or the drainer) and
// dropped by another (the receiver). With the general allocator each drop
// hands the block back to the maker's arena under that arena's lock, against
// the maker's next allocation: one lock collision per message at full rate.
// Here a dropped block goes back to a lock-free stack of the thread that
// made it, gathered by the dropping thread into batches of up to 16 blocks
// per maker (one compare-and-swap per batch), and the maker takes the whole
// stack when its own free list runs dry; a block dropped by its maker goes
// straight on the free list.
//
// Blocks come in power-of-two size classes from 64 B to 32 KiB (larger
// requests go to operator new); each thread keeps at most kMaxFreeBlocks of
// a class and frees the rest. When a thread ends, its pool frees what it
// holds, and blocks dropped later go back to operator delete; the pool's
// small bookkeeping record itself stays (blocks still in flight point at
// it).
//
// Thread safety: allocate and deallocate may be called from any thread.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>

namespace ep::detail {

namespace message_pool {

/// `bytes` of memory aligned for any scalar type, from the calling thread's pool.
[[nodiscard]] void* allocate(std::size_t bytes);
/// Returns a block from allocate, from any thread.
void deallocate(void* block) noexcept;

}  // namespace message_pool

/// An allocator over message_pool, for std::allocate_shared and containers.
/// Trivial elements (bytes) are default-initialised, not zeroed: a payload
/// buffer is always written in full before it is read.
template <class T>
struct PoolAllocator {
  using value_type = T;  // NOLINT(readability-identifier-naming): the name allocators must use

  PoolAllocator() noexcept = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>& /*other*/) noexcept {
  }  // NOLINT(google-explicit-constructor)

  [[nodiscard]] T* allocate(std::size_t n) {
    return static_cast<T*>(message_pool::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t /*n*/) noexcept { message_pool::deallocate(p); }

  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0 && std::is_trivially_default_constructible_v<U>) {
      ::new (static_cast<void*>(p)) U;  // default-initialised: no zeroing of bytes
    } else {
      ::new (static_cast<void*>(p)) U(static_cast<Args&&>(args)...);
    }
  }

  template <class U>
  bool operator==(const PoolAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

}  // namespace ep::detail
