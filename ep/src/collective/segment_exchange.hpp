// The one mechanism that moves blocks between processes, behind every
// collective of ep/src/collective/ and the neighbour collectives
// (topology/). Whatever a collective moves, between two processes it travels
// as one segment per process pair and call: a message of bytes gathered
// from where they lie (ByteRuns, no copy into a common buffer), whose receiver
// checks its size before anything is copied out. The collectives differ only
// in the parameters below, not in how they send, probe or check:
//
//   what a segment holds    aggregated per process (alltoall(v/w), the
//                           nonblocking block exchanges, iallgather(v), the
//                           neighbour collectives: the blocks of every local
//                           thread, with a size row or in route order) or one
//                           block (one endpoint per process: exchange_peer_blocks)
//   how it is received      matched by probe at the size it was sent
//                           (SegmentLanding: a segment of another size lands in
//                           a buffer of its own and the blocks whose two sides
//                           disagree are reported) or posted at the size the
//                           receiver expects (the neighbour collectives, whose
//                           nonblocking form must match in call order without
//                           a probe order; received_size_problem checks it)
//   who probes, in which    a blocking call: the caller (the leader), in MPI's
//   order                   order, waiting with the team's idle work
//                           (receive_probed); a nonblocking call: whichever
//                           thread polls, in ProbeTurns order (match_probed_segments);
//                           both go through the same probe_pass
//   which pairs             every pair, to a root, from a root (PeerPairs), or
//                           the routes of a topology
//
// The tags are in internal_tags.hpp. Thread safety: per function below;
// ProbeTurns is thread-safe, the rest is used by one thread at a time.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backoff.hpp"
#include "checks.hpp"
#include "collective/aggregated_exchange.hpp"
#include "collective/internal_tags.hpp"
#include "ep/error.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

class NbcInstance;

// ---- sending ----------------------------------------------------------------

/// Arguments of MPI_Ialltoallw for messages made of byte runs: per peer
/// process, one or more runs of bytes anywhere in memory. A peer whose message
/// is one run whose size and offset from the buffer argument fit an int gets
/// (bytes, offset, MPI_BYTE); anything else gets an hindexed type of byte runs
/// (relative to the buffer argument, MPI_BOTTOM when there is none), so
/// neither the 2 GiB limit of int counts nor scattered buffers need a copy.
/// Signatures are plain bytes either way, so each side may choose its own form.
class ByteRuns {
 public:
  /// `base`: the buffer argument the runs are relative to (nullptr: MPI_BOTTOM).
  ByteRuns(int peers, const std::byte* base);
  ByteRuns(const ByteRuns&) = delete;
  ByteRuns& operator=(const ByteRuns&) = delete;
  ~ByteRuns();

  void add(int peer, const std::byte* start, std::size_t bytes);
  /// Builds counts, displacements and types; call once, after every add().
  void build(const char* call, int rank);

  [[nodiscard]] const void* buffer() const;
  [[nodiscard]] void* mutable_buffer() const { return const_cast<void*>(buffer()); }
  /// The buffer argument of a point-to-point message to or from `peer`
  /// alone, with counts()[peer] and types()[peer]: buffer() moved by the
  /// peer's displacement.
  [[nodiscard]] const void* peer_buffer(int peer) const {
    if (base_ == nullptr) return MPI_BOTTOM;
    return base_ + displs_[static_cast<std::size_t>(peer)];
  }
  [[nodiscard]] const int* counts() const { return counts_.data(); }
  [[nodiscard]] const int* displs() const { return displs_.data(); }
  [[nodiscard]] const MPI_Datatype* types() const { return types_.data(); }

 private:
  struct Run {
    const std::byte* start;
    std::size_t bytes;
  };
  const std::byte* base_;
  std::vector<std::vector<Run>> runs_;
  std::vector<int> counts_;
  std::vector<int> displs_;
  std::vector<MPI_Datatype> types_;
  std::vector<MPI_Datatype> owned_;  // derived types to free
};

/// What one segment sends: MPI's buffer, count and datatype.
struct SegmentBuffer {
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
};

/// The segment for `peer` of a ByteRuns (after build()).
inline SegmentBuffer segment_of(const ByteRuns& runs, int peer) {
  const auto p = static_cast<std::size_t>(peer);
  return {runs.peer_buffer(peer), runs.counts()[p], runs.types()[p]};
}

