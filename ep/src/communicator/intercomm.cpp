// Endpoint intercommunicators: creation and point-to-point.
//
// An InterCommunicator is built from two intracommunicators:
// - the bridge: every endpoint of both groups in one ordinary endpoint
//   communicator over the union of the two groups' processes (made with
//   MPI_Intercomm_create + MPI_Intercomm_merge at process level). Each side
//   numbers it with the remote group first, so a remote rank is a bridge rank
//   and the point-to-point engine (matching, drain, statuses of requests)
//   works unchanged. The two sides number it differently, which is fine: the
//   wire carries thread indices, never ranks, and each side decodes the
//   sender through its own map.
// - the group: a dup of the local communicator, for the group-internal stages
//   of the collectives.
// The groups must live on disjoint processes: a process is in one map once,
// so it cannot hold endpoints on both sides of the bridge.
#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "backoff.hpp"
#include "checks.hpp"
#include "communicator/creation.hpp"
#include "ep/comm_management.hpp"
#include "ep/tag_encoding.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::CommState;

constexpr const char* kCreate = "ep::create_intercomm";

// What one endpoint passed to create_intercomm.
struct IntercommArgs {
  int local_leader;
  MPI_Comm peer;
  int remote_leader;
  int tag;
};

// A problem with the arguments that only the local leader's process can see
// (the others need not pass meaningful peer arguments, as in MPI).
enum LeaderProblem : long long {
  kNoProblem = 0,
  kNullPeer,
  kInterPeer,
  kRemoteOutOfRange,
  kRemoteInLocalGroup,
  kBadTag,
};

// The group's verdict on the arguments, combined over its processes with
// MPI_MAX: [0] -min(local_leader), [1] max(local_leader), then what the
// local leader's process found. The slots other processes leave at LLONG_MIN.
enum Slot { kMinusLowest, kHighest, kProblem, kValue, kPeerSize, kTag, kSlots };

struct Agreed {
  int leader_process = 0;  // process of the local leader (rank in the local group)
  bool hosts_leader = false;
  IntercommArgs args{};  // the local leader's arguments when hosts_leader
};

// Checks the local leader's peer arguments; fills the problem slots.
void check_leader_args(const CollectiveCall& call, const IntercommArgs& args, long long* slots) {
  const auto report = [&](LeaderProblem problem, long long value, long long peer_size) {
    slots[kProblem] = problem;
    slots[kValue] = value;
    slots[kPeerSize] = peer_size;
  };
  if (args.peer == MPI_COMM_NULL) return report(kNullPeer, 0, 0);
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(args.peer, &inter), call.name, call.rank);
  if (inter != 0) return report(kInterPeer, 0, 0);
  int peer_size = 0;
  check_mpi(MPI_Comm_size(args.peer, &peer_size), call.name, call.rank);
  if (args.remote_leader < 0 || args.remote_leader >= peer_size) {
    return report(kRemoteOutOfRange, args.remote_leader, peer_size);
  }
  if (args.tag < 0 || args.tag > detail::mpi_tag_upper_bound(call.name, call.rank)) {
    return report(kBadTag, args.tag, peer_size);
  }
  detail::ScopedGroup local;
  detail::ScopedGroup peer;
  check_mpi(MPI_Comm_group(call.mpi(), local.out()), call.name, call.rank);
  check_mpi(MPI_Comm_group(args.peer, peer.out()), call.name, call.rank);
  const std::vector<int> in_peer =
      detail::translate_all(local.get(), peer.get(), call.name, call.rank);
  if (std::find(in_peer.begin(), in_peer.end(), args.remote_leader) != in_peer.end()) {
    report(kRemoteInLocalGroup, args.remote_leader, peer_size);
  }
}

