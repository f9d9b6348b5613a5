// The C interface (ep/ep.h) of the MPI calls past the first eleven:
// point-to-point with statuses, probes and matched messages, the wait/test
// family, every collective, communicator management and topologies. Each is
// a wrapper over the C++ call of the same name; guarded() turns what it
// throws into a code and the calling thread's message.
#include <mpi.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "c_api/internal.hpp"
#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/ep.h"
#include "ep/error.hpp"
#include "ep/request.hpp"
#include "ep/topology.hpp"

namespace {

using ep::c_api::check_handle;
using ep::c_api::check_out;
using ep::c_api::checked;
using ep::c_api::entries;
using ep::c_api::fill_status;
using ep::c_api::guarded;
using ep::c_api::on_any;
using ep::c_api::start_request;
using ep::c_api::wait_and_release;
using ep::c_api::wrap;

[[noreturn]] void bad_count(const char* call, int count) {
  throw ep::Error(ep::ErrorKind::kCount, call, -1,
                  "count " + std::to_string(count) + " is negative");
}

void check_requests(int count, const ep_request_t* requests, const char* call) {
  if (count < 0) bad_count(call, count);
  if (count > 0) check_out(requests, call, -1);
}

// The statuses array of a wait/test over `count` requests: entry i, or
// MPI_STATUS_IGNORE for MPI_STATUSES_IGNORE.
MPI_Status* status_at(MPI_Status* statuses, int i) {
  if (statuses == MPI_STATUSES_IGNORE) return MPI_STATUS_IGNORE;
  return statuses + i;
}

// Copies of the requests (cheap: they share the operation), for the C++
// any/all calls; release() frees the handles whose copy was completed.
struct RequestCopies {
  std::vector<ep::Request> requests;
  RequestCopies(int count, const ep_request_t* handles) {
    requests.resize(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      if (handles[i] != nullptr) requests[static_cast<std::size_t>(i)] = handles[i]->request;
    }
  }
  void release(int count, ep_request_t* handles) const {
    for (int i = 0; i < count; ++i) {
      if (handles[i] != nullptr && requests[static_cast<std::size_t>(i)].is_null()) {
        delete handles[i];
        handles[i] = nullptr;
      }
    }
  }
};

// Entries of a per-rank array of `comm` (its size), empty when absent.
template <typename T>
std::span<const T> per_rank(const ep::Communicator& c, const T* p) {
  return entries(p, c.size());
}

// The send and receive degrees of a topology communicator (0 without one:
// the C++ call then names the missing topology).
struct Degrees {
  int in = 0;
  int out = 0;
};
Degrees degrees(const ep::Communicator& c) {
  switch (ep::topo_test(c)) {
    case ep::TopologyKind::kCartesian: {
      const int n = 2 * ep::cartdim_get(c);
      return {n, n};
    }
    case ep::TopologyKind::kDistGraph: {
      const ep::NeighborCounts counts = ep::dist_graph_neighbors_count(c);
      return {counts.indegree, counts.outdegree};
    }
    case ep::TopologyKind::kNone:
      break;
  }
  return {};
}

int intra_request(ep_comm_t comm, ep_request_t* request, const char* call, const auto& start) {
  return start_request(comm, request, call, [&](const auto& c) -> ep::Request {
    if constexpr (std::is_same_v<std::decay_t<decltype(c)>, ep::Communicator>) {
      return start(c);
    } else {
      throw ep::Error(ep::ErrorKind::kArgument, call, c.rank(),
                      "an intercommunicator handle, where this call takes an intracommunicator");
    }
  });
}

// Runs `body` on the intracommunicator behind `comm`.
int intra(ep_comm_t comm, const char* call, const auto& body) {
  return guarded([&] { body(checked(comm, call)); });
}

std::span<const int> dims_span(const int* p, int ndims, const char* call, int rank) {
  if (ndims < 0) {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank,
                    "ndims " + std::to_string(ndims) + " is negative");
  }
  if (ndims > 0 && p == nullptr) {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank, "null array");
  }
  return entries(p, ndims);
}

}  // namespace

extern "C" {

// ---- point-to-point ----

int ep_send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm) {
  return guarded([&] {
    on_any(comm, "ep_send", [&](const auto& c) { c.send(buf, count, datatype, dest, tag); });
  });
}

int ep_ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm) {
  return guarded([&] {
    on_any(comm, "ep_ssend", [&](const auto& c) { c.ssend(buf, count, datatype, dest, tag); });
  });
}

int ep_issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm,
              ep_request_t* request) {
  return start_request(comm, request, "ep_issend",
                       [&](const auto& c) { return c.issend(buf, count, datatype, dest, tag); });
}

int ep_recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, ep_comm_t comm,
            MPI_Status* status) {
  return guarded([&] {
    on_any(comm, "ep_recv",
           [&](const auto& c) { fill_status(status, c.recv(buf, count, datatype, source, tag)); });
  });
}

int ep_sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                ep_comm_t comm, MPI_Status* status) {
  return guarded([&] {
    on_any(comm, "ep_sendrecv", [&](const auto& c) {
      fill_status(status, c.sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                     recvcount, recvtype, source, recvtag));
    });
  });
}

