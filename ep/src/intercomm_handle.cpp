#include "intercomm_handle.hpp"

#include <string>

#include "checks.hpp"
#include "comm_state.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"

namespace ep {
namespace {

std::string out_of_remote_range(const char* what, int peer, int remote_size) {
  return std::string(what) + " " + std::to_string(peer) + " out of range [0, " +
         std::to_string(remote_size - 1) + "] of the remote group";
}

// Checks what the bridge would accept but the intercommunicator must not (a
// peer in the local group) and the arguments the bridge would report under
// its own rank; returns the bridge.
const Communicator& checked(const InterCommunicator& inter, const char* call, PeerRole role,
                            int peer, int tag, int count) {
  const Communicator& bridge = detail::usable_bridge(inter, call);
  const int remote_size = bridge.size() - detail::InterAccess::group(inter).size();
  const bool receive = role == PeerRole::kSource;
  const bool wildcard = receive && peer == MPI_ANY_SOURCE;
  if (peer != MPI_PROC_NULL && !wildcard && (peer < 0 || peer >= remote_size)) {
    throw Error(ErrorKind::kRank, call, inter.rank(),
                out_of_remote_range(receive ? "source" : "destination", peer, remote_size));
  }
  if (!(receive && tag == MPI_ANY_TAG) && (tag < 0 || tag > kMaxUserTag)) {
    throw Error(
        ErrorKind::kTag, call, inter.rank(),
        "tag " + std::to_string(tag) + " out of range [0, " + std::to_string(kMaxUserTag) + "]");
  }
  detail::check_count(count, call, inter.rank());
  return bridge;
}

}  // namespace

namespace detail {

const Communicator& usable_bridge(const InterCommunicator& inter, const char* call) {
  const Communicator& bridge = InterAccess::bridge(inter);
  if (bridge.is_null()) throw Error(ErrorKind::kFreedComm, call, -1, "null intercommunicator");
  if (bridge.state()->is_freed(bridge.local_thread())) {
    throw Error(ErrorKind::kFreedComm, call, inter.rank(), "use of a freed intercommunicator");
  }
  return bridge;
}

}  // namespace detail

int InterCommunicator::size() const {
  detail::usable_bridge(*this, "ep::InterCommunicator::size");
  return group_.size();
}

int InterCommunicator::remote_size() const {
  return detail::usable_bridge(*this, "ep::InterCommunicator::remote_size").size() - group_.size();
}

const Communicator& InterCommunicator::p2p_route(const char* call, PeerRole role, int peer, int tag,
                                                 int count) const {
  return checked(*this, call, role, peer, tag, count);
}

}  // namespace ep
