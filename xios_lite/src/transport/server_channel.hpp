// One client's double-buffered, nonblocking channel to one server.
//
// Events are packed into the active buffer; a full buffer (or the end of a
// step) is sent with isend and the other buffer becomes active. The send
// that buffer went out with is waited for only when the next event is
// written into it, so a step's buffer has the model's compute phase to
// reach the server, and the client waits only when the server is a whole
// step behind: data is never dropped, and the wait is counted as blocked
// time. Every wait
// polls the error channel and gives up with a clear error after the
// timeout, so a dead or failed server never makes a client hang silently.
//
// Thread safety: one channel belongs to one client thread.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "transport/progress_thread.hpp"

namespace xios_lite::transport {

class ServerChannel {
 public:
  /// `poll` is called while waiting (it collects server errors; it must not throw,
  /// the error is raised by the next client call once the buffers are consistent).
  /// `progress`: the process's progress thread, or null for none.
  ServerChannel(const ep::InterCommunicator& inter, int server, std::size_t capacity,
                double timeout_s, std::function<void()> poll,
                std::shared_ptr<ProgressThread> progress);
  /// A send still in flight keeps its buffer: MPI may read it until the
  /// send completes, so such a buffer is left allocated (error paths only).
  ~ServerChannel();
  ServerChannel(const ServerChannel&) = delete;
  ServerChannel& operator=(const ServerChannel&) = delete;

  /// Room for `bytes` contiguous bytes in the active buffer; may send the
  /// active buffer, and waits (counting blocked time) while the buffer it
  /// writes into is still in flight. bytes <= capacity.
  std::byte* reserve(std::size_t bytes, double& blocked_s);
  /// Sends the active buffer if it holds anything; the other buffer becomes
  /// active, its own send (if still in flight) waited for by the next reserve.
  void flush();
  /// Tests the pending sends (the progress every client call makes).
  void progress();
  /// Waits for both sends to complete (used at finalise).
  void drain(double& blocked_s);
  [[nodiscard]] bool idle();
  [[nodiscard]] double bytes_sent() const noexcept { return bytes_sent_; }
  /// MPI_Wtime of the last send (of construction before the first).
  [[nodiscard]] double last_send_time() const noexcept { return last_send_time_; }
  /// Bytes waiting in the active buffer.
  [[nodiscard]] std::size_t buffered() const noexcept {
    return used_[static_cast<std::size_t>(active_)];
  }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

 private:
  void wait_free(int index, double& blocked_s);
  bool test_one(ep::Request& r);

  const ep::InterCommunicator& inter_;
  int server_;
  std::size_t capacity_;
  double timeout_s_;
  std::function<void()> poll_;
  std::shared_ptr<ProgressThread> progress_;
  std::array<std::vector<std::byte>, 2> buffers_;
  std::array<std::size_t, 2> used_{0, 0};
  std::array<ep::Request, 2> pending_;
  int active_ = 0;
  double bytes_sent_ = 0;
  double last_send_time_ = 0;
  std::string stuck_;  // set once a wait timed out: the server is not waited for again
};

}  // namespace xios_lite::transport
