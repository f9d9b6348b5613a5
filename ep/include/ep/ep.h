/* The C interface of the endpoint layer, for C and (through ISO_C_BINDING,
 * see fortran/ep_mod.f90) Fortran models.
 *
 *   ep_comm_t comms[4];
 *   ep_create_endpoints(MPI_COMM_WORLD, 4, comms);   one thread per process
 *   #pragma omp parallel num_threads(4)
 *   {
 *     ep_comm_t comm = comms[omp_get_thread_num()];
 *     int rank, size;
 *     ep_comm_rank(comm, &rank);
 *     ep_comm_size(comm, &size);
 *     ...
 *     ep_comm_free(&comm);                            collective, every endpoint
 *   }
 *
 * Errors: every function returns EP_OK (0) or an EP_ERR_* code and never lets
 * a C++ exception out; ep_last_error() gives the message of the calling
 * thread's last failure ("ep::create_endpoints: ep rank -1: ...") in this
 * interface or another built on it (xios_lite/xios_lite.h). Handles are
 * opaque; a handle belongs to one thread at a time (its endpoint's thread). */
#ifndef EP_EP_H
#define EP_EP_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A C interface keeps C's naming (snake_case types, upper-case constants). */
/* NOLINTBEGIN(readability-identifier-naming) */

/** One endpoint of an endpoint communicator (ep::Communicator). */
typedef struct ep_comm_s* ep_comm_t;

/** A pending nonblocking operation (ep::Request); NULL once completed. */
typedef struct ep_request_s* ep_request_t;

/** Return codes: one per kind of the endpoint layer's errors (ep::ErrorKind,
 * common/error.hpp), in its order from 1 (the table of ep/c_shim.hpp, checked
 * at compile time), and EP_ERR_OTHER. */
enum {
  EP_OK = 0,
  EP_ERR_RANK = 1,
  EP_ERR_TAG = 2,
  EP_ERR_COUNT = 3,
  EP_ERR_TRUNCATE = 4,
  EP_ERR_TOO_MANY_ENDPOINTS = 5,
  EP_ERR_THREAD_LEVEL = 6,
  EP_ERR_FREED_COMM = 7,
  EP_ERR_ARGUMENT = 8,
  EP_ERR_REQUEST = 9,
  EP_ERR_MPI = 10,
  EP_ERR_NO_MEMORY = 11, /**< memory could not be allocated */
  /* 12 and 13 are the output library's (XIOS_LITE_ERR_IO, XIOS_LITE_ERR_CONFIG
   * in xios_lite/xios_lite.h): the codes of the C interfaces never overlap. */
  EP_ERR_OTHER = 99 /**< any other failure (an exception that is not an ep::Error) */
};

/** MPI_Comm_create_endpoints: writes n_local handles to comms[0..n_local-1];
 * thread i of the process then uses comms[i]. Collective over `parent`,
 * called by one thread per process. On failure no handle is written. */
int ep_create_endpoints(MPI_Comm parent, int n_local, ep_comm_t* comms);
/** The same with a Fortran communicator handle (MPI_Comm_f2c). */
int ep_create_endpoints_f(MPI_Fint parent, int n_local, ep_comm_t* comms);

/** Rank and size of the endpoint communicator. Local, thread-safe. */
int ep_comm_rank(ep_comm_t comm, int* rank);
int ep_comm_size(ep_comm_t comm, int* size);
/** Index of this endpoint among its process's endpoints. Local. */
int ep_comm_local_thread(ep_comm_t comm, int* local_thread);

/** MPI_Comm_free: collective over all endpoints (each frees its own handle).
 * Releases the handle and sets *comm to NULL, also when freeing failed. */
int ep_comm_free(ep_comm_t* comm);

