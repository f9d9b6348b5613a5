// The MPI backend of the kernels' communicator interface (MpiComm and
// FunneledComm, communicator.hpp): plain MPI calls and nothing of the
// endpoint runtime, so that a program using only these links common and MPI
// (library collectives_mpi). The endpoint backend is ep_comm.cpp.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.hpp"
#include "common/error.hpp"

namespace collectives {

namespace {

// A span of counts must hold one entry per rank (or per neighbour): shorter
// ones would make MPI read past the caller's array.
void check_entries(std::span<const int> values, int needed, const char* call, const char* what,
                   int rank) {
  if (static_cast<int>(values.size()) < needed) {
    throw common::Error(common::ErrorKind::kArgument, call, rank,
                        std::string(what) + " has " + std::to_string(values.size()) +
                            " entries, needs " + std::to_string(needed));
  }
}

int finalized() {
  int flag = 0;
  MPI_Finalized(&flag);
  return flag;
}

/// finish_sized_receives: probe sweeps that found nothing before a yield.
constexpr int kSweepsPerYield = 64;

}  // namespace

template <>
MpiComm::BasicComm(const MPI_Comm& comm) {
  if (comm == MPI_COMM_NULL) return;
  comm_ = std::make_shared<MPI_Comm>(comm);
  common::check_mpi(MPI_Comm_rank(comm, &rank_), "collectives::MpiComm (MPI_Comm_rank)", -1);
  common::check_mpi(MPI_Comm_size(comm, &size_), "collectives::MpiComm (MPI_Comm_size)", -1);
}

template <>
MpiComm MpiComm::adopt(MPI_Comm comm) {
  MpiComm wrapped(comm);
  if (wrapped.is_null()) return wrapped;
  // The last copy frees the communicator. MPI_Comm_free after MPI_Finalize
  // is erroneous, so a handle outliving MPI only leaks (nothing to free then).
  wrapped.comm_ = std::shared_ptr<MPI_Comm>(new MPI_Comm(comm), [](MPI_Comm* owned) {
    if (finalized() == 0) {
      const int rc = MPI_Comm_free(owned);
      if (rc != MPI_SUCCESS) std::fprintf(stderr, "collectives::MpiComm: MPI_Comm_free failed\n");
    }
    delete owned;
  });
  return wrapped;
}

template <>
bool MpiComm::is_null() const noexcept {
  return comm_ == nullptr;
}

template <>
const MPI_Comm& MpiComm::get() const noexcept {
  static const MPI_Comm kNullHandle = MPI_COMM_NULL;
  return comm_ != nullptr ? *comm_ : kNullHandle;
}

template <>
void MpiComm::wait_all(std::span<MPI_Request> requests) const {
  common::check_mpi(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
      "collectives::wait_all", rank_);
}

template <>
void MpiComm::post_sized_receives(std::span<SizedReceive> /*receives*/, MPI_Datatype /*type*/,
                                  int /*tag*/, std::vector<MPI_Request>& /*requests*/) const {
  // Nothing to post: finish_sized_receives matches each message by probe.
}

template <>
void MpiComm::finish_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int tag,
                                    std::vector<MPI_Request>& requests,
                                    std::vector<std::byte>& spill) const {
  constexpr const char* kCall = "collectives::finish_sized_receives";
  // Each message is matched first and received at the size it has.
  std::vector<bool> done(receives.size(), false);
  std::size_t left = receives.size();
  int idle_sweeps = 0;
  int type_size = 0;
  common::check_mpi(MPI_Type_size(type, &type_size), kCall, rank_);
  while (left > 0) {
    bool progress = false;
    for (std::size_t i = 0; i < receives.size(); ++i) {
      if (done[i]) continue;
      SizedReceive& r = receives[i];
      int found = 0;
      MPI_Message message = MPI_MESSAGE_NULL;
      MPI_Status status{};
      common::check_mpi(MPI_Improbe(r.source, tag, get(), &found, &message, &status), kCall, rank_);
      if (found == 0) continue;
      int count = 0;
      common::check_mpi(MPI_Get_count(&status, type, &count), kCall, rank_);
      void* into = r.buf;
      if (count > r.count) {
        spill.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(type_size));
        into = spill.data();
      }
      common::check_mpi(MPI_Mrecv(into, count, type, &message, MPI_STATUS_IGNORE), kCall, rank_);
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
  requests.clear();
}

template <>
MpiComm MpiComm::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  common::check_mpi(MPI_Comm_split(get(), color, key, &out), "collectives::split", rank_);
  return adopt(out);
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
    common::check_mpi(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, note_finalize, &self_key, nullptr),
        kKernelCommCall, -1);
    common::check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, self_key, nullptr), kKernelCommCall, -1);
    int key = MPI_KEYVAL_INVALID;
    common::check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_kernel_dup, &key, nullptr),
                      kKernelCommCall, -1);
    return key;
  }();
  return kKeyval;
}

}  // namespace

