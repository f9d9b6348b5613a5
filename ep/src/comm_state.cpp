// The process-wide state of one endpoint communicator: its MPI duplicates,
// mailboxes and team, and their release when the last local endpoint frees.
#include "comm_state.hpp"

#include <algorithm>
#include <string>

#include "collective/nonblocking_registry.hpp"
#include "ep/error.hpp"
#include "trace/recorder.hpp"

namespace ep::detail {

namespace {

// The tag layout for `map` under `tag_ub`, or an error that says what this
// MPI allows. Every process computes the same answer from the same map.
TagLayout checked_tag_layout(const RankMap& map, long long tag_ub, int max_channels,
                             const char* call) {
  int max_local = 1;
  for (int p = 0; p < map.num_processes(); ++p) {
    max_local = std::max(max_local, map.endpoints_of(p));
  }
  if (tag_bits(tag_ub) < kUserTagBits) {
    throw Error(ErrorKind::kTag, call, -1,
                "MPI_TAG_UB is " + std::to_string(tag_ub) + "; endpoints need at least " +
                    std::to_string(kMaxUserTag) + " (the MPI minimum) for user tags 0.." +
                    std::to_string(kMaxUserTag));
  }
  const TagLayout layout = make_tag_layout(tag_ub, max_local, max_channels);
  if (layout.channels > max_channels) {
    int allowed = 1;
    while (allowed * 2 <= kMaxEndpointsPerProcess &&
           make_tag_layout(tag_ub, allowed * 2, max_channels).channels <= max_channels) {
      allowed *= 2;
    }
    throw Error(ErrorKind::kTooManyEndpoints, call, -1,
                "a process has " + std::to_string(max_local) + " endpoints; with MPI_TAG_UB " +
                    std::to_string(tag_ub) + " the tag encoding addresses at most " +
                    std::to_string(allowed) + " per process (" + std::to_string(max_channels) +
                    " channel communicators)");
  }
  return layout;
}

}  // namespace

CommState::CommState(MPI_Comm process_comm, MPI_Comm parent, RankMap map, int process_rank,
                     const CommSettings& settings)
    : parent_(parent),
      map_(std::move(map)),
      process_rank_(process_rank),
      local_size_(map_.endpoints_of(process_rank)),
      settings_(settings),
      tag_layout_(checked_tag_layout(map_, settings.tag_ub, settings.max_tag_channels,
                                     "ep::create_endpoints")),
      mailboxes_(new Mailbox[static_cast<std::size_t>(local_size_)]),
      freed_(new std::atomic<bool>[static_cast<std::size_t>(local_size_)]),
      live_endpoints_(local_size_),
      team_(local_size_),
      nbc_registry_(std::make_shared<NbcRegistry>(local_size_, map_.num_processes())) {
  for (int t = 0; t < local_size_; ++t) {
    freed_[t].store(false);
    mailboxes_[t].init_rings(local_size_);
  }
  constexpr const char* kCall = "ep::create_endpoints";
  // Private duplicates: user messages (one per channel of the tag layout)
  // and internal messages can never match each other, whatever tags they use.
  // Errors come back as codes that check_mpi turns into ep::Error.
  p2p_comms_.assign(static_cast<std::size_t>(tag_layout_.channels), MPI_COMM_NULL);
  for (MPI_Comm& channel : p2p_comms_) {
    check_mpi(MPI_Comm_dup(process_comm, &channel), kCall, -1);
    check_mpi(MPI_Comm_set_errhandler(channel, MPI_ERRORS_RETURN), kCall, -1);
  }
  if (tag_layout_.source_in_header) {
    check_mpi(MPI_Comm_dup(process_comm, &bulk_comm_), kCall, -1);
    check_mpi(MPI_Comm_set_errhandler(bulk_comm_, MPI_ERRORS_RETURN), kCall, -1);
  }
  check_mpi(MPI_Comm_dup(process_comm, &internal_comm_), kCall, -1);
  check_mpi(MPI_Comm_set_errhandler(internal_comm_, MPI_ERRORS_RETURN), kCall, -1);
  if (!single_process()) team_.set_idle([this] { drain(-1); });
  trace_comm_created(*this);
}

CommState::~CommState() {
  // A communicator that was never freed keeps its MPI duplicates until
  // MPI_Finalize: MPI_Comm_free is collective and a destructor cannot know
  // whether the other processes call it at the same point.
}

void CommState::free_endpoint(int thread, int ep_rank) {
  if (freed_[thread].exchange(true)) {
    throw Error(ErrorKind::kFreedComm, "ep::Communicator::free", ep_rank,
                "communicator already freed");
  }
  if (live_endpoints_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Whatever is still queued belongs to an erroneous program (unreceived
    // messages, receives never completed); dropping it here also breaks the
    // request -> communicator -> mailbox -> request ownership cycle.
    for (int t = 0; t < local_size_; ++t) clear_mailbox(mailboxes_[t]);
    for (MPI_Comm& channel : p2p_comms_) {
      check_mpi(MPI_Comm_free(&channel), "ep::Communicator::free", ep_rank);
    }
    if (bulk_comm_ != MPI_COMM_NULL) {
      check_mpi(MPI_Comm_free(&bulk_comm_), "ep::Communicator::free", ep_rank);
    }
    check_mpi(MPI_Comm_free(&internal_comm_), "ep::Communicator::free", ep_rank);
    if (owns_parent_) check_mpi(MPI_Comm_free(&parent_), "ep::Communicator::free", ep_rank);
    trace_comm_released();
  }
}

}  // namespace ep::detail
