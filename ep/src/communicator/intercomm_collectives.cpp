// Collectives across an endpoint intercommunicator, and merge.
//
// Each is built from a stage inside each group (the ordinary hierarchical
// collectives on the group's dup) and one exchange between the groups' rank-0
// endpoints over the bridge's parent communicator, which carries nothing
// else. Those exchanges are matched by (source process, tag), and every
// endpoint calls the collectives in the same order, so consecutive calls
// cannot mix up their messages.
#include <memory>
#include <string>
#include <vector>

#include "communicator/creation.hpp"
#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"

namespace ep {

namespace {

using detail::check_count;
using detail::InterAccess;

enum InterTag : int { kBcastTag = 1, kAllreduceTag = 2, kMergeTag = 3 };

// Process of the other group's rank-0 endpoint (bridge ranks are remote ranks).
int remote_process_of(const Communicator& bridge, int remote_rank) {
  return bridge.rank_map().locate(remote_rank).process;
}

// Group rank 0 only: swaps `count` elements with the other group's rank 0.
void swap_with_remote_leader(const Communicator& bridge, const void* sendbuf, void* recvbuf,
                             int count, MPI_Datatype datatype, int tag, const char* call,
                             int rank) {
  const int peer = remote_process_of(bridge, 0);
  MPI_Request receive = MPI_REQUEST_NULL;
  MPI_Request send = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(recvbuf, count, datatype, peer, tag, bridge.parent(), &receive), call, rank);
  check_mpi(MPI_Isend(sendbuf, count, datatype, peer, tag, bridge.parent(), &send), call, rank);
  detail::wait_mpi(receive, call, rank);
  detail::wait_mpi(send, call, rank);
}

}  // namespace

void barrier(const InterCommunicator& inter) {
  // The bridge holds every endpoint of both groups: its barrier is the
  // intercommunicator's.
  barrier(detail::usable_bridge(inter, "ep::barrier"));
}

void bcast(const InterCommunicator& inter, void* buffer, int count, MPI_Datatype datatype,
           int root) {
  constexpr const char* kCall = "ep::bcast";
  const Communicator& bridge = detail::usable_bridge(inter, kCall);
  const int rank = inter.rank();
  check_count(count, kCall, rank);
  if (root == MPI_PROC_NULL) return;  // sending group, not the root: no part in it
  if (root == MPI_ROOT) {
    // The root hands the data to the other group's rank 0, which spreads it.
    MPI_Request send = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(buffer, count, datatype, remote_process_of(bridge, 0), kBcastTag,
                        bridge.parent(), &send),
              kCall, rank);
    detail::wait_mpi(send, kCall, rank);
    return;
  }
  const int remote_size = inter.remote_size();
  if (root < 0 || root >= remote_size) {
    throw Error(ErrorKind::kRank, kCall, rank,
                "root " + std::to_string(root) + " out of range [0, " +
                    std::to_string(remote_size - 1) +
                    "] of the remote group (the sending group passes MPI_ROOT or MPI_PROC_NULL)");
  }
  const Communicator& group = InterAccess::group(inter);
  if (group.rank() == 0) {
    MPI_Request receive = MPI_REQUEST_NULL;
    check_mpi(MPI_Irecv(buffer, count, datatype, remote_process_of(bridge, root), kBcastTag,
                        bridge.parent(), &receive),
              kCall, rank);
    detail::wait_mpi(receive, kCall, rank);
  }
  bcast(group, buffer, count, datatype, 0);
}

void allreduce(const InterCommunicator& inter, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op) {
  constexpr const char* kCall = "ep::allreduce";
  const Communicator& bridge = detail::usable_bridge(inter, kCall);
  const int rank = inter.rank();
  if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, kCall, rank,
                "MPI_IN_PLACE is not allowed on an intercommunicator");
  }
  check_count(count, kCall, rank);
  // Each group reduces its own contributions (in its rank order) to its
  // rank 0, the two rank-0 endpoints swap their results, and each spreads
  // the other group's result in its group.
  const Communicator& group = InterAccess::group(inter);
  detail::TypedScratch ours(count, datatype, kCall, rank);
  reduce(group, sendbuf, ours.data(), count, datatype, op, 0);
  if (group.rank() == 0) {
    swap_with_remote_leader(bridge, ours.data(), recvbuf, count, datatype, kAllreduceTag, kCall,
                            rank);
  }
  bcast(group, recvbuf, count, datatype, 0);
}

Communicator merge(const InterCommunicator& inter, bool high) {
  constexpr const char* kCall = "ep::merge";
  const Communicator& bridge = detail::usable_bridge(inter, kCall);
  const Communicator& group = InterAccess::group(inter);

  // Every endpoint learns both groups' `high` as (min, -max), so that a group
  // whose endpoints disagree is caught on both sides alike.
  const int mine[2] = {high ? 1 : 0, high ? -1 : 0};
  int ours[2] = {0, 0};
  int theirs[2] = {0, 0};
  allreduce(group, mine, ours, 2, MPI_INT, MPI_MIN);
  if (group.rank() == 0) {
    swap_with_remote_leader(bridge, ours, theirs, 2, MPI_INT, kMergeTag, kCall, inter.rank());
  }
  bcast(group, theirs, 2, MPI_INT, 0);
  for (const int* side : {ours, theirs}) {
    if (side[0] != -side[1]) {
      throw Error(ErrorKind::kArgument, kCall, inter.rank(),
                  std::string("`high` differs between the endpoints of the ") +
                      (side == ours ? "local" : "remote") +
                      " group; every endpoint of a group must pass the same");
    }
  }
  const bool local_high = ours[0] != 0;
  const bool remote_high = theirs[0] != 0;
  const bool local_first =
      local_high != remote_high ? !local_high : InterAccess::local_first(inter);

  detail::CollectiveCall call = detail::begin_collective(bridge, kCall);
  call.rank = inter.rank();  // errors name the rank the caller knows, not the bridge's
  auto state = detail::on_leader<std::shared_ptr<detail::CommState>>(call, [&] {
    const detail::CommState& across = call.comm;
    const RankMap& map = across.rank_map();
    const std::vector<Location> across_origins = across.world_origins(kCall, call.rank);
    const int remote_size = map.size() - group.size();
    // The bridge numbers the remote group first; the merge may swap the groups.
    std::vector<Location> locations;
    std::vector<Location> origins;
    const auto append = [&](int first, int count) {
      for (int r = first; r < first + count; ++r) {
        locations.push_back(map.locate(r));
        origins.push_back(across_origins[static_cast<std::size_t>(r)]);
      }
    };
    if (local_first) {
      append(remote_size, group.size());
      append(0, remote_size);
    } else {
      append(0, remote_size);
      append(remote_size, group.size());
    }
    MPI_Comm parent = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(across.parent(), &parent), kCall, call.rank);
    auto merged =
        std::make_shared<detail::CommState>(parent, parent, RankMap(locations, map.num_processes()),
                                            across.process_rank(), across.settings());
    merged->adopt_parent();
    detail::inherit_errhandler(group.parent(), parent, kCall, call.rank);
    merged->set_origins(std::move(origins));
    return merged;
  });
  return Communicator(std::move(state), call.thread);
}

}  // namespace ep
