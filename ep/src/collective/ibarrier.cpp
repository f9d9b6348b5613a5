// MPI_Ibarrier on an endpoint communicator: nothing to do locally; one
// MPI_Ibarrier once every local thread is in (the registry starts it).
#include <memory>

#include "collective/aggregated_exchange.hpp"
#include "collective/nonblocking_registry.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::FailureSlot;
using detail::NbcInstance;

using detail::start_nonblocking;

class Ibarrier final : public NbcInstance {
 public:
  using NbcInstance::NbcInstance;

 protected:
  MPI_Request start() override {
    if (comm().single_process()) return MPI_REQUEST_NULL;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(comm().internal_comm(), &request), name(), call_of(0).rank);
    return request;
  }
  void finish(int /*thread*/, FailureSlot& /*mine*/) override {}
};

}  // namespace

Request ibarrier(const Communicator& comm) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::ibarrier");
  return start_nonblocking<Ibarrier>(
      comm, call, [&] { return std::make_shared<Ibarrier>(call, comm.state()); }, [](Ibarrier&) {});
}

}  // namespace ep
