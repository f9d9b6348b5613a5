// The C interface (ep/ep.h): thin wrappers that turn every exception into a
// return code and a thread-local message (ep/c_shim.hpp).
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "c_api/internal.hpp"
#include "ep/c_handle.hpp"
#include "ep/c_shim.hpp"
#include "ep/collectives.hpp"
#include "ep/ep.h"
#include "ep/error.hpp"
#include "ep/request.hpp"

namespace {
using ep::c_api::check_out;
using ep::c_api::checked;
using ep::c_api::guarded;
using ep::c_api::start_request;
using ep::c_api::wait_and_release;
}  // namespace

extern "C" {

int ep_create_endpoints(MPI_Comm parent, int n_local, ep_comm_t* comms) {
  return guarded([&] {
    check_out(comms, "ep_create_endpoints", -1);
    std::vector<ep::Communicator> created = ep::create_endpoints(parent, n_local);
    std::vector<ep_comm_t> handles;
    handles.reserve(created.size());
    try {
      for (ep::Communicator& c : created) {
        handles.push_back(new ep_comm_s{std::move(c), {}});
      }
    } catch (...) {
      for (ep_comm_t h : handles) {
        delete h;
      }
      throw;
    }
    for (std::size_t i = 0; i < handles.size(); ++i) {
      comms[i] = handles[i];
    }
  });
}

int ep_create_endpoints_f(MPI_Fint parent, int n_local, ep_comm_t* comms) {
  return ep_create_endpoints(MPI_Comm_f2c(parent), n_local, comms);
}

int ep_comm_rank(ep_comm_t comm, int* rank) {
  return guarded([&] {
    ep::c_api::on_any(comm, "ep_comm_rank", [&](const auto& c) {
      check_out(rank, "ep_comm_rank", c.rank());
      *rank = c.rank();
    });
  });
}

int ep_comm_size(ep_comm_t comm, int* size) {
  return guarded([&] {
    ep::c_api::on_any(comm, "ep_comm_size", [&](const auto& c) {
      check_out(size, "ep_comm_size", c.rank());
      *size = c.size();
    });
  });
}

int ep_comm_local_thread(ep_comm_t comm, int* local_thread) {
  return guarded([&] {
    const ep::Communicator& c = checked(comm, "ep_comm_local_thread");
    check_out(local_thread, "ep_comm_local_thread", c.rank());
    *local_thread = c.local_thread();
  });
}

int ep_comm_free(ep_comm_t* comm) {
  return guarded([&] {
    check_out(comm, "ep_comm_free", -1);
    ep_comm_t handle = *comm;
    if (handle == nullptr) {
      throw ep::Error(ep::ErrorKind::kArgument, "ep_comm_free", -1, "null endpoint handle");
    }
    *comm = nullptr;
    struct Release {
      ep_comm_t h;
      ~Release() { delete h; }
    } release{handle};
    if (!handle->inter.is_null()) {
      handle->inter.free();
    } else {
      handle->comm.free();
    }
  });
}

int ep_isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm,
             ep_request_t* request) {
  return start_request(comm, request, "ep_isend",
                       [&](const auto& c) { return c.isend(buf, count, datatype, dest, tag); });
}

int ep_irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, ep_comm_t comm,
             ep_request_t* request) {
  return start_request(comm, request, "ep_irecv",
                       [&](const auto& c) { return c.irecv(buf, count, datatype, source, tag); });
}

int ep_isend_f(const void* buf, int count, MPI_Fint datatype, int dest, int tag, ep_comm_t comm,
               ep_request_t* request) {
  return ep_isend(buf, count, MPI_Type_f2c(datatype), dest, tag, comm, request);
}

int ep_irecv_f(void* buf, int count, MPI_Fint datatype, int source, int tag, ep_comm_t comm,
               ep_request_t* request) {
  return ep_irecv(buf, count, MPI_Type_f2c(datatype), source, tag, comm, request);
}

int ep_wait(ep_request_t* request) {
  return guarded([&] {
    check_out(request, "ep_wait", -1);
    if (*request != nullptr) {
      wait_and_release(request);
    }
  });
}

int ep_waitall(int count, ep_request_t* requests) {
  return guarded([&] {
    if (count < 0) {
      throw ep::Error(ep::ErrorKind::kCount, "ep_waitall", -1,
                      "count " + std::to_string(count) + " is negative");
    }
    if (count > 0) {
      check_out(requests, "ep_waitall", -1);
    }
    std::exception_ptr first;
    for (int i = 0; i < count; ++i) {
      if (requests[i] == nullptr) {
        continue;
      }
      try {
        wait_and_release(&requests[i]);
      } catch (...) {
        if (!first) {
          first = std::current_exception();
        }
      }
    }
    if (first) {
      std::rethrow_exception(first);
    }
  });
}

int ep_barrier(ep_comm_t comm) {
  return guarded(
      [&] { ep::c_api::on_any(comm, "ep_barrier", [](const auto& c) { ep::barrier(c); }); });
}

const char* ep_last_error(void) { return ep::c_api::last_error(); }

}  // extern "C"