/// Starts the send of `segment` to process `q` on `tag` of `mpi` and appends
/// its request to `requests`. Throws ep::Error on an MPI failure.
void send_segment(const CollectiveCall& call, MPI_Comm mpi, int tag, int q,
                  const SegmentBuffer& segment, std::vector<MPI_Request>& requests);

// ---- size rows --------------------------------------------------------------

// The segments that aggregate blocks (alltoall(v/w) and the nonblocking block
// exchanges: aggregated_exchange.hpp; iallgather(v)) head each sender's
// blocks with a row of their sizes, which the receiver checks against its own
// arguments before it copies anything out. One entry per block, a uint64 in
// native byte order (the processes of one job share the architecture).

/// Bytes of one size row entry.
inline constexpr std::size_t kSizeEntryBytes = sizeof(std::uint64_t);

/// Writes entry `index` of the size row at `row`.
inline void write_size_entry(std::byte* row, std::size_t index, std::uint64_t bytes) {
  std::memcpy(row + kSizeEntryBytes * index, &bytes, kSizeEntryBytes);
}

/// Entry `index` of the size row at `row`.
inline std::uint64_t read_size_entry(const std::byte* row, std::size_t index) {
  std::uint64_t bytes = 0;
  std::memcpy(&bytes, row + kSizeEntryBytes * index, kSizeEntryBytes);
  return bytes;
}

// ---- receiving: matched by probe, at the size sent -----------------------------

/// Probes for process `q`'s segment on `tag` of `mpi` (MPI_Improbe). When it
/// has arrived, takes it into `message` and returns its size in bytes.
/// Throws ep::Error on an MPI failure.
std::optional<std::size_t> probe_segment(const CollectiveCall& call, MPI_Comm mpi, int tag, int q,
                                         MPI_Message& message);

/// Starts the receive of the matched `message`, `bytes` long, into the
/// bytes at `at` (MPI_Imrecv; a type of 1 GiB pieces past int counts, kept
/// in `layout` until the receive completes). Throws ep::Error on an MPI failure.
MPI_Request receive_bytes(const CollectiveCall& call, std::byte* at, std::size_t bytes,
                          MPI_Message& message, std::unique_ptr<ByteRuns>& layout);

/// Where each process's segment of an exchange lands when segments travel
/// as point-to-point messages received through a matched probe: in one
/// buffer, at the size this process expects (expected_segment_size), unless
/// the probe finds another size. Such a segment is received whole into a
/// buffer of its own, so MPI never sees a size mismatch and unpack_segment
/// finds the blocks whose two sides disagree in its size rows.
///
/// Thread safety: none; one thread lays out and receives, and the segments
/// are read after the receives have completed.
class SegmentLanding {
 public:
  /// Records the bytes expected from each process (`expected[q]`; the entry
  /// of process `me` is ignored) and returns the bytes of the buffer they
  /// take together (land_in).
  std::size_t expect(std::span<const std::size_t> expected, int me);
  /// The buffer of expect()'s size, owned by the caller until the receives
  /// have completed and the segments have been read.
  void land_in(std::byte* buffer);
  /// Starts the receive of process `q`'s matched segment, `bytes` long as
  /// probed (MPI_Imrecv). Throws ep::Error on an MPI failure.
  MPI_Request receive(const CollectiveCall& call, int q, std::size_t bytes, MPI_Message& message);

  [[nodiscard]] const std::byte* segment(int q) const { return at_[static_cast<std::size_t>(q)]; }
  [[nodiscard]] std::size_t bytes(int q) const { return bytes_[static_cast<std::size_t>(q)]; }

 private:
  std::vector<std::size_t> offset_;                       // per process, in the common buffer
  std::vector<std::size_t> bytes_;                        // per process: expected, then as probed
  std::vector<std::byte*> at_;                            // per process: where its segment lands
  std::vector<std::unique_ptr<std::byte[]>> mismatched_;  // segments of an unexpected size
  std::vector<std::unique_ptr<ByteRuns>> layouts_;        // MPI's view of each receive
};

