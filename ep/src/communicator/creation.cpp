#include "communicator/creation.hpp"

#include <string>
#include <string_view>

namespace ep::detail {

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

}  // namespace ep::detail
