// What the Fortran module ep_mod binds to (bind(C) interfaces named
// ep_f_*): each function takes its arguments as Fortran passes them (by
// reference, buffers as descriptors of ISO_Fortran_binding.h, MPI handles as
// Fortran integers, statuses as Fortran integer arrays, ierr optional) and
// calls the C interface (ep/ep.h). Not a public C interface: C code calls
// ep/ep.h.
//
// MPI_IN_PLACE, MPI_UNWEIGHTED, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE
// are recognised by address: the first two as the addresses of the Fortran
// constants of `use mpi` (asked once of ep_f_mpi_addresses, compiled with
// MPI's Fortran module), the last two as MPI_F_STATUS(ES)_IGNORE, which
// MPI's C interface gives.
//
// Errors: a failing call records its message (ep_last_error) and returns the
// code in *ierr; without ierr (NULL) it prints "error <code>: <message>" and
// stops the program through ep_f_error_stop (Fortran's error stop).
#include <ISO_Fortran_binding.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "c_api/internal.hpp"
#include "ep/ep.h"
// The prototypes of the ep_f_* functions below, written from fortran/ep_calls.txt
// as ep_mod declares them: a definition that differs from them does not compile.
#include "ep_calls.h"

extern "C" {
// fortran/ep_mpi_addresses.f90: the addresses of MPI_IN_PLACE and
// MPI_UNWEIGHTED of `use mpi`, and MPI_STATUS_SIZE.
void ep_f_mpi_addresses(void** in_place, void** unweighted, MPI_Fint* status_size);
// fortran/ep_mod.f90: error stop 1.
void ep_f_error_stop(void);
}

namespace {

using Fint = MPI_Fint;
using Desc = CFI_cdesc_t;

struct FortranConstants {
  const void* in_place = nullptr;
  const void* unweighted = nullptr;
  int status_size = 0;
};

const FortranConstants& constants() {
  static const FortranConstants c = [] {
    void* in_place = nullptr;
    void* unweighted = nullptr;
    Fint size = 0;
    ep_f_mpi_addresses(&in_place, &unweighted, &size);
    return FortranConstants{in_place, unweighted, static_cast<int>(size)};
  }();
  return c;
}

int rank_of(ep_comm_t comm) {
  int rank = -1;
  if (comm != nullptr) (void)ep_comm_rank(comm, &rank);
  return rank;
}

// The address of a buffer argument. A non-contiguous section is refused:
// the C++ layer reads count elements from the first, and a nonblocking call
// must not be handed a temporary copy.
void* address(const Desc* d, const char* call, ep_comm_t comm) {
  if (d == nullptr) return nullptr;
  if (d->base_addr != nullptr && CFI_is_contiguous(d) == 0) {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank_of(comm),
                    "a non-contiguous array section: pass a contiguous array");
  }
  return d->base_addr;
}

// A buffer that may be MPI_IN_PLACE.
void* maybe_in_place(const Desc* d, const char* call, ep_comm_t comm) {
  if (d != nullptr && d->base_addr != nullptr && d->base_addr == constants().in_place) {
    return MPI_IN_PLACE;
  }
  return address(d, call, comm);
}

// Weights given as an integer array of any rank, or MPI_UNWEIGHTED (an
// array in Open MPI's `use mpi`, a scalar in MPICH's: hence a descriptor).
const int* weights_of(const Desc* weights) {
  if (weights->base_addr == constants().unweighted) return MPI_UNWEIGHTED;
  return static_cast<const int*>(weights->base_addr);
}

MPI_Datatype type(const Fint* t) { return MPI_Type_f2c(*t); }
MPI_Op op(const Fint* o) { return MPI_Op_f2c(*o); }

void put_status(Fint* f, const MPI_Status& s) {
  if (f == nullptr || f == MPI_F_STATUS_IGNORE) return;
  MPI_Status_c2f(&s, f);
}

void put_statuses(Fint* f, const std::vector<MPI_Status>& s) {
  if (f == nullptr || f == MPI_F_STATUSES_IGNORE) return;
  const auto stride = static_cast<std::size_t>(constants().status_size);
  for (std::size_t i = 0; i < s.size(); ++i) MPI_Status_c2f(&s[i], f + i * stride);
}

// Hands the code to ierr, or stops the program with the message.
void finish(int rc, Fint* ierr) {
  if (ierr != nullptr) {
    *ierr = rc;
    return;
  }
  if (rc != EP_OK) {
    std::fprintf(stderr, "error %d: %s\n", rc, ep_last_error());
    std::fflush(stderr);
    ep_f_error_stop();
  }
}

// Runs `body` (which returns a C interface code); what the glue itself
// throws becomes a code too. Then finish().
template <typename Body>
void run(Fint* ierr, Body&& body) {
  int rc = EP_OK;
  const int thrown = ep::c_api::guarded([&] { rc = body(); });
  finish(thrown != EP_OK ? thrown : rc, ierr);
}

int comm_size(ep_comm_t comm) {
  int n = 0;
  if (ep_comm_size(comm, &n) != EP_OK)
    throw ep::Error(ep::ErrorKind::kArgument, "ep", -1, ep_last_error());
  return n;
}

// The C datatypes of `n` Fortran ones (n <= 0 or NULL: none).
std::vector<MPI_Datatype> types(const Fint* f, int n) {
  std::vector<MPI_Datatype> t;
  if (f == nullptr) return t;
  for (int i = 0; i < n; ++i) t.push_back(MPI_Type_f2c(f[i]));
  return t;
}

