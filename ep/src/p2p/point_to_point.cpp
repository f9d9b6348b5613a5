// Point-to-point calls (ep/point_to_point.hpp), once for Communicator and
// InterCommunicator: argument checks, then either the intra-process fast path
// or MPI on the communicator's private duplicate with the 15/8/8 tag encoding.
#include "ep/point_to_point.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backoff.hpp"
#include "checks.hpp"
#include "comm_state.hpp"
#include "datatype.hpp"
#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"
#include "p2p/inter_process.hpp"
#include "p2p/intra_process.hpp"
#include "p2p/matching_engine.hpp"
#include "p2p/p2p_state.hpp"
#include "p2p/request_state.hpp"
#include "trace/recorder.hpp"

namespace ep {

namespace {

using detail::RequestState;

using detail::check_count;

std::string range_text(int size) { return " out of range [0, " + std::to_string(size - 1) + "]"; }

void check_dest(int dest, int size, const char* call, int rank) {
  if (dest == MPI_PROC_NULL) return;
  if (dest < 0 || dest >= size) {
    throw Error(ErrorKind::kRank, call, rank,
                "destination " + std::to_string(dest) + range_text(size));
  }
}

void check_source(int source, int size, const char* call, int rank) {
  if (source == MPI_PROC_NULL || source == MPI_ANY_SOURCE) return;
  if (source < 0 || source >= size) {
    throw Error(ErrorKind::kRank, call, rank,
                "source " + std::to_string(source) + range_text(size));
  }
}

void check_send_tag(int tag, const char* call, int rank) {
  if (tag < 0 || tag > kMaxUserTag) {
    throw Error(
        ErrorKind::kTag, call, rank,
        "tag " + std::to_string(tag) + " out of range [0, " + std::to_string(kMaxUserTag) + "]");
  }
}

void check_recv_tag(int tag, const char* call, int rank) {
  if (tag == MPI_ANY_TAG) return;
  check_send_tag(tag, call, rank);
}

Status proc_null_status() {
  Status status;
  status.source = MPI_PROC_NULL;
  status.tag = MPI_ANY_TAG;
  return status;
}

enum class SendMode { kStandard, kSynchronous };

}  // namespace

namespace detail {

// Throws for bad send arguments; returns the datatype's layout.
TypeLayout check_send_args(const Communicator& self, const char* call, int count,
                           MPI_Datatype datatype, int dest, int tag) {
  const int rank = self.rank();
  check_count(count, call, rank);
  check_dest(dest, self.state()->rank_map().size(), call, rank);
  check_send_tag(tag, call, rank);
  return layout_of(datatype, call, rank);
}

// Starts a send; nullptr means it is already complete.
std::shared_ptr<RequestState> start_send(const Communicator& self, const char* call,
                                         const void* buf, int count, MPI_Datatype datatype,
                                         int dest, int tag, SendMode mode);
std::shared_ptr<RequestState> start_recv(const Communicator& self, const char* call, void* buf,
                                         int count, MPI_Datatype datatype, int source, int tag);

std::shared_ptr<RequestState> start_send(const Communicator& self, const char* call,
                                         const void* buf, int count, MPI_Datatype datatype,
                                         int dest, int tag, SendMode mode) {
  const int rank = self.rank();
  CommState& comm = *self.state();
  const TypedBuffer data{buf, count, datatype,
                         check_send_args(self, call, count, datatype, dest, tag)};
  if (dest == MPI_PROC_NULL) return nullptr;
  if (trace_on()) [[unlikely]]
    trace_send(comm, rank, self.local_thread(), dest, data.bytes());

  const Location to = comm.rank_map().locate(dest);
  const bool synchronous = mode == SendMode::kSynchronous;
  if (to.process == comm.process_rank()) {
    return send_intra(self.state(), {call, self.local_thread(), rank, to.thread, tag, synchronous},
                      data);
  }
  return send_inter(self, {call, self.local_thread(), rank, to.thread, tag, synchronous}, data, to);
}

// The rings of local senders a receive from `source` may match from.
RingChoice ring_choice(const CommState& comm, int source) {
  if (source == MPI_ANY_SOURCE) return {RingChoice::kAll};
  const Location from = comm.rank_map().locate(source);
  return {from.process == comm.process_rank() ? from.thread : RingChoice::kNone};
}

// Checks the arguments of a receive; returns the datatype's layout.
TypeLayout check_recv_args(const Communicator& self, const char* call, int count,
                           MPI_Datatype datatype, int source, int tag) {
  const int rank = self.rank();
  check_count(count, call, rank);
  check_source(source, self.state()->rank_map().size(), call, rank);
  check_recv_tag(tag, call, rank);
  return layout_of(datatype, call, rank);
}

std::shared_ptr<RequestState> start_recv(const Communicator& self, const char* call, void* buf,
                                         int count, MPI_Datatype datatype, int source, int tag) {
  const int rank = self.rank();
  CommState& comm = *self.state();
  const TypeLayout layout = check_recv_args(self, call, count, datatype, source, tag);
  if (source == MPI_PROC_NULL) {
    return completed_request(RequestState::Kind::kRecv, self.state(), self.local_thread(), rank,
                             proc_null_status());
  }
  // From the owner's pool: the owner usually drops it too, after its wait.
  // Without the communicator for now: a receive whose message is already
  // here completes below and never needs it, and copying the shared_ptr
  // costs two locked operations per message (post_receive sets it on a
  // receive that has to wait). A traced wait names the communicator, so
  // tracing keeps it from the start.
  auto request = std::allocate_shared<RequestState>(
      PoolAllocator<RequestState>{}, RequestState::Kind::kRecv,
      trace_on() ? self.state() : std::shared_ptr<CommState>(), self.local_thread(), rank);
  request->call = call;
  request->recv_buffer = {buf, count, datatype, layout};
  request->want_source = source;
  request->want_tag = tag;
  const RingChoice rings = ring_choice(comm, source);
  request->ring_thread = rings.thread;
  if (!comm.single_process()) {
    const bool any_source = source == MPI_ANY_SOURCE;
    const Location from = any_source ? Location{} : comm.rank_map().locate(source);
    // A message from an endpoint of this process never passes through MPI:
    // such a receive needs no drain.
    request->needs_drain = any_source || from.process != comm.process_rank();
    if (!any_source && request->needs_drain && tag != MPI_ANY_TAG &&
        comm.settings().direct_receive) {
      request->comm = self.state();  // a direct receive is polled through the communicator
      if (comm.p2p().try_post_direct(*request, from)) return request;
    }
    // Bring in what MPI already holds so the search below sees it in order.
    if (request->needs_drain) comm.p2p().drain(rank);
  }
  post_receive(comm.p2p().mailbox(self.local_thread()), request, rings, self.state());
  return request;
}

// A blocking receive that no other process can satisfy (a source in this
// process, or any source of a one-process communicator) waits without
// posting a request: it reads the rings itself until its message comes
// (wait_unposted), so it allocates nothing and no other thread ever
// completes it. Empty when the receive must take the general path.
std::optional<Status> receive_locally(const Communicator& self, const char* call, void* buf,
                                      int count, MPI_Datatype datatype, int source, int tag) {
  CommState& comm = *self.state();
  if (source == MPI_PROC_NULL) return std::nullopt;
  const bool local = source == MPI_ANY_SOURCE
                         ? comm.single_process()
                         : source >= 0 && source < comm.rank_map().size() &&
                               comm.rank_map().locate(source).process == comm.process_rank();
  if (!local) return std::nullopt;
  const TypeLayout layout = check_recv_args(self, call, count, datatype, source, tag);
  RequestState receive(RequestState::Kind::kRecv, nullptr, self.local_thread(), self.rank());
  receive.call = call;
  receive.recv_buffer = {buf, count, datatype, layout};
  receive.want_source = source;
  receive.want_tag = tag;
  return wait_unposted(comm.p2p(), receive, ring_choice(comm, source));
}

// Whether a probe leaves the message queued (iprobe) or takes it (improbe).
enum class Removal { kKeep, kTake };

// Looks for the first matching unexpected message of `self`'s endpoint.
// Throws the drain's error when nothing matches and the drain has failed (a
// probe loop would otherwise wait for a message that cannot come).
std::shared_ptr<Envelope> find_unexpected(const Communicator& self, const char* call, int source,
                                          int tag, Removal removal, Status* status) {
  CommState& comm = *self.state();
  if (!comm.single_process()) comm.p2p().drain(self.rank());
  Mailbox& box = comm.p2p().mailbox(self.local_thread());
  std::shared_ptr<Envelope> found;
  {
    MailboxSection section(box);
    auto first_match = [&] {
      return std::find_if(box.unexpected.begin(), box.unexpected.end(),
                          [&](const auto& m) { return matches(source, tag, *m); });
    };
    auto it = first_match();
    if (it == box.unexpected.end()) {
      // Older than anything in the rings: read them only when it is not there.
      section.read_for_probe(source, tag, ring_choice(comm, source));
      it = first_match();
    }
    if (it != box.unexpected.end()) {
      found = *it;
      *status = status_of(*found);
      if (removal == Removal::kTake) {
        box.unexpected.erase(it);
        release_eager(box, *found);
        ++box.held_messages;  // until the Message is received or dropped
      }
    }
  }
  if (found) return found;
  if (comm.p2p().drain_failed()) {
    const P2pState::DrainFault& fault = comm.p2p().drain_fault();
    throw Error(fault.kind, call, self.rank(), fault.detail, fault.mpi_code);
  }
  return nullptr;
}

// Checks the arguments of a probe; true for MPI_PROC_NULL (nothing to probe).
bool check_probe_args(const Communicator& self, const char* call, int source, int tag) {
  check_source(source, self.state()->rank_map().size(), call, self.rank());
  check_recv_tag(tag, call, self.rank());
  return source == MPI_PROC_NULL;
}

// The request of a send that completed when it started (an eager copy, a
// receive that was already posted): one immutable completed state for the
// process, shared by all such requests and held without a control block
// (the aliasing constructor over an empty owner), so that the fast path
// allocates nothing and its copies count nothing: no atomic operation per
// send. Nothing writes a completed send's state (wait and test only read
// it; sends are never cancelled), it names no communicator, so it keeps
// none alive, and it lives as long as the process.
const std::shared_ptr<RequestState>& completed_send() {
  struct Completed {
    RequestState state{RequestState::Kind::kSend, nullptr, -1, -1};
    Completed() { state.phase.store(Phase::kComplete, std::memory_order_relaxed); }
  };
  static Completed completed;
  static const std::shared_ptr<RequestState> kCompleted(std::shared_ptr<void>(), &completed.state);
  return kCompleted;
}

// The request of a started send; a send that is already complete gets the
// shared completed one.
Request started_send(std::shared_ptr<RequestState> state) {
  if (!state) {
    return Request(completed_send());
  }
  return Request(std::move(state));
}

}  // namespace detail

// ---- the calls, written once for both kinds of communicator ----------------

namespace detail {

template <class Self>
void PointToPoint<Self>::send(const void* buf, int count, MPI_Datatype datatype, int dest,
                              int tag) const {
  constexpr const char* kCall = "ep::send";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kDestination, dest, tag, count);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  auto started = start_send(via, kCall, buf, count, datatype, dest, tag, SendMode::kStandard);
  if (!started) return;  // complete already (an eager copy): no request to wait on
  Request request(std::move(started));
  wait(request);
}

template <class Self>
void PointToPoint<Self>::ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
                               int tag) const {
  constexpr const char* kCall = "ep::ssend";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kDestination, dest, tag, count);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  Request request(start_send(via, kCall, buf, count, datatype, dest, tag, SendMode::kSynchronous));
  wait(request);
}

