// MPI_Comm_split across processes and threads.
//
// 1. Every endpoint's (colour, key) reaches every process: the threads
//    publish theirs to the leader, the leaders allgather them.
// 2. Every leader computes the same plan from the same data: per colour, the
//    members ordered by (key, old rank), the processes in order of their
//    first member (so a split that keeps the order stays process-major, the
//    collectives' fast path), and each process's endpoints numbered 0, 1, ...
//    in new rank order.
// 3. For each colour its process takes part in, in ascending colour order,
//    the leader makes the process communicator with MPI_Comm_create_group
//    (collective over that colour's processes only, so a process with
//    endpoints in several colours can take part in each) and the CommState on
//    it. Every process visits its colours in the same global order, so the
//    smallest unfinished colour can always finish: no deadlock.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "communicator/creation.hpp"
#include "ep/comm_management.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::CommState;

struct Choice {
  int color = MPI_UNDEFINED;
  int key = 0;
};

/// Where each local endpoint goes: its new communicator (null for
/// MPI_UNDEFINED) and its local thread index there.
struct Placement {
  std::shared_ptr<CommState> state;
  int thread = -1;
};
using Placements = std::shared_ptr<const std::vector<Placement>>;

// Every endpoint's choice, indexed by old EP rank. Leader only.
std::vector<Choice> gather_choices(CollectiveCall& call) {
  const RankMap& map = call.comm.rank_map();
  const int processes = map.num_processes();
  // Two ints per endpoint, process-major: process p's threads from first[p] on.
  std::vector<int> counts(static_cast<std::size_t>(processes));
  std::vector<int> displs(static_cast<std::size_t>(processes));
  int total = 0;
  for (int p = 0; p < processes; ++p) {
    counts[p] = 2 * map.endpoints_of(p);
    displs[p] = total;
    total += counts[p];
  }
  std::vector<int> all(static_cast<std::size_t>(total));
  const int me = call.comm.process_rank();
  for (int t = 0; t < call.local_size(); ++t) {
    const auto& choice = call.team.shared<Choice>(t);
    const std::size_t at = static_cast<std::size_t>(displs[me]) + 2 * static_cast<std::size_t>(t);
    all[at] = choice.color;
    all[at + 1] = choice.key;
  }
  if (processes > 1) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), counts.data(),
                              displs.data(), MPI_INT, call.mpi(), &request),
              call.name, call.rank);
    detail::wait_mpi(request, call);
  }
  std::vector<Choice> choices(static_cast<std::size_t>(map.size()));
  for (int r = 0; r < map.size(); ++r) {
    const Location where = map.locate(r);
    const std::size_t at = static_cast<std::size_t>(displs[where.process]) +
                           2 * static_cast<std::size_t>(where.thread);
    choices[static_cast<std::size_t>(r)] = {all[at], all[at + 1]};
  }
  return choices;
}

// Throws when any endpoint, here or elsewhere, gave a bad colour. Every
// leader sees the same choices, so every endpoint throws the same error.
void check_colors(const CollectiveCall& call, const std::vector<Choice>& choices) {
  for (std::size_t r = 0; r < choices.size(); ++r) {
    const int color = choices[r].color;
    if (color < 0 && color != MPI_UNDEFINED) {
      throw Error(ErrorKind::kArgument, call.name, -1,
                  "ep rank " + std::to_string(r) + " gave colour " + std::to_string(color) +
                      "; a colour must be >= 0 or MPI_UNDEFINED");
    }
  }
}

// The new communicator of one colour, as seen by every process.
struct ColorPlan {
  std::vector<int> members;         // new rank -> old EP rank
  std::vector<Location> locations;  // new rank -> (new process, new thread)
  std::vector<int> processes;       // new process index -> old process index
};