/// The order in which the nonblocking block exchanges of one communicator
/// (block_exchange.cpp, iallgather.cpp) match their messages from each
/// process. They may be in flight together and completed in any order, so
/// without an order a later exchange could probe an earlier one's message.
/// Exchanges take tickets in start order; the one holding ticket k may probe
/// process q once the exchanges before it have matched theirs from q (MPI
/// keeps the messages from q in the order q started the same exchanges).
/// An exchange waiting for its turn makes the earlier ones probe (help_older):
/// the program may wait for its requests in any order, and an earlier
/// exchange nobody polls would otherwise never take its turn.
class ProbeTurns {
 public:
  explicit ProbeTurns(int processes);
  /// The ticket of `exchange`, which has yet to match its messages. Called in
  /// start order (under the registry lock).
  std::uint64_t issue(std::weak_ptr<NbcInstance> exchange);
  /// `ticket`'s exchange has matched every message (or failed): no help needed.
  void done(std::uint64_t ticket);
  /// Lets every exchange before `ticket` that still has messages to match
  /// probe now (NbcInstance::try_post_more). Never waits.
  void help_older(std::uint64_t ticket, int rank);
  /// Whether the exchange holding `ticket` may probe process `q` now.
  [[nodiscard]] bool may_probe(int q, std::uint64_t ticket) const noexcept {
    return matched_[static_cast<std::size_t>(q)].load(std::memory_order_acquire) == ticket;
  }
  /// Passes the turn for process `q` on to the next exchange.
  void matched(int q) noexcept {
    matched_[static_cast<std::size_t>(q)].fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  std::uint64_t issued_ = 0;
  std::unique_ptr<std::atomic<std::uint64_t>[]> matched_;  // per process
  std::mutex mutex_;                                       // guards unmatched_
  std::map<std::uint64_t, std::weak_ptr<NbcInstance>> unmatched_;
};

/// The processes whose segment an exchange has not matched yet, and its
/// ticket when it takes turns (nonblocking exchanges).
struct ProbedSegments {
  std::vector<int> unmatched;
  std::uint64_t ticket = 0;
};

/// What one probe_pass found.
struct ProbePass {
  bool matched_any = false;      ///< at least one segment was matched
  bool waited_for_turn = false;  ///< a process was skipped: an earlier exchange's turn
};

/// One pass over `segments.unmatched`, the probe of every exchange: probes
/// each process (whose turn it is, when `turns` is given) on `tag` of `mpi`,
/// and for each segment that has arrived passes the turn on, drops the
/// process from the list and starts the receive with `receive(q, bytes,
/// message)`, which returns the MPI request (appended to `requests`). Each
/// segment is received at the size it was sent, whatever the receiver
/// expected: that is what lets a block whose two sides disagree be reported
/// instead of reaching MPI. Never waits; throws ep::Error on an MPI failure.
template <class Receive>
ProbePass probe_pass(const CollectiveCall& call, MPI_Comm mpi, int tag, ProbeTurns* turns,
                     ProbedSegments& segments, std::vector<MPI_Request>& requests,
                     Receive&& receive) {
  ProbePass pass;
  std::vector<int>& unmatched = segments.unmatched;
  for (auto it = unmatched.begin(); it != unmatched.end();) {
    const int q = *it;
    if (turns != nullptr && !turns->may_probe(q, segments.ticket)) {
      pass.waited_for_turn = true;
      ++it;
      continue;
    }
    MPI_Message message = MPI_MESSAGE_NULL;
    const std::optional<std::size_t> bytes = probe_segment(call, mpi, tag, q, message);
    if (!bytes) {
      ++it;
      continue;
    }
    if (turns != nullptr) turns->matched(q);
    it = unmatched.erase(it);
    pass.matched_any = true;
    requests.push_back(receive(q, *bytes, message));
  }
  return pass;
}

/// A blocking exchange's receives: probe passes (in MPI's order, no turns)
/// over `unmatched` on `tag` of the internal communicator until every
/// process's segment has arrived and its receive has started (see
/// probe_pass). While nothing arrives, the team's idle work routes
/// point-to-point messages. Blocking calls of one process follow each
/// other, so MPI's order per (process, tag) is the only order needed.
template <class Receive>
void receive_probed(const CollectiveCall& call, int tag, std::vector<int> unmatched,
                    std::vector<MPI_Request>& requests, Receive&& receive) {
  ProbedSegments segments{std::move(unmatched), 0};
  Backoff backoff;
  while (!segments.unmatched.empty()) {
    if (probe_pass(call, call.mpi(), tag, nullptr, segments, requests, receive).matched_any) {
      backoff.reset();
      continue;
    }
    call.team.idle(backoff);
    backoff.pause();
  }
}

/// start_requests()'s part for a nonblocking exchange: starts the send of its
/// segment to every other process (`segment(q)` gives the SegmentBuffer for
/// process q) on kProbedSegmentTag, records those processes as unmatched and
/// takes the instance's ticket (in start order, since start_requests() runs
/// in sequence). Returns the send requests.
template <class Segment>
std::vector<MPI_Request> send_probed_segments(ProbeTurns& turns,
                                              std::weak_ptr<NbcInstance> instance,
                                              const CollectiveCall& call, MPI_Comm mpi,
                                              ProbedSegments& segments, Segment&& segment) {
  std::vector<MPI_Request> requests;
  const int me = call.comm.process_rank();
  for (int q = 0; q < call.processes(); ++q) {
    if (q == me) continue;
    send_segment(call, mpi, kProbedSegmentTag, q, segment(q), requests);
    segments.unmatched.push_back(q);
  }
  segments.ticket = turns.issue(std::move(instance));
  return requests;
}

/// post_more's work for a nonblocking exchange: one probe_pass in ProbeTurns
/// order on kProbedSegmentTag. True once every segment is matched. A failure
/// passes the instance's remaining turns on, so that later instances do not
/// wait for it, and is rethrown.
template <class Receive>
bool match_probed_segments(ProbeTurns& turns, ProbedSegments& segments, const CollectiveCall& call,
                           MPI_Comm mpi, std::vector<MPI_Request>& requests, Receive&& receive) {
  if (segments.unmatched.empty()) return true;
  try {
    const ProbePass pass =
        probe_pass(call, mpi, kProbedSegmentTag, &turns, segments, requests, receive);
    if (segments.unmatched.empty()) {
      turns.done(segments.ticket);
      return true;
    }
    if (pass.waited_for_turn) turns.help_older(segments.ticket, call.rank);
    return false;
  } catch (...) {
    for (const int q : segments.unmatched) turns.matched(q);
    segments.unmatched.clear();
    turns.done(segments.ticket);
    throw;
  }
}

// ---- receiving: posted at the size expected --------------------------------------

/// Starts the receive of process `q`'s segment on `tag` of `mpi` into
/// `bytes` bytes at `at` and appends its request to `requests`. A segment
/// longer than that fails the request (MPI_ERR_TRUNCATE); a shorter one is
/// found by received_size_problem. Throws ep::Error on an MPI failure
/// (kCount when `bytes` does not fit an int).
void post_segment(const CollectiveCall& call, MPI_Comm mpi, int tag, int q, std::byte* at,
                  std::size_t bytes, std::vector<MPI_Request>& requests);

/// The size check of a posted segment once its receive completed: empty when
/// process `q` sent `expected` bytes, otherwise the problem (naming both
/// sizes), with kCount (or kMpi when MPI cannot tell the size) in `kind`.
std::string received_size_problem(const MPI_Status& status, int q, std::size_t expected,
                                  ErrorKind& kind);

// ---- one block per process pair ---------------------------------------------------

/// Which process pairs exchange a message in one call of exchange_peer_blocks
/// (EP rank = process rank: one endpoint per process).
struct PeerPairs {
  enum class Shape {
    kAll,       ///< every process to every process (alltoall, allgather)
    kToRoot,    ///< every process to the root (gather)
    kFromRoot,  ///< the root to every process (scatter)
  };
  Shape shape = Shape::kAll;
  int root = 0;
  /// Whether the own block moves from the send to the receive side (false:
  /// MPI_IN_PLACE left it where it belongs already).
  bool self = true;

