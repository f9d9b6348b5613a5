#include "team/collective_call.hpp"

#include "backoff.hpp"
#include "ep/error.hpp"
#include "p2p/test_hooks.hpp"

namespace ep::detail {

void wait_mpi(MPI_Request& request, const char* call, int rank) {
  Backoff backoff;
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call, rank);
    if (done != 0) return;
    backoff.pause();
  }
}

void wait_mpi(MPI_Request& request, const CollectiveCall& call) {
  wait_mpi_all(std::span<MPI_Request>(&request, 1), call);
}

void wait_mpi_all(std::span<MPI_Request> requests, const CollectiveCall& call) {
  Backoff backoff;
  while (true) {
    int done = 0;
    check_mpi(
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        call.name, call.rank);
    if (done != 0) {
      if (testing::take_injection(testing::Fault::kCollectiveWait)) {
        check_mpi(MPI_ERR_OTHER, call.name, call.rank);
      }
      return;
    }
    call.team.idle(backoff);
    backoff.pause();
  }
}

}  // namespace ep::detail
