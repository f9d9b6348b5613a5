// Endpoint communicator creation, the rank map accessors and the drainer.
#include "comm_state.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "collective/nonblocking_registry.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"

namespace ep {
namespace detail {

namespace {

// The tag layout for `map` under `tag_ub`, or a kTag error that says what
// this MPI allows. Every process computes the same answer from the same map.
TagLayout checked_tag_layout(const RankMap& map, long long tag_ub, const char* call) {
  int max_local = 1;
  for (int p = 0; p < map.num_processes(); ++p)
    max_local = std::max(max_local, map.endpoints_of(p));
  if (tag_bits(tag_ub) < kUserTagBits) {
    throw Error(ErrorKind::kTag, call, -1,
                "MPI_TAG_UB is " + std::to_string(tag_ub) + "; endpoints need at least " +
                    std::to_string(kMaxUserTag) + " (the MPI minimum) for user tags 0.." +
                    std::to_string(kMaxUserTag));
  }
  const TagLayout layout = make_tag_layout(tag_ub, max_local);
  if (layout.channels > kMaxTagChannels) {
    int allowed = 1;
    while (make_tag_layout(tag_ub, allowed * 2).channels <= kMaxTagChannels &&
           allowed * 2 <= kMaxEndpointsPerProcess) {
      allowed *= 2;
    }
    throw Error(ErrorKind::kTooManyEndpoints, call, -1,
                "a process has " + std::to_string(max_local) + " endpoints; with MPI_TAG_UB " +
                    std::to_string(tag_ub) + " the tag encoding addresses at most " +
                    std::to_string(allowed) + " per process (" + std::to_string(kMaxTagChannels) +
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
      tag_layout_(checked_tag_layout(map_, settings.tag_ub, "ep::create_endpoints")),
      mailboxes_(new Mailbox[static_cast<std::size_t>(local_size_)]),
      freed_(new std::atomic<bool>[static_cast<std::size_t>(local_size_)]),
      live_endpoints_(local_size_),
      team_(local_size_),
      nbc_registry_(std::make_shared<NbcRegistry>(local_size_)) {
  for (int t = 0; t < local_size_; ++t) freed_[t].store(false);
  constexpr const char* kCall = "ep::create_endpoints";
  // Private duplicates: user messages (one per channel of the tag layout)
  // and internal messages can never match each other, whatever tags they use.
  // Errors come back as codes that check_mpi turns into ep::Error.
  p2p_comms_.assign(static_cast<std::size_t>(tag_layout_.channels), MPI_COMM_NULL);
  for (MPI_Comm& channel : p2p_comms_) {
    check_mpi(MPI_Comm_dup(process_comm, &channel), kCall, -1);
    check_mpi(MPI_Comm_set_errhandler(channel, MPI_ERRORS_RETURN), kCall, -1);
  }
  check_mpi(MPI_Comm_dup(process_comm, &internal_comm_), kCall, -1);
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
    for (MPI_Comm& channel : p2p_comms_) {
      check_mpi(MPI_Comm_free(&channel), "ep::Communicator::free", ep_rank);
    }
    check_mpi(MPI_Comm_free(&internal_comm_), "ep::Communicator::free", ep_rank);
    if (owns_parent_) check_mpi(MPI_Comm_free(&parent_), "ep::Communicator::free", ep_rank);
  }
}

void CommState::drain(int ep_rank) {
  std::unique_lock lock(drain_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is draining and will route our messages
  // Channels are drained in turn until none has a message: order within a
  // channel is MPI's, and one sender-receiver pair never spans two channels.
  const int channels = tag_layout_.channels;
  for (int idle = 0, channel = 0; idle < channels; channel = (channel + 1) % channels) {
    int flag = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    check_mpi(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, p2p_comm(channel), &flag, &message, &status),
              "ep::drain (MPI_Improbe)", ep_rank);
    if (flag == 0) {
      ++idle;
      continue;
    }
    idle = 0;
    const WireTag wire = decode(tag_layout_, channel, status.MPI_TAG);
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
  if (const char* env = std::getenv("EP_EAGER_THRESHOLD")) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(env, &end, 10);
    if (end == env || *end != '\0') {
      throw Error(ErrorKind::kArgument, kCreateCall, -1,
                  std::string("EP_EAGER_THRESHOLD='") + env + "' is not a byte count");
    }
    return static_cast<std::size_t>(value);
  }
  return kDefaultEagerThreshold;
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

// MPI_TAG_UB as the wire encoding will see it: the library's bound, lowered
// by EndpointOptions::tag_ub or EP_TAG_UB (to run the narrow layouts on an MPI
// with a large bound), and the smallest over all processes of `parent`, so
// that every process picks the same layout.
long long resolve_tag_ub(const EndpointOptions& options, MPI_Comm parent) {
  // MPI caches MPI_TAG_UB on MPI_COMM_WORLD (MPI-4.0 section 9.1.1); other
  // communicators such as MPI_COMM_SELF need not carry it.
  void* value = nullptr;
  int flag = 0;
  check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag), kCreateCall, -1);
  long long tag_ub = flag != 0 ? *static_cast<int*>(value) : kMaxUserTag;
  std::optional<long long> requested = options.tag_ub;
  if (!requested) {
    if (const char* env = std::getenv("EP_TAG_UB")) {
      char* end = nullptr;
      const long long parsed = std::strtoll(env, &end, 10);
      if (end == env || *end != '\0' || parsed < 0) {
        throw Error(ErrorKind::kArgument, kCreateCall, -1,
                    std::string("EP_TAG_UB='") + env + "' is not a tag bound");
      }
      requested = parsed;
    }
  }
  if (requested) {
    if (*requested < kMaxUserTag) {
      throw Error(ErrorKind::kTag, kCreateCall, -1,
                  "tag bound override " + std::to_string(*requested) + " is below " +
                      std::to_string(kMaxUserTag) + ", the MPI minimum");
    }
    tag_ub = std::min(tag_ub, *requested);
  }
  long long agreed = tag_ub;
  check_mpi(MPI_Allreduce(&tag_ub, &agreed, 1, MPI_LONG_LONG, MPI_MIN, parent), kCreateCall, -1);
  return agreed;
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
  const detail::CommSettings settings{resolve_eager_threshold(options),
                                      resolve_tag_ub(options, parent)};

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

  auto state =
      std::make_shared<detail::CommState>(parent, parent, RankMap(counts), process_rank, settings);
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
  if (state_ == nullptr) {
    throw Error(ErrorKind::kFreedComm, call, -1, "null endpoint communicator");
  }
  if (state_->is_freed(thread_)) {
    throw Error(ErrorKind::kFreedComm, call, rank_, "use of a freed endpoint communicator");
  }
  return *state_;
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
