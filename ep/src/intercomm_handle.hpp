// The handle of one endpoint of an intercommunicator, as every layer sees
// it: its parts (InterAccess) and the checked bridge. The point-to-point
// calls route through InterCommunicator::p2p_route, defined with these in
// the base layer so that p2p/ calls nothing above it; creating, merging and
// freeing intercommunicators is communicator/'s.
#pragma once

#include <utility>

#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"

namespace ep::detail {

/// The parts of an InterCommunicator, for the implementation files.
struct InterAccess {
  static const Communicator& bridge(const InterCommunicator& inter) { return inter.bridge_; }
  static const Communicator& group(const InterCommunicator& inter) { return inter.group_; }
  static bool local_first(const InterCommunicator& inter) { return inter.local_first_; }
  static InterCommunicator make(Communicator bridge, Communicator group, bool local_first) {
    InterCommunicator inter;
    inter.bridge_ = std::move(bridge);
    inter.group_ = std::move(group);
    inter.local_first_ = local_first;
    return inter;
  }
};

/// The bridge of `inter` after checking that it is usable; throws kFreedComm
/// naming `call` and the endpoint's rank in its group.
const Communicator& usable_bridge(const InterCommunicator& inter, const char* call);

}  // namespace ep::detail