template <class Self>
Request PointToPoint<Self>::isend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag) const {
  constexpr const char* kCall = "ep::isend";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kDestination, dest, tag, count);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  return started_send(start_send(via, kCall, buf, count, datatype, dest, tag, SendMode::kStandard));
}

template <class Self>
Request PointToPoint<Self>::issend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                   int tag) const {
  constexpr const char* kCall = "ep::issend";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kDestination, dest, tag, count);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  return started_send(
      start_send(via, kCall, buf, count, datatype, dest, tag, SendMode::kSynchronous));
}

template <class Self>
Status PointToPoint<Self>::recv(void* buf, int count, MPI_Datatype datatype, int source,
                                int tag) const {
  constexpr const char* kCall = "ep::recv";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kSource, source, tag, count);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  if (auto status = receive_locally(via, kCall, buf, count, datatype, source, tag)) return *status;
  Request request(start_recv(via, kCall, buf, count, datatype, source, tag));
  return wait(request);
}

template <class Self>
Request PointToPoint<Self>::irecv(void* buf, int count, MPI_Datatype datatype, int source,
                                  int tag) const {
  constexpr const char* kCall = "ep::irecv";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kSource, source, tag, count);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  return Request(start_recv(via, kCall, buf, count, datatype, source, tag));
}