[[noreturn]] void throw_leader_problem(const long long* slots) {
  const std::string value = std::to_string(slots[kValue]);
  switch (slots[kProblem]) {
    case kNullPeer:
      throw Error(ErrorKind::kArgument, kCreate, -1,
                  "peer_comm is MPI_COMM_NULL at the local leader");
    case kInterPeer:
      throw Error(ErrorKind::kArgument, kCreate, -1,
                  "peer_comm is an intercommunicator; it must be an intracommunicator");
    case kRemoteOutOfRange:
      throw Error(ErrorKind::kRank, kCreate, -1,
                  "remote_leader " + value + " out of range [0, " +
                      std::to_string(slots[kPeerSize] - 1) + "] of peer_comm");
    case kRemoteInLocalGroup:
      throw Error(ErrorKind::kRank, kCreate, -1,
                  "remote_leader " + value +
                      " is a process of the local group; it must lead the other group");
    default:
      throw Error(ErrorKind::kTag, kCreate, -1, "tag " + value + " out of range [0, MPI_TAG_UB]");
  }
}

// Leader: checks the group's arguments with the other processes of the
// group, so that every endpoint of the group throws the same error.
Agreed agree_on_arguments(const CollectiveCall& call) {
  const RankMap& map = call.comm.rank_map();
  long long lowest = LLONG_MAX;
  long long highest = LLONG_MIN;
  for (int t = 0; t < call.local_size(); ++t) {
    const auto& args = call.team.shared<IntercommArgs>(t);
    lowest = std::min<long long>(lowest, args.local_leader);
    highest = std::max<long long>(highest, args.local_leader);
  }
  long long slots[kSlots] = {-lowest, highest, kNoProblem, LLONG_MIN, LLONG_MIN, LLONG_MIN};
  Agreed agreed;
  if (lowest == highest && lowest >= 0 && lowest < map.size()) {
    const Location leader = map.locate(static_cast<int>(lowest));
    if (leader.process == call.comm.process_rank()) {
      agreed.hosts_leader = true;
      agreed.args = call.team.shared<IntercommArgs>(leader.thread);
      slots[kTag] = agreed.args.tag;
      check_leader_args(call, agreed.args, slots);
    }
  }
  if (call.processes() > 1) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Iallreduce(MPI_IN_PLACE, slots, kSlots, MPI_LONG_LONG, MPI_MAX, call.mpi(), &request),
        call.name, call.rank);
    detail::wait_mpi(request, call);
  }
  lowest = -slots[kMinusLowest];
  highest = slots[kHighest];
  if (lowest != highest) {
    throw Error(ErrorKind::kArgument, kCreate, -1,
                "local_leader differs between endpoints (" + std::to_string(lowest) + " and " +
                    std::to_string(highest) + "); every endpoint must pass the same");
  }
  if (lowest < 0 || lowest >= map.size()) {
    throw Error(ErrorKind::kRank, kCreate, -1,
                "local_leader " + std::to_string(lowest) + " out of range [0, " +
                    std::to_string(map.size() - 1) + "]");
  }
  if (slots[kProblem] != kNoProblem) throw_leader_problem(slots);
  agreed.leader_process = map.locate(static_cast<int>(lowest)).process;
  if (!agreed.hosts_leader) {
    // Insignificant away from the local leader (MPI), except the tag, which
    // is passed on as the leader gave it.
    agreed.args = call.team.shared<IntercommArgs>(0);
    agreed.args.tag = static_cast<int>(slots[kTag]);
  }
  return agreed;
}

