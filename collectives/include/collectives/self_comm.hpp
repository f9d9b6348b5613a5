// SelfComm: a communicator of one rank that talks to nobody, for measuring
// what a program costs with communication at no cost (the mini model's
// compute-only floor, `mini_model --no-communication`).
//
// Every kernel of collectives/ runs on it unchanged, and on one rank every
// exchange degenerates to local copies of the data a rank would send: a
// halo plan of a periodic 1 x 1 decomposition copies its own halo (the same
// cells a rank of a larger grid receives), a transposition copies its box,
// an allreduce copies its vector. Nothing here calls MPI except
// MPI_Type_size (local): no message, no library collective, no endpoint.
//
//   collectives::SelfComm self;
//   collectives::HaloPlan plan(self, spec);   // spec: 1 x 1, periodic
//
// Point-to-point: a send to rank 0 is matched with a receive of the same
// tag in posting order and copied when the second of the two is posted;
// wait_all throws common::Error (kRequest) when one of its requests is still
// unmatched (on a real communicator that wait would never return).
//
// Thread safety: a SelfComm and its copies (which share one mailbox) belong
// to one thread, like an endpoint; threads that each make their own are
// independent.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/detail/process_board.hpp"
#include "common/error.hpp"

namespace collectives {

class SelfComm {
 public:
  /// A posted send or receive: `slot` names its mailbox entry (0: none).
  struct Request {
    std::size_t slot = 0;
  };

  SelfComm() : mailbox_(std::make_shared<Mailbox>()) {}

  [[nodiscard]] static int rank() noexcept { return 0; }
  [[nodiscard]] static int size() noexcept { return 1; }
  [[nodiscard]] bool is_null() const noexcept { return null_; }
  [[nodiscard]] static constexpr std::string_view backend() noexcept { return "self"; }

  /// A send to rank 0 (checked): copied into the oldest unmatched receive
  /// of `tag`, or kept until one is posted. Local.
  [[nodiscard]] Request isend(const void* buf, int count, MPI_Datatype type, int dest,
                              int tag) const {
    check_peer("collectives::SelfComm::isend", dest);
    return mailbox_->post(true, const_cast<void*>(buf), bytes(count, type), tag);
  }
  /// A receive from rank 0 (or MPI_ANY_SOURCE); see isend. Local.
  [[nodiscard]] Request irecv(void* buf, int count, MPI_Datatype type, int source, int tag) const {
    if (source != MPI_ANY_SOURCE) check_peer("collectives::SelfComm::irecv", source);
    return mailbox_->post(false, buf, bytes(count, type), tag);
  }
  /// Completes every request (all of them already copied), or throws for an
  /// unmatched one. Local.
  void wait_all(std::span<Request> requests) const {
    for (Request& r : requests) {
      if (r.slot != 0 && !mailbox_->done(r.slot)) {
        throw common::Error(common::ErrorKind::kRequest, "collectives::SelfComm::wait_all", 0,
                            "a send or receive to itself without its counterpart (it would "
                            "never complete)");
      }
      r.slot = 0;
    }
    mailbox_->forget_done();
  }

  /// Receives whose messages may be longer than their buffers (alltoallv's
  /// check): posted as nothing; finish matches each with the oldest unmatched
  /// send of `tag`, copies what fits, sets `received` (kLonger for a longer
  /// message), then completes `requests`. Local.
  void post_sized_receives(std::span<SizedReceive> /*receives*/, MPI_Datatype /*type*/, int /*tag*/,
                           std::vector<Request>& /*requests*/) const {}
  void finish_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int tag,
                             std::vector<Request>& requests,
                             std::vector<std::byte>& /*spill*/) const {
    const std::size_t unit = bytes(1, type);
    for (SizedReceive& r : receives) {
      check_peer("collectives::SelfComm::finish_sized_receives", r.source);
      const std::size_t room = unit * static_cast<std::size_t>(r.count);
      const std::size_t message = mailbox_->take_send(tag, r.buf, room);
      if (message == Mailbox::kNone) {
        throw common::Error(common::ErrorKind::kRequest,
                            "collectives::SelfComm::finish_sized_receives", 0,
                            "no send to itself with tag " + std::to_string(tag));
      }
      r.received = message > room ? SizedReceive::kLonger : static_cast<int>(message / unit);
    }
    wait_all(std::span<Request>(requests));
  }

  /// One rank: a copy of this communicator, or a null one for MPI_UNDEFINED.
  [[nodiscard]] SelfComm split(int color, int /*key*/) const {
    SelfComm out;
    out.null_ = color == MPI_UNDEFINED;
    return out;
  }
  [[nodiscard]] SelfComm private_split(int color, int key) const { return split(color, key); }
  [[nodiscard]] const SelfComm& kernel_comm() const noexcept { return *this; }
  /// A graph whose every edge is a loop (the only rank there is).
  [[nodiscard]] SelfComm dist_graph(std::span<const int> sources,
                                    std::span<const int> destinations) const {
    for (const int s : sources) check_peer("collectives::SelfComm::dist_graph", s);
    for (const int d : destinations) check_peer("collectives::SelfComm::dist_graph", d);
    return SelfComm();
  }

