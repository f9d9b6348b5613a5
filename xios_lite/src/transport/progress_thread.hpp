// A process-wide MPI progress thread for the clients' sends.
//
// Between processes a large message moves in fragments, and each fragment
// needs some thread of the sending process inside MPI. Without help that is
// only the client thread during its output calls, so a buffer sent at the
// end of a step sits still while the model computes and is transferred while
// the client waits for it at the next step. While any client send of this
// process is in flight, this thread calls MPI_Iprobe on MPI_COMM_SELF every
// few microseconds: any MPI call runs the library's progress engine, which
// moves every pending transfer of the process. It never receives, tests or
// completes anything itself (ep requests stay with their endpoint).
//
// The client sends a step's records as soon as the last of them is packed
// (ClientEngine), so the transfer runs here while the model computes, and
// the thread's short sleeps between polls (it shares the model's core when
// each process has one) are not on the client's path. With nothing in
// flight it parks on a futex (std::atomic::wait) until the next send, so an
// idle client process costs no wake-ups.
//
// Thread safety: acquire() and the counters may be used from any thread.
// The thread stops with the last holder (before MPI_Finalize, since Clients
// end before it).
#pragma once

#include <atomic>
#include <memory>
#include <thread>

namespace xios_lite::transport {

class ProgressThread {
 public:
  /// The process's progress thread, started on first use.
  static std::shared_ptr<ProgressThread> acquire();
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  /// A send went out / was seen complete by its owner.
  void sent() noexcept {
    if (in_flight_.fetch_add(1, std::memory_order_relaxed) == 0) {
      in_flight_.notify_one();  // the thread may be parked
    }
  }
  void completed() noexcept { in_flight_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  ProgressThread();
  void run();

  std::atomic<int> in_flight_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace xios_lite::transport
