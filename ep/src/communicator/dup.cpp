#include <memory>

#include "collective/collective_support.hpp"
#include "ep/comm_management.hpp"

namespace ep {

Communicator dup(const Communicator& comm) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::dup");
  // The leader duplicates the MPI communicators (collective over the
  // processes) and the other threads pick up their handles from it.
  std::shared_ptr<detail::CommState> created;
  if (call.leader()) {
    created = std::make_shared<detail::CommState>(call.comm.internal_comm(), call.comm.parent(),
                                                  call.comm.rank_map(), call.comm.process_rank(),
                                                  call.comm.eager_threshold());
    call.team.publish_aux(0, &created);
  }
  call.team.barrier();
  Communicator result(*static_cast<std::shared_ptr<detail::CommState>*>(call.team.published_aux(0)),
                      call.thread);
  call.team.barrier();  // `created` lives on the leader's stack until everyone has copied it
  return result;
}

}  // namespace ep
