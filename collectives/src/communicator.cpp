// Backends of the kernels' communicator interface (see communicator.hpp).
#include "collectives/communicator.hpp"

#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/topology.hpp"

namespace collectives {

namespace {

// A span of counts must hold one entry per rank (or per neighbour): shorter
// ones would make MPI read past the caller's array.
void check_entries(std::span<const int> values, int needed, const char* call, const char* what,
                   int rank) {
  if (static_cast<int>(values.size()) < needed) {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank,
                    std::string(what) + " has " + std::to_string(values.size()) +
                        " entries, needs " + std::to_string(needed));
  }
}

int finalized() {
  int flag = 0;
  MPI_Finalized(&flag);
  return flag;
}

}  // namespace

// ---- MpiComm and EpComm: each operation's two library calls side by side ----

namespace {
template <class Backend>
constexpr bool kIsMpi = std::is_same_v<Backend, MpiBackend>;
}  // namespace

template <class Backend>
BasicComm<Backend>::BasicComm(const Handle& comm) {
  if constexpr (kIsMpi<Backend>) {
    if (comm == MPI_COMM_NULL) return;
    comm_ = std::make_shared<MPI_Comm>(comm);
    ep::check_mpi(MPI_Comm_rank(comm, &rank_), "collectives::MpiComm (MPI_Comm_rank)", -1);
    ep::check_mpi(MPI_Comm_size(comm, &size_), "collectives::MpiComm (MPI_Comm_size)", -1);
  } else {
    if (comm.is_null()) return;
    comm_ = std::make_shared<ep::Communicator>(comm);
    rank_ = comm.rank();
    size_ = comm.size();
  }
}

template <class Backend>
BasicComm<Backend> BasicComm<Backend>::adopt(Handle comm) {
  BasicComm wrapped(comm);
  if (wrapped.is_null()) return wrapped;
  if constexpr (kIsMpi<Backend>) {
    // The last copy frees the communicator. MPI_Comm_free after MPI_Finalize
    // is erroneous, so a handle outliving MPI only leaks (nothing to free then).
    wrapped.comm_ = std::shared_ptr<MPI_Comm>(new MPI_Comm(comm), [](MPI_Comm* owned) {
      if (finalized() == 0) {
        const int rc = MPI_Comm_free(owned);
        if (rc != MPI_SUCCESS) std::fprintf(stderr, "collectives::MpiComm: MPI_Comm_free failed\n");
      }
      delete owned;
    });
  } else {
    // The last copy frees this endpoint's handle (collective over the
    // endpoints, which every rank reaches by destroying its copies).
    wrapped.comm_ = std::shared_ptr<ep::Communicator>(
        new ep::Communicator(std::move(comm)), [](ep::Communicator* owned) {
          try {
            owned->free();
          } catch (const std::exception& e) {
            std::fprintf(stderr, "collectives::EpComm: free failed: %s\n", e.what());
          }
          delete owned;
        });
  }
  return wrapped;
}

template <class Backend>
bool BasicComm<Backend>::is_null() const noexcept {
  if constexpr (kIsMpi<Backend>) {
    return comm_ == nullptr;
  } else {
    return comm_ == nullptr || comm_->is_null();
  }
}

template <class Backend>
auto BasicComm<Backend>::get() const noexcept -> const Handle& {
  if (comm_ != nullptr) return *comm_;
  static const Handle kNullHandle = [] {
    if constexpr (kIsMpi<Backend>) {
      return MPI_COMM_NULL;
    } else {
      return ep::Communicator{};
    }
  }();
  return kNullHandle;
}

template <class Backend>
void BasicComm<Backend>::wait_all(std::span<Request> requests) const {
  if constexpr (kIsMpi<Backend>) {
    ep::check_mpi(
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "collectives::wait_all", rank_);
  } else {
    ep::wait_all(requests);
  }
}