// Leader: the leaders swap their groups' MPI_COMM_WORLD ranks over peer_comm
// and the group learns a process both groups hold (-1: none). MPI would hang
// or fail obscurely on overlapping groups; this names the process.
int find_shared_process(const CollectiveCall& call, const Agreed& agreed) {
  int shared = -1;
  if (agreed.hosts_leader) {
    detail::ScopedGroup local;
    detail::ScopedGroup world;
    check_mpi(MPI_Comm_group(call.mpi(), local.out()), call.name, call.rank);
    check_mpi(MPI_Comm_group(MPI_COMM_WORLD, world.out()), call.name, call.rank);
    const std::vector<int> ours =
        detail::translate_all(local.get(), world.get(), call.name, call.rank);
    const IntercommArgs& args = agreed.args;
    MPI_Request send = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(ours.data(), static_cast<int>(ours.size()), MPI_INT, args.remote_leader,
                        args.tag, args.peer, &send),
              call.name, call.rank);
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    detail::Backoff backoff;
    while (true) {
      int found = 0;
      check_mpi(MPI_Improbe(args.remote_leader, args.tag, args.peer, &found, &message, &status),
                call.name, call.rank);
      if (found != 0) break;
      backoff.pause();
    }
    int count = 0;
    check_mpi(MPI_Get_count(&status, MPI_INT, &count), call.name, call.rank);
    std::vector<int> theirs(static_cast<std::size_t>(count));
    check_mpi(MPI_Mrecv(theirs.data(), count, MPI_INT, &message, MPI_STATUS_IGNORE), call.name,
              call.rank);
    detail::wait_mpi(send, call);
    std::sort(theirs.begin(), theirs.end());
    for (int process : ours) {
      if (std::binary_search(theirs.begin(), theirs.end(), process)) {
        shared = process;
        break;
      }
    }
  }
  if (call.processes() > 1) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(&shared, 1, MPI_INT, agreed.leader_process, call.mpi(), &request),
              call.name, call.rank);
    detail::wait_mpi(request, call);
  }
  return shared;
}

// The remote group as it describes itself: where each remote EP rank lives
// (process = rank in the remote group) and who it is.
struct RemoteLayout {
  std::vector<Location> locations;
  std::vector<Location> origins;
};

// Leader: every process sends (EP rank, origin) of its endpoints in thread
// order; an intercommunicator allgather delivers the other group's.
RemoteLayout exchange_layouts(const CollectiveCall& call, MPI_Comm inter,
                              const std::vector<Location>& local_origins) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  std::vector<int> ours;
  ours.reserve(3 * static_cast<std::size_t>(call.local_size()));
  for (int t = 0; t < call.local_size(); ++t) {
    const int rank = map.ep_rank(me, t);
    const Location origin = local_origins[static_cast<std::size_t>(rank)];
    ours.insert(ours.end(), {rank, origin.process, origin.thread});
  }
  int remote_processes = 0;
  check_mpi(MPI_Comm_remote_size(inter, &remote_processes), call.name, call.rank);
  std::vector<int> counts(static_cast<std::size_t>(remote_processes));
  const auto our_count = static_cast<int>(ours.size());
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&our_count, 1, MPI_INT, counts.data(), 1, MPI_INT, inter, &request),
            call.name, call.rank);
  detail::wait_mpi(request, call);
  std::vector<int> displs(counts.size());
  int total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    displs[p] = total;
    total += counts[p];
  }
  std::vector<int> theirs(static_cast<std::size_t>(total));
  check_mpi(MPI_Iallgatherv(ours.data(), our_count, MPI_INT, theirs.data(), counts.data(),
                            displs.data(), MPI_INT, inter, &request),
            call.name, call.rank);
  detail::wait_mpi(request, call);

  const int remote_size = total / 3;
  RemoteLayout layout;
  layout.locations.assign(static_cast<std::size_t>(remote_size), Location{});
  layout.origins.assign(static_cast<std::size_t>(remote_size), Location{});
  for (int p = 0; p < remote_processes; ++p) {
    for (int t = 0; t < counts[p] / 3; ++t) {
      const int* entry = theirs.data() + displs[p] + 3 * static_cast<std::ptrdiff_t>(t);
      if (entry[0] < 0 || entry[0] >= remote_size) {
        throw Error(ErrorKind::kArgument, kCreate, -1,
                    "the remote group sent EP rank " + std::to_string(entry[0]) + " of " +
                        std::to_string(remote_size));
      }
      layout.locations[static_cast<std::size_t>(entry[0])] = {p, t};
      layout.origins[static_cast<std::size_t>(entry[0])] = {entry[1], entry[2]};
    }
  }
  return layout;
}

struct Bridge {
  std::shared_ptr<CommState> state;
  bool local_first = true;
};

