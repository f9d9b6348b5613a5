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