template <class Self>
Status PointToPoint<Self>::sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    int dest, int sendtag, void* recvbuf, int recvcount,
                                    MPI_Datatype recvtype, int source, int recvtag) const {
  constexpr const char* kCall = "ep::sendrecv";
  self().p2p_route(kCall, PeerRole::kDestination, dest, sendtag, sendcount);
  const Communicator& via = self().p2p_route(kCall, PeerRole::kSource, source, recvtag, recvcount);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  // The send arguments are checked before the receive is posted: a posted
  // receive may match at once, and a failed call must consume nothing.
  check_send_args(via, kCall, sendcount, sendtype, dest, sendtag);
  // Receive first so that two endpoints exchanging large messages never wait
  // on each other's send.
  Request receive(start_recv(via, kCall, recvbuf, recvcount, recvtype, source, recvtag));
  Request send(
      start_send(via, kCall, sendbuf, sendcount, sendtype, dest, sendtag, SendMode::kStandard));
  wait(send);
  return wait(receive);
}

template <class Self>
Status PointToPoint<Self>::sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                            int sendtag, int source, int recvtag) const {
  constexpr const char* kCall = "ep::sendrecv_replace";
  self().p2p_route(kCall, PeerRole::kDestination, dest, sendtag, count);
  const Communicator& via = self().p2p_route(kCall, PeerRole::kSource, source, recvtag, count);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  check_count(count, kCall, via.rank());
  // The outgoing data is packed aside first; MPI lets a packed message match
  // any receive whose type signature equals the packed items.
  const TypedBuffer data{buf, count, datatype, layout_of(datatype, kCall, via.rank())};
  std::vector<std::byte> outgoing(data.bytes());
  pack_into(data, outgoing.data());
  return via.sendrecv(outgoing.data(), static_cast<int>(outgoing.size()), MPI_PACKED, dest, sendtag,
                      buf, count, datatype, source, recvtag);
}