int ep_sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                        int source, int recvtag, ep_comm_t comm, MPI_Status* status) {
  return guarded([&] {
    on_any(comm, "ep_sendrecv_replace", [&](const auto& c) {
      fill_status(status, c.sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag));
    });
  });
}

int ep_probe(int source, int tag, ep_comm_t comm, MPI_Status* status) {
  return guarded([&] {
    on_any(comm, "ep_probe", [&](const auto& c) { fill_status(status, c.probe(source, tag)); });
  });
}

int ep_iprobe(int source, int tag, ep_comm_t comm, int* flag, MPI_Status* status) {
  return guarded([&] {
    on_any(comm, "ep_iprobe", [&](const auto& c) {
      check_out(flag, "ep_iprobe", c.rank());
      const std::optional<ep::Status> found = c.iprobe(source, tag);
      *flag = found ? 1 : 0;
      if (found) fill_status(status, *found);
    });
  });
}

int ep_mprobe(int source, int tag, ep_comm_t comm, ep_message_t* message, MPI_Status* status) {
  return guarded([&] {
    on_any(comm, "ep_mprobe", [&](const auto& c) {
      check_out(message, "ep_mprobe", c.rank());
      auto handle = std::make_unique<ep_message_s>();
      handle->message = c.mprobe(source, tag);
      fill_status(status, handle->message.status());
      *message = handle->message.is_null() ? nullptr : handle.release();
    });
  });
}

int ep_improbe(int source, int tag, ep_comm_t comm, int* flag, ep_message_t* message,
               MPI_Status* status) {
  return guarded([&] {
    on_any(comm, "ep_improbe", [&](const auto& c) {
      check_out(flag, "ep_improbe", c.rank());
      check_out(message, "ep_improbe", c.rank());
      std::optional<ep::Message> found = c.improbe(source, tag);
      *flag = found ? 1 : 0;
      if (!found) return;
      auto handle = std::make_unique<ep_message_s>();
      handle->message = std::move(*found);
      fill_status(status, handle->message.status());
      *message = handle->message.is_null() ? nullptr : handle.release();
    });
  });
}

int ep_mrecv(void* buf, int count, MPI_Datatype datatype, ep_message_t* message,
             MPI_Status* status) {
  return guarded([&] {
    check_out(message, "ep_mrecv", -1);
    if (*message == nullptr) {  // MPI_MESSAGE_NO_PROC
      fill_status(status, ep::Status{MPI_PROC_NULL, MPI_ANY_TAG});
      return;
    }
    const std::unique_ptr<ep_message_s> handle(*message);
    *message = nullptr;
    fill_status(status, ep::mrecv(buf, count, datatype, handle->message));
  });
}

int ep_imrecv(void* buf, int count, MPI_Datatype datatype, ep_message_t* message,
              ep_request_t* request) {
  if (request != nullptr) *request = nullptr;
  return guarded([&] {
    check_out(message, "ep_imrecv", -1);
    check_out(request, "ep_imrecv", -1);
    if (*message == nullptr) return;  // MPI_MESSAGE_NO_PROC: a null request
    auto started = std::make_unique<ep_request_s>();
    const std::unique_ptr<ep_message_s> handle(*message);
    *message = nullptr;
    started->request = ep::imrecv(buf, count, datatype, handle->message);
    *request = started.release();
  });
}

// ---- completion ----

int ep_wait_status(ep_request_t* request, MPI_Status* status) {
  return guarded([&] {
    check_out(request, "ep_wait_status", -1);
    if (*request == nullptr) {
      fill_status(status, ep::Status{});
      return;
    }
    fill_status(status, wait_and_release(request));
  });
}

