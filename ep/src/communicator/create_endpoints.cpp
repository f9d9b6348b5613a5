// MPI_Comm_create_endpoints: the arguments agreed over the processes, then
// one shared communicator state per process and one handle per endpoint.
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "checks.hpp"
#include "comm_state.hpp"
#include "environment.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"
#include "p2p/protocol_tuning.hpp"

namespace ep {

namespace {

constexpr const char* kCreateCall = "ep::create_endpoints";

std::size_t resolve_eager_threshold(const EndpointOptions& options) {
  if (options.eager_threshold) return *options.eager_threshold;
  // Neither set: where eager and rendezvous cost the same (p2p/protocol_tuning.hpp).
  if (auto from_env = detail::eager_threshold_from_env(kCreateCall)) return *from_env;
  return detail::tuned_eager_threshold(kCreateCall);
}

std::size_t resolve_eager_cap(const EndpointOptions& options) {
  if (options.eager_cap) return *options.eager_cap;
  return detail::eager_cap_from_env(kCreateCall).value_or(kDefaultEagerCap);
}

// Direct receives are on by default only where MPI reports a failed receive
// (a truncation) through the communicator's error handler when MPI_Test
// completes it, as Open MPI does. MPICH 4.0 raises it on MPI_COMM_WORLD,
// whose default handler aborts the job, so there a too short buffer would
// end the run instead of throwing ep::Error.
#if defined(OPEN_MPI)
constexpr bool kDirectReceiveByDefault = true;
#else
constexpr bool kDirectReceiveByDefault = false;
#endif

bool resolve_direct_receive(const EndpointOptions& options) {
  if (options.direct_receive) return *options.direct_receive;
  return detail::direct_receive_from_env(kCreateCall).value_or(kDirectReceiveByDefault);
}

// The wait mode this creation sets for the process (EndpointOptions::
// wait_policy). kAuto counts the endpoints this communicator places on this
// node (every process of `parent` there) against the node's online CPUs: on
// cores of their own they spin, on shared cores they park. Collective over
// `parent` (a node split and a sum), even when the policy is explicit, so
// that every process takes part in the same calls.
WaitPolicy resolve_wait_policy(const EndpointOptions& options, MPI_Comm parent, int n_local) {
  const WaitPolicy asked =
      options.wait_policy ? *options.wait_policy
                          : detail::wait_policy_from_env(kCreateCall).value_or(WaitPolicy::kAuto);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), kCreateCall,
            -1);
  int on_node = 0;
  const int mpi_rc = MPI_Allreduce(&n_local, &on_node, 1, MPI_INT, MPI_SUM, node);
  MPI_Comm_free(&node);
  check_mpi(mpi_rc, kCreateCall, -1);
  if (asked != WaitPolicy::kAuto) return asked;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return on_node <= cpus ? WaitPolicy::kSpin : WaitPolicy::kPark;
}

// Several endpoints of a process are called by several threads at once:
// MPI_THREAD_MULTIPLE. A process with one endpoint (a model that calls MPI
// from one thread, as XIOS's programs do after a plain MPI_Init) needs no
// more than the level its program asked for: the endpoint layer starts no
// thread of its own, so its MPI calls come from the caller's thread.
void require_thread_level(int n_local) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), kCreateCall, -1);
  if (initialized == 0) {
    throw Error(ErrorKind::kThreadLevel, kCreateCall, -1, "MPI is not initialised");
  }
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&provided), kCreateCall, -1);
  if (provided < MPI_THREAD_MULTIPLE && n_local > 1) {
    throw Error(ErrorKind::kThreadLevel, kCreateCall, -1,
                "MPI thread level is " + std::to_string(provided) +
                    "; endpoints need MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) +
                    ") from MPI_Init_thread for " + std::to_string(n_local) +
                    " endpoints in one process");
  }
}

// MPI_TAG_UB as the wire encoding will see it: the library's bound, lowered
// by EndpointOptions::tag_ub or EP_TAG_UB (to run the narrow layouts of other
// MPIs on this one), and the smallest over the processes of `parent`, so that
// every process picks the same layout (tag_encoding.hpp).
long long resolve_tag_ub(const EndpointOptions& options, MPI_Comm parent) {
  long long tag_ub = detail::mpi_tag_upper_bound(kCreateCall, -1);
  const std::optional<long long> requested =
      options.tag_ub ? options.tag_ub : detail::tag_ub_from_env(kCreateCall);
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

// The channel budget of the narrow tag layouts, the smallest over the
// processes of `parent` (every process must pick the same layout).
int resolve_max_tag_channels(const EndpointOptions& options, MPI_Comm parent) {
  const int asked = options.max_tag_channels
                        ? *options.max_tag_channels
                        : detail::tag_channels_from_env(kCreateCall).value_or(kMaxTagChannels);
  if (asked < 1 || asked > kMaxTagChannels) {
    throw Error(ErrorKind::kArgument, kCreateCall, -1,
                "EndpointOptions::max_tag_channels is " + std::to_string(asked) +
                    "; it must be 1.." + std::to_string(kMaxTagChannels));
  }
  int agreed = asked;
  check_mpi(MPI_Allreduce(&asked, &agreed, 1, MPI_INT, MPI_MIN, parent), kCreateCall, -1);
  return agreed;
}

}  // namespace

std::vector<Communicator> create_endpoints(MPI_Comm parent, int n_local,
                                           const EndpointOptions& options) {
  require_thread_level(n_local);
  if (parent == MPI_COMM_NULL) {
    throw Error(ErrorKind::kArgument, kCreateCall, -1, "parent communicator is MPI_COMM_NULL");
  }
  int process_rank = 0;
  int processes = 0;
  check_mpi(MPI_Comm_rank(parent, &process_rank), kCreateCall, -1);
  check_mpi(MPI_Comm_size(parent, &processes), kCreateCall, -1);
  const detail::CommSettings settings{resolve_eager_threshold(options),
                                      resolve_tag_ub(options, parent),
                                      resolve_max_tag_channels(options, parent),
                                      resolve_eager_cap(options), resolve_direct_receive(options)};
  // Read now so that a bad value fails here, not in the middle of a wait.
  detail::wait_warn_seconds(kCreateCall);
  const WaitPolicy wait_mode = resolve_wait_policy(options, parent, n_local);

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
  detail::set_wait_mode(wait_mode);
  std::vector<Communicator> handles;
  handles.reserve(static_cast<std::size_t>(n_local));
  for (int t = 0; t < n_local; ++t) handles.emplace_back(state, t);
  return handles;
}

}  // namespace ep