// Send and receive degrees of a topology communicator (0 without one).
std::pair<int, int> degrees(ep_comm_t comm) {
  int kind = MPI_UNDEFINED;
  if (ep_topo_test(comm, &kind) != EP_OK) return {0, 0};
  if (kind == MPI_CART) {
    int nd = 0;
    (void)ep_cartdim_get(comm, &nd);
    return {2 * nd, 2 * nd};
  }
  if (kind == MPI_DIST_GRAPH) {
    int in = 0;
    int out = 0;
    int weighted = 0;
    (void)ep_dist_graph_neighbors_count(comm, &in, &out, &weighted);
    return {in, out};
  }
  return {0, 0};
}

// 1-based index for Fortran (MPI_UNDEFINED stays).
Fint fortran_index(int i) { return i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1; }

// MPI_Waitsome / MPI_Testsome through `call` (ep_waitsome or ep_testsome):
// 1-based indices and the completed requests' statuses, in the same order.
int some_completed(int (*call)(int, ep_request_t*, int*, int*, MPI_Status*), const Fint* count,
                   ep_request_t* requests, Fint* outcount, Fint* indices, Fint* statuses) {
  const auto n = static_cast<std::size_t>(*count > 0 ? *count : 0);
  std::vector<MPI_Status> s(n);
  std::vector<int> done(n);
  int out = MPI_UNDEFINED;
  const int rc = call(*count, requests, &out, done.data(), s.data());
  *outcount = out;
  if (rc == EP_OK && out != MPI_UNDEFINED) {
    for (int k = 0; k < out; ++k) indices[k] = fortran_index(done[static_cast<std::size_t>(k)]);
    s.resize(static_cast<std::size_t>(out));
    put_statuses(statuses, s);
  }
  return rc;
}

// A query of the endpoint (ep_comm_rank, ep_comm_size, ep_comm_local_thread):
// `unset` in *value when it fails.
int query(int (*call)(ep_comm_t, int*), ep_comm_t comm, Fint* value, int unset) {
  int v = unset;
  const int rc = call(comm, &v);
  *value = rc == EP_OK ? v : unset;
  return rc;
}

}  // namespace

extern "C" {

// NOLINTBEGIN(readability-identifier-naming)

const void* ep_f_address_of(const Desc* d) { return d->base_addr; }

// ---- the endpoint ----

void ep_f_comm_rank(const ep_comm_t* comm, Fint* rank, Fint* ierr) {
  run(ierr, [&] { return query(ep_comm_rank, *comm, rank, -1); });
}

void ep_f_comm_size(const ep_comm_t* comm, Fint* size, Fint* ierr) {
  run(ierr, [&] { return query(ep_comm_size, *comm, size, 0); });
}

void ep_f_comm_local_thread(const ep_comm_t* comm, Fint* thread, Fint* ierr) {
  run(ierr, [&] { return query(ep_comm_local_thread, *comm, thread, -1); });
}

// ---- point-to-point ----

void ep_f_send(const Desc* buf, const Fint* count, const Fint* datatype, const Fint* dest,
               const Fint* tag, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_send(address(buf, "ep_send", *comm), *count, type(datatype), *dest, *tag, *comm);
  });
}

void ep_f_ssend(const Desc* buf, const Fint* count, const Fint* datatype, const Fint* dest,
                const Fint* tag, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_ssend(address(buf, "ep_ssend", *comm), *count, type(datatype), *dest, *tag, *comm);
  });
}

void ep_f_isend(const Desc* buf, const Fint* count, const Fint* datatype, const Fint* dest,
                const Fint* tag, const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_isend(address(buf, "ep_isend", *comm), *count, type(datatype), *dest, *tag, *comm,
                    request);
  });
}

void ep_f_issend(const Desc* buf, const Fint* count, const Fint* datatype, const Fint* dest,
                 const Fint* tag, const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_issend(address(buf, "ep_issend", *comm), *count, type(datatype), *dest, *tag, *comm,
                     request);
  });
}

void ep_f_recv(Desc* buf, const Fint* count, const Fint* datatype, const Fint* source,
               const Fint* tag, const ep_comm_t* comm, Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    const int rc =
        ep_recv(address(buf, "ep_recv", *comm), *count, type(datatype), *source, *tag, *comm, &s);
    if (rc == EP_OK) put_status(status, s);
    return rc;
  });
}

void ep_f_irecv(Desc* buf, const Fint* count, const Fint* datatype, const Fint* source,
                const Fint* tag, const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_irecv(address(buf, "ep_irecv", *comm), *count, type(datatype), *source, *tag, *comm,
                    request);
  });
}

void ep_f_sendrecv(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                   const Fint* dest, const Fint* sendtag, Desc* recvbuf, const Fint* recvcount,
                   const Fint* recvtype, const Fint* source, const Fint* recvtag,
                   const ep_comm_t* comm, Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    const int rc = ep_sendrecv(address(sendbuf, "ep_sendrecv", *comm), *sendcount, type(sendtype),
                               *dest, *sendtag, address(recvbuf, "ep_sendrecv", *comm), *recvcount,
                               type(recvtype), *source, *recvtag, *comm, &s);
    if (rc == EP_OK) put_status(status, s);
    return rc;
  });
}

