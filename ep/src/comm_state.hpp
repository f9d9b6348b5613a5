// Process-wide state of one endpoint communicator, shared by the
// Communicator handles of the process's threads: who its endpoints are (the
// rank map, the parent, the origins), its settings, the internal MPI
// communicator, and the parts each subsystem owns:
//   p2p()           P2pState (p2p/p2p_state.hpp): the channel communicators
//                   of user traffic, the mailboxes and the drain;
//   team()          LocalTeam (team/local_team.hpp): the local endpoints as a
//                   team, for the shared-memory stage of collectives;
//   nbc_registry()  NbcRegistry (collective/nonblocking_registry.hpp): the
//                   order of the nonblocking collectives;
//   topology        Topology (topology/topology.hpp), when there is one.
// This header names the parts only; a file that uses one includes its
// subsystem's header. The communicator composes them (their construction and
// release are in communicator/comm_state.cpp), and calls the trace recorder
// (trace/recorder.hpp) when a state is made and released.
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
//                and Ineighbor::arrive_mutex_
//                (topology/ineighbor_collectives.cpp): one thread's
//                contribution to a nonblocking collective; fold runs the
//                reduction operator under it. One at a time.
//   4. drain     P2pState::drain_mutex_ (p2p/p2p_state.hpp), try-lock: one
//                drainer per communicator runs MPI_Improbe / MPI_Mrecv /
//                MPI_Imrecv; a thread that fails to take it returns and polls
//                its own request. Under it: fault, then mailbox locks. The
//                direct receive path (P2pState::try_post_direct) takes it
//                blocking, around a mailbox check and one MPI_Irecv: its
//                holders never wait for another thread, so that wait is short.
//   5. fault     P2pState::fault_mutex_: records the drain's first failure;
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
//                ProbeTurns::mutex_ (collective/segment_exchange.hpp),
//                the trace recorder's Tracer::mutex (trace/recorder.cpp), the
//                message pool's g_retired_mutex (p2p/message_pool.cpp), the
//                test hooks' atomics: nothing is taken under them.
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
#include <utility>
#include <vector>

#include "ep/rank_map.hpp"
#include "ep/tag_encoding.hpp"

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

class P2pState;     // p2p/p2p_state.hpp
class LocalTeam;    // team/local_team.hpp
class NbcRegistry;  // collective/nonblocking_registry.hpp
class Topology;     // topology/topology.hpp

// Aligned to a line of its own: the state is made by std::make_shared, whose
// reference counts sit just before the object, and every receive request
// copies the shared_ptr (RequestState::comm), so the receiving thread writes
// those counts once per message while the sending thread reads the rank map
// and settings at the start of the object on every send. Apart, the two
// never share a line.
class alignas(64) CommState {
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
  [[nodiscard]] const CommSettings& settings() const noexcept { return settings_; }
  /// Internal traffic (collectives, control) on its own communicator.
  [[nodiscard]] MPI_Comm internal_comm() const noexcept { return internal_comm_; }
  [[nodiscard]] std::size_t eager_threshold() const noexcept { return settings_.eager_threshold; }
  /// The point-to-point part: channels, mailboxes and the drain.
  [[nodiscard]] P2pState& p2p() noexcept { return *p2p_; }
  [[nodiscard]] const P2pState& p2p() const noexcept { return *p2p_; }
  /// The local endpoints as a team, for the shared-memory stage of collectives.
  [[nodiscard]] LocalTeam& team() noexcept { return *team_; }
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

  /// Who each EP rank is as origins() says, and for a create_endpoints
  /// numbering (no origins table) the MPI_COMM_WORLD rank of its process
  /// and its creation thread. Local (MPI group calls only); throws
  /// ep::Error(kMpi) naming `call` and `rank` when they fail.
  [[nodiscard]] std::vector<Location> world_origins(const char* call, int rank) const;

  /// Cartesian or graph topology (null: none). Set by the creating call
  /// before any handle is handed out, immutable afterwards.
  std::shared_ptr<const Topology> topology;

 private:
  MPI_Comm parent_;
  RankMap map_;
  int process_rank_;
  int local_size_;
  CommSettings settings_;
  std::unique_ptr<P2pState> p2p_;
  // P2pState's communicator (its group: the processes of this communicator),
  // kept as a handle so that world_origins needs nothing above the base layer.
  MPI_Comm p2p_comm_ = MPI_COMM_NULL;
  MPI_Comm internal_comm_ = MPI_COMM_NULL;
  std::unique_ptr<std::atomic<bool>[]> freed_;
  std::atomic<int> live_endpoints_;
  std::unique_ptr<LocalTeam> team_;
  std::shared_ptr<NbcRegistry> nbc_registry_;
  bool owns_parent_ = false;
  std::vector<Location> origins_;
};

}  // namespace ep::detail
