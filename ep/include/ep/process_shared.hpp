// One object for the endpoints of one process: the process's leader makes
// it, every local endpoint gets a handle to it. For state that the threads
// of a process keep together (a funneled client's meeting point, a pool of
// buffers), instead of sending its address in a message.
//
//   // every endpoint of `comm` in this process, at the same point:
//   std::shared_ptr<Pool> pool =
//       ep::share_in_process<Pool>(comm, [&] { return std::make_shared<Pool>(comm.local_size());
//       });
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <type_traits>

#include "ep/communicator.hpp"

namespace ep {

namespace detail {
/// The type-erased core of share_in_process (ep/src/communicator/process_shared.cpp).
std::shared_ptr<void> share_in_process(const Communicator& comm, const char* call,
                                       const std::function<std::shared_ptr<void>()>& make);
}  // namespace detail

/// Collective over the endpoints of `comm` in the calling process only (no
/// MPI traffic; every local endpoint calls it, in the same order as its
/// other collectives on `comm`): local thread 0 calls `make()` while the
/// others wait, then every local endpoint returns the object it made.
/// Whatever `make` throws is thrown on every local endpoint as an ep::Error
/// of the same kind (std::bad_alloc: kNoMemory), naming that endpoint's rank.
/// The object is shared as a std::shared_ptr: it lives until the last local
/// endpoint drops its handle, and the threads synchronise their use of it.
template <class T, class Make>
requires std::convertible_to<std::invoke_result_t<Make&>, std::shared_ptr<T>>
[[nodiscard]] std::shared_ptr<T> share_in_process(const Communicator& comm, Make&& make) {
  return std::static_pointer_cast<T>(detail::share_in_process(
      comm, "ep::share_in_process",
      [&]() -> std::shared_ptr<void> { return std::shared_ptr<T>(make()); }));
}

}  // namespace ep