void ep_f_sendrecv_replace(Desc* buf, const Fint* count, const Fint* datatype, const Fint* dest,
                           const Fint* sendtag, const Fint* source, const Fint* recvtag,
                           const ep_comm_t* comm, Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    const int rc =
        ep_sendrecv_replace(address(buf, "ep_sendrecv_replace", *comm), *count, type(datatype),
                            *dest, *sendtag, *source, *recvtag, *comm, &s);
    if (rc == EP_OK) put_status(status, s);
    return rc;
  });
}

void ep_f_probe(const Fint* source, const Fint* tag, const ep_comm_t* comm, Fint* status,
                Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    const int rc = ep_probe(*source, *tag, *comm, &s);
    if (rc == EP_OK) put_status(status, s);
    return rc;
  });
}

void ep_f_iprobe(const Fint* source, const Fint* tag, const ep_comm_t* comm, Fint* flag,
                 Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    int found = 0;
    const int rc = ep_iprobe(*source, *tag, *comm, &found, &s);
    *flag = found;
    if (rc == EP_OK && found != 0) put_status(status, s);
    return rc;
  });
}

void ep_f_mprobe(const Fint* source, const Fint* tag, const ep_comm_t* comm, ep_message_t* message,
                 Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    const int rc = ep_mprobe(*source, *tag, *comm, message, &s);
    if (rc == EP_OK) put_status(status, s);
    return rc;
  });
}

void ep_f_improbe(const Fint* source, const Fint* tag, const ep_comm_t* comm, Fint* flag,
                  ep_message_t* message, Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    int found = 0;
    const int rc = ep_improbe(*source, *tag, *comm, &found, message, &s);
    *flag = found;
    if (rc == EP_OK && found != 0) put_status(status, s);
    return rc;
  });
}

void ep_f_mrecv(Desc* buf, const Fint* count, const Fint* datatype, ep_message_t* message,
                Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    const int rc = ep_mrecv(address(buf, "ep_mrecv", nullptr), *count, type(datatype), message, &s);
    if (rc == EP_OK) put_status(status, s);
    return rc;
  });
}

void ep_f_imrecv(Desc* buf, const Fint* count, const Fint* datatype, ep_message_t* message,
                 ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_imrecv(address(buf, "ep_imrecv", nullptr), *count, type(datatype), message, request);
  });
}

// ---- completion ----

void ep_f_wait(ep_request_t* request, Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    const int rc = ep_wait_status(request, &s);
    if (rc == EP_OK) put_status(status, s);
    return rc;
  });
}

void ep_f_waitall(const Fint* count, ep_request_t* requests, Fint* statuses, Fint* ierr) {
  run(ierr, [&] {
    std::vector<MPI_Status> s(static_cast<std::size_t>(*count > 0 ? *count : 0));
    const int rc = ep_waitall_status(*count, requests, s.data());
    if (rc == EP_OK) put_statuses(statuses, s);
    return rc;
  });
}

void ep_f_waitany(const Fint* count, ep_request_t* requests, Fint* index, Fint* status,
                  Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    int i = MPI_UNDEFINED;
    const int rc = ep_waitany(*count, requests, &i, &s);
    *index = fortran_index(i);
    if (rc == EP_OK && i != MPI_UNDEFINED) put_status(status, s);
    return rc;
  });
}

void ep_f_test(ep_request_t* request, Fint* flag, Fint* status, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    int done = 0;
    const int rc = ep_test_status(request, &done, &s);
    *flag = done;
    if (rc == EP_OK && done != 0) put_status(status, s);
    return rc;
  });
}

void ep_f_testany(const Fint* count, ep_request_t* requests, Fint* index, Fint* flag, Fint* status,
                  Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    int i = MPI_UNDEFINED;
    int done = 0;
    const int rc = ep_testany(*count, requests, &i, &done, &s);
    *index = fortran_index(i);
    *flag = done;
    if (rc == EP_OK && done != 0 && i != MPI_UNDEFINED) put_status(status, s);
    return rc;
  });
}

void ep_f_testall(const Fint* count, ep_request_t* requests, Fint* flag, Fint* statuses,
                  Fint* ierr) {
  run(ierr, [&] {
    std::vector<MPI_Status> s(static_cast<std::size_t>(*count > 0 ? *count : 0));
    int done = 0;
    const int rc = ep_testall(*count, requests, &done, s.data());
    *flag = done;
    if (rc == EP_OK && done != 0) put_statuses(statuses, s);
    return rc;
  });
}

void ep_f_waitsome(const Fint* count, ep_request_t* requests, Fint* outcount, Fint* indices,
                   Fint* statuses, Fint* ierr) {
  run(ierr,
      [&] { return some_completed(ep_waitsome, count, requests, outcount, indices, statuses); });
}

void ep_f_testsome(const Fint* count, ep_request_t* requests, Fint* outcount, Fint* indices,
                   Fint* statuses, Fint* ierr) {
  run(ierr,
      [&] { return some_completed(ep_testsome, count, requests, outcount, indices, statuses); });
}

void ep_f_cancel(ep_request_t* request, Fint* ierr) {
  run(ierr, [&] { return ep_cancel(request); });
}

void ep_f_test_cancelled(const Fint* status, Fint* flag, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    MPI_Status_f2c(status, &s);
    int f = 0;
    const int rc = ep_test_cancelled(&s, &f);
    *flag = f;
    return rc;
  });
}