template <class Backend>
void BasicComm<Backend>::post_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type,
                                             int tag, std::vector<Request>& requests) const {
  if constexpr (!kIsMpi<Backend>) {
    for (SizedReceive& r : receives) {
      requests.push_back(comm_->irecv(r.buf, r.count, type, r.source, tag));
    }
  }
}

namespace {
/// finish_sized_receives on MPI: probe sweeps that found nothing before a yield.
constexpr int kSweepsPerYield = 64;
}  // namespace

template <class Backend>
void BasicComm<Backend>::finish_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type,
                                               int tag, std::vector<Request>& requests,
                                               std::vector<std::byte>& spill) const {
  constexpr const char* kCall = "collectives::finish_sized_receives";
  if constexpr (kIsMpi<Backend>) {
    // Each message is matched first and received at the size it has.
    std::vector<bool> done(receives.size(), false);
    std::size_t left = receives.size();
    int idle_sweeps = 0;
    int type_size = 0;
    ep::check_mpi(MPI_Type_size(type, &type_size), kCall, rank_);
    while (left > 0) {
      bool progress = false;
      for (std::size_t i = 0; i < receives.size(); ++i) {
        if (done[i]) continue;
        SizedReceive& r = receives[i];
        int found = 0;
        MPI_Message message = MPI_MESSAGE_NULL;
        MPI_Status status{};
        ep::check_mpi(MPI_Improbe(r.source, tag, get(), &found, &message, &status), kCall, rank_);
        if (found == 0) continue;
        int count = 0;
        ep::check_mpi(MPI_Get_count(&status, type, &count), kCall, rank_);
        void* into = r.buf;
        if (count > r.count) {
          spill.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(type_size));
          into = spill.data();
        }
        ep::check_mpi(MPI_Mrecv(into, count, type, &message, MPI_STATUS_IGNORE), kCall, rank_);
        r.received = count;
        done[i] = true;
        --left;
        progress = true;
      }
      // Spin as MPI's own waits do; now and then let the senders run, for
      // ranks may outnumber cores (a yield at every sweep costs a time slice
      // on a loaded machine).
      if (progress) {
        idle_sweeps = 0;
      } else if (++idle_sweeps % kSweepsPerYield == 0) {
        std::this_thread::yield();
      }
    }
    wait_all(requests);
  } else {
    // Receives first in `requests`: each completes with its size, or fails
    // with kTruncate for a longer message (consumed); any other failure is
    // rethrown once every request is complete.
    std::exception_ptr failure;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      try {
        const ep::Status status = ep::wait(requests[i]);
        if (i < receives.size()) receives[i].received = status.count(type);
      } catch (const ep::Error& e) {
        if (i < receives.size() && e.kind() == ep::ErrorKind::kTruncate) {
          receives[i].received = SizedReceive::kLonger;
        } else if (!failure) {
          failure = std::current_exception();
        }
      }
    }
    if (failure) std::rethrow_exception(failure);
  }
  requests.clear();
}

template <class Backend>
BasicComm<Backend> BasicComm<Backend>::split(int color, int key) const {
  if constexpr (kIsMpi<Backend>) {
    MPI_Comm out = MPI_COMM_NULL;
    ep::check_mpi(MPI_Comm_split(get(), color, key, &out), "collectives::split", rank_);
    return adopt(out);
  } else {
    return adopt(ep::split(*comm_, color, key));
  }
}

template <class Backend>
BasicComm<Backend> BasicComm<Backend>::private_split(int color, int key) const {
  BasicComm out = split(color, key);
  out.private_ = true;
  return out;
}

// ---- the kernels' duplicates (communicator.hpp, "The kernels' own messages") ----