int ep_waitall_status(int count, ep_request_t* requests, MPI_Status* statuses) {
  return guarded([&] {
    check_requests(count, requests, "ep_waitall_status");
    std::exception_ptr first;
    for (int i = 0; i < count; ++i) {
      try {
        const ep::Status s = requests[i] == nullptr ? ep::Status{} : wait_and_release(&requests[i]);
        fill_status(status_at(statuses, i), s);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  });
}

int ep_waitany(int count, ep_request_t* requests, int* index, MPI_Status* status) {
  return guarded([&] {
    check_requests(count, requests, "ep_waitany");
    check_out(index, "ep_waitany", -1);
    RequestCopies copies(count, requests);
    ep::Status s;
    *index = MPI_UNDEFINED;
    try {
      *index = ep::wait_any(copies.requests, &s);
    } catch (...) {
      copies.release(count, requests);
      throw;
    }
    copies.release(count, requests);
    fill_status(status, s);
  });
}

int ep_test_status(ep_request_t* request, int* flag, MPI_Status* status) {
  return guarded([&] {
    check_out(request, "ep_test_status", -1);
    check_out(flag, "ep_test_status", -1);
    if (*request == nullptr) {
      *flag = 1;
      fill_status(status, ep::Status{});
      return;
    }
    ep::Status s;
    bool done = false;
    // A persistent request's handle stays (inactive) until ep_request_free.
    const bool keep = (*request)->request.is_persistent();
    try {
      done = ep::test((*request)->request, &s);
    } catch (...) {
      if (!keep) {
        delete *request;  // a failed operation is complete: MPI frees its request
        *request = nullptr;
      }
      throw;
    }
    *flag = done ? 1 : 0;
    if (done) {
      if (!keep) {
        delete *request;
        *request = nullptr;
      }
      fill_status(status, s);
    }
  });
}

int ep_testany(int count, ep_request_t* requests, int* index, int* flag, MPI_Status* status) {
  return guarded([&] {
    check_requests(count, requests, "ep_testany");
    check_out(index, "ep_testany", -1);
    check_out(flag, "ep_testany", -1);
    RequestCopies copies(count, requests);
    ep::Status s;
    std::optional<int> done;
    try {
      done = ep::test_any(copies.requests, &s);
    } catch (...) {
      copies.release(count, requests);
      throw;
    }
    copies.release(count, requests);
    *flag = done ? 1 : 0;
    *index = done ? *done : MPI_UNDEFINED;
    if (done) fill_status(status, s);
  });
}

int ep_testall(int count, ep_request_t* requests, int* flag, MPI_Status* statuses) {
  return guarded([&] {
    check_requests(count, requests, "ep_testall");
    check_out(flag, "ep_testall", -1);
    RequestCopies copies(count, requests);
    std::vector<ep::Status> s(static_cast<std::size_t>(count));
    bool done = false;
    try {
      done = ep::test_all(copies.requests, s);
    } catch (...) {
      copies.release(count, requests);
      throw;
    }
    copies.release(count, requests);
    *flag = done ? 1 : 0;
    if (done) {
      for (int i = 0; i < count; ++i) fill_status(status_at(statuses, i), s[std::size_t(i)]);
    }
  });
}

namespace {

// MPI_Waitsome / MPI_Testsome: the C++ call gives the indices of the
// completed copies; their handles are freed and their statuses filled in
// index order, as MPI fills array_of_indices and array_of_statuses.
int some_completed(const char* call, int count, ep_request_t* requests, int* outcount, int* indices,
                   MPI_Status* statuses, bool wait) {
  return guarded([&] {
    check_requests(count, requests, call);
    check_out(outcount, call, -1);
    if (count > 0) check_out(indices, call, -1);
    RequestCopies copies(count, requests);
    const bool all_null = std::all_of(copies.requests.begin(), copies.requests.end(),
                                      [](const ep::Request& r) { return r.is_null(); });
    if (all_null) {
      *outcount = MPI_UNDEFINED;
      return;
    }
    std::vector<ep::Status> s;
    std::vector<int> done;
    try {
      done = wait ? ep::wait_some(copies.requests, &s) : ep::test_some(copies.requests, &s);
    } catch (...) {
      copies.release(count, requests);
      throw;
    }
    copies.release(count, requests);
    *outcount = static_cast<int>(done.size());
    for (std::size_t k = 0; k < done.size(); ++k) {
      indices[k] = done[k];
      fill_status(status_at(statuses, static_cast<int>(k)), s[k]);
    }
  });
}

}  // namespace

int ep_waitsome(int count, ep_request_t* requests, int* outcount, int* indices,
                MPI_Status* statuses) {
  return some_completed("ep_waitsome", count, requests, outcount, indices, statuses, true);
}

int ep_testsome(int count, ep_request_t* requests, int* outcount, int* indices,
                MPI_Status* statuses) {
  return some_completed("ep_testsome", count, requests, outcount, indices, statuses, false);
}

int ep_cancel(ep_request_t* request) {
  return guarded([&] {
    check_out(request, "ep_cancel", -1);
    if (*request == nullptr) {
      throw ep::Error(ep::ErrorKind::kRequest, "ep_cancel", -1,
                      "the request is null (MPI_REQUEST_NULL cannot be cancelled)");
    }
    ep::cancel((*request)->request);
  });
}

int ep_test_cancelled(const MPI_Status* status, int* flag) {
  return guarded([&] {
    check_out(status, "ep_test_cancelled", -1);
    check_out(flag, "ep_test_cancelled", -1);
    if (MPI_Test_cancelled(status, flag) != MPI_SUCCESS) {
      throw ep::Error(ep::ErrorKind::kMpi, "ep_test_cancelled", -1, "MPI_Test_cancelled failed");
    }
  });
}

int ep_get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return guarded([&] {
    check_out(status, "ep_get_count", -1);
    check_out(count, "ep_get_count", -1);
    if (MPI_Get_count(status, datatype, count) != MPI_SUCCESS) {
      throw ep::Error(ep::ErrorKind::kMpi, "ep_get_count", -1, "MPI_Get_count failed");
    }
  });
}

// ---- collectives ----

int ep_ibarrier(ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_ibarrier",
                       [&](const auto& c) { return ep::ibarrier(c); });
}

int ep_bcast(void* buffer, int count, MPI_Datatype datatype, int root, ep_comm_t comm) {
  return guarded([&] {
    on_any(comm, "ep_bcast", [&](const auto& c) { ep::bcast(c, buffer, count, datatype, root); });
  });
}

int ep_ibcast(void* buffer, int count, MPI_Datatype datatype, int root, ep_comm_t comm,
              ep_request_t* request) {
  return intra_request(comm, request, "ep_ibcast",
                       [&](const auto& c) { return ep::ibcast(c, buffer, count, datatype, root); });
}