/** Point-to-point, as MPI_Isend / MPI_Irecv on the endpoint communicator:
 * ranks are EP ranks, MPI_ANY_SOURCE, MPI_ANY_TAG and MPI_PROC_NULL work,
 * tags are 0..32767. Local; the handle belongs to the calling thread, which
 * must complete it with ep_wait or ep_waitall (the buffer may not be touched
 * before). On failure *request is NULL. The _f forms take a Fortran
 * datatype handle (MPI_Type_f2c). */
int ep_isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm,
             ep_request_t* request);
int ep_irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, ep_comm_t comm,
             ep_request_t* request);
int ep_isend_f(const void* buf, int count, MPI_Fint datatype, int dest, int tag, ep_comm_t comm,
               ep_request_t* request);
int ep_irecv_f(void* buf, int count, MPI_Fint datatype, int source, int tag, ep_comm_t comm,
               ep_request_t* request);

/** MPI_Wait / MPI_Waitall: completes the requests, releases them and sets
 * them to NULL (NULL entries are skipped). ep_waitall completes every
 * request even when one fails, then returns the first failure. By the
 * thread that started them. */
int ep_wait(ep_request_t* request);
int ep_waitall(int count, ep_request_t* requests);

/** MPI_Barrier over every endpoint (on an intercommunicator handle: every
 * endpoint of both groups). Collective. */
int ep_barrier(ep_comm_t comm);

/* ---- The rest of the endpoint API (the headers of ep/), call for call as in MPI ----
 *
 * Arguments follow the MPI call of the same name with MPI_Comm replaced by
 * ep_comm_t and MPI_Request by ep_request_t: ranks are EP ranks, counts and
 * displacements are in elements, buffers may be MPI_IN_PLACE where MPI allows
 * it, statuses are real MPI_Status (MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE work) whose MPI_SOURCE is the EP rank of the sender, so
 * that MPI_Get_count and ep_get_count read them. Count, displacement and type
 * arrays hold one entry per EP rank (per neighbour for the neighbour
 * collectives) and are read during the call only.
 *
 * Threads: each thread calls with its own handles (its endpoint's). The
 * point-to-point calls are local; the collectives are collective over every
 * endpoint of the communicator, all threads of all processes calling in the
 * same order; a nonblocking collective's request is completed by the thread
 * that started it, with the wait/test calls below. Errors are codes with the
 * message in ep_last_error(), naming the call, the EP rank and the value. */

/** A message taken out of matching by ep_mprobe / ep_improbe (MPI_Message):
 * received once with ep_mrecv or ep_imrecv, which release it. NULL is
 * MPI_MESSAGE_NO_PROC (a probe of MPI_PROC_NULL); receiving it gives an
 * empty status at once. */
typedef struct ep_message_s* ep_message_t;

/* -- point-to-point (local; any handle, intercommunicators included, where
 * ranks name the remote group) -- */
int ep_send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm);
int ep_ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm);
int ep_issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, ep_comm_t comm,
              ep_request_t* request);
int ep_recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, ep_comm_t comm,
            MPI_Status* status);
int ep_sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                ep_comm_t comm, MPI_Status* status);
int ep_sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                        int source, int recvtag, ep_comm_t comm, MPI_Status* status);
/** MPI_Probe / MPI_Iprobe: the message stays queued. */
int ep_probe(int source, int tag, ep_comm_t comm, MPI_Status* status);
int ep_iprobe(int source, int tag, ep_comm_t comm, int* flag, MPI_Status* status);
/** MPI_Mprobe / MPI_Improbe (*flag 0: no message, *message untouched). */
int ep_mprobe(int source, int tag, ep_comm_t comm, ep_message_t* message, MPI_Status* status);
int ep_improbe(int source, int tag, ep_comm_t comm, int* flag, ep_message_t* message,
               MPI_Status* status);
/** MPI_Mrecv / MPI_Imrecv: *message is released and set to NULL. */
int ep_mrecv(void* buf, int count, MPI_Datatype datatype, ep_message_t* message,
             MPI_Status* status);
int ep_imrecv(void* buf, int count, MPI_Datatype datatype, ep_message_t* message,
              ep_request_t* request);

