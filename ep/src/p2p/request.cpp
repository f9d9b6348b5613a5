// Status, matched messages (mprobe/mrecv) and completed requests.
#include "ep/request.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include "checks.hpp"
#include "comm_state.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "p2p/matching_engine.hpp"
#include "p2p/p2p_state.hpp"
#include "p2p/request_state.hpp"

namespace ep {

int Status::count(MPI_Datatype datatype) const {
  int size = 0;
  check_mpi(MPI_Type_size(datatype, &size), "ep::Status::count", -1);
  if (size == 0) return bytes == 0 ? 0 : MPI_UNDEFINED;
  if (bytes % static_cast<std::size_t>(size) != 0) return MPI_UNDEFINED;
  return static_cast<int>(bytes / static_cast<std::size_t>(size));
}

namespace detail {

std::shared_ptr<RequestState> completed_request(RequestState::Kind kind,
                                                std::shared_ptr<CommState> comm, int thread,
                                                int rank, Status status) {
  auto request = std::make_shared<RequestState>(kind, std::move(comm), thread, rank);
  request->status = status;
  request->complete();
  return request;
}

}  // namespace detail

namespace {

// The one report a Message destructor can give.
void report_lost_message(int source, int tag, const char* why) {
  std::fprintf(stderr,
               "ep: error: ep::Message destroyed unreceived (source ep rank %d, tag %d) could "
               "not be returned to its queue and is lost: %s\n",
               source, tag, why);
}

}  // namespace

Message::Message(std::shared_ptr<detail::Envelope> envelope,
                 std::shared_ptr<detail::CommState> comm, int receiver_thread, Status status)
    : envelope_(std::move(envelope)),
      comm_(std::move(comm)),
      receiver_thread_(receiver_thread),
      status_(status) {}

Message::~Message() {
  // A matched message that is never received goes back to its endpoint
  // rather than being lost: to a receive posted since, or to the front of
  // the queue it was taken from.
  // A failed receive of it fails the receive it met (deliver never throws
  // for that); what is left to land here is a failure to queue it at all,
  // which a destructor cannot throw: it is reported on stderr, never
  // swallowed.
  if (envelope_ && comm_) {
    const int source = envelope_->source;
    const int tag = envelope_->tag;
    detail::Mailbox& box = comm_->p2p().mailbox(receiver_thread_);
    try {
      detail::deliver(box, std::move(envelope_), detail::Arrival::kReturned);
      detail::count_held(box, -1);
    } catch (const std::exception& e) {
      report_lost_message(source, tag, e.what());
    } catch (...) {
      report_lost_message(source, tag, "an exception of unknown type");
    }
  }
}

Request imrecv(void* buf, int count, MPI_Datatype datatype, Message& message) {
  constexpr const char* kCall = "ep::imrecv";
  if (!message.envelope_) {
    if (message.status_.source == MPI_PROC_NULL) {
      return Request(detail::completed_request(detail::RequestState::Kind::kRecv, message.comm_,
                                               message.receiver_thread_, -1, message.status_));
    }
    throw Error(ErrorKind::kRequest, kCall, -1, "message is null or was received already");
  }
  detail::CommState& comm = *message.comm_;
  const int rank = comm.rank_map().ep_rank(comm.process_rank(), message.receiver_thread_);
  detail::check_count(count, kCall, rank);
  auto request = std::make_shared<detail::RequestState>(
      detail::RequestState::Kind::kRecv, message.comm_, message.receiver_thread_, rank);
  request->call = kCall;
  request->recv_buffer = {buf, count, datatype, detail::layout_of(datatype, kCall, rank)};
  // Too small a buffer receives what fits and the request fails with
  // kTruncate, as every receive does: the message is consumed either way.
  detail::receive_matched(*request, *message.envelope_);
  detail::count_held(comm.p2p().mailbox(message.receiver_thread_), -1);
  message.envelope_.reset();
  message.status_ = Status{};
  return Request(std::move(request));
}

Status mrecv(void* buf, int count, MPI_Datatype datatype, Message& message) {
  Request request = imrecv(buf, count, datatype, message);
  return wait(request);
}

}  // namespace ep
