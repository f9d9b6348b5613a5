#include "bench_mpi.hpp"

#include <chrono>
#include <thread>

#include "ep/error.hpp"

namespace bench {

void check_mpi(int rc, const char* call) { ep::check_mpi(rc, call, -1); }

void wait_yielding(MPI_Request& request, const char* call) {
  YieldingBackoff backoff;
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call);
    if (done) return;
    backoff.pause();
  }
}

void quiet_barrier(MPI_Comm comm) {
  MPI_Request request;
  check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

MPI_Comm first_ranks(MPI_Comm comm, int processes) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  MPI_Comm group = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm, rank < processes ? 0 : MPI_UNDEFINED, rank, &group),
            "MPI_Comm_split");
  return group;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  check_mpi(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of(",\n"));
}

}  // namespace bench
