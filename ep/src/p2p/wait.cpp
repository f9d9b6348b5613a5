// The wait/test family. Only the owner thread polls its requests; while it
// waits it drains the communicator's MPI queue, which is what moves
// inter-process messages to their endpoints (there is no progress thread).
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "backoff.hpp"
#include "comm_state.hpp"
#include "environment.hpp"
#include "ep/error.hpp"
#include "ep/request.hpp"
#include "p2p/inter_process.hpp"
#include "p2p/matching_engine.hpp"
#include "p2p/p2p_state.hpp"
#include "p2p/request_state.hpp"
#include "trace/recorder.hpp"

namespace ep {

namespace {

using detail::Phase;
using detail::RequestState;
using detail::test_mpi;

// The traced time of waiting on `request`: collective time for a nonblocking
// collective's request (it advances by `progress`), point-to-point otherwise.
detail::TraceScope traced_wait(const RequestState& request) {
  if (!request.comm) return {};  // complete from the start (completed_send, start_recv)
  return {request.progress ? detail::TraceKind::kCollective : detail::TraceKind::kP2p,
          *request.comm, request.owner_rank, request.owner_thread};
}

// The same for a set of requests, named by its first active one.
detail::TraceScope traced_waits(std::span<Request> requests) {
  if (!detail::trace_on()) return {};
  for (const Request& r : requests) {
    if (!r.is_null()) return traced_wait(*r.state());
  }
  return {};
}

// A request whose completion does not need the drain (an intra-process
// message, a direct receive, a send) drains on every this-many polls only:
// often enough that a process whose threads all wait on such requests still
// moves the MPI queue along (another process's large send may wait for it),
// rarely enough that the poll stays a load of `phase` or one MPI_Test.
constexpr unsigned kPollsPerSparseDrain = 16;

// A rendezvous or synchronous sender leaves its receiver this many polls to
// match the message before it reads its own ring into the receiver's queues
// itself. A receiver already waiting takes the message within a hand-off or
// two; a sender reading at once took the receiver's lock first and moved the
// message to `unexpected`, where the receiver then had to find it, so the
// lock and the queue crossed cores twice more per message. The sender still
// settles a receiver that does not poll (one busy computing with its
// receive posted), only a few microseconds later.
constexpr unsigned kPollsBeforeSettling = 64;

// True once the operation is complete. Owner thread only.
bool poll(RequestState& request) {
  Phase phase = request.phase.load(std::memory_order_acquire);
  if (phase == Phase::kComplete) return true;
  if (request.progress) {
    if (!request.progress()) return false;
    request.complete();
    return true;
  }
  if (phase == Phase::kMpiPending && test_mpi(request)) return true;
  if (phase == Phase::kPosted) {
    // An intra-process match happens when someone reads a ring into the
    // mailbox's queues: the receiver for its own receives, the sender its
    // own ring, while its message waits to be matched.
    if (request.kind == RequestState::Kind::kRecv && !request.direct) {
      detail::settle_receive(request.comm->p2p().mailbox(request.owner_thread), request,
                             {request.ring_thread});
    } else if (request.settles_thread >= 0) {
      // A large copy its receiver has started: take chunks of it.
      if (request.shared_copy && request.shared_copy->open.load(std::memory_order_acquire)) {
        request.shared_copy->copy_chunks();
      }
      detail::Mailbox& box = request.comm->p2p().mailbox(request.settles_thread);
      detail::LocalRing* ring = box.ring_from(request.owner_thread);
      if (ring != nullptr && ++request.settle_polls > kPollsBeforeSettling) {
        detail::settle_ring(box, *ring);
      }
    }
    if (request.phase.load(std::memory_order_acquire) == Phase::kComplete) return true;
  }
  // Drain even while an MPI request is pending: a large MPI send completes
  // only when the peer receives it, and the peer's receive may be waiting in
  // our queue for a thread of ours to drain it (two single-threaded
  // processes exchanging large messages, say).
  if (request.comm->single_process()) return false;
  if (!request.needs_drain && ++request.polls % kPollsPerSparseDrain != 0) return false;
  request.comm->p2p().drain(request.owner_rank);
  phase = request.phase.load(std::memory_order_acquire);
  if (phase == Phase::kMpiPending) return test_mpi(request);
  if (phase == Phase::kComplete) return true;
  // After a failed drain no message can reach a posted receive any more: it
  // fails with the drain's error instead of waiting forever.
  return request.needs_drain && request.comm->p2p().fail_if_posted(request);
}

// Hands out the result of a completed request and nulls the handle; throws
// the operation's error, if any. A persistent request is left inactive
// instead (ready for the next ep::start), and an inactive one gives an
// empty status.
Status finish(Request& handle) {
  if (handle.state()->persistent) {
    RequestState& request = *handle.state();
    const bool was_active = request.active;
    request.active = false;
    request.progress = nullptr;
    if (!was_active) return Status{};
    if (request.failed) {
      request.failed = false;
      throw Error(request.error_kind, request.call, request.owner_rank, request.error_detail,
                  request.status.error);
    }
    return request.status;
  }
  const std::shared_ptr<RequestState> request = handle.release();
  if (request->failed) {
    throw Error(request->error_kind, request->call, request->owner_rank, request->error_detail,
                request->status.error);
  }
  return request->status;
}

// A wait that lasts suspiciously long says so once on stderr (a wrong peer
// or tag otherwise looks like a silent hang). EP_WAIT_WARN_SECONDS sets the
// delay (default 60, 0 disables).
class StallWatch {
 public:
  void check(const RequestState& request, long polls) {
    if (warned_ || polls % kPollsPerClockRead != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (!started_) {
      started_ = true;
      start_ = now;
      return;
    }
    const double limit = detail::wait_warn_seconds(request.call);
    if (limit <= 0 || std::chrono::duration<double>(now - start_).count() < limit) return;
    warned_ = true;
    std::string what = request.kind == RequestState::Kind::kRecv
                           ? "a receive (source " + std::to_string(request.want_source) + ", tag " +
                                 std::to_string(request.want_tag) + ")"
                           : std::string(request.progress ? "the other endpoints of the collective"
                                                          : "a send to complete");
    std::fprintf(stderr,
                 "ep: warning: ep rank %d has waited %.0f s in %s for %s; check the peer's "
                 "rank and tag\n",
                 request.owner_rank, limit, request.call, what.c_str());
  }

 private:
  // Reading the clock on every poll would cost more than the poll itself.
  static constexpr long kPollsPerClockRead = 1024;
  bool started_ = false;
  bool warned_ = false;
  std::chrono::steady_clock::time_point start_;
};

// MPI's "null or inactive": what the any/some calls skip.
bool inactive(const Request& request) { return !request.is_active(); }

void fill_status(std::span<Status> statuses, std::size_t i, const Status& value) {
  if (!statuses.empty()) statuses[i] = value;
}

}  // namespace

namespace detail {

Status wait_unposted(P2pState& p2p, RequestState& receive, RingChoice rings) {
  Mailbox& box = p2p.mailbox(receive.owner_thread);
  Backoff backoff;
  StallWatch watch;
  while (true) {
    // Acquire: pairs with the release of the append that `seen` counts, so
    // that a section taken once it moves sees the message.
    std::uint32_t seen = box.unexpected_appends.load(std::memory_order_acquire);
    // The usual blocking receive comes before its message: empty rings and
    // an `unexpected` queue known empty (Mailbox::unexpected_empty_at) mean
    // no match, so it polls without taking the mailbox lock first.
    if (rings_ready(box, rings) ||
        seen != box.unexpected_empty_at.load(std::memory_order_relaxed)) {
      MailboxSection section(box);
      // Ends (and so moves a matched rendezvous's data) before the loop does.
      if (section.match_unposted(receive, rings)) break;
      seen = box.unexpected_appends.load(std::memory_order_relaxed);
    }
    // Nothing for it yet: look again once a ring has something, or another
    // thread (a sender reading its own ring while it waits) has queued a
    // message.
    do {
      backoff.pause();
      watch.check(receive, backoff.polls());
      // The rest of the process's MPI traffic still moves along.
      if (!p2p.single_process() && ++receive.polls % kPollsPerSparseDrain == 0) {
        p2p.drain(receive.owner_rank);
      }
    } while (!rings_ready(box, rings) &&
             box.unexpected_appends.load(std::memory_order_acquire) == seen);
  }
  if (receive.failed) {
    throw Error(receive.error_kind, receive.call, receive.owner_rank, receive.error_detail,
                receive.status.error);
  }
  return receive.status;
}

}  // namespace detail

Status wait(Request& request) {
  if (request.is_null()) return Status{};
  const detail::TraceScope traced = traced_wait(*request.state());
  detail::Backoff backoff;
  StallWatch watch;
  while (!poll(*request.state())) {
    backoff.pause();
    watch.check(*request.state(), backoff.polls());
  }
  return finish(request);
}

bool test(Request& request, Status* status) {
  if (request.is_null()) {
    if (status != nullptr) *status = Status{};
    return true;
  }
  const detail::TraceScope traced = traced_wait(*request.state());
  if (!poll(*request.state())) return false;
  const Status result = finish(request);
  if (status != nullptr) *status = result;
  return true;
}

void wait_all(std::span<Request> requests, std::span<Status> statuses) {
  // Wait in turn: each wait also drains, so the others progress meanwhile.
  // Every request is finished even when one fails; the first error is rethrown.
  std::exception_ptr first_error;
  const detail::TraceScope traced = traced_waits(requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      fill_status(statuses, i, wait(requests[i]));
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

bool test_all(std::span<Request> requests, std::span<Status> statuses) {
  for (Request& r : requests) {
    if (!r.is_null() && !poll(*r.state())) return false;
  }
  wait_all(requests, statuses);  // all complete: this only collects
  return true;
}

std::optional<int> test_any(std::span<Request> requests, Status* status) {
  bool any_active = false;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (inactive(requests[i])) continue;
    any_active = true;
    if (poll(*requests[i].state())) {
      const Status result = finish(requests[i]);
      if (status != nullptr) *status = result;
      return static_cast<int>(i);
    }
  }
  if (!any_active) return MPI_UNDEFINED;
  return std::nullopt;
}

int wait_any(std::span<Request> requests, Status* status) {
  const detail::TraceScope traced = traced_waits(requests);
  detail::Backoff backoff;
  while (true) {
    if (auto index = test_any(requests, status)) return *index;
    backoff.pause();
  }
}

std::vector<int> test_some(std::span<Request> requests, std::vector<Status>* statuses) {
  std::vector<int> done;
  if (statuses != nullptr) statuses->clear();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (inactive(requests[i]) || !poll(*requests[i].state())) continue;
    const Status result = finish(requests[i]);
    done.push_back(static_cast<int>(i));
    if (statuses != nullptr) statuses->push_back(result);
  }
  return done;
}

std::vector<int> wait_some(std::span<Request> requests, std::vector<Status>* statuses) {
  const detail::TraceScope traced = traced_waits(requests);
  detail::Backoff backoff;
  while (true) {
    bool any_active = false;
    for (const Request& r : requests) any_active = any_active || !inactive(r);
    if (!any_active) {
      if (statuses != nullptr) statuses->clear();
      return {};
    }
    std::vector<int> done = test_some(requests, statuses);
    if (!done.empty()) return done;
    backoff.pause();
  }
}

void cancel(Request& request) {
  if (request.is_null()) return;
  RequestState& state = *request.state();
  if (state.kind != RequestState::Kind::kRecv) return;  // sends are never cancelled
  if (state.direct) {
    // MPI has the receive: MPI cancels it, or it completes with its message;
    // the owner's wait or test then reports which (finish_direct). A receive
    // that MPI has completed already is finished here instead of cancelled:
    // Open MPI 4.1's ob1 marks a request matched only after it has left the
    // matching lock, so an MPI_Cancel that meets a match in progress on
    // another thread cancels a request the match then completes (the buffer
    // written, the receive reported cancelled) or completes it a second time
    // (a crash in MPI_Cancel). Testing first leaves that window only to a
    // message arriving during the cancel itself (docs/ep.md, "Cancel").
    if (state.phase.load(std::memory_order_acquire) != Phase::kComplete &&
        !detail::test_mpi(state)) {
      check_mpi(MPI_Cancel(&state.mpi_request), "ep::cancel", state.owner_rank);
    }
    return;
  }
  // Complete already (the request of a receive whose message was there when
  // it started carries no communicator): nothing to cancel.
  if (state.phase.load(std::memory_order_acquire) == Phase::kComplete) return;
  detail::Mailbox& box = state.comm->p2p().mailbox(state.owner_thread);
  {
    // A message its sender already wrote matches before the cancel.
    detail::MailboxSection section(box);
    section.read_for(state, {state.ring_thread});
    for (auto it = box.posted.begin(); it != box.posted.end(); ++it) {
      if (it->get() != &state) continue;
      box.posted.erase(it);  // still unmatched, so no message is involved
      state.status = Status{};
      state.status.cancelled = true;
      state.complete();
      break;
    }
  }
}

}  // namespace ep
