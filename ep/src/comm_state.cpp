// Endpoint communicator creation, the rank map accessors and the drainer.
#include "comm_state.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "checks.hpp"
#include "collective/nonblocking_registry.hpp"
#include "environment.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"

namespace ep {
namespace detail {

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

void CommState::drain(int ep_rank) {
  std::unique_lock lock(drain_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is draining and will route our messages
  while (true) {
    int flag = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    check_mpi(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, p2p_comm_, &flag, &message, &status),
              "ep::drain (MPI_Improbe)", ep_rank);
    if (flag == 0) return;
    const WireTag wire = decode_tag(status.MPI_TAG);
    int bytes = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "ep::drain (MPI_Get_count)", ep_rank);
    if (wire.dest_thread >= local_size_ ||
        wire.source_thread >= map_.endpoints_of(status.MPI_SOURCE)) {
      throw Error(ErrorKind::kTag, "ep::drain", ep_rank,
                  "wire tag " + std::to_string(status.MPI_TAG) + " from process " +
                      std::to_string(status.MPI_SOURCE) + " names no endpoint");
    }
    auto envelope = std::make_shared<Envelope>();
    envelope->kind = Envelope::Kind::kRemote;
    envelope->source = map_.ep_rank(status.MPI_SOURCE, wire.source_thread);
    envelope->tag = wire.user_tag;
    envelope->bytes = static_cast<std::size_t>(bytes);
    envelope->mpi_message = message;
    deliver(mailboxes_[wire.dest_thread], std::move(envelope));
  }
}

}  // namespace detail

namespace {

constexpr const char* kCreateCall = "ep::create_endpoints";

std::size_t resolve_eager_threshold(const EndpointOptions& options) {
  if (options.eager_threshold) return *options.eager_threshold;
  return detail::eager_threshold_from_env(kCreateCall).value_or(kDefaultEagerThreshold);
}

void require_thread_multiple() {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), kCreateCall, -1);
  if (initialized == 0) {
    throw Error(ErrorKind::kThreadLevel, kCreateCall, -1, "MPI is not initialised");
  }
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&provided), kCreateCall, -1);
  if (provided < MPI_THREAD_MULTIPLE) {
    throw Error(ErrorKind::kThreadLevel, kCreateCall, -1,
                "MPI thread level is " + std::to_string(provided) +
                    "; endpoints need MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) +
                    ") from MPI_Init_thread");
  }
}

void require_tag_room() {
  const long long tag_ub = detail::mpi_tag_upper_bound(kCreateCall, -1);
  if (tag_ub < kRequiredTagUb) {
    throw Error(ErrorKind::kTag, kCreateCall, -1,
                "MPI_TAG_UB is " + std::to_string(tag_ub) + "; the endpoint tag encoding (" +
                    std::to_string(kUserTagBits) + " user bits + 2 x " +
                    std::to_string(kThreadBits) + " thread bits) needs " +
                    std::to_string(kRequiredTagUb));
  }
}

}  // namespace

std::vector<Communicator> create_endpoints(MPI_Comm parent, int n_local,
                                           const EndpointOptions& options) {
  require_thread_multiple();
  if (parent == MPI_COMM_NULL) {
    throw Error(ErrorKind::kArgument, kCreateCall, -1, "parent communicator is MPI_COMM_NULL");
  }
  int process_rank = 0;
  int processes = 0;
  check_mpi(MPI_Comm_rank(parent, &process_rank), kCreateCall, -1);
  check_mpi(MPI_Comm_size(parent, &processes), kCreateCall, -1);
  require_tag_room();
  const std::size_t eager_threshold = resolve_eager_threshold(options);
  // Read now so that a bad value fails here, not in the middle of a wait.
  detail::wait_warn_seconds(kCreateCall);

  // Every process learns every count first, so a bad count anywhere makes
  // every process throw the same error instead of leaving the others hanging.
  std::vector<int> counts(static_cast<std::size_t>(processes));
  check_mpi(MPI_Allgather(&n_local, 1, MPI_INT, counts.data(), 1, MPI_INT, parent), kCreateCall,
            -1);
  for (int p = 0; p < processes; ++p) {
    const int n = counts[static_cast<std::size_t>(p)];
    if (n > kMaxEndpointsPerProcess) {
      throw Error(ErrorKind::kTooManyEndpoints, kCreateCall, -1,
                  "process " + std::to_string(p) + " asks for " + std::to_string(n) +
                      " endpoints; at most " + std::to_string(kMaxEndpointsPerProcess) +
                      " per process fit the tag encoding");
    }
    if (n < 1) {
      throw Error(ErrorKind::kArgument, kCreateCall, -1,
                  "process " + std::to_string(p) + " asks for " + std::to_string(n) +
                      " endpoints; at least 1 is needed");
    }
  }

  auto state = std::make_shared<detail::CommState>(parent, parent, RankMap(counts), process_rank,
                                                   eager_threshold);
  std::vector<Communicator> handles;
  handles.reserve(static_cast<std::size_t>(n_local));
  for (int t = 0; t < n_local; ++t) handles.emplace_back(state, t);
  return handles;
}

Communicator::Communicator(std::shared_ptr<detail::CommState> state, int local_thread)
    : state_(std::move(state)),
      thread_(local_thread),
      rank_(state_->rank_map().ep_rank(state_->process_rank(), local_thread)) {}

detail::CommState& Communicator::checked_state(const char* call) const {
  return detail::usable_state(*this, call);
}

const Communicator& Communicator::p2p_route(const char* call, PeerRole /*role*/, int /*peer*/,
                                            int /*tag*/, int /*count*/) const {
  checked_state(call);
  return *this;
}

int Communicator::size() const { return checked_state("ep::Communicator::size").rank_map().size(); }

std::size_t Communicator::eager_threshold() const {
  return checked_state("ep::Communicator::eager_threshold").eager_threshold();
}

int Communicator::local_size() const {
  return checked_state("ep::Communicator::local_size").local_size();
}

int Communicator::process_rank() const {
  return checked_state("ep::Communicator::process_rank").process_rank();
}

const RankMap& Communicator::rank_map() const {
  return checked_state("ep::Communicator::rank_map").rank_map();
}

MPI_Comm Communicator::parent() const { return checked_state("ep::Communicator::parent").parent(); }

void Communicator::free() { checked_state("ep::Communicator::free").free_endpoint(thread_, rank_); }

}  // namespace ep