/* -- completion (by the thread that started the requests; completed
 * requests are released and set to NULL, NULL ones are skipped; a
 * persistent request is kept, inactive, and an inactive one is skipped like
 * NULL by the any/some calls) -- */
/** MPI_Wait / MPI_Waitall / MPI_Test with statuses (ep_wait and ep_waitall
 * above keep their status-less form; ep_test_status is not ep_test, a name
 * the test suite's namespace ep_test takes in C++). */
int ep_wait_status(ep_request_t* request, MPI_Status* status);
int ep_waitall_status(int count, ep_request_t* requests, MPI_Status* statuses);
/** MPI_Waitany: *index of the completed request (0-based), MPI_UNDEFINED when
 * every request is NULL. */
int ep_waitany(int count, ep_request_t* requests, int* index, MPI_Status* status);
/** MPI_Test: *flag 1 when complete (then the request is NULL); a NULL
 * request is complete at once. */
int ep_test_status(ep_request_t* request, int* flag, MPI_Status* status);
/** MPI_Testany: *flag 1 and *index when one completed; *flag 1 and *index
 * MPI_UNDEFINED when every request is NULL; *flag 0 otherwise. */
int ep_testany(int count, ep_request_t* requests, int* index, int* flag, MPI_Status* status);
/** MPI_Testall: *flag 1 only when every request is complete (then all are NULL). */
int ep_testall(int count, ep_request_t* requests, int* flag, MPI_Status* statuses);
/** MPI_Waitsome / MPI_Testsome: *outcount completed requests (waitsome: at
 * least one), their 0-based positions in indices[0..*outcount) and their
 * statuses in the same order; *outcount MPI_UNDEFINED when every request is
 * NULL. indices (and statuses unless MPI_STATUSES_IGNORE) hold count entries. */
int ep_waitsome(int count, ep_request_t* requests, int* outcount, int* indices,
                MPI_Status* statuses);
int ep_testsome(int count, ep_request_t* requests, int* outcount, int* indices,
                MPI_Status* statuses);
/** MPI_Cancel: a receive that has not matched is cancelled; the request must
 * still be completed (wait/test), and its status then says so
 * (ep_test_cancelled). A send, or a receive already matched, completes as
 * usual. A NULL request is an error (EP_ERR_REQUEST). Local. */
int ep_cancel(ep_request_t* request);
/** MPI_Test_cancelled on a status filled by this interface. Local. */
int ep_test_cancelled(const MPI_Status* status, int* flag);
/** MPI_Get_count on a status filled by this interface. Local. */
int ep_get_count(const MPI_Status* status, MPI_Datatype datatype, int* count);

/* -- collectives (collective over every endpoint of comm) -- */
int ep_ibarrier(ep_comm_t comm, ep_request_t* request);
/** On an intercommunicator: MPI_ROOT / MPI_PROC_NULL in the sending group. */
int ep_bcast(void* buffer, int count, MPI_Datatype datatype, int root, ep_comm_t comm);
int ep_ibcast(void* buffer, int count, MPI_Datatype datatype, int root, ep_comm_t comm,
              ep_request_t* request);
int ep_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              int root, ep_comm_t comm);
int ep_ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, ep_comm_t comm, ep_request_t* request);
/** On an intercommunicator: the other group's reduction (no MPI_IN_PLACE). */
int ep_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 ep_comm_t comm);
int ep_iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  ep_comm_t comm, ep_request_t* request);
int ep_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm);
int ep_igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm,
               ep_request_t* request);
/** recvcounts and displs are read at the root only (may be NULL elsewhere). */
int ep_gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
               ep_comm_t comm);
int ep_igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
                ep_comm_t comm, ep_request_t* request);
int ep_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm);
int ep_iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, ep_comm_t comm,
                ep_request_t* request);
