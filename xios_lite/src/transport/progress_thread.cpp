#include "progress_thread.hpp"

#include <mpi.h>

#include <chrono>
#include <mutex>

namespace xios_lite::transport {

std::shared_ptr<ProgressThread> ProgressThread::acquire() {
  static std::mutex mutex;
  static std::weak_ptr<ProgressThread> current;
  const std::lock_guard lock(mutex);
  std::shared_ptr<ProgressThread> p = current.lock();
  if (!p) {
    p = std::shared_ptr<ProgressThread>(new ProgressThread());
    current = p;
  }
  return p;
}

ProgressThread::ProgressThread() : thread_([this] { run(); }) {}

ProgressThread::~ProgressThread() {
  stop_.store(true, std::memory_order_release);
  // Wakes a parked thread: it sees stop_ on its next round.
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  in_flight_.notify_one();
  thread_.join();
}

void ProgressThread::run() {
  while (!stop_.load(std::memory_order_acquire)) {
    const int in_flight = in_flight_.load(std::memory_order_relaxed);
    if (in_flight > 0) {
      int flag = 0;
      // Only to enter the progress engine; a failure here is not an error
      // of any send (the owner's test reports those), so the code is ignored.
      (void)MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
      std::this_thread::sleep_for(std::chrono::microseconds(10));
    } else {
      in_flight_.wait(in_flight, std::memory_order_relaxed);  // until a send (or the end)
    }
  }
}

}  // namespace xios_lite::transport
