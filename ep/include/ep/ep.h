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

/** Return codes: one per ep::ErrorKind (ep/error.hpp), in its order from 1
 * (the table of ep/c_shim.hpp, checked at compile time), and EP_ERR_OTHER. */
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
  EP_ERR_IO = 12,        /**< a file could not be opened, read or written */
  EP_ERR_CONFIG = 13,    /**< a configuration's content is invalid */
  EP_ERR_OTHER = 99      /**< any other failure (an exception that is not an ep::Error) */
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

/** MPI_Barrier over every endpoint. Collective. */
int ep_barrier(ep_comm_t comm);

/** Message of the calling thread's last failure ("" when none). The pointer
 * is valid until the thread's next failing call. */
const char* ep_last_error(void);

/* NOLINTEND(readability-identifier-naming) */

#ifdef __cplusplus
}
#endif

#endif /* EP_EP_H */