/** sendcounts and displs are read at the root only (may be NULL elsewhere). */
int ep_scatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, ep_comm_t comm);
int ep_iscatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, ep_comm_t comm, ep_request_t* request);
int ep_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, ep_comm_t comm);
int ep_iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request);
int ep_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int* recvcounts, const int* displs, MPI_Datatype recvtype, ep_comm_t comm);
int ep_iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int* recvcounts, const int* displs, MPI_Datatype recvtype, ep_comm_t comm,
                   ep_request_t* request);
int ep_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, ep_comm_t comm);
int ep_ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request);
/** With sendbuf MPI_IN_PLACE, sendcounts, sdispls (and sendtypes) may be NULL. */
int ep_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                 MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                 MPI_Datatype recvtype, ep_comm_t comm);
int ep_ialltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                  MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                  MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request);
/** Displacements in bytes, one type per EP rank. */
int ep_alltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
                 const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                 const int* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm);
int ep_ialltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
                  const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                  const int* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm,
                  ep_request_t* request);
int ep_reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                      MPI_Datatype datatype, MPI_Op op, ep_comm_t comm);
int ep_ireduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                       MPI_Datatype datatype, MPI_Op op, ep_comm_t comm, ep_request_t* request);
int ep_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                            MPI_Datatype datatype, MPI_Op op, ep_comm_t comm);
int ep_ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, ep_comm_t comm,
                             ep_request_t* request);
int ep_scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
            ep_comm_t comm);
int ep_iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             ep_comm_t comm, ep_request_t* request);
/** EP rank 0's recvbuf is left untouched. */
int ep_exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              ep_comm_t comm);
int ep_iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               ep_comm_t comm, ep_request_t* request);

/* -- communicators (creation is collective over every endpoint of comm;
 * each thread gets its own handle of the new communicator, freed with
 * ep_comm_free) -- */
int ep_comm_dup(ep_comm_t comm, ep_comm_t* newcomm);
/** color MPI_UNDEFINED gives *newcomm NULL (MPI_COMM_NULL). */
int ep_comm_split(ep_comm_t comm, int color, int key, ep_comm_t* newcomm);
/** MPI_Comm_compare: MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL.
 * Local. Comparing an intercommunicator with an intracommunicator is MPI_UNEQUAL. */
int ep_comm_compare(ep_comm_t comm1, ep_comm_t comm2, int* result);
/** MPI_Comm_test_inter. Local. */
int ep_comm_test_inter(ep_comm_t comm, int* flag);
/** MPI_Comm_remote_size of an intercommunicator handle. Local. */
int ep_comm_remote_size(ep_comm_t comm, int* size);
/** MPI_Intercomm_create: collective over both groups. peer_comm, remote_leader
 * and tag matter at the local leader only; the groups must be on disjoint
 * processes. The handle is an intercommunicator: point-to-point ranks name
 * the remote group; ep_barrier, ep_bcast and ep_allreduce work on it. */
int ep_intercomm_create(ep_comm_t local_comm, int local_leader, MPI_Comm peer_comm,
                        int remote_leader, int tag, ep_comm_t* newintercomm);
/** MPI_Intercomm_merge: collective over both groups. */
int ep_intercomm_merge(ep_comm_t intercomm, int high, ep_comm_t* newintracomm);

/* -- topologies: creation collective over every endpoint of comm (reorder
 * is accepted and ignored: ranks stay), queries local -- */
/** MPI_Dims_create. Local. */
int ep_dims_create(int nnodes, int ndims, int* dims);
/** Endpoints of rank >= product(dims) get NULL. */
int ep_cart_create(ep_comm_t comm, int ndims, const int* dims, const int* periods, int reorder,
                   ep_comm_t* comm_cart);