// Leader: the whole process-level construction.
Bridge build_bridge(const CollectiveCall& call) {
  const Agreed agreed = agree_on_arguments(call);
  const int shared = find_shared_process(call, agreed);
  if (shared >= 0) {
    throw Error(ErrorKind::kArgument, kCreate, -1,
                "both groups hold the process of MPI_COMM_WORLD rank " + std::to_string(shared) +
                    "; the groups of an endpoint intercommunicator must be on disjoint processes");
  }
  const IntercommArgs& args = agreed.args;
  MPI_Comm inter = MPI_COMM_NULL;
  check_mpi(MPI_Intercomm_create(call.mpi(), agreed.leader_process, args.peer, args.remote_leader,
                                 args.tag, &inter),
            call.name, call.rank);
  const std::vector<Location> local_origins = call.comm.world_origins(call.name, call.rank);
  const RemoteLayout remote = exchange_layouts(call, inter, local_origins);

  // The union of both process groups; `high` does not matter, the ranks are
  // translated below.
  MPI_Comm bridge_comm = MPI_COMM_NULL;
  check_mpi(MPI_Intercomm_merge(inter, 0, &bridge_comm), call.name, call.rank);
  detail::ScopedGroup local_group;
  detail::ScopedGroup remote_group;
  detail::ScopedGroup bridge_group;
  check_mpi(MPI_Comm_group(inter, local_group.out()), call.name, call.rank);
  check_mpi(MPI_Comm_remote_group(inter, remote_group.out()), call.name, call.rank);
  check_mpi(MPI_Comm_group(bridge_comm, bridge_group.out()), call.name, call.rank);
  const std::vector<int> local_in_bridge =
      detail::translate_all(local_group.get(), bridge_group.get(), call.name, call.rank);
  const std::vector<int> remote_in_bridge =
      detail::translate_all(remote_group.get(), bridge_group.get(), call.name, call.rank);
  check_mpi(MPI_Comm_free(&inter), call.name, call.rank);

  // Remote group first (bridge rank = remote rank), then this group.
  const RankMap& map = call.comm.rank_map();
  std::vector<Location> locations;
  std::vector<Location> origins = remote.origins;
  locations.reserve(remote.locations.size() + static_cast<std::size_t>(map.size()));
  for (const Location& where : remote.locations) {
    locations.push_back({remote_in_bridge[static_cast<std::size_t>(where.process)], where.thread});
  }
  for (int r = 0; r < map.size(); ++r) {
    const Location where = map.locate(r);
    locations.push_back({local_in_bridge[static_cast<std::size_t>(where.process)], where.thread});
    origins.push_back(local_origins[static_cast<std::size_t>(r)]);
  }
  int bridge_processes = 0;
  int bridge_rank = 0;
  check_mpi(MPI_Comm_size(bridge_comm, &bridge_processes), call.name, call.rank);
  check_mpi(MPI_Comm_rank(bridge_comm, &bridge_rank), call.name, call.rank);
  Bridge bridge;
  bridge.state =
      std::make_shared<CommState>(bridge_comm, bridge_comm, RankMap(locations, bridge_processes),
                                  bridge_rank, call.comm.settings());
  // The bridge's parent carries the leaders' messages of the intercommunicator
  // collectives and nothing else; it goes with the bridge.
  bridge.state->adopt_parent();
  bridge.state->set_origins(std::move(origins));
  // Both sides compare the same two numbers, so they agree.
  bridge.local_first = local_in_bridge[0] < remote_in_bridge[0];
  return bridge;
}

}  // namespace

InterCommunicator create_intercomm(const Communicator& local_comm, int local_leader,
                                   MPI_Comm peer_comm, int remote_leader, int tag) {
  CollectiveCall call = detail::begin_collective(local_comm, kCreate);
  const IntercommArgs mine{local_leader, peer_comm, remote_leader, tag};
  call.team.share(call.thread, mine);
  call.team.barrier();
  // `mine` stays alive: every thread waits inside on_leader while the leader
  // reads the published arguments.
  const Bridge bridge = detail::on_leader<Bridge>(call, [&] { return build_bridge(call); });
  Communicator bridge_handle(bridge.state, call.thread);
  Communicator group = dup(local_comm);
  return detail::InterAccess::make(std::move(bridge_handle), std::move(group), bridge.local_first);
}

void InterCommunicator::free() {
  detail::usable_bridge(*this, "ep::InterCommunicator::free");
  bridge_.free();
  group_.free();
}

}  // namespace ep