void ep_f_get_count(const Fint* status, const Fint* datatype, Fint* count, Fint* ierr) {
  run(ierr, [&] {
    MPI_Status s;
    MPI_Status_f2c(status, &s);
    int n = 0;
    const int rc = ep_get_count(&s, type(datatype), &n);
    *count = n;
    return rc;
  });
}

// ---- collectives ----

void ep_f_ibarrier(const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] { return ep_ibarrier(*comm, request); });
}

void ep_f_bcast(Desc* buf, const Fint* count, const Fint* datatype, const Fint* root,
                const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_bcast(address(buf, "ep_bcast", *comm), *count, type(datatype), *root, *comm);
  });
}

void ep_f_ibcast(Desc* buf, const Fint* count, const Fint* datatype, const Fint* root,
                 const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ibcast(address(buf, "ep_ibcast", *comm), *count, type(datatype), *root, *comm,
                     request);
  });
}

#define EP_F_SEND(call) maybe_in_place(sendbuf, call, *comm)
#define EP_F_RECV(call) maybe_in_place(recvbuf, call, *comm)

void ep_f_reduce(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
                 const Fint* o, const Fint* root, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_reduce(EP_F_SEND("ep_reduce"), EP_F_RECV("ep_reduce"), *count, type(datatype), op(o),
                     *root, *comm);
  });
}

void ep_f_ireduce(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
                  const Fint* o, const Fint* root, const ep_comm_t* comm, ep_request_t* request,
                  Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ireduce(EP_F_SEND("ep_ireduce"), EP_F_RECV("ep_ireduce"), *count, type(datatype),
                      op(o), *root, *comm, request);
  });
}

void ep_f_allreduce(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
                    const Fint* o, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_allreduce(EP_F_SEND("ep_allreduce"), EP_F_RECV("ep_allreduce"), *count,
                        type(datatype), op(o), *comm);
  });
}

void ep_f_iallreduce(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
                     const Fint* o, const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_iallreduce(EP_F_SEND("ep_iallreduce"), EP_F_RECV("ep_iallreduce"), *count,
                         type(datatype), op(o), *comm, request);
  });
}

void ep_f_gather(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                 const Fint* recvcount, const Fint* recvtype, const Fint* root,
                 const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_gather(EP_F_SEND("ep_gather"), *sendcount, type(sendtype), EP_F_RECV("ep_gather"),
                     *recvcount, type(recvtype), *root, *comm);
  });
}

void ep_f_igather(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                  const Fint* recvcount, const Fint* recvtype, const Fint* root,
                  const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_igather(EP_F_SEND("ep_igather"), *sendcount, type(sendtype), EP_F_RECV("ep_igather"),
                      *recvcount, type(recvtype), *root, *comm, request);
  });
}

void ep_f_gatherv(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                  const Fint* recvcounts, const Fint* displs, const Fint* recvtype,
                  const Fint* root, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_gatherv(EP_F_SEND("ep_gatherv"), *sendcount, type(sendtype), EP_F_RECV("ep_gatherv"),
                      recvcounts, displs, type(recvtype), *root, *comm);
  });
}

void ep_f_igatherv(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                   const Fint* recvcounts, const Fint* displs, const Fint* recvtype,
                   const Fint* root, const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_igatherv(EP_F_SEND("ep_igatherv"), *sendcount, type(sendtype),
                       EP_F_RECV("ep_igatherv"), recvcounts, displs, type(recvtype), *root, *comm,
                       request);
  });
}

void ep_f_scatter(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                  const Fint* recvcount, const Fint* recvtype, const Fint* root,
                  const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_scatter(EP_F_SEND("ep_scatter"), *sendcount, type(sendtype), EP_F_RECV("ep_scatter"),
                      *recvcount, type(recvtype), *root, *comm);
  });
}

void ep_f_iscatter(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                   const Fint* recvcount, const Fint* recvtype, const Fint* root,
                   const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_iscatter(EP_F_SEND("ep_iscatter"), *sendcount, type(sendtype),
                       EP_F_RECV("ep_iscatter"), *recvcount, type(recvtype), *root, *comm, request);
  });
}

void ep_f_scatterv(const Desc* sendbuf, const Fint* sendcounts, const Fint* displs,
                   const Fint* sendtype, Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                   const Fint* root, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_scatterv(EP_F_SEND("ep_scatterv"), sendcounts, displs, type(sendtype),
                       EP_F_RECV("ep_scatterv"), *recvcount, type(recvtype), *root, *comm);
  });
}

void ep_f_iscatterv(const Desc* sendbuf, const Fint* sendcounts, const Fint* displs,
                    const Fint* sendtype, Desc* recvbuf, const Fint* recvcount,
                    const Fint* recvtype, const Fint* root, const ep_comm_t* comm,
                    ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_iscatterv(EP_F_SEND("ep_iscatterv"), sendcounts, displs, type(sendtype),
                        EP_F_RECV("ep_iscatterv"), *recvcount, type(recvtype), *root, *comm,
                        request);
  });
}

void ep_f_allgather(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                    const Fint* recvcount, const Fint* recvtype, const ep_comm_t* comm,
                    Fint* ierr) {
  run(ierr, [&] {
    return ep_allgather(EP_F_SEND("ep_allgather"), *sendcount, type(sendtype),
                        EP_F_RECV("ep_allgather"), *recvcount, type(recvtype), *comm);
  });
}

