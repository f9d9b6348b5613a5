// The handle of one endpoint: its identity, its rank map accessors and the
// point-to-point hook. Base layer: every layer calls them, so they need
// nothing but the communicator's state (comm_state.hpp). What reaches into
// the subsystems (direct_receive, free) is communicator/communicator.cpp.
#include "checks.hpp"
#include "comm_state.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"

namespace ep {

Communicator::Communicator(std::shared_ptr<detail::CommState> state, int local_thread)
    : state_(std::move(state)),
      thread_(local_thread),
      rank_(state_->rank_map().ep_rank(state_->process_rank(), local_thread)) {}

detail::CommState& Communicator::checked_state(const char* call) const {
  return detail::usable_state(*this, call);
}

const Communicator& Communicator::p2p_route(const char* call, PeerRole /*role*/, int /*peer*/,
                                            int /*tag*/, int /*count*/) const {
  checked_state(call);
  return *this;
}

int Communicator::size() const { return checked_state("ep::Communicator::size").rank_map().size(); }

std::size_t Communicator::eager_threshold() const {
  return checked_state("ep::Communicator::eager_threshold").eager_threshold();
}

std::size_t Communicator::eager_cap() const {
  return checked_state("ep::Communicator::eager_cap").settings().eager_cap;
}

int Communicator::local_size() const {
  return checked_state("ep::Communicator::local_size").local_size();
}

int Communicator::process_rank() const {
  return checked_state("ep::Communicator::process_rank").process_rank();
}

const RankMap& Communicator::rank_map() const {
  return checked_state("ep::Communicator::rank_map").rank_map();
}

MPI_Comm Communicator::parent() const { return checked_state("ep::Communicator::parent").parent(); }

}  // namespace ep