int ep_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              int root, ep_comm_t comm) {
  return intra(comm, "ep_reduce",
               [&](const auto& c) { ep::reduce(c, sendbuf, recvbuf, count, datatype, op, root); });
}

int ep_ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_ireduce", [&](const auto& c) {
    return ep::ireduce(c, sendbuf, recvbuf, count, datatype, op, root);
  });
}

int ep_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 ep_comm_t comm) {
  return guarded([&] {
    on_any(comm, "ep_allreduce",
           [&](const auto& c) { ep::allreduce(c, sendbuf, recvbuf, count, datatype, op); });
  });
}

int ep_iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_iallreduce", [&](const auto& c) {
    return ep::iallreduce(c, sendbuf, recvbuf, count, datatype, op);
  });
}

int ep_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm) {
  return intra(comm, "ep_gather", [&](const auto& c) {
    ep::gather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int ep_igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm,
               ep_request_t* request) {
  return intra_request(comm, request, "ep_igather", [&](const auto& c) {
    return ep::igather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int ep_gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
               ep_comm_t comm) {
  return intra(comm, "ep_gatherv", [&](const auto& c) {
    ep::gatherv(c, sendbuf, sendcount, sendtype, recvbuf, per_rank(c, recvcounts),
                per_rank(c, displs), recvtype, root);
  });
}

int ep_igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
                ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_igatherv", [&](const auto& c) {
    return ep::igatherv(c, sendbuf, sendcount, sendtype, recvbuf, per_rank(c, recvcounts),
                        per_rank(c, displs), recvtype, root);
  });
}

int ep_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm) {
  return intra(comm, "ep_scatter", [&](const auto& c) {
    ep::scatter(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int ep_iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm,
                ep_request_t* request) {
  return intra_request(comm, request, "ep_iscatter", [&](const auto& c) {
    return ep::iscatter(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int ep_scatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, ep_comm_t comm) {
  return intra(comm, "ep_scatterv", [&](const auto& c) {
    ep::scatterv(c, sendbuf, per_rank(c, sendcounts), per_rank(c, displs), sendtype, recvbuf,
                 recvcount, recvtype, root);
  });
}

int ep_iscatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_iscatterv", [&](const auto& c) {
    return ep::iscatterv(c, sendbuf, per_rank(c, sendcounts), per_rank(c, displs), sendtype,
                         recvbuf, recvcount, recvtype, root);
  });
}

int ep_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, ep_comm_t comm) {
  return intra(comm, "ep_allgather", [&](const auto& c) {
    ep::allgather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_iallgather", [&](const auto& c) {
    return ep::iallgather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int* recvcounts, const int* displs, MPI_Datatype recvtype, ep_comm_t comm) {
  return intra(comm, "ep_allgatherv", [&](const auto& c) {
    ep::allgatherv(c, sendbuf, sendcount, sendtype, recvbuf, per_rank(c, recvcounts),
                   per_rank(c, displs), recvtype);
  });
}

int ep_iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int* recvcounts, const int* displs, MPI_Datatype recvtype, ep_comm_t comm,
                   ep_request_t* request) {
  return intra_request(comm, request, "ep_iallgatherv", [&](const auto& c) {
    return ep::iallgatherv(c, sendbuf, sendcount, sendtype, recvbuf, per_rank(c, recvcounts),
                           per_rank(c, displs), recvtype);
  });
}

int ep_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, ep_comm_t comm) {
  return intra(comm, "ep_alltoall", [&](const auto& c) {
    ep::alltoall(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_ialltoall", [&](const auto& c) {
    return ep::ialltoall(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                 MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                 MPI_Datatype recvtype, ep_comm_t comm) {
  return intra(comm, "ep_alltoallv", [&](const auto& c) {
    ep::alltoallv(c, sendbuf, per_rank(c, sendcounts), per_rank(c, sdispls), sendtype, recvbuf,
                  per_rank(c, recvcounts), per_rank(c, rdispls), recvtype);
  });
}

int ep_ialltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                  MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                  MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_ialltoallv", [&](const auto& c) {
    return ep::ialltoallv(c, sendbuf, per_rank(c, sendcounts), per_rank(c, sdispls), sendtype,
                          recvbuf, per_rank(c, recvcounts), per_rank(c, rdispls), recvtype);
  });
}

int ep_alltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
                 const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                 const int* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm) {
  return intra(comm, "ep_alltoallw", [&](const auto& c) {
    ep::alltoallw(c, sendbuf, per_rank(c, sendcounts), per_rank(c, sdispls), per_rank(c, sendtypes),
                  recvbuf, per_rank(c, recvcounts), per_rank(c, rdispls), per_rank(c, recvtypes));
  });
}

int ep_ialltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
                  const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                  const int* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm,
                  ep_request_t* request) {
  return intra_request(comm, request, "ep_ialltoallw", [&](const auto& c) {
    return ep::ialltoallw(c, sendbuf, per_rank(c, sendcounts), per_rank(c, sdispls),
                          per_rank(c, sendtypes), recvbuf, per_rank(c, recvcounts),
                          per_rank(c, rdispls), per_rank(c, recvtypes));
  });
}

int ep_reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                      MPI_Datatype datatype, MPI_Op op, ep_comm_t comm) {
  return intra(comm, "ep_reduce_scatter", [&](const auto& c) {
    ep::reduce_scatter(c, sendbuf, recvbuf, per_rank(c, recvcounts), datatype, op);
  });
}