void ep_f_iallgather(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                     Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                     const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_iallgather(EP_F_SEND("ep_iallgather"), *sendcount, type(sendtype),
                         EP_F_RECV("ep_iallgather"), *recvcount, type(recvtype), *comm, request);
  });
}

void ep_f_allgatherv(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                     Desc* recvbuf, const Fint* recvcounts, const Fint* displs,
                     const Fint* recvtype, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_allgatherv(EP_F_SEND("ep_allgatherv"), *sendcount, type(sendtype),
                         EP_F_RECV("ep_allgatherv"), recvcounts, displs, type(recvtype), *comm);
  });
}

void ep_f_iallgatherv(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                      Desc* recvbuf, const Fint* recvcounts, const Fint* displs,
                      const Fint* recvtype, const ep_comm_t* comm, ep_request_t* request,
                      Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_iallgatherv(EP_F_SEND("ep_iallgatherv"), *sendcount, type(sendtype),
                          EP_F_RECV("ep_iallgatherv"), recvcounts, displs, type(recvtype), *comm,
                          request);
  });
}

void ep_f_alltoall(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                   const Fint* recvcount, const Fint* recvtype, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_alltoall(EP_F_SEND("ep_alltoall"), *sendcount, type(sendtype),
                       EP_F_RECV("ep_alltoall"), *recvcount, type(recvtype), *comm);
  });
}

void ep_f_ialltoall(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype, Desc* recvbuf,
                    const Fint* recvcount, const Fint* recvtype, const ep_comm_t* comm,
                    ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ialltoall(EP_F_SEND("ep_ialltoall"), *sendcount, type(sendtype),
                        EP_F_RECV("ep_ialltoall"), *recvcount, type(recvtype), *comm, request);
  });
}

void ep_f_alltoallv(const Desc* sendbuf, const Fint* sendcounts, const Fint* sdispls,
                    const Fint* sendtype, Desc* recvbuf, const Fint* recvcounts,
                    const Fint* rdispls, const Fint* recvtype, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_alltoallv(EP_F_SEND("ep_alltoallv"), sendcounts, sdispls, type(sendtype),
                        EP_F_RECV("ep_alltoallv"), recvcounts, rdispls, type(recvtype), *comm);
  });
}

void ep_f_ialltoallv(const Desc* sendbuf, const Fint* sendcounts, const Fint* sdispls,
                     const Fint* sendtype, Desc* recvbuf, const Fint* recvcounts,
                     const Fint* rdispls, const Fint* recvtype, const ep_comm_t* comm,
                     ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ialltoallv(EP_F_SEND("ep_ialltoallv"), sendcounts, sdispls, type(sendtype),
                         EP_F_RECV("ep_ialltoallv"), recvcounts, rdispls, type(recvtype), *comm,
                         request);
  });
}

void ep_f_alltoallw(const Desc* sendbuf, const Fint* sendcounts, const Fint* sdispls,
                    const Fint* sendtypes, Desc* recvbuf, const Fint* recvcounts,
                    const Fint* rdispls, const Fint* recvtypes, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    const int n = comm_size(*comm);
    const std::vector<MPI_Datatype> st = types(sendtypes, n);
    const std::vector<MPI_Datatype> rt = types(recvtypes, n);
    return ep_alltoallw(EP_F_SEND("ep_alltoallw"), sendcounts, sdispls,
                        st.empty() ? nullptr : st.data(), EP_F_RECV("ep_alltoallw"), recvcounts,
                        rdispls, rt.empty() ? nullptr : rt.data(), *comm);
  });
}

void ep_f_ialltoallw(const Desc* sendbuf, const Fint* sendcounts, const Fint* sdispls,
                     const Fint* sendtypes, Desc* recvbuf, const Fint* recvcounts,
                     const Fint* rdispls, const Fint* recvtypes, const ep_comm_t* comm,
                     ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    const int n = comm_size(*comm);
    const std::vector<MPI_Datatype> st = types(sendtypes, n);
    const std::vector<MPI_Datatype> rt = types(recvtypes, n);
    return ep_ialltoallw(EP_F_SEND("ep_ialltoallw"), sendcounts, sdispls,
                         st.empty() ? nullptr : st.data(), EP_F_RECV("ep_ialltoallw"), recvcounts,
                         rdispls, rt.empty() ? nullptr : rt.data(), *comm, request);
  });
}

void ep_f_reduce_scatter(const Desc* sendbuf, Desc* recvbuf, const Fint* recvcounts,
                         const Fint* datatype, const Fint* o, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_reduce_scatter(EP_F_SEND("ep_reduce_scatter"), EP_F_RECV("ep_reduce_scatter"),
                             recvcounts, type(datatype), op(o), *comm);
  });
}

void ep_f_ireduce_scatter(const Desc* sendbuf, Desc* recvbuf, const Fint* recvcounts,
                          const Fint* datatype, const Fint* o, const ep_comm_t* comm,
                          ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ireduce_scatter(EP_F_SEND("ep_ireduce_scatter"), EP_F_RECV("ep_ireduce_scatter"),
                              recvcounts, type(datatype), op(o), *comm, request);
  });
}

