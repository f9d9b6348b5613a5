// The point-to-point state of one endpoint communicator, shared by the
// handles of the process's threads: the MPI channel communicators of user
// traffic (one per channel of the tag layout, and the bulk communicator of
// the source-header layout), one mailbox per local endpoint, and the drain
// that moves messages from MPI's queues into the mailboxes. The
// communicator's state (comm_state.hpp) owns one; the drain, the direct
// receive path and the waits of p2p/ work on it alone.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ep/error.hpp"
#include "ep/rank_map.hpp"
#include "ep/tag_encoding.hpp"
#include "p2p/matching_engine.hpp"

namespace ep::detail {

class P2pState {
 public:
  /// Duplicates `process_comm` once per channel of the tag layout (and once
  /// more for the bulk data of the source-header layout): collective over
  /// its processes, called by one thread per process. `map` numbers the
  /// endpoints over its ranks and must outlive this state. Throws
  /// ep::Error(kTag) or ep::Error(kTooManyEndpoints) naming `call` when
  /// `tag_ub` cannot address the endpoints of `map` (see tag_encoding.hpp),
  /// the same on every process since `map` is.
  P2pState(MPI_Comm process_comm, const RankMap& map, int process_rank, long long tag_ub,
           int max_tag_channels, const char* call);
  P2pState(const P2pState&) = delete;
  P2pState& operator=(const P2pState&) = delete;
  ~P2pState() = default;

  /// User point-to-point traffic only, on the given channel of the tag
  /// layout (0 .. tag_layout().channels - 1); internal traffic never uses it.
  [[nodiscard]] MPI_Comm p2p_comm(int channel = 0) const noexcept {
    return p2p_comms_[static_cast<std::size_t>(channel)];
  }
  /// How wire tags and channels carry the thread indices (tag_encoding.hpp).
  [[nodiscard]] const TagLayout& tag_layout() const noexcept { return tag_layout_; }
  /// Source-header layout only (MPI_COMM_NULL otherwise): the data of a
  /// message sent apart from its header, tagged with the number its header
  /// names (p2p/inter_process.cpp).
  [[nodiscard]] MPI_Comm bulk_comm() const noexcept { return bulk_comm_; }
  /// The next tag for a message on bulk_comm(). It only has to differ from
  /// the tags of the bulk messages from this process that are still in
  /// flight to the same process: a wrap-around counter over 0..tag_ub.
  /// Thread-safe.
  [[nodiscard]] int next_bulk_tag() noexcept {
    const unsigned long long n = bulk_tags_.fetch_add(1, std::memory_order_relaxed);
    return static_cast<int>(n % static_cast<unsigned long long>(tag_ub_ + 1));
  }
  [[nodiscard]] Mailbox& mailbox(int thread) { return mailboxes_[thread]; }
  /// Whether every endpoint is in this process (nothing ever needs a drain).
  [[nodiscard]] bool single_process() const noexcept { return map_.num_processes() == 1; }

  /// Moves every message waiting in the MPI queues of the p2p channels into the
  /// mailbox of its destination thread. One drainer at a time: when another
  /// thread is draining this returns at once (it will deliver our messages).
  /// Any thread may drain (a wait, a probe, a team barrier's idle hook), so
  /// it never throws: a failed receive of a matched message fails that
  /// receive's request (its owner throws it), and a failure of the drain
  /// itself (MPI_Improbe, a wire tag naming no endpoint) is recorded as the
  /// communicator's drain fault and fails its receives. `ep_rank` (-1: none)
  /// only names the caller in messages. Part of the inter-process path:
  /// defined in p2p/inter_process.cpp.
  void drain(int ep_rank) noexcept;

  /// The direct receive path: posts `request` (a receive of its owner's
  /// endpoint from the endpoint at `from`, in another process, with a
  /// specific tag) as an MPI_Irecv of its wire tag, when that keeps MPI's
  /// matching order: no message from that source and tag waits in the
  /// owner's mailbox, no earlier receive of the owner in the mailbox could
  /// take one, and no drain runs meanwhile (the drain lock is held across
  /// the post, so the drain cannot move a message between the check and
  /// MPI's match). False, with nothing posted, when the queues forbid it or
  /// the drain has failed; the caller then posts in the mailbox.
  /// Owner thread. Part of the inter-process path: p2p/inter_process.cpp.
  bool try_post_direct(RequestState& request, Location from);

  /// Whether the drain has failed; from then on every receive of this
  /// communicator fails with drain_fault() (it could otherwise wait for a
  /// message the drain can no longer deliver), and probes throw it.
  [[nodiscard]] bool drain_failed() const noexcept {
    return drain_failed_.load(std::memory_order_acquire);
  }
  struct DrainFault {
    ErrorKind kind = ErrorKind::kMpi;
    std::string detail;
    int mpi_code = MPI_SUCCESS;
  };
  /// The first failure of the drain; read only after drain_failed() is true
  /// (written once, before that flag).
  [[nodiscard]] const DrainFault& drain_fault() const noexcept { return drain_fault_; }
  /// After a drain failure: takes `request` (a receive of this communicator)
  /// out of its mailbox and fails it with the drain fault. False when there
  /// is no fault or the request is no longer posted (matched meanwhile).
  /// Owner thread; takes the mailbox lock.
  bool fail_if_posted(RequestState& request);

  /// Drops whatever is still queued and frees the MPI channel communicators
  /// (collective over the processes, as MPI_Comm_free): the last local
  /// endpoint's free. The queued messages and receives belong to an
  /// erroneous program; dropping them also breaks the request ->
  /// communicator -> mailbox -> request ownership cycle.
  void release(const char* call, int ep_rank);

 private:
  // The drain's loop (drain() holds drain_mutex_ and catches what this throws).
  void route_incoming(int ep_rank);
  // Source-header layout: receives the probed `message` from `process` (a
  // header, with the data when small) and makes it a kEager or kRemoteBulk
  // envelope. Returns the source thread the header names, -1 when the
  // message is no header. Throws when MPI_Mrecv fails.
  int open_header(Envelope& message, int process, int ep_rank);
  // Records the drain's first failure and fails every posted receive.
  void record_drain_fault(ErrorKind kind, const std::string& what, int mpi_code);
  void fail_with_drain_fault(RequestState& request) const;

  const RankMap& map_;
  int process_rank_;
  int local_size_;
  long long tag_ub_;
  TagLayout tag_layout_;
  std::vector<MPI_Comm> p2p_comms_;
  MPI_Comm bulk_comm_ = MPI_COMM_NULL;
  std::atomic<unsigned long long> bulk_tags_{0};
  std::unique_ptr<Mailbox[]> mailboxes_;
  std::mutex drain_mutex_;
  std::mutex fault_mutex_;  // serialises the first record_drain_fault
  std::atomic<bool> drain_failed_{false};
  DrainFault drain_fault_;  // written once under fault_mutex_, before drain_failed_
};

}  // namespace ep::detail