int ep_ireduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                       MPI_Datatype datatype, MPI_Op op, ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_ireduce_scatter", [&](const auto& c) {
    return ep::ireduce_scatter(c, sendbuf, recvbuf, per_rank(c, recvcounts), datatype, op);
  });
}

int ep_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                            MPI_Datatype datatype, MPI_Op op, ep_comm_t comm) {
  return intra(comm, "ep_reduce_scatter_block", [&](const auto& c) {
    ep::reduce_scatter_block(c, sendbuf, recvbuf, recvcount, datatype, op);
  });
}

int ep_ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, ep_comm_t comm,
                             ep_request_t* request) {
  return intra_request(comm, request, "ep_ireduce_scatter_block", [&](const auto& c) {
    return ep::ireduce_scatter_block(c, sendbuf, recvbuf, recvcount, datatype, op);
  });
}

int ep_scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
            ep_comm_t comm) {
  return intra(comm, "ep_scan",
               [&](const auto& c) { ep::scan(c, sendbuf, recvbuf, count, datatype, op); });
}

int ep_iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_iscan", [&](const auto& c) {
    return ep::iscan(c, sendbuf, recvbuf, count, datatype, op);
  });
}

int ep_exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              ep_comm_t comm) {
  return intra(comm, "ep_exscan",
               [&](const auto& c) { ep::exscan(c, sendbuf, recvbuf, count, datatype, op); });
}

int ep_iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_iexscan", [&](const auto& c) {
    return ep::iexscan(c, sendbuf, recvbuf, count, datatype, op);
  });
}

// ---- communicators ----

int ep_comm_dup(ep_comm_t comm, ep_comm_t* newcomm) {
  if (newcomm != nullptr) *newcomm = nullptr;
  return intra(comm, "ep_comm_dup", [&](const auto& c) {
    check_out(newcomm, "ep_comm_dup", c.rank());
    *newcomm = wrap(ep::dup(c));
  });
}

int ep_comm_split(ep_comm_t comm, int color, int key, ep_comm_t* newcomm) {
  if (newcomm != nullptr) *newcomm = nullptr;
  return intra(comm, "ep_comm_split", [&](const auto& c) {
    check_out(newcomm, "ep_comm_split", c.rank());
    *newcomm = wrap(ep::split(c, color, key));
  });
}

int ep_comm_compare(ep_comm_t comm1, ep_comm_t comm2, int* result) {
  return guarded([&] {
    check_handle(comm1, "ep_comm_compare");
    check_handle(comm2, "ep_comm_compare");
    check_out(result, "ep_comm_compare", -1);
    const bool inter1 = !comm1->inter.is_null();
    const bool inter2 = !comm2->inter.is_null();
    if (inter1 != inter2) {
      *result = MPI_UNEQUAL;
    } else if (inter1) {
      *result = ep::compare(comm1->inter, comm2->inter);
    } else {
      *result = ep::compare(comm1->comm, comm2->comm);
    }
  });
}

int ep_comm_test_inter(ep_comm_t comm, int* flag) {
  return guarded([&] {
    check_handle(comm, "ep_comm_test_inter");
    check_out(flag, "ep_comm_test_inter", -1);
    *flag = comm->inter.is_null() ? 0 : 1;
  });
}

int ep_comm_remote_size(ep_comm_t comm, int* size) {
  return guarded([&] {
    check_handle(comm, "ep_comm_remote_size");
    check_out(size, "ep_comm_remote_size", -1);
    if (comm->inter.is_null()) {
      throw ep::Error(ep::ErrorKind::kArgument, "ep_comm_remote_size", comm->comm.rank(),
                      "an intracommunicator handle has no remote group");
    }
    *size = comm->inter.remote_size();
  });
}

int ep_intercomm_create(ep_comm_t local_comm, int local_leader, MPI_Comm peer_comm,
                        int remote_leader, int tag, ep_comm_t* newintercomm) {
  if (newintercomm != nullptr) *newintercomm = nullptr;
  return intra(local_comm, "ep_intercomm_create", [&](const auto& c) {
    check_out(newintercomm, "ep_intercomm_create", c.rank());
    auto handle = std::make_unique<ep_comm_s>();
    handle->inter = ep::create_intercomm(c, local_leader, peer_comm, remote_leader, tag);
    *newintercomm = handle.release();
  });
}

int ep_intercomm_merge(ep_comm_t intercomm, int high, ep_comm_t* newintracomm) {
  if (newintracomm != nullptr) *newintracomm = nullptr;
  return guarded([&] {
    check_handle(intercomm, "ep_intercomm_merge");
    if (intercomm->inter.is_null()) {
      throw ep::Error(ep::ErrorKind::kArgument, "ep_intercomm_merge", intercomm->comm.rank(),
                      "an intracommunicator handle, where this call takes an intercommunicator");
    }
    check_out(newintracomm, "ep_intercomm_merge", intercomm->inter.rank());
    *newintracomm = wrap(ep::merge(intercomm->inter, high != 0));
  });
}

