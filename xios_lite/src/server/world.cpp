// The roles of an xios_lite run: which processes of the world serve, and
// the split into the clients' and the servers' communicators.
#include <string>
#include <vector>

#include "ep/error.hpp"
#include "xios_lite/server.hpp"

namespace xios_lite {

Role role_of_last_ranks(MPI_Comm world, int n_servers) {
  int rank = 0;
  int size = 0;
  ep::check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(world, &size), "MPI_Comm_size", -1);
  if (n_servers < 0 || n_servers >= size) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::role_of_last_ranks", -1,
                    std::to_string(n_servers) + " servers out of range [0, " +
                        std::to_string(size - 1) + "] for " + std::to_string(size) +
                        " processes (at least one client)");
  }
  return rank >= size - n_servers ? Role::kServer : Role::kClient;
}

World split_world(MPI_Comm world, Role role) {
  int rank = 0;
  int size = 0;
  ep::check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(world, &size), "MPI_Comm_size", -1);
  const int mine = role == Role::kServer ? 1 : 0;
  std::vector<int> roles(static_cast<std::size_t>(size));
  ep::check_mpi(MPI_Allgather(&mine, 1, MPI_INT, roles.data(), 1, MPI_INT, world), "MPI_Allgather",
                -1);
  World w;
  w.role = role;
  w.world = world;
  for (int r = 0; r < size; ++r) {
    if (roles[static_cast<std::size_t>(r)] == 1) {
      if (w.server_leader < 0) {
        w.server_leader = r;
      }
      ++w.server_processes;
    } else {
      if (w.server_processes > 0) {
        throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::split_world", -1,
                        "world rank " + std::to_string(r) +
                            " is a client after a server: servers must be the last ranks");
      }
      ++w.client_processes;
    }
  }
  if (w.client_processes == 0) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::split_world", -1, "no client process");
  }
  ep::check_mpi(MPI_Comm_split(world, mine, rank, &w.local), "MPI_Comm_split", -1);
  return w;
}

void free_world(World& world) {
  if (world.local != MPI_COMM_NULL) {
    ep::check_mpi(MPI_Comm_free(&world.local), "MPI_Comm_free", -1);
  }
}

}  // namespace xios_lite
