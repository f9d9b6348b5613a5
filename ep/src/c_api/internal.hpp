// What the files of the C interface (ep/ep.h) share: the handles behind the
// opaque pointers and the checks every call makes. C++ only, not installed.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "ep/c_handle.hpp"
#include "ep/c_shim.hpp"
#include "ep/comm_management.hpp"
#include "ep/ep.h"
#include "ep/error.hpp"
#include "ep/request.hpp"

struct ep_request_s {
  ep::Request request;
};

struct ep_message_s {
  ep::Message message;
};

namespace ep::c_api {

// Runs `body`; an exception becomes its EP_ERR_* code and message.
template <typename Body>
int guarded(Body&& body) noexcept {
  return guarded("ep", std::forward<Body>(body));
}

inline void check_handle(ep_comm_t comm, const char* call) {
  if (comm == nullptr) {
    throw Error(ErrorKind::kArgument, call, -1, "null endpoint handle");
  }
}

// The intracommunicator behind `comm`; an intercommunicator handle is
// refused by name (the calls that take one dispatch with on_any instead).
inline const Communicator& checked(ep_comm_t comm, const char* call) {
  check_handle(comm, call);
  if (!comm->inter.is_null()) {
    throw Error(ErrorKind::kArgument, call, comm->inter.rank(),
                "an intercommunicator handle, where this call takes an intracommunicator");
  }
  return comm->comm;
}

// Calls `body` with the communicator or the intercommunicator behind `comm`
// (the point-to-point calls and the collectives that exist on both).
template <typename Body>
decltype(auto) on_any(ep_comm_t comm, const char* call, Body&& body) {
  check_handle(comm, call);
  if (!comm->inter.is_null()) {
    return body(comm->inter);
  }
  return body(comm->comm);
}

template <typename T>
void check_out(T* out, const char* call, int ep_rank) {
  if (out == nullptr) {
    throw Error(ErrorKind::kArgument, call, ep_rank, "null output pointer");
  }
}

// Hands a new request out through `request` (NULL on failure).
template <typename Start>
int start_request(ep_comm_t comm, ep_request_t* request, const char* call, Start&& start) {
  if (request != nullptr) {
    *request = nullptr;
  }
  return guarded([&] {
    check_handle(comm, call);
    const int rank = comm->inter.is_null() ? comm->comm.rank() : comm->inter.rank();
    check_out(request, call, rank);
    auto handle = std::make_unique<ep_request_s>();
    handle->request = on_any(comm, call, [&](const auto& c) { return start(c); });
    *request = handle.release();
  });
}

// A new handle for `comm`, NULL for a null communicator (MPI_COMM_NULL).
inline ep_comm_t wrap(Communicator comm) {
  if (comm.is_null()) {
    return nullptr;
  }
  return new ep_comm_s{std::move(comm), {}};
}

// Waits for one request and releases its handle, also when the wait fails;
// a persistent request's handle is kept (inactive, ready for ep_start),
// as MPI keeps it, until ep_request_free.
inline Status wait_and_release(ep_request_t* request) {
  if ((*request)->request.is_persistent()) return wait((*request)->request);
  const std::unique_ptr<ep_request_s> handle(*request);
  *request = nullptr;
  return wait(handle->request);
}

// Writes an endpoint status into an MPI_Status (MPI_STATUS_IGNORE: nothing):
// the EP source and tag, and the size in bytes, so that MPI_Get_count reads it.
inline void fill_status(MPI_Status* out, const Status& s) {
  if (out == MPI_STATUS_IGNORE) {
    return;
  }
  out->MPI_SOURCE = s.source;
  out->MPI_TAG = s.tag;
  out->MPI_ERROR = s.error;
  MPI_Status_set_cancelled(out, s.cancelled ? 1 : 0);
  MPI_Status_set_elements_x(out, MPI_BYTE, static_cast<MPI_Count>(s.bytes));
}

// `n` entries of a C array as a span (empty for a null pointer: the C++
// call then reports the missing entries itself).
template <typename T>
std::span<const T> entries(const T* p, int n) {
  if (p == nullptr || n <= 0) {
    return {};
  }
  return {p, static_cast<std::size_t>(n)};
}

}  // namespace ep::c_api