// ---- topologies ----

int ep_dims_create(int nnodes, int ndims, int* dims) {
  return guarded([&] {
    (void)dims_span(dims, ndims, "ep_dims_create", -1);
    ep::dims_create(nnodes, std::span<int>(dims, static_cast<std::size_t>(ndims)));
  });
}

int ep_cart_create(ep_comm_t comm, int ndims, const int* dims, const int* periods, int reorder,
                   ep_comm_t* comm_cart) {
  if (comm_cart != nullptr) *comm_cart = nullptr;
  return intra(comm, "ep_cart_create", [&](const auto& c) {
    check_out(comm_cart, "ep_cart_create", c.rank());
    *comm_cart =
        wrap(ep::cart_create(c, dims_span(dims, ndims, "ep_cart_create", c.rank()),
                             dims_span(periods, ndims, "ep_cart_create", c.rank()), reorder != 0));
  });
}

int ep_cartdim_get(ep_comm_t comm, int* ndims) {
  return intra(comm, "ep_cartdim_get", [&](const auto& c) {
    check_out(ndims, "ep_cartdim_get", c.rank());
    *ndims = ep::cartdim_get(c);
  });
}

int ep_cart_get(ep_comm_t comm, int maxdims, int* dims, int* periods, int* coords) {
  return intra(comm, "ep_cart_get", [&](const auto& c) {
    const ep::CartInfo info = ep::cart_get(c);
    const int n = static_cast<int>(info.dims.size());
    if (maxdims < n) {
      throw ep::Error(ep::ErrorKind::kCount, "ep_cart_get", c.rank(),
                      "maxdims " + std::to_string(maxdims) + " is below the " + std::to_string(n) +
                          " dimensions");
    }
    if (n > 0) {
      check_out(dims, "ep_cart_get", c.rank());
      check_out(periods, "ep_cart_get", c.rank());
      check_out(coords, "ep_cart_get", c.rank());
    }
    std::copy(info.dims.begin(), info.dims.end(), dims);
    std::copy(info.periods.begin(), info.periods.end(), periods);
    std::copy(info.coords.begin(), info.coords.end(), coords);
  });
}

int ep_cart_coords(ep_comm_t comm, int rank, int maxdims, int* coords) {
  return intra(comm, "ep_cart_coords", [&](const auto& c) {
    const std::vector<int> found = ep::cart_coords(c, rank);
    if (maxdims < static_cast<int>(found.size())) {
      throw ep::Error(ep::ErrorKind::kCount, "ep_cart_coords", c.rank(),
                      "maxdims " + std::to_string(maxdims) + " is below the " +
                          std::to_string(found.size()) + " dimensions");
    }
    if (!found.empty()) check_out(coords, "ep_cart_coords", c.rank());
    std::copy(found.begin(), found.end(), coords);
  });
}

int ep_cart_rank(ep_comm_t comm, const int* coords, int* rank) {
  return intra(comm, "ep_cart_rank", [&](const auto& c) {
    check_out(rank, "ep_cart_rank", c.rank());
    *rank = ep::cart_rank(c, dims_span(coords, ep::cartdim_get(c), "ep_cart_rank", c.rank()));
  });
}

int ep_cart_shift(ep_comm_t comm, int direction, int disp, int* rank_source, int* rank_dest) {
  return intra(comm, "ep_cart_shift", [&](const auto& c) {
    check_out(rank_source, "ep_cart_shift", c.rank());
    check_out(rank_dest, "ep_cart_shift", c.rank());
    const ep::ShiftRanks r = ep::cart_shift(c, direction, disp);
    *rank_source = r.source;
    *rank_dest = r.dest;
  });
}

int ep_cart_sub(ep_comm_t comm, const int* remain_dims, ep_comm_t* newcomm) {
  if (newcomm != nullptr) *newcomm = nullptr;
  return intra(comm, "ep_cart_sub", [&](const auto& c) {
    check_out(newcomm, "ep_cart_sub", c.rank());
    *newcomm =
        wrap(ep::cart_sub(c, dims_span(remain_dims, ep::cartdim_get(c), "ep_cart_sub", c.rank())));
  });
}

int ep_topo_test(ep_comm_t comm, int* status) {
  return intra(comm, "ep_topo_test", [&](const auto& c) {
    check_out(status, "ep_topo_test", c.rank());
    switch (ep::topo_test(c)) {
      case ep::TopologyKind::kCartesian:
        *status = MPI_CART;
        break;
      case ep::TopologyKind::kDistGraph:
        *status = MPI_DIST_GRAPH;
        break;
      case ep::TopologyKind::kNone:
        *status = MPI_UNDEFINED;
        break;
    }
  });
}