namespace {

constexpr const char* kKernelCommCall = "collectives::kernel_comm";

// Set by the delete callback of an attribute on MPI_COMM_SELF, which
// MPI_Finalize deletes before anything else while MPI is still whole (MPI-4.0,
// 11.2.4). Duplicates cached on MPI_COMM_WORLD, whose attributes an MPI may
// delete later in its shutdown, are then left to MPI_Finalize.
std::atomic<bool> g_finalizing{false};

int note_finalize(MPI_Comm /*comm*/, int /*keyval*/, void* /*value*/, void* /*extra*/) {
  g_finalizing.store(true);
  return MPI_SUCCESS;
}

// MPI_Comm_free of the user's communicator (or MPI_Comm_delete_attr) deletes
// the attribute: the duplicate goes with it.
int free_kernel_dup(MPI_Comm /*comm*/, int /*keyval*/, void* value, void* /*extra*/) {
  auto* dup = static_cast<MPI_Comm*>(value);
  const int rc = g_finalizing.load() ? MPI_SUCCESS : MPI_Comm_free(dup);
  delete dup;
  return rc;
}

// The keyval of the cached duplicates, created on first use. The duplicate is
// not copied by MPI_Comm_dup (MPI_COMM_NULL_COPY_FN): a copy of the user's
// communicator gets a duplicate of its own when a kernel first runs on it.
int kernel_keyval() {
  static const int kKeyval = [] {
    int self_key = MPI_KEYVAL_INVALID;
    ep::check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, note_finalize, &self_key, nullptr),
                  kKernelCommCall, -1);
    ep::check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, self_key, nullptr), kKernelCommCall, -1);
    int key = MPI_KEYVAL_INVALID;
    ep::check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_kernel_dup, &key, nullptr),
                  kKernelCommCall, -1);
    return key;
  }();
  return kKeyval;
}

/// The EP duplicates: for each endpoint communicator (its state), every local
/// endpoint's handle of one ep::dup. An entry whose communicator is gone (no
/// handle left) is stale: the address may be reused by a new communicator.
struct EpKernelComms {
  std::weak_ptr<ep::detail::CommState> owner;
  std::vector<ep::Communicator> endpoints;  // by local thread; null until it asked
};

struct EpKernelTable {
  std::mutex mutex;
  std::unordered_map<const ep::detail::CommState*, EpKernelComms> entries;
};

EpKernelTable& ep_kernel_table() {
  static EpKernelTable table;  // destroyed after MPI_Finalize: drops handles only
  return table;
}

}  // namespace

template <class Backend>
BasicComm<Backend> BasicComm<Backend>::find_kernel_comm() const {
  if constexpr (kIsMpi<Backend>) {
    const int key = kernel_keyval();
    void* value = nullptr;
    int found = 0;
    ep::check_mpi(MPI_Comm_get_attr(get(), key, &value, &found), kKernelCommCall, rank_);
    if (found == 0) {
      auto dup = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
      ep::check_mpi(MPI_Comm_dup(get(), dup.get()), "collectives::kernel_comm (MPI_Comm_dup)",
                    rank_);
      const int rc = MPI_Comm_set_attr(get(), key, dup.get());
      if (rc != MPI_SUCCESS) MPI_Comm_free(dup.get());
      ep::check_mpi(rc, "collectives::kernel_comm (MPI_Comm_set_attr)", rank_);
      value = dup.release();  // the attribute owns it now
    }
    BasicComm wrapped(*static_cast<MPI_Comm*>(value));
    wrapped.private_ = true;
    return wrapped;
  } else {
    const std::shared_ptr<ep::detail::CommState>& state = comm_->state();
    const auto thread = static_cast<std::size_t>(comm_->local_thread());
    EpKernelTable& table = ep_kernel_table();
    ep::Communicator dup;
    {
      const std::lock_guard lock(table.mutex);
      const auto it = table.entries.find(state.get());
      if (it != table.entries.end() && !it->second.owner.expired() &&
          thread < it->second.endpoints.size()) {
        dup = it->second.endpoints[thread];
      }
    }
    if (dup.is_null()) {
      // Collective over the endpoints; the table's mutex is not held, for the
      // process's other endpoints come here at the same time.
      dup = ep::dup(*comm_);
      const std::lock_guard lock(table.mutex);
      std::erase_if(table.entries, [](const auto& entry) { return entry.second.owner.expired(); });
      EpKernelComms& entry = table.entries[state.get()];
      if (entry.owner.expired()) entry = {state, {}};
      if (entry.endpoints.size() <= thread) entry.endpoints.resize(thread + 1);
      entry.endpoints[thread] = dup;
    }
    BasicComm wrapped(dup);
    wrapped.private_ = true;
    return wrapped;
  }
}