void ep_f_reduce_scatter_block(const Desc* sendbuf, Desc* recvbuf, const Fint* recvcount,
                               const Fint* datatype, const Fint* o, const ep_comm_t* comm,
                               Fint* ierr) {
  run(ierr, [&] {
    return ep_reduce_scatter_block(EP_F_SEND("ep_reduce_scatter_block"),
                                   EP_F_RECV("ep_reduce_scatter_block"), *recvcount, type(datatype),
                                   op(o), *comm);
  });
}

void ep_f_ireduce_scatter_block(const Desc* sendbuf, Desc* recvbuf, const Fint* recvcount,
                                const Fint* datatype, const Fint* o, const ep_comm_t* comm,
                                ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ireduce_scatter_block(EP_F_SEND("ep_ireduce_scatter_block"),
                                    EP_F_RECV("ep_ireduce_scatter_block"), *recvcount,
                                    type(datatype), op(o), *comm, request);
  });
}

void ep_f_scan(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
               const Fint* o, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_scan(EP_F_SEND("ep_scan"), EP_F_RECV("ep_scan"), *count, type(datatype), op(o),
                   *comm);
  });
}

void ep_f_iscan(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
                const Fint* o, const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_iscan(EP_F_SEND("ep_iscan"), EP_F_RECV("ep_iscan"), *count, type(datatype), op(o),
                    *comm, request);
  });
}

void ep_f_exscan(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
                 const Fint* o, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_exscan(EP_F_SEND("ep_exscan"), EP_F_RECV("ep_exscan"), *count, type(datatype), op(o),
                     *comm);
  });
}

void ep_f_iexscan(const Desc* sendbuf, Desc* recvbuf, const Fint* count, const Fint* datatype,
                  const Fint* o, const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_iexscan(EP_F_SEND("ep_iexscan"), EP_F_RECV("ep_iexscan"), *count, type(datatype),
                      op(o), *comm, request);
  });
}

// ---- communicators ----

void ep_f_comm_dup(const ep_comm_t* comm, ep_comm_t* newcomm, Fint* ierr) {
  run(ierr, [&] { return ep_comm_dup(*comm, newcomm); });
}

void ep_f_comm_split(const ep_comm_t* comm, const Fint* color, const Fint* key, ep_comm_t* newcomm,
                     Fint* ierr) {
  run(ierr, [&] { return ep_comm_split(*comm, *color, *key, newcomm); });
}

void ep_f_comm_compare(const ep_comm_t* comm1, const ep_comm_t* comm2, Fint* result, Fint* ierr) {
  run(ierr, [&] {
    int r = MPI_UNEQUAL;
    const int rc = ep_comm_compare(*comm1, *comm2, &r);
    *result = r;
    return rc;
  });
}

void ep_f_comm_test_inter(const ep_comm_t* comm, Fint* flag, Fint* ierr) {
  run(ierr, [&] {
    int f = 0;
    const int rc = ep_comm_test_inter(*comm, &f);
    *flag = f;
    return rc;
  });
}

void ep_f_comm_remote_size(const ep_comm_t* comm, Fint* size, Fint* ierr) {
  run(ierr, [&] {
    int n = 0;
    const int rc = ep_comm_remote_size(*comm, &n);
    *size = n;
    return rc;
  });
}

void ep_f_intercomm_create(const ep_comm_t* local_comm, const Fint* local_leader,
                           const Fint* peer_comm, const Fint* remote_leader, const Fint* tag,
                           ep_comm_t* newintercomm, Fint* ierr) {
  run(ierr, [&] {
    return ep_intercomm_create(*local_comm, *local_leader, MPI_Comm_f2c(*peer_comm), *remote_leader,
                               *tag, newintercomm);
  });
}

void ep_f_intercomm_merge(const ep_comm_t* intercomm, const Fint* high, ep_comm_t* newintracomm,
                          Fint* ierr) {
  run(ierr, [&] { return ep_intercomm_merge(*intercomm, *high, newintracomm); });
}

// ---- topologies ----

void ep_f_dims_create(const Fint* nnodes, const Fint* ndims, Fint* dims, Fint* ierr) {
  run(ierr, [&] { return ep_dims_create(*nnodes, *ndims, dims); });
}

void ep_f_cart_create(const ep_comm_t* comm, const Fint* ndims, const Fint* dims,
                      const Fint* periods, const Fint* reorder, ep_comm_t* comm_cart, Fint* ierr) {
  run(ierr, [&] { return ep_cart_create(*comm, *ndims, dims, periods, *reorder, comm_cart); });
}

void ep_f_cartdim_get(const ep_comm_t* comm, Fint* ndims, Fint* ierr) {
  run(ierr, [&] { return ep_cartdim_get(*comm, ndims); });
}

void ep_f_cart_get(const ep_comm_t* comm, const Fint* maxdims, Fint* dims, Fint* periods,
                   Fint* coords, Fint* ierr) {
  run(ierr, [&] { return ep_cart_get(*comm, *maxdims, dims, periods, coords); });
}

void ep_f_cart_coords(const ep_comm_t* comm, const Fint* rank, const Fint* maxdims, Fint* coords,
                      Fint* ierr) {
  run(ierr, [&] { return ep_cart_coords(*comm, *rank, *maxdims, coords); });
}

void ep_f_cart_rank(const ep_comm_t* comm, const Fint* coords, Fint* rank, Fint* ierr) {
  run(ierr, [&] { return ep_cart_rank(*comm, coords, rank); });
}

