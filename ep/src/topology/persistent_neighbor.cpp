// Persistent neighbourhood collectives (MPI-4's MPI_Neighbor_*_init) on
// endpoint communicators: a plan made once by the init call, run by every
// ep::start.
//
// The init call is collective over the communicator's endpoints but talks
// only within the process: each endpoint checks its arguments and lists its
// blocks (neighbor_blocks.hpp) as the other forms do, and the local
// endpoints put them into one LocalPlan, so that each endpoint knows where
// the send blocks of its local neighbours are. The buffers are bound to the
// plan: they must stay where they are until the request is freed
// (topology.hpp; debug builds check the count and displacement arrays).
//
// A round on a communicator within one process needs no barrier, no
// matching and no staging. ep::start publishes "round e: my send buffer
// holds its data and my receive buffer is free" (started = e, release). The
// owner's polls then copy each incoming block straight from the sender's
// send buffer into the owner's receive buffer as soon as that sender has
// started round e (acquire), publish copied = e (release), and complete
// once every local endpoint that reads this one's send buffer has copied
// round e too (acquire), so that after the wait the caller may refill its
// send buffer. An endpoint writes only its own receive buffer, in its own
// polls.
//
// Why a round cannot read the flags of another: an endpoint starts round
// e+1 only after its round e completed, which needed every reader of its
// send buffer to have copied round e. So while a reader is in round e, each
// sender it reads from is in round e exactly (started >= e is the test), and
// a reader's copied flag reaches e+1 only after it read round e+1 of a
// sender that has started e+1.
//
// The blocks between processes keep the packed path: on a communicator
// over several processes, each round also starts the nonblocking exchange
// of ineighbor_* (one aggregated message per process pair and direction,
// packed and unpacked by the endpoints) for the blocks the plan prepared,
// without redoing the checks and layouts and without its local copies,
// which the handshake above makes; the round completes when both parts
// have.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm_state.hpp"
#include "datatype.hpp"
#include "ep/error.hpp"
#include "ep/request.hpp"
#include "ep/topology.hpp"
#include "p2p/request_state.hpp"
#include "team/collective_call.hpp"
#include "topology/neighbor_blocks.hpp"
#include "topology/topology.hpp"