int ep_dist_graph_create_adjacent(ep_comm_t comm, int indegree, const int* sources,
                                  const int* sourceweights, int outdegree, const int* destinations,
                                  const int* destweights, int reorder, ep_comm_t* comm_dist_graph) {
  if (comm_dist_graph != nullptr) *comm_dist_graph = nullptr;
  return intra(comm, "ep_dist_graph_create_adjacent", [&](const auto& c) {
    const char* call = "ep_dist_graph_create_adjacent";
    check_out(comm_dist_graph, call, c.rank());
    const std::span<const int> in = dims_span(sources, indegree, call, c.rank());
    const std::span<const int> out = dims_span(destinations, outdegree, call, c.rank());
    const bool unweighted = sourceweights == MPI_UNWEIGHTED && destweights == MPI_UNWEIGHTED;
    if (unweighted) {
      *comm_dist_graph = wrap(ep::dist_graph_create_adjacent(c, in, out, reorder != 0));
    } else {
      if (sourceweights == MPI_UNWEIGHTED || destweights == MPI_UNWEIGHTED) {
        throw ep::Error(ep::ErrorKind::kArgument, call, c.rank(),
                        "one side MPI_UNWEIGHTED and the other weighted");
      }
      *comm_dist_graph = wrap(ep::dist_graph_create_adjacent(
          c, in, dims_span(sourceweights, indegree, call, c.rank()), out,
          dims_span(destweights, outdegree, call, c.rank()), reorder != 0));
    }
  });
}

int ep_dist_graph_neighbors_count(ep_comm_t comm, int* indegree, int* outdegree, int* weighted) {
  return intra(comm, "ep_dist_graph_neighbors_count", [&](const auto& c) {
    check_out(indegree, "ep_dist_graph_neighbors_count", c.rank());
    check_out(outdegree, "ep_dist_graph_neighbors_count", c.rank());
    check_out(weighted, "ep_dist_graph_neighbors_count", c.rank());
    const ep::NeighborCounts n = ep::dist_graph_neighbors_count(c);
    *indegree = n.indegree;
    *outdegree = n.outdegree;
    *weighted = n.weighted ? 1 : 0;
  });
}

int ep_dist_graph_neighbors(ep_comm_t comm, int maxindegree, int* sources, int* sourceweights,
                            int maxoutdegree, int* destinations, int* destweights) {
  return intra(comm, "ep_dist_graph_neighbors", [&](const auto& c) {
    const char* call = "ep_dist_graph_neighbors";
    const ep::Neighbors n = ep::dist_graph_neighbors(c);
    if (maxindegree < static_cast<int>(n.sources.size()) ||
        maxoutdegree < static_cast<int>(n.destinations.size())) {
      throw ep::Error(ep::ErrorKind::kCount, call, c.rank(),
                      "room for " + std::to_string(maxindegree) + " sources and " +
                          std::to_string(maxoutdegree) + " destinations, the graph has " +
                          std::to_string(n.sources.size()) + " and " +
                          std::to_string(n.destinations.size()));
    }
    if (!n.sources.empty()) check_out(sources, call, c.rank());
    if (!n.destinations.empty()) check_out(destinations, call, c.rank());
    std::copy(n.sources.begin(), n.sources.end(), sources);
    std::copy(n.destinations.begin(), n.destinations.end(), destinations);
    if (sourceweights != nullptr && sourceweights != MPI_UNWEIGHTED) {
      std::copy(n.sourceweights.begin(), n.sourceweights.end(), sourceweights);
    }
    if (destweights != nullptr && destweights != MPI_UNWEIGHTED) {
      std::copy(n.destweights.begin(), n.destweights.end(), destweights);
    }
  });
}

