#include "p2p/message_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>

namespace ep::detail::message_pool {

namespace {

constexpr int kClasses = 10;  // 64 B << 0 .. 9: up to 32 KiB, above the eager threshold
constexpr std::size_t kSmallestBlock = 64;
constexpr int kUnpooled = -1;
// Free blocks a thread keeps per class: a full streaming window of messages
// and then some; what a flood leaves beyond it goes back to operator delete.
constexpr int kMaxFreeBlocks = 256;

struct Pool;

// In front of every block: who made it and its class.
struct alignas(std::max_align_t) Header {
  Pool* home;  // null: not pooled (too large, or made while its thread was ending)
  int size_class;
};

// The user area of a free block links it into a list.
struct FreeBlock {
  FreeBlock* next;
};

// Marks a retired pool's return stacks: blocks dropped later are deleted.
FreeBlock g_retired_marker{};
FreeBlock* const kRetired = &g_retired_marker;

struct Pool {
  FreeBlock* free[kClasses] = {};  // owner thread only
  int free_count[kClasses] = {};
  // Pushed by other threads, each class's stack head on a line of its own
  // with a count of what was pushed. The count is kept apart from the head,
  // so it may lag or lead it by a few blocks: it only bounds what the owner
  // keeps, which it never needs exactly.
  struct alignas(64) Returned {
    std::atomic<FreeBlock*> head{nullptr};
    std::atomic<int> count{0};
  };
  Returned returned[kClasses];
  Pool* next_retired = nullptr;  // in g_retired_pools (under g_retired_mutex)
};

// The pools of ended threads. A pool record outlives its thread, because
// blocks still in flight point at it; rather than keep one record per thread
// that ever ran, a starting thread adopts a retired one. So there are never
// more records than threads that ran at once, and every one stays reachable.
// The lock is taken once when a thread makes its first pooled block and once
// when it ends.
std::mutex g_retired_mutex;
Pool* g_retired_pools = nullptr;

// A retired pool for a new owner, or a new pool. Its free lists were emptied
// at retirement; its return stacks go from "retired" (drops delete their
// block) to empty (drops come back to the new owner, whose blocks they are
// now: the classes are the same).
Pool* adopt_or_make_pool() {
  Pool* pool = nullptr;
  {
    const std::lock_guard lock(g_retired_mutex);
    pool = g_retired_pools;
    if (pool != nullptr) g_retired_pools = pool->next_retired;
  }
  // NOLINTNEXTLINE(cppcoreguidelines-owning-memory): outlives its thread (see above)
  if (pool == nullptr) return new Pool;
  pool->next_retired = nullptr;
  for (int c = 0; c < kClasses; ++c) {
    pool->free[c] = nullptr;
    pool->free_count[c] = 0;
    pool->returned[c].count.store(0, std::memory_order_relaxed);
    pool->returned[c].head.store(nullptr, std::memory_order_release);
  }
  return pool;
}

constexpr std::size_t class_bytes(int size_class) { return kSmallestBlock << size_class; }

int class_of(std::size_t bytes) {
  for (int c = 0; c < kClasses; ++c) {
    if (bytes <= class_bytes(c)) return c;
  }
  return kUnpooled;
}

Header* header_of(void* block) { return static_cast<Header*>(block) - 1; }
void* block_of(Header* header) { return header + 1; }
void delete_block(FreeBlock* block) { ::operator delete(header_of(block)); }

void delete_list_of(FreeBlock* first, int blocks) {
  for (int i = 0; i < blocks; ++i) {
    FreeBlock* next = first->next;
    delete_block(first);
    first = next;
  }
}

void delete_list(FreeBlock* list) {
  while (list != nullptr) {
    FreeBlock* next = list->next;
    delete_block(list);
    list = next;
  }
}

thread_local Pool* t_pool = nullptr;
thread_local bool t_retired = false;

// Frees what the ending thread's pool holds and marks its return stacks, so
// that blocks still in flight are deleted when they are dropped. The Pool
// record itself stays, for a later thread to adopt: those blocks point at it.
struct Retirer {
  Retirer() = default;
  Retirer(const Retirer&) = delete;
  Retirer& operator=(const Retirer&) = delete;
  ~Retirer() {
    Pool* pool = t_pool;
    t_pool = nullptr;
    t_retired = true;
    for (int c = 0; c < kClasses; ++c) {
      delete_list(pool->free[c]);
      delete_list(pool->returned[c].head.exchange(kRetired, std::memory_order_acquire));
      pool->free[c] = nullptr;
      pool->free_count[c] = 0;
    }
    const std::lock_guard lock(g_retired_mutex);
    pool->next_retired = g_retired_pools;
    g_retired_pools = pool;
  }
};

Pool* thread_pool() {
  if (t_pool == nullptr && !t_retired) {
    t_pool = adopt_or_make_pool();
    thread_local Retirer retirer;
  }
  return t_pool;
}

// The owner's free list ran dry: takes what other threads dropped. The list
// is taken whole, without walking it (each step would wait for a line the
// dropping thread wrote); only a list longer than kMaxFreeBlocks, left by a
// flood, is walked to free the surplus.
void refill(Pool& pool, int c) {
  Pool::Returned& returned = pool.returned[c];
  FreeBlock* list = returned.head.exchange(nullptr, std::memory_order_acquire);
  const int pushed = returned.count.exchange(0, std::memory_order_relaxed);
  if (pushed <= kMaxFreeBlocks) {
    pool.free[c] = list;
    pool.free_count[c] = std::max(pushed, 0);
    return;
  }
  int kept = 0;
  while (list != nullptr) {
    FreeBlock* next = list->next;
    if (kept < kMaxFreeBlocks) {
      list->next = pool.free[c];
      pool.free[c] = list;
      ++kept;
    } else {
      delete_block(list);
    }
    list = next;
  }
  pool.free_count[c] = kept;
}

// Pushes the chain first..last (`blocks` long) onto `home`'s return stack of
// class `c`, or deletes it when `home`'s thread has ended.
void return_chain(Pool& home, int c, FreeBlock* first, FreeBlock* last, int blocks) {
  Pool::Returned& returned = home.returned[c];
  FreeBlock* head = returned.head.load(std::memory_order_relaxed);
  do {
    if (head == kRetired) {
      delete_list_of(first, blocks);
      return;
    }
    last->next = head;
  } while (!returned.head.compare_exchange_weak(head, first, std::memory_order_release,
                                                std::memory_order_relaxed));
  returned.count.fetch_add(blocks, std::memory_order_relaxed);
}

// Blocks of other threads' pools that this thread dropped, per class, all
// of one maker, not yet returned: one push per kReturnBatch blocks instead
// of one per block. At most kReturnBatch blocks of a class wait here; a
// drop for another maker, or the thread's end, sends them back first.
constexpr int kReturnBatch = 16;

struct Outbox {
  Pool* home = nullptr;
  FreeBlock* first = nullptr;
  FreeBlock* last = nullptr;
  int blocks = 0;
};

thread_local Outbox t_outboxes[kClasses];
thread_local bool t_outboxes_closed = false;

void flush(Outbox& out, int c) {
  if (out.blocks > 0) return_chain(*out.home, c, out.first, out.last, out.blocks);
  out = Outbox{};
}

// Sends the outboxes back when the thread ends; drops after that go back
// one at a time.
struct OutboxCloser {
  OutboxCloser() = default;
  OutboxCloser(const OutboxCloser&) = delete;
  OutboxCloser& operator=(const OutboxCloser&) = delete;
  ~OutboxCloser() {
    for (int c = 0; c < kClasses; ++c) flush(t_outboxes[c], c);
    t_outboxes_closed = true;
  }
};

}  // namespace

void* allocate(std::size_t bytes) {
  const int c = class_of(bytes);
  Pool* pool = c == kUnpooled ? nullptr : thread_pool();
  if (pool != nullptr) {
    if (pool->free[c] == nullptr) refill(*pool, c);
    if (FreeBlock* block = pool->free[c]) {
      pool->free[c] = block->next;
      if (pool->free_count[c] > 0) --pool->free_count[c];
      return block;
    }
  }
  const std::size_t size = pool != nullptr ? class_bytes(c) : bytes;
  auto* header = static_cast<Header*>(::operator new(sizeof(Header) + size));
  header->home = pool;
  header->size_class = pool != nullptr ? c : kUnpooled;
  return block_of(header);
}

void deallocate(void* block) noexcept {
  if (block == nullptr) return;
  Header* header = header_of(block);
  Pool* home = header->home;
  if (home == nullptr) {
    ::operator delete(header);
    return;
  }
  const int c = header->size_class;
  auto* node = static_cast<FreeBlock*>(block);
  if (home == t_pool) {  // dropped by its maker
    if (home->free_count[c] >= kMaxFreeBlocks) {
      ::operator delete(header);
      return;
    }
    node->next = home->free[c];
    home->free[c] = node;
    ++home->free_count[c];
    return;
  }
  // Dropped by another thread: gathered into this thread's outbox for that
  // maker and class, and sent back onto the maker's return stack a batch at
  // a time.
  if (t_outboxes_closed) {
    return_chain(*home, c, node, node, 1);
    return;
  }
  thread_local OutboxCloser closer;
  Outbox& out = t_outboxes[c];
  if (out.home != home) {
    flush(out, c);
    out.home = home;
  }
  node->next = out.first;
  if (out.first == nullptr) out.last = node;
  out.first = node;
  if (++out.blocks >= kReturnBatch) flush(out, c);
}

}  // namespace ep::detail::message_pool
