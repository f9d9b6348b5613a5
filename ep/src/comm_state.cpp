// The process-wide state of one endpoint communicator: its MPI duplicates,
// mailboxes and team, and their release when the last local endpoint frees.
#include "comm_state.hpp"

#include "collective/nonblocking_registry.hpp"
#include "ep/error.hpp"

namespace ep::detail {

CommState::CommState(MPI_Comm process_comm, MPI_Comm parent, RankMap map, int process_rank,
                     std::size_t eager_threshold)
    : parent_(parent),
      map_(std::move(map)),
      process_rank_(process_rank),
      local_size_(map_.endpoints_of(process_rank)),
      eager_threshold_(eager_threshold),
      mailboxes_(new Mailbox[static_cast<std::size_t>(local_size_)]),
      freed_(new std::atomic<bool>[static_cast<std::size_t>(local_size_)]),
      live_endpoints_(local_size_),
      team_(local_size_),
      nbc_registry_(std::make_shared<NbcRegistry>(local_size_)) {
  for (int t = 0; t < local_size_; ++t) freed_[t].store(false);
  constexpr const char* kCall = "ep::create_endpoints";
  // Two private duplicates: user messages and internal messages can never
  // match each other, whatever tags they use.
  check_mpi(MPI_Comm_dup(process_comm, &p2p_comm_), kCall, -1);
  check_mpi(MPI_Comm_dup(process_comm, &internal_comm_), kCall, -1);
  // Errors come back as codes that check_mpi turns into ep::Error.
  check_mpi(MPI_Comm_set_errhandler(p2p_comm_, MPI_ERRORS_RETURN), kCall, -1);
  check_mpi(MPI_Comm_set_errhandler(internal_comm_, MPI_ERRORS_RETURN), kCall, -1);
  if (!single_process()) team_.set_idle([this] { drain(-1); });
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
    for (int t = 0; t < local_size_; ++t) {
      std::lock_guard lock(mailboxes_[t].mutex);
      mailboxes_[t].posted.clear();
      mailboxes_[t].unexpected.clear();
    }
    check_mpi(MPI_Comm_free(&p2p_comm_), "ep::Communicator::free", ep_rank);
    check_mpi(MPI_Comm_free(&internal_comm_), "ep::Communicator::free", ep_rank);
    if (owns_parent_) check_mpi(MPI_Comm_free(&parent_), "ep::Communicator::free", ep_rank);
  }
}

}  // namespace ep::detail
