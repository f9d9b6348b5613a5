// The endpoint backend of the kernels' communicator interface (EpComm,
// ep_comm.hpp): each operation is the endpoint layer's call of the same name.
// The MPI backend is mpi_comm.cpp.
#include "collectives/ep_comm.hpp"

#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/topology.hpp"

namespace collectives {

template <>
EpComm::BasicComm(const ep::Communicator& comm) {
  if (comm.is_null()) return;
  comm_ = std::make_shared<ep::Communicator>(comm);
  rank_ = comm.rank();
  size_ = comm.size();
}

template <>
EpComm EpComm::adopt(ep::Communicator comm) {
  EpComm wrapped(comm);
  if (wrapped.is_null()) return wrapped;
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
  return wrapped;
}

template <>
bool EpComm::is_null() const noexcept {
  return comm_ == nullptr || comm_->is_null();
}

template <>
const ep::Communicator& EpComm::get() const noexcept {
  static const ep::Communicator kNullHandle{};
  return comm_ != nullptr ? *comm_ : kNullHandle;
}

template <>
void EpComm::wait_all(std::span<ep::Request> requests) const {
  ep::wait_all(requests);
}

template <>
void EpComm::post_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int tag,
                                 std::vector<ep::Request>& requests) const {
  for (SizedReceive& r : receives) {
    requests.push_back(comm_->irecv(r.buf, r.count, type, r.source, tag));
  }
}

template <>
void EpComm::finish_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int /*tag*/,
                                   std::vector<ep::Request>& requests,
                                   std::vector<std::byte>& /*spill*/) const {
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
  requests.clear();
  if (failure) std::rethrow_exception(failure);
}

template <>
EpComm EpComm::split(int color, int key) const {
  return adopt(ep::split(*comm_, color, key));
}

// ---- the kernels' duplicates (communicator.hpp, "The kernels' own messages") ----

namespace {

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

template <>
EpComm EpComm::find_kernel_comm() const {
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
  EpComm wrapped(dup);
  wrapped.private_ = true;
  return wrapped;
}

template <>
EpComm EpComm::dist_graph(std::span<const int> sources, std::span<const int> destinations) const {
  return adopt(ep::dist_graph_create_adjacent(*comm_, sources, destinations));
}

template <>
void EpComm::library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                               std::span<const int> sdispls, void* recvbuf,
                               std::span<const int> recvcounts, std::span<const int> rdispls,
                               MPI_Datatype type) const {
  ep::alltoallv(*comm_, sendbuf, sendcounts, sdispls, type, recvbuf, recvcounts, rdispls, type);
}

template <>
void EpComm::library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                               MPI_Op op) const {
  ep::allreduce(*comm_, sendbuf, recvbuf, count, type, op);
}

template <>
void EpComm::neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                std::span<const int> sdispls, void* recvbuf,
                                std::span<const int> recvcounts, std::span<const int> rdispls,
                                MPI_Datatype type) const {
  ep::neighbor_alltoallv(*comm_, sendbuf, sendcounts, sdispls, type, recvbuf, recvcounts, rdispls,
                         type);
}

template class BasicComm<EpBackend>;

}  // namespace collectives