ColorPlan plan_color(const RankMap& old_map, std::vector<int> members,
                     const std::vector<Choice>& choices) {
  // Members arrive in old rank order; a stable sort by key keeps that order
  // among equal keys, as MPI's tie-break asks.
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return choices[static_cast<std::size_t>(a)].key < choices[static_cast<std::size_t>(b)].key;
  });
  ColorPlan plan;
  std::vector<int> new_process(static_cast<std::size_t>(old_map.num_processes()), -1);
  std::vector<int> next_thread;
  plan.locations.reserve(members.size());
  for (int old_rank : members) {
    const int p = old_map.locate(old_rank).process;
    int& q = new_process[static_cast<std::size_t>(p)];
    if (q < 0) {
      q = static_cast<int>(plan.processes.size());
      plan.processes.push_back(p);
      next_thread.push_back(0);
    }
    plan.locations.push_back({q, next_thread[static_cast<std::size_t>(q)]++});
  }
  plan.members = std::move(members);
  return plan;
}

// Leader only: makes the communicators of this process's colours.
Placements make_communicators(CollectiveCall& call, const std::vector<Choice>& choices) {
  check_colors(call, choices);
  const RankMap& old_map = call.comm.rank_map();
  const std::vector<Location> old_origins = call.comm.world_origins(call.name, call.rank);
  std::map<int, std::vector<int>> by_color;  // ascending colours: the global order
  for (int r = 0; r < old_map.size(); ++r) {
    const int color = choices[static_cast<std::size_t>(r)].color;
    if (color != MPI_UNDEFINED) by_color[color].push_back(r);
  }
  detail::ScopedGroup old_group;
  check_mpi(MPI_Comm_group(call.mpi(), old_group.out()), call.name, call.rank);

  const int me = call.comm.process_rank();
  auto placements =
      std::make_shared<std::vector<Placement>>(static_cast<std::size_t>(call.local_size()));
  int color_index = 0;
  for (auto& [color, members] : by_color) {
    // A process may already be in a later colour's creation while another is
    // still in this one, so each colour gets its own tag: its index (any int
    // is a valid colour, not every int a valid tag).
    const int tag = color_index++;
    ColorPlan plan = plan_color(old_map, std::move(members), choices);
    const auto mine = std::find(plan.processes.begin(), plan.processes.end(), me);
    if (mine == plan.processes.end()) continue;
    const auto process_count = static_cast<int>(plan.processes.size());

    detail::ScopedGroup group;
    check_mpi(MPI_Group_incl(old_group.get(), process_count, plan.processes.data(), group.out()),
              call.name, call.rank);
    MPI_Comm process_comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_create_group(call.mpi(), group.get(), tag, &process_comm), call.name,
              call.rank);
    const auto new_process = static_cast<int>(mine - plan.processes.begin());
    auto state = std::make_shared<CommState>(process_comm, process_comm,
                                             RankMap(plan.locations, process_count), new_process,
                                             call.comm.settings());
    state->adopt_parent();
    detail::inherit_errhandler(call.comm.parent(), process_comm, call.name, call.rank);
    std::vector<Location> origins;
    origins.reserve(plan.members.size());
    for (int old_rank : plan.members) {
      origins.push_back(old_origins[static_cast<std::size_t>(old_rank)]);
    }
    state->set_origins(std::move(origins));

    for (std::size_t i = 0; i < plan.members.size(); ++i) {
      const Location was = old_map.locate(plan.members[i]);
      if (was.process == me) {
        (*placements)[static_cast<std::size_t>(was.thread)] = {state, plan.locations[i].thread};
      }
    }
  }
  return placements;
}

}  // namespace

Communicator split(const Communicator& comm, int color, int key) {
  CollectiveCall call = detail::begin_collective(comm, "ep::split");
  const Choice mine{color, key};
  call.team.share(call.thread, mine);
  call.team.barrier();
  // `mine` stays alive: every thread waits inside on_leader until the leader
  // has read all choices.
  const Placements placements = detail::on_leader<Placements>(
      call, [&] { return make_communicators(call, gather_choices(call)); });
  const Placement& placement = (*placements)[static_cast<std::size_t>(call.thread)];
  if (placement.state == nullptr) return Communicator();
  return Communicator(placement.state, placement.thread);
}

}  // namespace ep
