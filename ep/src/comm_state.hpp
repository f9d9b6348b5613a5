// Process-wide shared state of one endpoint communicator: the rank map, the
// duplicated MPI communicators, one mailbox per local endpoint and the drain
// lock. Shared by the Communicator handles of the process's threads.
//
// Lock hierarchy of the endpoint layer. A thread that holds a lock may take
// only locks further down this list, one at a time within a level marked
// "one at a time"; nobody holds any of them across a team barrier, a wait
// loop or a call of user code other than a reduction operator.
//
//   1. registry  NbcRegistry::mutex_ (collective/nonblocking_registry.hpp):
//                the order of a communicator's nonblocking collectives. The
//                last contribution starts the instance's MPI collective under
//                it (an MPI call; may record into the instance's failure slot).
//   2. mpi       NbcInstance::mpi_mutex_ (same file), try-lock: one thread at
//                a time runs MPI_Test of a nonblocking collective; the others
//                come back on their next poll instead of waiting.
//   3. fold      Ireduction::fold_mutex_ (collective/ireduction.cpp),
//      arrive    BlockExchange::arrive_mutex_ (collective/block_exchange.cpp)
//                and the neighbourhood exchange's arrive_mutex_
//                (topology/ineighbor_collectives.cpp): one thread's
//                contribution to a nonblocking collective; fold runs the
//                reduction operator under it. One at a time.
//   4. drain     CommState::drain_mutex_ (below), try-lock: one drainer per
//                communicator runs MPI_Improbe / MPI_Mrecv / MPI_Imrecv;
//                a thread that fails to take it returns and polls its own
//                request. Under it: fault, then mailbox locks. The direct
//                receive path (try_post_direct) takes it blocking, around a
//                mailbox check and one MPI_Irecv: its holders never wait
//                for another thread, so that wait is short.
//   5. fault     CommState::fault_mutex_: records the drain's first failure;
//                released before the mailboxes are visited to fail their
//                receives.
//   6. mailbox   Mailbox::mutex (p2p/matching_engine.hpp), a spin lock, one
//                at a time: queue operations, reading the rings and copying
//                their small inline messages, no MPI call; a rendezvous's
//                data moves after it is released. Intra-process senders
//                write their rings without it; they take it only to make a
//                ring, to queue a message in a full ring's overflow, and try
//                it (never wait for it) to read their own ring while they
//                wait for a match.
//   7. leaves    FailureSlot::mutex_ (team/failure_slot.hpp),
//                the trace recorder's mutex (trace/recorder.cpp), the test
//                hooks' atomics: nothing is taken under them.
//
// The try-locks never block (drain blocks only on the direct receive path,
// above), so a thread holding one never waits for another thread; what completes a request is
// published through RequestState::phase (release store, acquire load; p2p/request_state.hpp), never
// by holding a lock across the hand-off.
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
#include "team/local_team.hpp"

namespace ep::detail {

/// Settings a communicator passes on to every communicator made from it
/// (dup, split, intercommunicators), agreed by all processes at creation.
struct CommSettings {
  std::size_t eager_threshold = 0;
  /// MPI_TAG_UB as the wire encoding sees it (EndpointOptions::tag_ub can
  /// lower it, to test the narrow layouts on an MPI with a large bound).
  long long tag_ub = kRequiredTagUb;
  /// The most channel communicators the tag layout may use
  /// (EndpointOptions::max_tag_channels); the same on every process.
  int max_tag_channels = kMaxTagChannels;
  /// Unexpected eager bytes one endpoint's mailbox may hold (kDefaultEagerCap).
  std::size_t eager_cap = 0;
  /// Whether receives may go straight to MPI (p2p/inter_process.hpp). A
  /// receiver's choice alone: processes need not agree.
  bool direct_receive = true;
};

class Topology;     // topology/topology.hpp
class NbcRegistry;  // collective/nonblocking_registry.hpp (the core includes nothing from
                    // collective/)

class CommState {
 public:
  /// Duplicates `process_comm` (collective over its processes, called by one
  /// thread per process); `map` numbers the endpoints over its ranks.
  /// `parent` is what Communicator::parent() reports. Throws ep::Error(kTag)
  /// when settings.tag_ub cannot address the endpoints of `map` (see
  /// tag_encoding.hpp), the same on every process since `map` is.
  CommState(MPI_Comm process_comm, MPI_Comm parent, RankMap map, int process_rank,
            const CommSettings& settings);
  CommState(const CommState&) = delete;
  CommState& operator=(const CommState&) = delete;
  ~CommState();