namespace ep::detail {

namespace {

// One endpoint's round counters, on a cache line of their own (each is
// written by its endpoint and polled by its neighbours).
struct alignas(64) RoundFlags {
  std::atomic<std::uint64_t> started{0};  // last round whose data the send buffer holds
  std::atomic<std::uint64_t> copied{0};   // last round this endpoint copied in full
};

// Shared by the local endpoints of one init call. Filled by the leader
// before the team barrier that publishes it; afterwards only the flags
// change.
struct LocalPlan {
  std::vector<NeighborBlocks> blocks;     // by local thread, as listed at init
  std::vector<std::vector<int>> readers;  // by local thread: who copies from its send buffer
  std::unique_ptr<RoundFlags[]> flags;    // by local thread
  std::string error;                      // a local edge whose two ends disagree
  ErrorKind error_kind = ErrorKind::kArgument;
};

std::shared_ptr<LocalPlan> build_plan(const CollectiveCall& call, const Topology& topology) {
  auto plan = std::make_shared<LocalPlan>();
  const auto threads = static_cast<std::size_t>(call.local_size());
  plan->blocks.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    plan->blocks.push_back(call.team.shared<NeighborBlocks>(static_cast<int>(t)));
  }
  plan->readers.resize(threads);
  plan->flags = std::make_unique<RoundFlags[]>(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    for (const LocalEdge& edge : topology.local_in[t]) {
      const std::size_t sent = plan->blocks[static_cast<std::size_t>(edge.send_thread)]
                                   .send[static_cast<std::size_t>(edge.send_slot)]
                                   .bytes();
      const std::size_t room =
          plan->blocks[t].recv[static_cast<std::size_t>(edge.recv_slot)].bytes();
      plan->error =
          local_edge_mismatch(call, edge, static_cast<int>(t), sent, room, plan->error_kind);
      if (!plan->error.empty()) return plan;
      std::vector<int>& readers = plan->readers[static_cast<std::size_t>(edge.send_thread)];
      if (readers.empty() || readers.back() != static_cast<int>(t)) {
        readers.push_back(static_cast<int>(t));
      }
    }
  }
  return plan;
}

#ifdef NDEBUG
constexpr bool kCheckArrays = false;
#else
constexpr bool kCheckArrays = true;
#endif

// A count, displacement or datatype array of the init call, for the debug
// check at every start: `changed(call)` compares the caller's array with
// its entries at init and describes the first entry that differs ("" if
// none).
struct WatchedArray {
  std::function<std::string(const std::string& call)> changed;
};

std::string count_text(int value) { return std::to_string(value); }
std::string byte_text(MPI_Aint value) { return std::to_string(value); }
// A datatype by its MPI name, which derived types have only when given one.
std::string datatype_text(MPI_Datatype type) {
  std::array<char, MPI_MAX_OBJECT_NAME> name{};
  int length = 0;
  MPI_Type_get_name(type, name.data(), &length);
  return length > 0 ? std::string(name.data(), static_cast<std::size_t>(length))
                    : std::string("an unnamed datatype");
}

// `text` shows an entry (MPI_Datatype is an int in some MPIs, so the
// caller names it rather than an overload).
template <typename T>
WatchedArray watch(const char* name, std::span<const T> user, std::size_t entries,
                   std::string (*text)(T)) {
  const std::span<const T> used = user.first(std::min(entries, user.size()));
  return {[name, used, text, at_init = std::vector<T>(used.begin(), used.end())](
              const std::string& call) -> std::string {
    for (std::size_t i = 0; i < at_init.size(); ++i) {
      if (used[i] == at_init[i]) continue;
      return std::string(name) + "[" + std::to_string(i) + "] of " + call + " is " + text(used[i]) +
             ", was " + text(at_init[i]);
    }
    return {};
  }};
}

// The message an Error carries after "call: ep rank r: ".
std::string detail_text(const Error& e) {
  const std::string text = e.what();
  const std::string prefix = e.call() + ": ep rank " + std::to_string(e.ep_rank()) + ": ";
  return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
}

class PersistentNeighbor final : public PersistentOperation {
 public:
  PersistentNeighbor(Communicator comm, const Topology& topology, NeighborBlocks blocks,
                     std::shared_ptr<LocalPlan> plan, bool remote,
                     std::vector<WatchedArray> watched)
      : comm_(std::move(comm)),
        topology_(topology),
        thread_(static_cast<std::size_t>(comm_.local_thread())),
        blocks_(std::move(blocks)),
        plan_(std::move(plan)),
        remote_(remote),
        watched_(std::move(watched)) {}

  void start(RequestState& request) override {
    check_arrays(request);
    // The other processes' part first: should it throw, this endpoint has
    // not announced the round and its neighbours wait for nothing of it.
    if (remote_) remote_round_ = start_ineighbor_remote(comm_, request.call, blocks_);
    ++round_;
    next_edge_ = 0;
    copied_ = false;
    local_done_ = false;
    plan_->flags[thread_].started.store(round_, std::memory_order_release);
    request.progress = [this, &request] { return advance(request); };
  }

 private:
  // One poll of a round; true once both parts are complete. A failure of
  // the other processes' part is recorded in `request` once it completes;
  // the local part still finishes, since local neighbours wait for it.
  bool advance(RequestState& request) {
    if (!local_done_) local_done_ = advance_local();
    if (!remote_round_.is_null()) {
      try {
        static_cast<void>(ep::test(remote_round_));  // nulls it once complete
      } catch (const Error& e) {
        request.failed = true;
        request.error_kind = e.kind();
        request.error_detail = detail_text(e);
        request.status.error = e.mpi_code();
      }
    }
    return local_done_ && remote_round_.is_null();
  }