int ep_cartdim_get(ep_comm_t comm, int* ndims);
int ep_cart_get(ep_comm_t comm, int maxdims, int* dims, int* periods, int* coords);
int ep_cart_coords(ep_comm_t comm, int rank, int maxdims, int* coords);
int ep_cart_rank(ep_comm_t comm, const int* coords, int* rank);
int ep_cart_shift(ep_comm_t comm, int direction, int disp, int* rank_source, int* rank_dest);
int ep_cart_sub(ep_comm_t comm, const int* remain_dims, ep_comm_t* newcomm);
/** MPI_Topo_test: MPI_CART, MPI_DIST_GRAPH or MPI_UNDEFINED. */
int ep_topo_test(ep_comm_t comm, int* status);
/** sourceweights / destweights may be MPI_UNWEIGHTED (both, or neither). */
int ep_dist_graph_create_adjacent(ep_comm_t comm, int indegree, const int* sources,
                                  const int* sourceweights, int outdegree, const int* destinations,
                                  const int* destweights, int reorder, ep_comm_t* comm_dist_graph);
int ep_dist_graph_neighbors_count(ep_comm_t comm, int* indegree, int* outdegree, int* weighted);
/** Weights are written only when the graph is weighted and the pointer is not NULL. */
int ep_dist_graph_neighbors(ep_comm_t comm, int maxindegree, int* sources, int* sourceweights,
                            int maxoutdegree, int* destinations, int* destweights);
/* Neighbour collectives: comm must carry a topology; no MPI_IN_PLACE. */
int ep_neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, ep_comm_t comm);
int ep_ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                           ep_request_t* request);
int ep_neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                           ep_comm_t comm);
int ep_ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int* recvcounts, const int* displs,
                            MPI_Datatype recvtype, ep_comm_t comm, ep_request_t* request);
int ep_neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, ep_comm_t comm);
int ep_ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                          ep_request_t* request);
int ep_neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                          MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                          const int* rdispls, MPI_Datatype recvtype, ep_comm_t comm);
int ep_ineighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                           MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                           const int* rdispls, MPI_Datatype recvtype, ep_comm_t comm,
                           ep_request_t* request);
/** Displacements in bytes (MPI_Aint), one type per neighbour. */
int ep_neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                          const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                          const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm);
int ep_ineighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                           const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                           const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, ep_comm_t comm,
                           ep_request_t* request);
/** Persistent neighbour collectives (MPI-4's *_init; ep/topology.hpp has the
 * rules): collective over every endpoint of comm, they return an inactive
 * persistent request. The buffers must stay valid at the same addresses and
 * the arrays unchanged until ep_request_free (debug builds check the arrays
 * at every ep_start). info is ignored (MPI_INFO_NULL). */
int ep_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                               MPI_Info info, ep_request_t* request);
int ep_neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int* recvcounts, const int* displs,
                                MPI_Datatype recvtype, ep_comm_t comm, MPI_Info info,
                                ep_request_t* request);
int ep_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, ep_comm_t comm,
                              MPI_Info info, ep_request_t* request);
int ep_neighbor_alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                               MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                               const int* rdispls, MPI_Datatype recvtype, ep_comm_t comm,
                               MPI_Info info, ep_request_t* request);
int ep_neighbor_alltoallw_init(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                               const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                               const MPI_Aint* rdispls, const MPI_Datatype* recvtypes,
                               ep_comm_t comm, MPI_Info info, ep_request_t* request);
/** MPI_Start / MPI_Startall: start a round of inactive persistent requests
 * (every endpoint starting its persistent collectives in the same order).
 * The wait/test calls complete a round and leave the handle inactive, not
 * NULL. By the thread that made the requests. */
int ep_start(ep_request_t* request);
int ep_startall(int count, ep_request_t* requests);
/** MPI_Request_free for an inactive persistent (or completed) request:
 * releases it and sets *request to NULL. An active one is an error (the
 * handle stays). Local. */
int ep_request_free(ep_request_t* request);

/** Message of the calling thread's last failure ("" when none). The pointer
 * is valid until the thread's next failing call. */
const char* ep_last_error(void);

/* NOLINTEND(readability-identifier-naming) */

#ifdef __cplusplus
}
#endif

#endif /* EP_EP_H */
