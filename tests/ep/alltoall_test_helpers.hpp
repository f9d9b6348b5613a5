// Helpers of the all-to-all and nonblocking collective tests: the layouts
// every test runs on, datatypes freed at scope exit, and closed-form values.
//
// Thread safety: the functions are called by one endpoint on its own handle;
// Type objects are built on the main thread and only read by the endpoints.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "datatypes.hpp"
#include "ep/ep.hpp"
#include "ep_test.hpp"

namespace ep_a2a {

using Type = ep_test::ScopedType;

/// `count` blocks of `blocklen` ints, `stride` ints apart.
inline MPI_Datatype int_vector(int count, int blocklen, int stride) {
  return ep_test::vector_of(count, blocklen, stride, MPI_INT);
}

/// Runs `body` on five layouts, each a fresh endpoint communicator over
/// MPI_COMM_WORLD:
///   "shape":    the test's shape (OMP_NUM_THREADS threads in every process);
///   "uneven":   1 + world rank threads, so processes differ in endpoint count;
///   "single":   one thread per process (each block a message of its own);
///   "interleaved", "uneven interleaved": those split with keys that order
///               the endpoints thread-major and backwards (the last process's
///               last thread first), so EP ranks are not in process order.
/// Failures are traced with the layout's name (on the thread that saw them).
inline void on_every_layout(const std::function<void(const ep::Communicator&)>& body) {
  const auto interleaved = [&](ep::Communicator& c) {
    ep::Communicator split = ep::split(c, 0, -(c.local_thread() * 1000 + c.process_rank()));
    const bool same_threads =
        c.rank_map().max_endpoints_per_process() * c.rank_map().num_processes() == c.size();
    if (same_threads && c.local_size() > 1 && c.rank_map().num_processes() > 1) {
      // Thread-major order cannot be process-major here: the test means it.
      EXPECT_FALSE(split.rank_map().process_major());
    }
    body(split);
    split.free();
  };
  struct Layout {
    const char* trace;
    int threads;  // 0: the shape's OMP_NUM_THREADS
    bool interleaved;
  };
  const int uneven = 1 + ep_test::world_rank();
  for (const Layout& layout :
       {Layout{"layout: shape", 0, false}, Layout{"layout: uneven", uneven, false},
        Layout{"layout: single", 1, false}, Layout{"layout: interleaved", 0, true},
        Layout{"layout: uneven interleaved", uneven, true}}) {
    ep_test::run_endpoints(
        [&](ep::Communicator& c) {
          SCOPED_TRACE(layout.trace);
          if (layout.interleaved) {
            interleaved(c);
          } else {
            body(c);
          }
        },
        layout.threads);
  }
}

/// Element `i` of the block EP rank `src` sends to EP rank `dst` (exact in
/// int and in double for the sizes used here).
inline int value(int src, int dst, int i, int salt = 0) {
  return ((salt * 16 + src) * 16 + dst) * 100000 + i;
}

}  // namespace ep_a2a
