// Point-to-point calls of ep::Communicator: argument checks, then either the
// intra-process fast path or MPI on the communicator's private duplicate with
// the 15/8/8 tag encoding.
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "backoff.hpp"
#include "comm_state.hpp"
#include "datatype.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"
#include "intra_process.hpp"
#include "matching_engine.hpp"
#include "request_state.hpp"

namespace ep {

namespace {

using detail::RequestState;

void check_count(int count, const char* call, int rank) {
  if (count < 0) {
    throw Error(ErrorKind::kCount, call, rank, "count " + std::to_string(count) + " is negative");
  }
}

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

  const Location to = comm.rank_map().locate(dest);
  const bool synchronous = mode == SendMode::kSynchronous;
  if (to.process == comm.process_rank()) {
    return send_intra(self.state(), {call, self.local_thread(), rank, to.thread, tag, synchronous},
                      data);
  }
  auto request = std::make_shared<RequestState>(RequestState::Kind::kSend, self.state(),
                                                self.local_thread(), rank);
  request->call = call;
  const WireAddress wire = encode(comm.tag_layout(), {tag, self.local_thread(), to.thread});
  const MPI_Comm channel = comm.p2p_comm(wire.channel);
  // Always nonblocking underneath: a blocking MPI_Send of a large message
  // could wait for a peer process whose threads need this one to drain.
  const int rc = synchronous ? MPI_Issend(buf, count, datatype, to.process, wire.tag, channel,
                                          &request->mpi_request)
                             : MPI_Isend(buf, count, datatype, to.process, wire.tag, channel,
                                         &request->mpi_request);
  check_mpi(rc, call, rank);
  request->phase.store(Phase::kMpiPending, std::memory_order_relaxed);
  return request;
}

std::shared_ptr<RequestState> start_recv(const Communicator& self, const char* call, void* buf,
                                         int count, MPI_Datatype datatype, int source, int tag) {
  const int rank = self.rank();
  CommState& comm = *self.state();
  check_count(count, call, rank);
  check_source(source, comm.rank_map().size(), call, rank);
  check_recv_tag(tag, call, rank);
  const TypeLayout layout = layout_of(datatype, call, rank);
  if (source == MPI_PROC_NULL) {
    return completed_request(RequestState::Kind::kRecv, self.state(), self.local_thread(), rank,
                             proc_null_status());
  }
  auto request = std::make_shared<RequestState>(RequestState::Kind::kRecv, self.state(),
                                                self.local_thread(), rank);
  request->call = call;
  request->recv_buffer = {buf, count, datatype, layout};
  request->want_source = source;
  request->want_tag = tag;
  // Bring in what MPI already holds so the search below sees it in order.
  if (!comm.single_process()) comm.drain(rank);
  post_receive(comm.mailbox(self.local_thread()), request);
  return request;
}

// Looks for the first matching unexpected message of `thread`; with `remove`
// takes it out of the queue (mprobe).
std::shared_ptr<Envelope> find_unexpected(CommState& comm, int thread, int rank, int source,
                                          int tag, bool remove, Status* status) {
  if (!comm.single_process()) comm.drain(rank);
  Mailbox& box = comm.mailbox(thread);
  std::lock_guard lock(box.mutex);
  auto it = std::find_if(box.unexpected.begin(), box.unexpected.end(),
                         [&](const auto& m) { return matches(source, tag, *m); });
  if (it == box.unexpected.end()) return nullptr;
  std::shared_ptr<Envelope> found = *it;
  *status = status_of(*found);
  if (remove) box.unexpected.erase(it);
  return found;
}

}  // namespace detail

void Communicator::send(const void* buf, int count, MPI_Datatype datatype, int dest,
                        int tag) const {
  checked_state("ep::send");
  Request request(
      detail::start_send(*this, "ep::send", buf, count, datatype, dest, tag, SendMode::kStandard));
  wait(request);
}

void Communicator::ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
                         int tag) const {
  checked_state("ep::ssend");
  Request request(detail::start_send(*this, "ep::ssend", buf, count, datatype, dest, tag,
                                     SendMode::kSynchronous));
  wait(request);
}

