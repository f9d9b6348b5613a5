// Completion of endpoint operations: Status, Request, Message and the
// MPI wait/test family.
//
// Thread safety: a Request belongs to the endpoint (thread) that started it;
// only that thread may test, wait on or cancel it. Different threads may wait
// on their own requests at the same time. Waiting spins briefly, then yields
// and finally sleeps in short steps, so oversubscribed runs (more ranks and
// threads than cores) keep making progress.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ep {

namespace detail {
struct RequestState;
struct Envelope;
class CommState;
}  // namespace detail

/// Outcome of a receive or probe, in endpoint terms.
struct Status {
  int source = MPI_ANY_SOURCE;  ///< EP rank of the sender (MPI_PROC_NULL for a null peer)
  int tag = MPI_ANY_TAG;        ///< user tag
  int error = MPI_SUCCESS;
  bool cancelled = false;
  std::size_t bytes = 0;  ///< size of the received (or probed) message in bytes

  /// MPI_Get_count: number of whole `datatype` elements in the message, or
  /// MPI_UNDEFINED when `bytes` is not a multiple of the type size.
  [[nodiscard]] int count(MPI_Datatype datatype) const;
};

/// Handle to a pending nonblocking operation; default-constructed = MPI_REQUEST_NULL.
/// Cheap to copy; copies refer to the same operation.
///
/// A persistent request (MPI-4's *_init calls, e.g. ep::neighbor_alltoall_init)
/// is made inactive; ep::start makes it active, and the wait or test that
/// completes it leaves it inactive, not null, ready to be started again,
/// until ep::request_free nulls it. The wait/test family treats an inactive
/// request as MPI does: wait and test return an empty status at once, and the
/// any/some calls skip it like a null one.
class Request {
 public:
  Request() = default;
  explicit Request(std::shared_ptr<detail::RequestState> state) : state_(std::move(state)) {}

  [[nodiscard]] bool is_null() const noexcept { return state_ == nullptr; }
  /// True for a request made by an *_init call (and not freed).
  [[nodiscard]] bool is_persistent() const noexcept;
  /// False for a null request and an inactive persistent one (MPI's "active").
  [[nodiscard]] bool is_active() const noexcept;
  [[nodiscard]] const std::shared_ptr<detail::RequestState>& state() const noexcept {
    return state_;
  }
  void reset() noexcept { state_.reset(); }
  /// Hands the state over and nulls the handle (the library's wait/test).
  [[nodiscard]] std::shared_ptr<detail::RequestState> release() noexcept {
    return std::move(state_);
  }

 private:
  std::shared_ptr<detail::RequestState> state_;
};

/// A message removed from the matching queue by mprobe/improbe (MPI_Message).
/// Receive it with ep::mrecv or ep::imrecv; move-only, received at most once.
class Message {
 public:
  Message() = default;
  Message(std::shared_ptr<detail::Envelope> envelope, std::shared_ptr<detail::CommState> comm,
          int receiver_thread, Status status);
  Message(Message&&) noexcept = default;
  Message& operator=(Message&&) noexcept = default;
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  ~Message();

  /// True for MPI_MESSAGE_NO_PROC (probe on MPI_PROC_NULL) and after the message was received.
  [[nodiscard]] bool is_null() const noexcept { return envelope_ == nullptr; }
  [[nodiscard]] const Status& status() const noexcept { return status_; }

 private:
  friend Status mrecv(void*, int, MPI_Datatype, Message&);
  friend Request imrecv(void*, int, MPI_Datatype, Message&);
  std::shared_ptr<detail::Envelope> envelope_;
  std::shared_ptr<detail::CommState> comm_;
  int receiver_thread_ = -1;
  Status status_;
};

/// MPI_Mrecv: receives a matched message; `message` becomes null. Not
/// collective. Too small a buffer receives the part that fits and throws
/// ep::Error(kTruncate): the message is consumed, as MPI_Mrecv consumes it.
Status mrecv(void* buf, int count, MPI_Datatype datatype, Message& message);
/// MPI_Imrecv: nonblocking form of mrecv.
Request imrecv(void* buf, int count, MPI_Datatype datatype, Message& message);

/// MPI_Wait: blocks until `request` completes, then nulls it. A null request
/// returns an empty status at once. Throws ep::Error if the operation failed
/// (for example a truncated receive: as in MPI, the part of the message that
/// fits is in the buffer and the message is consumed, on every path).
Status wait(Request& request);
/// MPI_Test: true (and `request` nulled, `*status` filled) when complete.
bool test(Request& request, Status* status = nullptr);
/// MPI_Waitall. `statuses` may be empty or the size of `requests`.
void wait_all(std::span<Request> requests, std::span<Status> statuses = {});
/// MPI_Testall: true only when all are complete (then all are nulled).
bool test_all(std::span<Request> requests, std::span<Status> statuses = {});
/// MPI_Waitany: index of a completed request, or MPI_UNDEFINED when all are null.
int wait_any(std::span<Request> requests, Status* status = nullptr);
/// MPI_Testany: index of a completed request, std::nullopt when none is complete
/// yet, MPI_UNDEFINED when all are null.
std::optional<int> test_any(std::span<Request> requests, Status* status = nullptr);
/// MPI_Waitsome: indices of completed requests (at least one unless all are null).
std::vector<int> wait_some(std::span<Request> requests, std::vector<Status>* statuses = nullptr);
/// MPI_Testsome: indices of the requests complete now (possibly none).
std::vector<int> test_some(std::span<Request> requests, std::vector<Status>* statuses = nullptr);
/// MPI_Start: starts one round of the persistent request `request` (made by
/// an *_init call). Not collective in itself, but a persistent collective's
/// rounds are: every endpoint of its communicator starts its request of the
/// same init call, all of them starting their persistent collectives in the
/// same order (MPI's rule). Returns without waiting for other endpoints.
/// Throws ep::Error(kRequest) for a null, non-persistent or already active
/// request. By the owner thread only (the one that called the init).
void start(Request& request);
/// MPI_Startall: ep::start on each request in order.
void start_all(std::span<Request> requests);
/// MPI_Request_free for a persistent request: releases it and nulls the
/// handle. Local. An active request must be completed first (wait or test)
/// and a pending nonblocking operation cannot be freed: there is no progress
/// thread to finish it; both throw ep::Error(kRequest), as does a null
/// request. A completed non-persistent request is just nulled.
void request_free(Request& request);

/// MPI_Cancel: cancels a receive that has not matched yet; the request must
/// still be waited on and its status reports cancelled. Cancelling a send or
/// an already matched receive has no effect (status.cancelled stays false).
void cancel(Request& request);

}  // namespace ep