void ep_f_cart_shift(const ep_comm_t* comm, const Fint* direction, const Fint* disp,
                     Fint* rank_source, Fint* rank_dest, Fint* ierr) {
  run(ierr, [&] { return ep_cart_shift(*comm, *direction, *disp, rank_source, rank_dest); });
}

void ep_f_cart_sub(const ep_comm_t* comm, const Fint* remain_dims, ep_comm_t* newcomm, Fint* ierr) {
  run(ierr, [&] { return ep_cart_sub(*comm, remain_dims, newcomm); });
}

void ep_f_topo_test(const ep_comm_t* comm, Fint* status, Fint* ierr) {
  run(ierr, [&] { return ep_topo_test(*comm, status); });
}

void ep_f_dist_graph_create_adjacent(const ep_comm_t* comm, const Fint* indegree,
                                     const Fint* sources, const Desc* sourceweights,
                                     const Fint* outdegree, const Fint* destinations,
                                     const Desc* destweights, const Fint* info, const Fint* reorder,
                                     ep_comm_t* comm_dist_graph, Fint* ierr) {
  (void)info;  // MPI_INFO_NULL or hints: the endpoint graph has nothing to tune
  run(ierr, [&] {
    return ep_dist_graph_create_adjacent(*comm, *indegree, sources, weights_of(sourceweights),
                                         *outdegree, destinations, weights_of(destweights),
                                         *reorder, comm_dist_graph);
  });
}

void ep_f_dist_graph_neighbors_count(const ep_comm_t* comm, Fint* indegree, Fint* outdegree,
                                     Fint* weighted, Fint* ierr) {
  run(ierr, [&] { return ep_dist_graph_neighbors_count(*comm, indegree, outdegree, weighted); });
}

void ep_f_dist_graph_neighbors(const ep_comm_t* comm, const Fint* maxindegree, Fint* sources,
                               Desc* sourceweights, const Fint* maxoutdegree, Fint* destinations,
                               Desc* destweights, Fint* ierr) {
  run(ierr, [&] {
    // MPI_UNWEIGHTED: weights not wanted (NULL to the C call).
    auto out = [](Desc* d) {
      return d->base_addr == constants().unweighted ? nullptr : static_cast<int*>(d->base_addr);
    };
    return ep_dist_graph_neighbors(*comm, *maxindegree, sources, out(sourceweights), *maxoutdegree,
                                   destinations, out(destweights));
  });
}

void ep_f_neighbor_allgather(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                             Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                             const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_neighbor_allgather(address(sendbuf, "ep_neighbor_allgather", *comm), *sendcount,
                                 type(sendtype), address(recvbuf, "ep_neighbor_allgather", *comm),
                                 *recvcount, type(recvtype), *comm);
  });
}

void ep_f_ineighbor_allgather(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                              Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                              const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ineighbor_allgather(address(sendbuf, "ep_ineighbor_allgather", *comm), *sendcount,
                                  type(sendtype), address(recvbuf, "ep_ineighbor_allgather", *comm),
                                  *recvcount, type(recvtype), *comm, request);
  });
}

void ep_f_neighbor_allgatherv(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                              Desc* recvbuf, const Fint* recvcounts, const Fint* displs,
                              const Fint* recvtype, const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_neighbor_allgatherv(address(sendbuf, "ep_neighbor_allgatherv", *comm), *sendcount,
                                  type(sendtype), address(recvbuf, "ep_neighbor_allgatherv", *comm),
                                  recvcounts, displs, type(recvtype), *comm);
  });
}

void ep_f_ineighbor_allgatherv(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                               Desc* recvbuf, const Fint* recvcounts, const Fint* displs,
                               const Fint* recvtype, const ep_comm_t* comm, ep_request_t* request,
                               Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ineighbor_allgatherv(address(sendbuf, "ep_ineighbor_allgatherv", *comm), *sendcount,
                                   type(sendtype),
                                   address(recvbuf, "ep_ineighbor_allgatherv", *comm), recvcounts,
                                   displs, type(recvtype), *comm, request);
  });
}

void ep_f_neighbor_alltoall(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                            Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                            const ep_comm_t* comm, Fint* ierr) {
  run(ierr, [&] {
    return ep_neighbor_alltoall(address(sendbuf, "ep_neighbor_alltoall", *comm), *sendcount,
                                type(sendtype), address(recvbuf, "ep_neighbor_alltoall", *comm),
                                *recvcount, type(recvtype), *comm);
  });
}

void ep_f_ineighbor_alltoall(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                             Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                             const ep_comm_t* comm, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ineighbor_alltoall(address(sendbuf, "ep_ineighbor_alltoall", *comm), *sendcount,
                                 type(sendtype), address(recvbuf, "ep_ineighbor_alltoall", *comm),
                                 *recvcount, type(recvtype), *comm, request);
  });
}

void ep_f_neighbor_alltoallv(const Desc* sendbuf, const Fint* sendcounts, const Fint* sdispls,
                             const Fint* sendtype, Desc* recvbuf, const Fint* recvcounts,
                             const Fint* rdispls, const Fint* recvtype, const ep_comm_t* comm,
                             Fint* ierr) {
  run(ierr, [&] {
    return ep_neighbor_alltoallv(address(sendbuf, "ep_neighbor_alltoallv", *comm), sendcounts,
                                 sdispls, type(sendtype),
                                 address(recvbuf, "ep_neighbor_alltoallv", *comm), recvcounts,
                                 rdispls, type(recvtype), *comm);
  });
}

