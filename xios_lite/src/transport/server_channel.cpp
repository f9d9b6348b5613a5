#include "server_channel.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <thread>

#include "ep/error.hpp"
#include "ep/typed.hpp"
#include "transport/event.hpp"

namespace xios_lite::transport {

ServerChannel::ServerChannel(const ep::InterCommunicator& inter, int server, std::size_t capacity,
                             double timeout_s, std::function<void()> poll,
                             std::shared_ptr<ProgressThread> progress)
    : inter_(inter),
      server_(server),
      capacity_(capacity),
      timeout_s_(timeout_s),
      poll_(std::move(poll)),
      progress_(std::move(progress)) {
  buffers_[0].resize(capacity);
  buffers_[1].resize(capacity);
  last_send_time_ = MPI_Wtime();
}

ServerChannel::~ServerChannel() {
  for (std::size_t b = 0; b < buffers_.size(); ++b) {
    if (!pending_[b].is_null()) {
      // Deliberately never freed (see header). Without memory for the small
      // holder the exception ends the program here, rather than free what
      // MPI may read.
      // NOLINTNEXTLINE(cppcoreguidelines-owning-memory,bugprone-unhandled-exception-at-new)
      (void)new std::vector<std::byte>(std::move(buffers_[b]));
    }
  }
}

// Tests a pending send; tells the progress thread when it completed.
bool ServerChannel::test_one(ep::Request& r) {
  if (r.is_null()) {
    return true;
  }
  if (!ep::test(r)) {
    return false;
  }
  if (progress_) {
    progress_->completed();
  }
  return true;
}

void ServerChannel::progress() {
  for (auto& r : pending_) {
    (void)test_one(r);
  }
}

bool ServerChannel::idle() {
  progress();
  return pending_[0].is_null() && pending_[1].is_null();
}

void ServerChannel::wait_free(int index, double& blocked_s) {
  ep::Request& r = pending_[static_cast<std::size_t>(index)];
  if (test_one(r)) {
    return;
  }
  // Back-pressure: the server has not taken this buffer yet. A large send
  // moves only while this thread calls MPI (no progress thread), fragment by
  // fragment, so test often: yield first, then short sleeps (oversubscribed
  // nodes), polling for server errors.
  if (!stuck_.empty()) {
    // The server already let one wait time out: it is not waited for again.
    throw ep::Error(ep::ErrorKind::kRequest, "xios_lite::Client", inter_.rank(), stuck_);
  }
  const double t0 = MPI_Wtime();
  auto sleep = std::chrono::microseconds(1);
  int polls = 0;
  while (!test_one(r)) {
    poll_();
    const double waited = MPI_Wtime() - t0;
    if (waited > timeout_s_) {
      blocked_s += waited;
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g s", timeout_s_);
      stuck_ = "timed out after " + std::string(limit) + " waiting for server " +
               std::to_string(server_) + " to take a send buffer (the server is gone or stuck)";
      throw ep::Error(ep::ErrorKind::kRequest, "xios_lite::Client", inter_.rank(), stuck_);
    }
    if (++polls < 200) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(50));
  }
  blocked_s += MPI_Wtime() - t0;
}

std::byte* ServerChannel::reserve(std::size_t bytes, double& blocked_s) {
  if (bytes > capacity_) {
    // close_definition sized the buffers for the largest event: a larger
    // one is a bug, never silently written past the buffer.
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::Client", -1,
                    "an event of " + std::to_string(bytes) +
                        " bytes does not fit the send buffer of " + std::to_string(capacity_) +
                        " bytes");
  }
  if (used_[static_cast<std::size_t>(active_)] + bytes > capacity_) {
    flush();
  }
  // The active buffer may still be in flight (flush does not wait for it):
  // its send must complete before anything is written into it.
  wait_free(active_, blocked_s);
  std::byte* p =
      buffers_[static_cast<std::size_t>(active_)].data() + used_[static_cast<std::size_t>(active_)];
  used_[static_cast<std::size_t>(active_)] += bytes;
  return p;
}

void ServerChannel::flush() {
  const auto a = static_cast<std::size_t>(active_);
  if (used_[a] == 0) {
    return;
  }
  pending_[a] = ep::isend(inter_, std::span<const std::byte>(buffers_[a].data(), used_[a]), server_,
                          kEventsTag);
  bytes_sent_ += static_cast<double>(used_[a]);
  last_send_time_ = MPI_Wtime();
  if (progress_) {
    progress_->sent();
  }
  // The other buffer becomes active. Its send (the previous flush) is not
  // waited for here but at the next reserve: a step's buffer leaves at the
  // end of the step, so the previous one gets the model's whole compute
  // phase, not only the output calls, to reach a server that was slow.
  active_ = 1 - active_;
  used_[static_cast<std::size_t>(active_)] = 0;
}

void ServerChannel::drain(double& blocked_s) {
  flush();
  wait_free(0, blocked_s);
  wait_free(1, blocked_s);
}

}  // namespace xios_lite::transport