  // The local part (file comment): copies, then waits for the readers.
  bool advance_local() {
    const std::vector<LocalEdge>& in = topology_.local_in[thread_];
    const NeighborBlocks& mine = plan_->blocks[thread_];
    while (next_edge_ < in.size()) {
      const LocalEdge& edge = in[next_edge_];
      const auto from = static_cast<std::size_t>(edge.send_thread);
      if (plan_->flags[from].started.load(std::memory_order_acquire) < round_) return false;
      const TypedBuffer& source =
          plan_->blocks[from].send[static_cast<std::size_t>(edge.send_slot)];
      copy_typed(source, mine.recv[static_cast<std::size_t>(edge.recv_slot)], source.bytes());
      ++next_edge_;
    }
    if (!copied_) {
      plan_->flags[thread_].copied.store(round_, std::memory_order_release);
      copied_ = true;
    }
    for (const int reader : plan_->readers[thread_]) {
      if (plan_->flags[static_cast<std::size_t>(reader)].copied.load(std::memory_order_acquire) <
          round_) {
        return false;
      }
    }
    return true;
  }

  // Debug builds: the count and displacement arrays must hold what they
  // held at init (the plan was made from them; a change would be ignored).
  void check_arrays(const RequestState& request) const {
    if constexpr (!kCheckArrays) return;
    for (const WatchedArray& array : watched_) {
      const std::string change = array.changed(request.call);
      if (change.empty()) continue;
      throw Error(ErrorKind::kArgument, "ep::start", request.owner_rank,
                  change +
                      " at init: a persistent request's buffers and arrays must stay as they "
                      "were until ep::request_free");
    }
  }

  Communicator comm_;         // this endpoint's handle (keeps the communicator alive)
  const Topology& topology_;  // immutable, kept alive by the communicator state
  std::size_t thread_;
  NeighborBlocks blocks_;  // this endpoint's blocks, for the other processes' part
  std::shared_ptr<LocalPlan> plan_;
  bool remote_;  // the communicator spans several processes
  std::vector<WatchedArray> watched_;
  // The round in progress (owner thread only).
  std::uint64_t round_ = 0;
  std::size_t next_edge_ = 0;  // index into topology_.local_in[thread_]
  bool copied_ = false;
  bool local_done_ = false;
  Request remote_round_;  // the other processes' part; null once complete
};

// Every variant: check, list the blocks, share them, make the request.
// `fill` may add to `watched` the arrays the debug check is to watch.
template <typename Fill>
Request init_neighbor(const Communicator& comm, const char* name, Fill&& fill,
                      std::vector<WatchedArray>& watched) {
  const Topology& topology = topology_of(comm, name);
  const CollectiveCall call = begin_collective(comm, name);
  NeighborPreparation preparation(call, topology.endpoints[static_cast<std::size_t>(call.thread)]);
  NeighborBlocks blocks = preparation.run(std::forward<Fill>(fill));
  call.team.share(call.thread, blocks);
  call.team.barrier();
  // Argument errors: every local endpoint throws, naming the first one's.
  for (int t = 0; t < call.local_size(); ++t) {
    const NeighborBlocks& theirs = call.team.shared<NeighborBlocks>(t);
    if (theirs.error.empty()) continue;
    std::string detail =
        t == call.thread
            ? theirs.error
            : "ep rank " +
                  std::to_string(call.comm.rank_map().ep_rank(call.comm.process_rank(), t)) +
                  " failed: " + theirs.error;
    const ErrorKind kind = theirs.error_kind;
    call.team.barrier();  // everybody has read the blocks before they go
    throw Error(kind, name, call.rank, detail);
  }
  std::shared_ptr<LocalPlan> built;
  if (call.leader()) {
    built = build_plan(call, topology);
    call.team.share_aux(0, &built);
  }
  call.team.barrier();
  std::shared_ptr<LocalPlan> plan = *call.team.shared_aux<std::shared_ptr<LocalPlan>>(0);
  call.team.barrier();  // every `blocks` and the leader's `built` are read until here
  if (!plan->error.empty()) throw Error(plan->error_kind, name, call.rank, plan->error);
  // Every process of a communicator over several starts the other
  // processes' part of every round, with blocks for them or not: the
  // nonblocking collectives of a communicator are one sequence everywhere.
  const bool remote = !comm.state()->single_process();
  auto state = std::make_shared<RequestState>(RequestState::Kind::kSend, comm.state(), call.thread,
                                              call.rank);
  state->call = name;
  state->persistent = std::make_shared<PersistentNeighbor>(
      comm, topology, std::move(blocks), std::move(plan), remote, std::move(watched));
  // Inactive: complete, with nothing to report, until the first start.
  state->phase.store(Phase::kComplete, std::memory_order_relaxed);
  return Request(std::move(state));
}

}  // namespace

}  // namespace ep::detail