Request Communicator::isend(const void* buf, int count, MPI_Datatype datatype, int dest,
                            int tag) const {
  checked_state("ep::isend");
  auto state =
      detail::start_send(*this, "ep::isend", buf, count, datatype, dest, tag, SendMode::kStandard);
  if (!state) state = detail::completed_request(RequestState::Kind::kSend, state_, thread_, rank_);
  return Request(std::move(state));
}

Request Communicator::issend(const void* buf, int count, MPI_Datatype datatype, int dest,
                             int tag) const {
  checked_state("ep::issend");
  auto state = detail::start_send(*this, "ep::issend", buf, count, datatype, dest, tag,
                                  SendMode::kSynchronous);
  if (!state) state = detail::completed_request(RequestState::Kind::kSend, state_, thread_, rank_);
  return Request(std::move(state));
}

Status Communicator::recv(void* buf, int count, MPI_Datatype datatype, int source, int tag) const {
  checked_state("ep::recv");
  Request request(detail::start_recv(*this, "ep::recv", buf, count, datatype, source, tag));
  return wait(request);
}

Request Communicator::irecv(void* buf, int count, MPI_Datatype datatype, int source,
                            int tag) const {
  checked_state("ep::irecv");
  return Request(detail::start_recv(*this, "ep::irecv", buf, count, datatype, source, tag));
}

Status Communicator::sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                              int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                              int source, int recvtag) const {
  checked_state("ep::sendrecv");
  // The send arguments are checked before the receive is posted: a posted
  // receive may match at once, and a failed call must consume nothing.
  detail::check_send_args(*this, "ep::sendrecv", sendcount, sendtype, dest, sendtag);
  // Receive first so that two endpoints exchanging large messages never wait
  // on each other's send.
  Request receive(
      detail::start_recv(*this, "ep::sendrecv", recvbuf, recvcount, recvtype, source, recvtag));
  Request send(detail::start_send(*this, "ep::sendrecv", sendbuf, sendcount, sendtype, dest,
                                  sendtag, SendMode::kStandard));
  wait(send);
  return wait(receive);
}

Status Communicator::sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                      int sendtag, int source, int recvtag) const {
  constexpr const char* kCall = "ep::sendrecv_replace";
  checked_state(kCall);
  check_count(count, kCall, rank_);
  // The outgoing data is packed aside first; MPI lets a packed message match
  // any receive whose type signature equals the packed items.
  const detail::TypedBuffer data{buf, count, datatype, detail::layout_of(datatype, kCall, rank_)};
  std::vector<std::byte> outgoing(data.bytes());
  detail::pack_into(data, outgoing.data());
  return sendrecv(outgoing.data(), static_cast<int>(outgoing.size()), MPI_PACKED, dest, sendtag,
                  buf, count, datatype, source, recvtag);
}

std::optional<Status> Communicator::iprobe(int source, int tag) const {
  constexpr const char* kCall = "ep::iprobe";
  detail::CommState& comm = checked_state(kCall);
  check_source(source, comm.rank_map().size(), kCall, rank_);
  check_recv_tag(tag, kCall, rank_);
  if (source == MPI_PROC_NULL) return proc_null_status();
  Status status;
  if (detail::find_unexpected(comm, thread_, rank_, source, tag, false, &status)) return status;
  return std::nullopt;
}

Status Communicator::probe(int source, int tag) const {
  detail::Backoff backoff;
  while (true) {
    if (auto status = iprobe(source, tag)) return *status;
    backoff.pause();
  }
}

std::optional<Message> Communicator::improbe(int source, int tag) const {
  constexpr const char* kCall = "ep::improbe";
  detail::CommState& comm = checked_state(kCall);
  check_source(source, comm.rank_map().size(), kCall, rank_);
  check_recv_tag(tag, kCall, rank_);
  if (source == MPI_PROC_NULL) return Message(nullptr, state_, thread_, proc_null_status());
  Status status;
  auto found = detail::find_unexpected(comm, thread_, rank_, source, tag, true, &status);
  if (!found) return std::nullopt;
  return Message(std::move(found), state_, thread_, status);
}

Message Communicator::mprobe(int source, int tag) const {
  detail::Backoff backoff;
  while (true) {
    if (auto message = improbe(source, tag)) return std::move(*message);
    backoff.pause();
  }
}

}  // namespace ep
