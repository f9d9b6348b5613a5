// MPI_Comm_dup: the leader duplicates the MPI communicators (collective over
// the processes) and the other threads pick up their handles from it.
#include <memory>

#include "comm_state.hpp"
#include "communicator/creation.hpp"
#include "ep/comm_management.hpp"

namespace ep {

Communicator dup(const Communicator& comm) {
  detail::CollectiveCall call = detail::begin_collective(comm, "ep::dup");
  auto state = detail::on_leader<std::shared_ptr<detail::CommState>>(call, [&] {
    detail::CommState& old = call.comm;
    MPI_Comm parent = old.parent();
    if (old.owns_parent()) {
      // The original releases its parent when it is freed; the copy may live
      // longer, so it gets a parent of its own.
      check_mpi(MPI_Comm_dup(old.parent(), &parent), call.name, call.rank);
    }
    auto created = std::make_shared<detail::CommState>(old.internal_comm(), parent, old.rank_map(),
                                                       old.process_rank(), old.settings());
    if (old.owns_parent()) created->adopt_parent();
    created->set_origins(old.origins());
    created->topology = old.topology;  // MPI_Comm_dup keeps the topology
    return created;
  });
  return Communicator(std::move(state), call.thread);
}

}  // namespace ep