namespace ep {

using detail::NeighborPreparation;

Request neighbor_allgather_init(const Communicator& comm, const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype) {
  std::vector<detail::WatchedArray> watched;
  return detail::init_neighbor(
      comm, "ep::neighbor_allgather_init",
      [&](NeighborPreparation& p) {
        detail::fill_neighbor_allgather(p, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype);
      },
      watched);
}

Request neighbor_allgatherv_init(const Communicator& comm, const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 std::span<const int> recvcounts, std::span<const int> displs,
                                 MPI_Datatype recvtype) {
  std::vector<detail::WatchedArray> watched;
  return detail::init_neighbor(
      comm, "ep::neighbor_allgatherv_init",
      [&](NeighborPreparation& p) {
        watched = {detail::watch("recvcounts", recvcounts, p.indegree(), &detail::count_text),
                   detail::watch("displs", displs, p.indegree(), &detail::count_text)};
        detail::fill_neighbor_allgatherv(p, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                         displs, recvtype);
      },
      watched);
}

Request neighbor_alltoall_init(const Communicator& comm, const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype) {
  std::vector<detail::WatchedArray> watched;
  return detail::init_neighbor(
      comm, "ep::neighbor_alltoall_init",
      [&](NeighborPreparation& p) {
        detail::fill_neighbor_alltoall(p, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype);
      },
      watched);
}

Request neighbor_alltoallv_init(const Communicator& comm, const void* sendbuf,
                                std::span<const int> sendcounts, std::span<const int> sdispls,
                                MPI_Datatype sendtype, void* recvbuf,
                                std::span<const int> recvcounts, std::span<const int> rdispls,
                                MPI_Datatype recvtype) {
  std::vector<detail::WatchedArray> watched;
  return detail::init_neighbor(
      comm, "ep::neighbor_alltoallv_init",
      [&](NeighborPreparation& p) {
        watched = {detail::watch("sendcounts", sendcounts, p.outdegree(), &detail::count_text),
                   detail::watch("sdispls", sdispls, p.outdegree(), &detail::count_text),
                   detail::watch("recvcounts", recvcounts, p.indegree(), &detail::count_text),
                   detail::watch("rdispls", rdispls, p.indegree(), &detail::count_text)};
        detail::fill_neighbor_alltoallv(p, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                        recvcounts, rdispls, recvtype);
      },
      watched);
}

Request neighbor_alltoallw_init(const Communicator& comm, const void* sendbuf,
                                std::span<const int> sendcounts, std::span<const MPI_Aint> sdispls,
                                std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                                std::span<const int> recvcounts, std::span<const MPI_Aint> rdispls,
                                std::span<const MPI_Datatype> recvtypes) {
  std::vector<detail::WatchedArray> watched;
  return detail::init_neighbor(
      comm, "ep::neighbor_alltoallw_init",
      [&](NeighborPreparation& p) {
        watched = {detail::watch("sendcounts", sendcounts, p.outdegree(), &detail::count_text),
                   detail::watch("sdispls", sdispls, p.outdegree(), &detail::byte_text),
                   detail::watch("sendtypes", sendtypes, p.outdegree(), &detail::datatype_text),
                   detail::watch("recvcounts", recvcounts, p.indegree(), &detail::count_text),
                   detail::watch("rdispls", rdispls, p.indegree(), &detail::byte_text),
                   detail::watch("recvtypes", recvtypes, p.indegree(), &detail::datatype_text)};
        detail::fill_neighbor_alltoallw(p, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                        recvcounts, rdispls, recvtypes);
      },
      watched);
}

}  // namespace ep
