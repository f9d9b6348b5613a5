// The parts of the endpoint handle that reach into the subsystems: whether
// receives may land directly (the point-to-point state's tag layout) and
// free. Its identity and rank map accessors are in ../communicator_handle.cpp
// (base layer: every layer calls them); the point-to-point calls are in
// p2p/point_to_point.cpp.
#include "ep/communicator.hpp"

#include "checks.hpp"
#include "comm_state.hpp"
#include "ep/error.hpp"
#include "p2p/p2p_state.hpp"

namespace ep {

bool Communicator::direct_receive() const {
  const auto& state = checked_state("ep::Communicator::direct_receive");
  return state.settings().direct_receive && !state.p2p().tag_layout().source_in_header;
}

void Communicator::free() { checked_state("ep::Communicator::free").free_endpoint(thread_, rank_); }

}  // namespace ep