  [[nodiscard]] const RankMap& rank_map() const noexcept { return map_; }
  [[nodiscard]] int process_rank() const noexcept { return process_rank_; }
  [[nodiscard]] int local_size() const noexcept { return local_size_; }
  [[nodiscard]] bool single_process() const noexcept { return map_.num_processes() == 1; }
  [[nodiscard]] MPI_Comm parent() const noexcept { return parent_; }
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
    return static_cast<int>(n % static_cast<unsigned long long>(settings_.tag_ub + 1));
  }
  [[nodiscard]] const CommSettings& settings() const noexcept { return settings_; }
  /// Internal traffic (collectives, control) on its own communicator.
  [[nodiscard]] MPI_Comm internal_comm() const noexcept { return internal_comm_; }
  [[nodiscard]] std::size_t eager_threshold() const noexcept { return settings_.eager_threshold; }
  [[nodiscard]] Mailbox& mailbox(int thread) { return mailboxes_[thread]; }
  /// The local endpoints as a team, for the shared-memory stage of collectives.
  [[nodiscard]] LocalTeam& team() noexcept { return team_; }
  /// The sequence of this communicator's nonblocking collectives.
  [[nodiscard]] const std::shared_ptr<NbcRegistry>& nbc_registry() const noexcept {
    return nbc_registry_;
  }

  [[nodiscard]] bool is_freed(int thread) const {
    return freed_[thread].load(std::memory_order_relaxed);
  }
  /// Marks `thread`'s endpoint freed; the last local endpoint releases the MPI
  /// communicators (collective over the processes, as MPI_Comm_free).
  void free_endpoint(int thread, int ep_rank);

  /// Hands `parent()` to this state: a process communicator made just for it
  /// (split, merge), which nobody else would free. The last local endpoint's
  /// free then releases it with the duplicates. Call before handing out handles.
  void adopt_parent() noexcept { owns_parent_ = true; }
  [[nodiscard]] bool owns_parent() const noexcept { return owns_parent_; }

  /// Who each EP rank is, whatever communicators it came through: the
  /// MPI_COMM_WORLD rank of its process and its thread index in the
  /// create_endpoints call that made it (compare() matches endpoints by it).
  /// Empty when the rank map itself says so (a create_endpoints communicator
  /// or a copy with its numbering). Set before handing out handles.
  [[nodiscard]] const std::vector<Location>& origins() const noexcept { return origins_; }
  void set_origins(std::vector<Location> origins) { origins_ = std::move(origins); }

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

  /// Cartesian or graph topology (null: none). Set by the creating call
  /// before any handle is handed out, immutable afterwards.
  std::shared_ptr<const Topology> topology;

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

  MPI_Comm parent_;
  RankMap map_;
  int process_rank_;
  int local_size_;
  CommSettings settings_;
  TagLayout tag_layout_;
  std::vector<MPI_Comm> p2p_comms_;
  MPI_Comm bulk_comm_ = MPI_COMM_NULL;
  std::atomic<unsigned long long> bulk_tags_{0};
  MPI_Comm internal_comm_ = MPI_COMM_NULL;
  std::unique_ptr<Mailbox[]> mailboxes_;
  std::unique_ptr<std::atomic<bool>[]> freed_;
  std::atomic<int> live_endpoints_;
  std::mutex drain_mutex_;
  std::mutex fault_mutex_;  // serialises the first record_drain_fault
  std::atomic<bool> drain_failed_{false};
  DrainFault drain_fault_;  // written once under fault_mutex_, before drain_failed_
  LocalTeam team_;
  std::shared_ptr<NbcRegistry> nbc_registry_;
  bool owns_parent_ = false;
  std::vector<Location> origins_;
};

}  // namespace ep::detail