int ep_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, ep_comm_t comm) {
  return intra(comm, "ep_neighbor_allgather", [&](const auto& c) {
    ep::neighbor_allgather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                           ep_request_t* request) {
  return intra_request(comm, request, "ep_ineighbor_allgather", [&](const auto& c) {
    return ep::ineighbor_allgather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                           ep_comm_t comm) {
  return intra(comm, "ep_neighbor_allgatherv", [&](const auto& c) {
    const Degrees d = degrees(c);
    ep::neighbor_allgatherv(c, sendbuf, sendcount, sendtype, recvbuf, entries(recvcounts, d.in),
                            entries(displs, d.in), recvtype);
  });
}

int ep_ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int* recvcounts, const int* displs,
                            MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request) {
  return intra_request(comm, request, "ep_ineighbor_allgatherv", [&](const auto& c) {
    const Degrees d = degrees(c);
    return ep::ineighbor_allgatherv(c, sendbuf, sendcount, sendtype, recvbuf,
                                    entries(recvcounts, d.in), entries(displs, d.in), recvtype);
  });
}

int ep_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, ep_comm_t comm) {
  return intra(comm, "ep_neighbor_alltoall", [&](const auto& c) {
    ep::neighbor_alltoall(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                          ep_request_t* request) {
  return intra_request(comm, request, "ep_ineighbor_alltoall", [&](const auto& c) {
    return ep::ineighbor_alltoall(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int ep_neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                          MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                          const int* rdispls, MPI_Datatype recvtype, ep_comm_t comm) {
  return intra(comm, "ep_neighbor_alltoallv", [&](const auto& c) {
    const Degrees d = degrees(c);
    ep::neighbor_alltoallv(c, sendbuf, entries(sendcounts, d.out), entries(sdispls, d.out),
                           sendtype, recvbuf, entries(recvcounts, d.in), entries(rdispls, d.in),
                           recvtype);
  });
}

int ep_ineighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                           MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                           const int* rdispls, MPI_Datatype recvtype, ep_comm_t comm,
                           ep_request_t* request) {
  return intra_request(comm, request, "ep_ineighbor_alltoallv", [&](const auto& c) {
    const Degrees d = degrees(c);
    return ep::ineighbor_alltoallv(c, sendbuf, entries(sendcounts, d.out), entries(sdispls, d.out),
                                   sendtype, recvbuf, entries(recvcounts, d.in),
                                   entries(rdispls, d.in), recvtype);
  });
}

int ep_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                               MPI_Info /*info*/, ep_request_t* request) {
  return intra_request(comm, request, "ep_neighbor_allgather_init", [&](const auto& c) {
    return ep::neighbor_allgather_init(c, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype);
  });
}

int ep_neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int* recvcounts, const int* displs,
                                MPI_Datatype recvtype, ep_comm_t comm, MPI_Info /*info*/,
                                ep_request_t* request) {
  return intra_request(comm, request, "ep_neighbor_allgatherv_init", [&](const auto& c) {
    const Degrees d = degrees(c);
    return ep::neighbor_allgatherv_init(c, sendbuf, sendcount, sendtype, recvbuf,
                                        entries(recvcounts, d.in), entries(displs, d.in), recvtype);
  });
}

int ep_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                              MPI_Info /*info*/, ep_request_t* request) {
  return intra_request(comm, request, "ep_neighbor_alltoall_init", [&](const auto& c) {
    return ep::neighbor_alltoall_init(c, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype);
  });
}

int ep_neighbor_alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                               MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                               const int* rdispls, MPI_Datatype recvtype, ep_comm_t comm,
                               MPI_Info /*info*/, ep_request_t* request) {
  return intra_request(comm, request, "ep_neighbor_alltoallv_init", [&](const auto& c) {
    const Degrees d = degrees(c);
    return ep::neighbor_alltoallv_init(c, sendbuf, entries(sendcounts, d.out),
                                       entries(sdispls, d.out), sendtype, recvbuf,
                                       entries(recvcounts, d.in), entries(rdispls, d.in), recvtype);
  });
}

int ep_neighbor_alltoallw_init(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                               const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                               const MPI_Aint* rdispls, const MPI_Datatype* recvtypes,
                               ep_comm_t comm, MPI_Info /*info*/, ep_request_t* request) {
  return intra_request(comm, request, "ep_neighbor_alltoallw_init", [&](const auto& c) {
    const Degrees d = degrees(c);
    return ep::neighbor_alltoallw_init(
        c, sendbuf, entries(sendcounts, d.out), entries(sdispls, d.out), entries(sendtypes, d.out),
        recvbuf, entries(recvcounts, d.in), entries(rdispls, d.in), entries(recvtypes, d.in));
  });
}

// ---- persistent requests ----

int ep_start(ep_request_t* request) {
  return guarded([&] {
    check_out(request, "ep_start", -1);
    if (*request == nullptr) {
      throw ep::Error(ep::ErrorKind::kRequest, "ep_start", -1,
                      "the request is NULL (MPI_REQUEST_NULL)");
    }
    ep::start((*request)->request);
  });
}

int ep_startall(int count, ep_request_t* requests) {
  return guarded([&] {
    check_requests(count, requests, "ep_startall");
    for (int i = 0; i < count; ++i) {
      if (requests[i] == nullptr) {
        throw ep::Error(ep::ErrorKind::kRequest, "ep_startall", -1,
                        "requests[" + std::to_string(i) + "] is NULL (MPI_REQUEST_NULL)");
      }
      ep::start(requests[i]->request);
    }
  });
}

int ep_request_free(ep_request_t* request) {
  return guarded([&] {
    check_out(request, "ep_request_free", -1);
    if (*request == nullptr) {
      throw ep::Error(ep::ErrorKind::kRequest, "ep_request_free", -1,
                      "the request is NULL (MPI_REQUEST_NULL)");
    }
    ep::request_free((*request)->request);  // throws for an active one: the handle stays
    delete *request;
    *request = nullptr;
  });
}

int ep_neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                          const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                          const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm) {
  return intra(comm, "ep_neighbor_alltoallw", [&](const auto& c) {
    const Degrees d = degrees(c);
    ep::neighbor_alltoallw(c, sendbuf, entries(sendcounts, d.out), entries(sdispls, d.out),
                           entries(sendtypes, d.out), recvbuf, entries(recvcounts, d.in),
                           entries(rdispls, d.in), entries(recvtypes, d.in));
  });
}

int ep_ineighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                           const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                           const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm,
                           ep_request_t* request) {
  return intra_request(comm, request, "ep_ineighbor_alltoallw", [&](const auto& c) {
    const Degrees d = degrees(c);
    return ep::ineighbor_alltoallw(c, sendbuf, entries(sendcounts, d.out), entries(sdispls, d.out),
                                   entries(sendtypes, d.out), recvbuf, entries(recvcounts, d.in),
                                   entries(rdispls, d.in), entries(recvtypes, d.in));
  });
}

}  // extern "C"
