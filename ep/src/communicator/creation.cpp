#include "communicator/creation.hpp"

#include <numeric>
#include <string>
#include <string_view>

namespace ep::detail {

std::vector<int> translate_all(MPI_Group from, MPI_Group to, const char* call, int rank) {
  int size = 0;
  check_mpi(MPI_Group_size(from, &size), call, rank);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::iota(ranks.begin(), ranks.end(), 0);
  std::vector<int> translated(ranks.size());
  check_mpi(MPI_Group_translate_ranks(from, size, ranks.data(), to, translated.data()), call, rank);
  return translated;
}

std::vector<Location> origins_of(const CommState& comm, const char* call, int rank) {
  if (!comm.origins().empty()) return comm.origins();
  // A create_endpoints numbering: the thread is the creation thread, and the
  // process index is a rank of the MPI communicators underneath.
  ScopedGroup mine;
  ScopedGroup world;
  check_mpi(MPI_Comm_group(comm.p2p_comm(), mine.out()), call, rank);
  check_mpi(MPI_Comm_group(MPI_COMM_WORLD, world.out()), call, rank);
  const std::vector<int> world_rank = translate_all(mine.get(), world.get(), call, rank);
  const RankMap& map = comm.rank_map();
  std::vector<Location> origins(static_cast<std::size_t>(map.size()));
  for (int r = 0; r < map.size(); ++r) {
    const Location where = map.locate(r);
    origins[static_cast<std::size_t>(r)] = {world_rank[static_cast<std::size_t>(where.process)],
                                            where.thread};
  }
  return origins;
}

void inherit_errhandler(MPI_Comm from, MPI_Comm to, const char* call, int rank) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  check_mpi(MPI_Comm_get_errhandler(from, &handler), call, rank);
  // The handle from MPI_Comm_get_errhandler is freed whether or not the set
  // worked; the set's failure is the one reported first.
  const int set = MPI_Comm_set_errhandler(to, handler);
  const int freed = MPI_Errhandler_free(&handler);
  check_mpi(set, call, rank);
  check_mpi(freed, call, rank);
}

const Communicator& usable_bridge(const InterCommunicator& inter, const char* call) {
  const Communicator& bridge = InterAccess::bridge(inter);
  if (bridge.is_null()) throw Error(ErrorKind::kFreedComm, call, -1, "null intercommunicator");
  if (bridge.state()->is_freed(bridge.local_thread())) {
    throw Error(ErrorKind::kFreedComm, call, inter.rank(), "use of a freed intercommunicator");
  }
  return bridge;
}

}  // namespace ep::detail