template <class Backend>
BasicComm<Backend> BasicComm<Backend>::dist_graph(std::span<const int> sources,
                                                  std::span<const int> destinations) const {
  if constexpr (kIsMpi<Backend>) {
    MPI_Comm out = MPI_COMM_NULL;
    ep::check_mpi(
        MPI_Dist_graph_create_adjacent(get(), static_cast<int>(sources.size()), sources.data(),
                                       MPI_UNWEIGHTED, static_cast<int>(destinations.size()),
                                       destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out),
        "collectives::dist_graph", rank_);
    return adopt(out);
  } else {
    return adopt(ep::dist_graph_create_adjacent(*comm_, sources, destinations));
  }
}

template <class Backend>
void BasicComm<Backend>::library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                           std::span<const int> sdispls, void* recvbuf,
                                           std::span<const int> recvcounts,
                                           std::span<const int> rdispls, MPI_Datatype type) const {
  if constexpr (kIsMpi<Backend>) {
    const char* call = "collectives::library_alltoallv";
    check_entries(sendcounts, size_, call, "sendcounts", rank_);
    check_entries(sdispls, size_, call, "sdispls", rank_);
    check_entries(recvcounts, size_, call, "recvcounts", rank_);
    check_entries(rdispls, size_, call, "rdispls", rank_);
    ep::check_mpi(MPI_Alltoallv(sendbuf, sendcounts.data(), sdispls.data(), type, recvbuf,
                                recvcounts.data(), rdispls.data(), type, get()),
                  call, rank_);
  } else {
    ep::alltoallv(*comm_, sendbuf, sendcounts, sdispls, type, recvbuf, recvcounts, rdispls, type);
  }
}

template <class Backend>
void BasicComm<Backend>::library_allreduce(const void* sendbuf, void* recvbuf, int count,
                                           MPI_Datatype type, MPI_Op op) const {
  if constexpr (kIsMpi<Backend>) {
    ep::check_mpi(MPI_Allreduce(sendbuf, recvbuf, count, type, op, get()),
                  "collectives::library_allreduce", rank_);
  } else {
    ep::allreduce(*comm_, sendbuf, recvbuf, count, type, op);
  }
}

template <class Backend>
void BasicComm<Backend>::neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                            std::span<const int> sdispls, void* recvbuf,
                                            std::span<const int> recvcounts,
                                            std::span<const int> rdispls, MPI_Datatype type) const {
  if constexpr (kIsMpi<Backend>) {
    ep::check_mpi(MPI_Neighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), type, recvbuf,
                                         recvcounts.data(), rdispls.data(), type, get()),
                  "collectives::neighbor_alltoallv", rank_);
  } else {
    ep::neighbor_alltoallv(*comm_, sendbuf, sendcounts, sdispls, type, recvbuf, recvcounts, rdispls,
                           type);
  }
}

template class BasicComm<MpiBackend>;
template class BasicComm<EpBackend>;

// ---- FunneledComm ----

FunneledComm::FunneledComm(MPI_Comm comm, int threads) : MpiComm(comm), threads_(threads) {
  if (threads < 1) {
    throw ep::Error(ep::ErrorKind::kArgument, "collectives::FunneledComm", rank(),
                    "thread count " + std::to_string(threads) + " is below 1");
  }
}

FunneledComm FunneledComm::split(int color, int key) const {
  return {MpiComm::split(color, key), threads_};
}

FunneledComm FunneledComm::private_split(int color, int key) const {
  return {MpiComm::private_split(color, key), threads_};
}

FunneledComm FunneledComm::dist_graph(std::span<const int> sources,
                                      std::span<const int> destinations) const {
  return {MpiComm::dist_graph(sources, destinations), threads_};
}

}  // namespace collectives