template <class Self>
std::optional<Status> PointToPoint<Self>::iprobe(int source, int tag) const {
  constexpr const char* kCall = "ep::iprobe";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kSource, source, tag, 0);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  if (check_probe_args(via, kCall, source, tag)) return proc_null_status();
  Status status;
  if (find_unexpected(via, kCall, source, tag, Removal::kKeep, &status)) return status;
  return std::nullopt;
}

template <class Self>
Status PointToPoint<Self>::probe(int source, int tag) const {
  const Communicator& via = self().p2p_route("ep::probe", PeerRole::kSource, source, tag, 0);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  Backoff backoff;
  while (true) {
    if (auto status = iprobe(source, tag)) return *status;
    backoff.pause();
  }
}

template <class Self>
std::optional<Message> PointToPoint<Self>::improbe(int source, int tag) const {
  constexpr const char* kCall = "ep::improbe";
  const Communicator& via = self().p2p_route(kCall, PeerRole::kSource, source, tag, 0);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  if (check_probe_args(via, kCall, source, tag)) {
    return Message(nullptr, via.state(), via.local_thread(), proc_null_status());
  }
  Status status;
  auto found = find_unexpected(via, kCall, source, tag, Removal::kTake, &status);
  if (!found) return std::nullopt;
  return Message(std::move(found), via.state(), via.local_thread(), status);
}

template <class Self>
Message PointToPoint<Self>::mprobe(int source, int tag) const {
  const Communicator& via = self().p2p_route("ep::mprobe", PeerRole::kSource, source, tag, 0);
  const TraceScope traced(TraceKind::kP2p, *via.state(), via.rank(), via.local_thread());
  Backoff backoff;
  while (true) {
    if (auto message = improbe(source, tag)) return std::move(*message);
    backoff.pause();
  }
}

// The two kinds of communicator; nothing else instantiates these.
template class PointToPoint<Communicator>;
template class PointToPoint<InterCommunicator>;

}  // namespace detail

}  // namespace ep
