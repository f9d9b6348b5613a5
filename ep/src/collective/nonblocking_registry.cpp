#include "collective/nonblocking_registry.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "p2p/p2p_state.hpp"
#include "p2p/request_state.hpp"

namespace ep::detail {

// ---- NbcInstance ----------------------------------------------------------

NbcInstance::NbcInstance(const CollectiveCall& creator, std::shared_ptr<CommState> comm)
    : name_(creator.name), comm_(std::move(comm)) {}

ProbeTurns& NbcInstance::probe_turns() const { return comm_->nbc_registry()->probe_turns(); }

CollectiveCall NbcInstance::call_of(int thread) const {
  return {*comm_, comm_->team(), thread, comm_->rank_map().ep_rank(comm_->process_rank(), thread),
          name_};
}

bool NbcInstance::mpi_complete(int rank) {
  if (!started_.load(std::memory_order_acquire)) return false;
  if (mpi_done_.load(std::memory_order_acquire)) return true;
  // One tester at a time; the others come back on their next poll.
  std::unique_lock lock(mpi_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (mpi_done_.load(std::memory_order_relaxed)) return true;
  if (!post_step(rank)) return false;
  int done = 0;
  const int rc =
      MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, statuses_.data());
  if (rc != MPI_SUCCESS) {
    failure_.guard(name_, rank, [&] { check_mpi(rc, name_, rank); });
  } else if (done != 0) {
    failure_.guard(name_, rank, [&] { mpi_completed(statuses_); });
  } else {
    return false;
  }
  mpi_done_.store(true, std::memory_order_release);
  return true;
}

bool NbcInstance::post_step(int rank) {
  if (all_posted_) return true;
  bool posted = false;
  bool threw = true;
  failure_.guard(name_, rank, [&] {
    posted = post_more(requests_);
    threw = false;
  });
  statuses_.resize(requests_.size());
  // Once post_more has failed it is not called again: what it posted completes.
  if (!posted && !threw) return false;
  all_posted_ = true;
  return true;
}

void NbcInstance::try_post_more(int rank) {
  if (!started_.load(std::memory_order_acquire) || mpi_done_.load(std::memory_order_acquire)) {
    return;
  }
  std::unique_lock lock(mpi_mutex_, std::try_to_lock);
  if (lock.owns_lock()) post_step(rank);
}

bool NbcInstance::poll(int thread, RequestState& request) {
  if (!mpi_complete(request.owner_rank)) {
    // While it waits here, the endpoint still routes the process's incoming
    // point-to-point messages, as a point-to-point wait does: a peer's send
    // to a receive posted here may complete only once a thread of this
    // process drains it, and every thread of the process may be waiting on
    // collectives.
    if (!comm_->single_process()) comm_->p2p().drain(request.owner_rank);
    return false;
  }
  FailureSlot mine;
  if (!failure_.failed()) {
    mine.guard(name_, request.owner_rank, [&] { finish(thread, mine); });
  }
  if (!failure_.report(request)) mine.report(request);
  return true;
}

// ---- NbcRegistry ----------------------------------------------------------

NbcRegistry::NbcRegistry(int local_size, int processes)
    : local_size_(local_size),
      next_sequence_(static_cast<std::size_t>(local_size), 0),
      probe_turns_(processes) {}

std::shared_ptr<NbcRegistry> NbcRegistry::of(const std::shared_ptr<CommState>& comm) {
  return comm->nbc_registry();
}

std::shared_ptr<NbcInstance> NbcRegistry::join(
    const CollectiveCall& call, const std::function<std::shared_ptr<NbcInstance>()>& make) {
  std::lock_guard lock(mutex_);
  const std::uint64_t sequence = next_sequence_[static_cast<std::size_t>(call.thread)];
  std::shared_ptr<NbcInstance> instance;
  if (auto it = joining_.find(sequence); it != joining_.end()) {
    instance = it->second;
    if (std::strcmp(instance->name(), call.name) != 0) {
      throw Error(ErrorKind::kArgument, call.name, call.rank,
                  "nonblocking collective #" + std::to_string(sequence) +
                      " of this communicator: other endpoints of the process called " +
                      instance->name() +
                      " (all endpoints must call the same collectives "
                      "in the same order)");
    }
  } else {
    instance = make();
    instance->sequence_ = sequence;
    joining_.emplace(sequence, instance);
  }
  ++next_sequence_[static_cast<std::size_t>(call.thread)];
  if (++instance->joined_ == local_size_) joining_.erase(sequence);
  return instance;
}

void NbcRegistry::contributed(const std::shared_ptr<NbcInstance>& instance) {
  std::lock_guard lock(mutex_);
  if (++instance->contributed_ < local_size_) return;
  ready_.emplace(instance->sequence_, instance);
  // Start in sequence order: this instance, if its predecessor has started,
  // and then every successor that was only waiting for it.
  for (auto it = ready_.find(next_start_); it != ready_.end(); it = ready_.find(next_start_)) {
    const std::shared_ptr<NbcInstance> next = std::move(it->second);
    ready_.erase(it);
    ++next_start_;
    start(*next);
  }
}

void NbcRegistry::start(NbcInstance& instance) {
  std::vector<MPI_Request> requests;
  const CollectiveCall call = instance.call_of(0);
  instance.failure_.guard(call.name, call.rank, [&] { requests = instance.start_requests(); });
  instance.statuses_.resize(requests.size());
  instance.requests_ = std::move(requests);
  if (std::ranges::all_of(instance.requests_,
                          [](MPI_Request r) { return r == MPI_REQUEST_NULL; })) {
    instance.mpi_done_.store(true, std::memory_order_release);
  }
  instance.started_.store(true, std::memory_order_release);
}

// ---- requests -------------------------------------------------------------

Request make_collective_request(const CollectiveCall& call, std::shared_ptr<CommState> comm,
                                std::shared_ptr<NbcInstance> instance) {
  // Kind kSend: a collective cannot be cancelled, and ep::cancel leaves sends alone.
  auto state = std::make_shared<RequestState>(RequestState::Kind::kSend, std::move(comm),
                                              call.thread, call.rank);
  state->call = call.name;
  // The closure lives in the state it points to: a raw pointer, no cycle.
  RequestState* raw = state.get();
  state->progress = [instance = std::move(instance), thread = call.thread, raw] {
    return instance->poll(thread, *raw);
  };
  return Request(std::move(state));
}

}  // namespace ep::detail
