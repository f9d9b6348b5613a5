// Persistent requests (MPI-4's *_init calls): start, start_all and
// request_free. What a round does is the request's PersistentOperation
// (p2p/request_state.hpp); completing a round is the wait/test family's
// (p2p/wait.cpp), which leaves the request inactive.
#include <memory>
#include <span>
#include <string>

#include "ep/error.hpp"
#include "ep/request.hpp"
#include "p2p/request_state.hpp"

namespace ep {

bool Request::is_persistent() const noexcept { return state_ && state_->persistent; }

bool Request::is_active() const noexcept {
  return state_ && (!state_->persistent || state_->active);
}

void start(Request& request) {
  constexpr const char* kCall = "ep::start";
  if (request.is_null()) {
    throw Error(ErrorKind::kRequest, kCall, -1, "the request is null (MPI_REQUEST_NULL)");
  }
  detail::RequestState& state = *request.state();
  if (!state.persistent) {
    throw Error(ErrorKind::kRequest, kCall, state.owner_rank,
                std::string("the request of ") + state.call +
                    " is not persistent (only *_init calls make requests to start)");
  }
  if (state.active) {
    throw Error(ErrorKind::kRequest, kCall, state.owner_rank,
                std::string("the persistent request of ") + state.call +
                    " is active: complete it with wait or test before starting it again");
  }
  state.status = Status{};
  state.failed = false;
  state.error_detail.clear();
  state.polls = 0;
  state.settle_polls = 0;
  // Owner only until the round is published by complete(): relaxed.
  state.phase.store(detail::Phase::kPosted, std::memory_order_relaxed);
  state.active = true;
  try {
    state.persistent->start(state);
  } catch (...) {
    state.active = false;
    state.progress = nullptr;
    state.phase.store(detail::Phase::kComplete, std::memory_order_relaxed);
    throw;
  }
}

void start_all(std::span<Request> requests) {
  for (Request& request : requests) start(request);
}

void request_free(Request& request) {
  constexpr const char* kCall = "ep::request_free";
  if (request.is_null()) {
    throw Error(ErrorKind::kRequest, kCall, -1, "the request is null (MPI_REQUEST_NULL)");
  }
  const detail::RequestState& state = *request.state();
  if (state.persistent ? state.active
                       : state.phase.load(std::memory_order_acquire) != detail::Phase::kComplete) {
    throw Error(ErrorKind::kRequest, kCall, state.owner_rank,
                std::string("the request of ") + state.call +
                    " is active: complete it with wait or test before freeing it");
  }
  request.reset();
}

}  // namespace ep