template <>
MpiComm MpiComm::find_kernel_comm() const {
  const int key = kernel_keyval();
  void* value = nullptr;
  int found = 0;
  common::check_mpi(MPI_Comm_get_attr(get(), key, &value, &found), kKernelCommCall, rank_);
  if (found == 0) {
    auto dup = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
    common::check_mpi(MPI_Comm_dup(get(), dup.get()), "collectives::kernel_comm (MPI_Comm_dup)",
                      rank_);
    const int rc = MPI_Comm_set_attr(get(), key, dup.get());
    if (rc != MPI_SUCCESS) MPI_Comm_free(dup.get());
    common::check_mpi(rc, "collectives::kernel_comm (MPI_Comm_set_attr)", rank_);
    value = dup.release();  // the attribute owns it now
  }
  MpiComm wrapped(*static_cast<MPI_Comm*>(value));
  wrapped.private_ = true;
  return wrapped;
}

template <>
MpiComm MpiComm::dist_graph(std::span<const int> sources, std::span<const int> destinations) const {
  MPI_Comm out = MPI_COMM_NULL;
  common::check_mpi(
      MPI_Dist_graph_create_adjacent(get(), static_cast<int>(sources.size()), sources.data(),
                                     MPI_UNWEIGHTED, static_cast<int>(destinations.size()),
                                     destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out),
      "collectives::dist_graph", rank_);
  return adopt(out);
}

template <>
void MpiComm::library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                std::span<const int> sdispls, void* recvbuf,
                                std::span<const int> recvcounts, std::span<const int> rdispls,
                                MPI_Datatype type) const {
  const char* call = "collectives::library_alltoallv";
  check_entries(sendcounts, size_, call, "sendcounts", rank_);
  check_entries(sdispls, size_, call, "sdispls", rank_);
  check_entries(recvcounts, size_, call, "recvcounts", rank_);
  check_entries(rdispls, size_, call, "rdispls", rank_);
  common::check_mpi(MPI_Alltoallv(sendbuf, sendcounts.data(), sdispls.data(), type, recvbuf,
                                  recvcounts.data(), rdispls.data(), type, get()),
                    call, rank_);
}

template <>
void MpiComm::library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                                MPI_Op op) const {
  common::check_mpi(MPI_Allreduce(sendbuf, recvbuf, count, type, op, get()),
                    "collectives::library_allreduce", rank_);
}

template <>
void MpiComm::neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                                 std::span<const int> sdispls, void* recvbuf,
                                 std::span<const int> recvcounts, std::span<const int> rdispls,
                                 MPI_Datatype type) const {
  common::check_mpi(MPI_Neighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), type,
                                           recvbuf, recvcounts.data(), rdispls.data(), type, get()),
                    "collectives::neighbor_alltoallv", rank_);
}

template class BasicComm<MpiBackend>;

// ---- FunneledComm ----

FunneledComm::FunneledComm(MPI_Comm comm, int threads) : MpiComm(comm), threads_(threads) {
  if (threads < 1) {
    throw common::Error(common::ErrorKind::kArgument, "collectives::FunneledComm", rank(),
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
