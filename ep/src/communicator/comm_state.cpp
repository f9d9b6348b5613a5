// The communicator composes its state: the point-to-point part, the team and
// the nonblocking registry are made with it and released when the last local
// endpoint frees it; the trace recorder is told of both.
#include "comm_state.hpp"

#include <memory>
#include <string>
#include <vector>

#include "checks.hpp"
#include "collective/nonblocking_registry.hpp"
#include "communicator/creation.hpp"
#include "ep/error.hpp"
#include "p2p/p2p_state.hpp"
#include "team/local_team.hpp"
#include "trace/recorder.hpp"

namespace ep::detail {

CommState::CommState(MPI_Comm process_comm, MPI_Comm parent, RankMap map, int process_rank,
                     const CommSettings& settings)
    : parent_(parent),
      map_(std::move(map)),
      process_rank_(process_rank),
      local_size_(map_.endpoints_of(process_rank)),
      settings_(settings),
      // First: it checks the tag layout before any MPI communicator is made.
      p2p_(std::make_unique<P2pState>(process_comm, map_, process_rank, settings.tag_ub,
                                      settings.max_tag_channels, "ep::create_endpoints")),
      freed_(new std::atomic<bool>[static_cast<std::size_t>(local_size_)]),
      live_endpoints_(local_size_),
      team_(std::make_unique<LocalTeam>(local_size_)),
      nbc_registry_(std::make_shared<NbcRegistry>(local_size_, map_.num_processes())) {
  for (int t = 0; t < local_size_; ++t) freed_[t].store(false);
  p2p_comm_ = p2p_->p2p_comm();
  constexpr const char* kCall = "ep::create_endpoints";
  // Internal messages on a duplicate of their own: they never meet user
  // messages (P2pState's channels), whatever tags either uses.
  check_mpi(MPI_Comm_dup(process_comm, &internal_comm_), kCall, -1);
  check_mpi(MPI_Comm_set_errhandler(internal_comm_, MPI_ERRORS_RETURN), kCall, -1);
  if (!single_process()) team_->set_idle([p2p = p2p_.get()] { p2p->drain(-1); });
  trace_comm_created(local_size_);
}

CommState::~CommState() {
  // A communicator that was never freed keeps its MPI duplicates until
  // MPI_Finalize: MPI_Comm_free is collective and a destructor cannot know
  // whether the other processes call it at the same point.
}

void CommState::free_endpoint(int thread, int ep_rank) {
  constexpr const char* kCall = "ep::Communicator::free";
  if (freed_[thread].exchange(true)) {
    throw Error(ErrorKind::kFreedComm, kCall, ep_rank, "communicator already freed");
  }
  if (live_endpoints_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    p2p_->release(kCall, ep_rank);
    check_mpi(MPI_Comm_free(&internal_comm_), kCall, ep_rank);
    if (owns_parent_) check_mpi(MPI_Comm_free(&parent_), kCall, ep_rank);
    trace_comm_released();
  }
}

}  // namespace ep::detail