  [[nodiscard]] bool moves(int from, int to) const noexcept {
    if (from == to && !self) return false;
    switch (shape) {
      case Shape::kAll:
        return true;
      case Shape::kToRoot:
        return to == root;
      case Shape::kFromRoot:
        return from == root;
    }
    return false;
  }
};

/// The blocking collectives that move blocks (alltoall(v/w), gather(v),
/// scatter(v), allgather(v)) on a communicator with one endpoint per
/// process: no team and no staging, so each block is its own segment, sent
/// straight from the sender's buffer on kPeerBlockTag and received by
/// probe_pass: into the receive block when the two sides agree, else whole
/// into a buffer of its own, of which the part that fits is then unpacked
/// and the block reported (kTruncate when more was sent, kCount when less)
/// on the receiving endpoint. Every other endpoint completes with its data.
/// Returns once every block has arrived and every send has completed; throws
/// ep::Error for a block whose two sides disagree or an MPI failure.
/// Collective over the communicator's processes; called by their one
/// endpoint each, with one_endpoint_per_process() true. A call sends at most
/// one message per ordered process pair and the receiver probes exactly the
/// processes that send to it, so MPI's order per (process, tag) keeps
/// consecutive calls apart.
void exchange_peer_blocks(const CollectiveCall& call, const ExchangeSpec& spec, PeerPairs pairs);

}  // namespace ep::detail