void ep_f_ineighbor_alltoallv(const Desc* sendbuf, const Fint* sendcounts, const Fint* sdispls,
                              const Fint* sendtype, Desc* recvbuf, const Fint* recvcounts,
                              const Fint* rdispls, const Fint* recvtype, const ep_comm_t* comm,
                              ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_ineighbor_alltoallv(address(sendbuf, "ep_ineighbor_alltoallv", *comm), sendcounts,
                                  sdispls, type(sendtype),
                                  address(recvbuf, "ep_ineighbor_alltoallv", *comm), recvcounts,
                                  rdispls, type(recvtype), *comm, request);
  });
}

void ep_f_neighbor_allgather_init(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                                  Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                                  const ep_comm_t* comm, const Fint* info, ep_request_t* request,
                                  Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_neighbor_allgather_init(
        address(sendbuf, "ep_neighbor_allgather_init", *comm), *sendcount, type(sendtype),
        address(recvbuf, "ep_neighbor_allgather_init", *comm), *recvcount, type(recvtype), *comm,
        MPI_Info_f2c(*info), request);
  });
}

void ep_f_neighbor_allgatherv_init(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                                   Desc* recvbuf, const Fint* recvcounts, const Fint* displs,
                                   const Fint* recvtype, const ep_comm_t* comm, const Fint* info,
                                   ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_neighbor_allgatherv_init(
        address(sendbuf, "ep_neighbor_allgatherv_init", *comm), *sendcount, type(sendtype),
        address(recvbuf, "ep_neighbor_allgatherv_init", *comm), recvcounts, displs, type(recvtype),
        *comm, MPI_Info_f2c(*info), request);
  });
}

void ep_f_neighbor_alltoall_init(const Desc* sendbuf, const Fint* sendcount, const Fint* sendtype,
                                 Desc* recvbuf, const Fint* recvcount, const Fint* recvtype,
                                 const ep_comm_t* comm, const Fint* info, ep_request_t* request,
                                 Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_neighbor_alltoall_init(
        address(sendbuf, "ep_neighbor_alltoall_init", *comm), *sendcount, type(sendtype),
        address(recvbuf, "ep_neighbor_alltoall_init", *comm), *recvcount, type(recvtype), *comm,
        MPI_Info_f2c(*info), request);
  });
}

void ep_f_neighbor_alltoallv_init(const Desc* sendbuf, const Fint* sendcounts, const Fint* sdispls,
                                  const Fint* sendtype, Desc* recvbuf, const Fint* recvcounts,
                                  const Fint* rdispls, const Fint* recvtype, const ep_comm_t* comm,
                                  const Fint* info, ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    return ep_neighbor_alltoallv_init(
        address(sendbuf, "ep_neighbor_alltoallv_init", *comm), sendcounts, sdispls, type(sendtype),
        address(recvbuf, "ep_neighbor_alltoallv_init", *comm), recvcounts, rdispls, type(recvtype),
        *comm, MPI_Info_f2c(*info), request);
  });
}

void ep_f_start(ep_request_t* request, Fint* ierr) {
  run(ierr, [&] { return ep_start(request); });
}

void ep_f_startall(const Fint* count, ep_request_t* requests, Fint* ierr) {
  run(ierr, [&] { return ep_startall(*count, requests); });
}

void ep_f_request_free(ep_request_t* request, Fint* ierr) {
  run(ierr, [&] { return ep_request_free(request); });
}

void ep_f_neighbor_alltoallw(const Desc* sendbuf, const Fint* sendcounts, const MPI_Aint* sdispls,
                             const Fint* sendtypes, Desc* recvbuf, const Fint* recvcounts,
                             const MPI_Aint* rdispls, const Fint* recvtypes, const ep_comm_t* comm,
                             Fint* ierr) {
  run(ierr, [&] {
    const auto [in, out] = degrees(*comm);
    const std::vector<MPI_Datatype> st = types(sendtypes, out);
    const std::vector<MPI_Datatype> rt = types(recvtypes, in);
    return ep_neighbor_alltoallw(
        address(sendbuf, "ep_neighbor_alltoallw", *comm), sendcounts, sdispls, st.data(),
        address(recvbuf, "ep_neighbor_alltoallw", *comm), recvcounts, rdispls, rt.data(), *comm);
  });
}

void ep_f_ineighbor_alltoallw(const Desc* sendbuf, const Fint* sendcounts, const MPI_Aint* sdispls,
                              const Fint* sendtypes, Desc* recvbuf, const Fint* recvcounts,
                              const MPI_Aint* rdispls, const Fint* recvtypes, const ep_comm_t* comm,
                              ep_request_t* request, Fint* ierr) {
  *request = nullptr;
  run(ierr, [&] {
    const auto [in, out] = degrees(*comm);
    const std::vector<MPI_Datatype> st = types(sendtypes, out);
    const std::vector<MPI_Datatype> rt = types(recvtypes, in);
    return ep_ineighbor_alltoallw(address(sendbuf, "ep_ineighbor_alltoallw", *comm), sendcounts,
                                  sdispls, st.data(),
                                  address(recvbuf, "ep_ineighbor_alltoallw", *comm), recvcounts,
                                  rdispls, rt.data(), *comm, request);
  });
}

#undef EP_F_SEND
#undef EP_F_RECV

// NOLINTEND(readability-identifier-naming)

}  // extern "C"