  /// Block 0 to block 0. Local.
  void library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                         std::span<const int> sdispls, void* recvbuf,
                         std::span<const int> recvcounts, std::span<const int> rdispls,
                         MPI_Datatype type) const {
    copy_blocks(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, type, 1);
  }
  /// The vector itself (a copy unless in place). Local.
  void library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                         MPI_Op /*op*/) const {
    if (sendbuf == MPI_IN_PLACE || sendbuf == recvbuf) return;
    std::memmove(recvbuf, sendbuf, bytes(count, type));
  }
  /// Block i to block i for each loop of the graph. Local.
  void neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                          std::span<const int> sdispls, void* recvbuf,
                          std::span<const int> recvcounts, std::span<const int> rdispls,
                          MPI_Datatype type) const {
    copy_blocks(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, type,
                recvcounts.size());
  }

  template <class F>
  void parallel_for(int n, F&& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }

 private:
  struct Entry {
    bool send = false;
    void* buf = nullptr;
    std::size_t bytes = 0;
    int tag = 0;
    bool done = false;
  };
  // Entries in posting order; slot = 1 + index from the first ever posted.
  struct Mailbox {
    std::deque<Entry> entries;
    std::size_t first_slot = 1;

    Request post(bool send, void* buf, std::size_t bytes, int tag) {
      Entry mine{send, buf, bytes, tag, false};
      for (Entry& e : entries) {
        if (e.done || e.send == send) continue;
        Entry& receive = send ? e : mine;
        if (receive.tag != MPI_ANY_TAG && e.tag != tag) continue;
        const Entry& message = send ? mine : e;
        if (message.bytes > receive.bytes) {
          throw common::Error(common::ErrorKind::kTruncate, "collectives::SelfComm", 0,
                              "a message of " + std::to_string(message.bytes) +
                                  " bytes to itself for a receive of " +
                                  std::to_string(receive.bytes));
        }
        if (message.bytes > 0) std::memmove(receive.buf, message.buf, message.bytes);
        e.done = mine.done = true;
        break;
      }
      entries.push_back(mine);
      return {first_slot + entries.size() - 1};
    }
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    /// The oldest unmatched send of `tag`: copies up to `room` bytes of it
    /// to `buf`, marks it done and returns its size (kNone: there is none).
    std::size_t take_send(int tag, void* buf, std::size_t room) {
      for (Entry& e : entries) {
        if (e.done || !e.send || e.tag != tag) continue;
        const std::size_t n = e.bytes < room ? e.bytes : room;
        if (n > 0) std::memmove(buf, e.buf, n);
        e.done = true;
        return e.bytes;
      }
      return kNone;
    }
    [[nodiscard]] bool done(std::size_t slot) const {
      return slot >= first_slot && slot - first_slot < entries.size() &&
             entries[slot - first_slot].done;
    }
    void forget_done() {
      while (!entries.empty() && entries.front().done) {
        entries.pop_front();
        ++first_slot;
      }
    }
  };

  static std::size_t bytes(int count, MPI_Datatype type) {
    if (count < 0) {
      throw common::Error(common::ErrorKind::kCount, "collectives::SelfComm", 0,
                          "count " + std::to_string(count) + " is negative");
    }
    int size = 0;
    common::check_mpi(MPI_Type_size(type, &size), "collectives::SelfComm", 0);
    return static_cast<std::size_t>(count) * static_cast<std::size_t>(size);
  }
  static void check_peer(const char* call, int peer) {
    if (peer != 0) {
      throw common::Error(common::ErrorKind::kRank, call, 0,
                          "rank " + std::to_string(peer) + " out of range [0, 1)");
    }
  }
  static void copy_blocks(const void* sendbuf, std::span<const int> sendcounts,
                          std::span<const int> sdispls, void* recvbuf,
                          std::span<const int> recvcounts, std::span<const int> rdispls,
                          MPI_Datatype type, std::size_t blocks) {
    if (sendcounts.size() < blocks || sdispls.size() < blocks || recvcounts.size() < blocks ||
        rdispls.size() < blocks) {
      throw common::Error(common::ErrorKind::kCount, "collectives::SelfComm", 0,
                          "fewer counts than blocks (" + std::to_string(blocks) + ")");
    }
    const std::size_t unit = bytes(1, type);
    for (std::size_t b = 0; b < blocks; ++b) {
      if (sendcounts[b] != recvcounts[b]) {
        throw common::Error(common::ErrorKind::kCount, "collectives::SelfComm", 0,
                            "block " + std::to_string(b) + ": " + std::to_string(sendcounts[b]) +
                                " sent, " + std::to_string(recvcounts[b]) + " received");
      }
      std::memmove(
          static_cast<std::byte*>(recvbuf) + unit * static_cast<std::size_t>(rdispls[b]),
          static_cast<const std::byte*>(sendbuf) + unit * static_cast<std::size_t>(sdispls[b]),
          unit * static_cast<std::size_t>(sendcounts[b]));
    }
  }

  std::shared_ptr<Mailbox> mailbox_;
  bool null_ = false;
};

static_assert(Communicator<SelfComm>);

namespace detail {

/// SelfComm's one rank has a board of its own, so that bound plans take
/// their one-process paths (the transposition's fused copy) as the threads
/// of one process do. Nobody else waits on it: a wait is for this rank's own
/// arrival, always already raised.
template <>
struct ProcessSharing<SelfComm> {
  static std::vector<int> local_threads(const SelfComm& /*comm*/) { return {0}; }
  static int local_thread(const SelfComm& /*comm*/) { return 0; }
  static std::shared_ptr<ProcessBoard> board(const SelfComm& /*comm*/) {
    BoardWaits waits;
    waits.notify = [] {};
    waits.wait_until = [](const std::atomic<std::uint64_t>& counter, std::uint64_t value) {
      while (counter.load(std::memory_order_acquire) < value) {
      }
    };
    return std::make_shared<ProcessBoard>(1, waits);
  }
};

}  // namespace detail

}  // namespace collectives
