// The parts of CommState that every layer may call (the trace reads the
// world origins). Its composition (constructor, free) is
// communicator/comm_state.cpp.
#include "comm_state.hpp"

#include <vector>

#include "checks.hpp"
#include "mpi_groups.hpp"

namespace ep::detail {

std::vector<Location> CommState::world_origins(const char* call, int rank) const {
  if (!origins_.empty()) return origins_;
  // A create_endpoints numbering: the thread is the creation thread, and the
  // process index is a rank of the MPI communicators underneath.
  ScopedGroup mine;
  ScopedGroup world;
  check_mpi(MPI_Comm_group(p2p_comm_, mine.out()), call, rank);
  check_mpi(MPI_Comm_group(MPI_COMM_WORLD, world.out()), call, rank);
  const std::vector<int> world_rank = translate_all(mine.get(), world.get(), call, rank);
  std::vector<Location> origins(static_cast<std::size_t>(map_.size()));
  for (int r = 0; r < map_.size(); ++r) {
    const Location where = map_.locate(r);
    origins[static_cast<std::size_t>(r)] = {world_rank[static_cast<std::size_t>(where.process)],
                                            where.thread};
  }
  return origins;
}

}  // namespace ep::detail
