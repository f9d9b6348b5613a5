/* The C interface of xios_lite, for C and (through ISO_C_BINDING, see
 * fortran/xios_lite_mod.f90) Fortran models. It mirrors client.hpp and
 * server.hpp; docs/xios_lite.md "Fortran and C interface" shows a model.
 *
 *   xios_lite_world_t world;                         one thread per process
 *   xios_lite_world_split_last_ranks(MPI_COMM_WORLD, 1, &world);
 *   if (server) xios_lite_run_server(world, "iodef.xml");
 *   else {
 *     MPI_Comm local; xios_lite_world_local(world, &local);
 *     ep_create_endpoints(local, nthreads, comms);
 *     #pragma omp parallel: each thread with its own ep_comm_t comm
 *       xios_lite_client_t out;
 *       xios_lite_client_create(comm, world, "iodef.xml", XIOS_LITE_MODE_ENDPOINTS, &out);
 *       xios_lite_set_domain_block(out, "atm", ibegin, ni, jbegin, nj);
 *       xios_lite_close_definition(out);
 *       for each step: xios_lite_update_calendar(out, step);
 *                      xios_lite_send_field(out, "tas", data, 2, extents);
 *       xios_lite_finalise(&out);
 *   }
 *   xios_lite_world_free(&world);
 *
 * Errors: every function returns 0, XIOS_LITE_ERR_CONFIG for a bad
 * configuration, XIOS_LITE_ERR_IO for a file that cannot be read or written,
 * or the endpoint layer's EP_ERR_* code (ep/ep.h) for the rest (a bad rank,
 * an MPI failure, ...), and never lets a C++ exception out; xios_lite_last_error()
 * gives the message of the calling thread's last failure (in this interface
 * or in ep/ep.h's: the two share it). Collectivity and threads are those of the
 * C++ calls (client.hpp): create, close_definition and finalise are
 * collective over the endpoints; each thread uses its own client handle. */
#ifndef XIOS_LITE_XIOS_LITE_H
#define XIOS_LITE_XIOS_LITE_H

#include <mpi.h>
#include <stdint.h>

#include "ep/ep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The output library's return codes, beside ep/ep.h's EP_ERR_* (which it
 * leaves free: the C interfaces' codes never overlap). */
/* NOLINTBEGIN(readability-identifier-naming) */
enum {
  XIOS_LITE_ERR_IO = 12,    /**< a file could not be opened, read or written */
  XIOS_LITE_ERR_CONFIG = 13 /**< a configuration's content is invalid */
};
/* NOLINTEND(readability-identifier-naming) */

/* A C interface keeps C's naming (snake_case types, upper-case constants). */
/* NOLINTBEGIN(readability-identifier-naming) */

typedef struct xios_lite_world_s* xios_lite_world_t;
typedef struct xios_lite_client_s* xios_lite_client_t;

enum { XIOS_LITE_ROLE_CLIENT = 0, XIOS_LITE_ROLE_SERVER = 1 };
enum { XIOS_LITE_MODE_ENDPOINTS = 0, XIOS_LITE_MODE_FUNNELED = 1, XIOS_LITE_MODE_SYNCHRONOUS = 2 };

/* ---- roles (one thread per process) ---- */
/** split_world(world, role): collective over `world`. */
int xios_lite_world_split(MPI_Comm world, int role, xios_lite_world_t* out);
int xios_lite_world_split_f(MPI_Fint world, int role, xios_lite_world_t* out);
/** split_world(world, role, context): several contexts in one run (a
 * client process names the context its threads write, servers pass NULL
 * or ""); collective over `world`. */
int xios_lite_world_split_context(MPI_Comm world, int role, const char* context,
                                  xios_lite_world_t* out);
int xios_lite_world_split_context_f(MPI_Fint world, int role, const char* context,
                                    xios_lite_world_t* out);
/** split_world with the last `n_servers` ranks of `world` as servers. */
int xios_lite_world_split_last_ranks(MPI_Comm world, int n_servers, xios_lite_world_t* out);
int xios_lite_world_split_last_ranks_f(MPI_Fint world, int n_servers, xios_lite_world_t* out);
/** This process's role (XIOS_LITE_ROLE_*). Local. */
int xios_lite_world_role(xios_lite_world_t world, int* role);
/** The communicator of this role's processes (create the endpoints over it). Local. */
int xios_lite_world_local(xios_lite_world_t world, MPI_Comm* local);
int xios_lite_world_local_f(xios_lite_world_t world, MPI_Fint* local);
/** free_world: collective over the processes of the role; *world becomes NULL. */
int xios_lite_world_free(xios_lite_world_t* world);

/** run_server on a server process: serves until every client has finalised. */
int xios_lite_run_server(xios_lite_world_t world, const char* config_path);

/* ---- clients (each thread with its own handle) ---- */
/** Client(comm, world, config_path, mode). Collective over the endpoints of
 * `comm` and the servers. `comm` must outlive the client. */
int xios_lite_client_create(ep_comm_t comm, xios_lite_world_t world, const char* config_path,
                            int mode, xios_lite_client_t* out);
/** Sets this client's block of domain `domain_id` (global, 0-based indices). Local. */
int xios_lite_set_domain_block(xios_lite_client_t client, const char* domain_id, int ibegin, int ni,
                               int jbegin, int nj);
/** Masks points of this client's block of `domain_id` (land, say): `valid`
 * holds ni x nj entries (ni fastest, as a Fortran valid(ni, nj)), 0 =
 * masked; (ni, nj) must be the block's. Masked points are left out of every
 * temporal operation and are _FillValue in the files. Local; after
 * set_domain_block, before close_definition. */
int xios_lite_set_domain_mask(xios_lite_client_t client, const char* domain_id, const int* valid,
                              int ni, int nj);
/* ---- definitions set by the model before close_definition (XIOS's
 * xios_set_domain_attr, xios_set_axis_attr, xios_define_calendar,
 * xios_set_timestep), one attribute per call, named as in XIOS (see
 * xios_lite/model_attributes.hpp for what each is). Local. ---- */
/** ni_glo, nj_glo, ibegin, ni, jbegin, nj (0-based), nvertex; how the
 * model's arrays hold the block (XIOS's meaning): data_dim (1 or 2),
 * data_ibegin, data_ni, data_jbegin, data_nj (negative begins: a halo),
 * data_n_index (the number of data_i_index values). */
int xios_lite_set_domain_attr_int(xios_lite_client_t client, const char* domain_id,
                                  const char* name, int value);
/** data_i_index, data_j_index: `n` 0-based indices from data_ibegin /
 * data_jbegin, one per value of a compressed array (the values of each
 * level then follow the indices; the points no index names are missing). */
int xios_lite_set_domain_attr_index(xios_lite_client_t client, const char* domain_id,
                                    const char* name, const int* values, int n);
/** lonvalue_1d, latvalue_1d, lonvalue_2d, latvalue_2d, bounds_lon_1d,
 * bounds_lat_1d, bounds_lon_2d, bounds_lat_2d, area: this client's block's
 * values, an array of `rank` extents (Fortran order, i fastest). */
int xios_lite_set_domain_attr_double(xios_lite_client_t client, const char* domain_id,
                                     const char* name, const double* values, int rank,
                                     const int64_t* extents);
/** type: "rectilinear" or "curvilinear". */
int xios_lite_set_domain_attr_text(xios_lite_client_t client, const char* domain_id,
                                   const char* name, const char* value);
/** mask_1d / mask_2d of this client's block: 0 masked, else valid. */
int xios_lite_set_domain_attr_mask(xios_lite_client_t client, const char* domain_id,
                                   const int* valid, int rank, const int64_t* extents);
/** n_glo; begin and n (0-based): this client's part of an axis that stands
 * alone in a grid (elsewhere every client has the whole axis, and they are
 * refused); data_begin and data_n (an array holding the levels otherwise)
 * are refused with EP_ERR_ARGUMENT naming them. */
int xios_lite_set_axis_attr_int(xios_lite_client_t client, const char* axis_id, const char* name,
                                int value);
/** data_index: refused as data_begin is (see xios_lite_set_axis_attr_int). */
int xios_lite_set_axis_attr_index(xios_lite_client_t client, const char* axis_id, const char* name,
                                  const int* values, int n);
/** value (n_glo), bounds (2 x n_glo). */
int xios_lite_set_axis_attr_double(xios_lite_client_t client, const char* axis_id, const char* name,
                                   const double* values, int rank, const int64_t* extents);
/** name, unit, positive, long_name, standard_name. */
int xios_lite_set_axis_attr_text(xios_lite_client_t client, const char* axis_id, const char* name,
                                 const char* value);
/** The calendar: type ("Gregorian", "NoLeap", "D360", "AllLeap", "Julian",
 * "user_defined"), start date, time origin, timestep (a duration, "1800s");
 * NULL or "" leaves one unset. */
int xios_lite_define_calendar(xios_lite_client_t client, const char* type, const char* start_date,
                              const char* time_origin, const char* timestep);
/** A user_defined calendar's day length (seconds) and month lengths (days). */
int xios_lite_define_calendar_user(xios_lite_client_t client, int64_t day_length,
                                   const int* month_lengths, int months);
/** The timestep as a duration ("1800s", "1h", "30mi"). */
int xios_lite_set_timestep(xios_lite_client_t client, const char* duration);

/** Collective: assembles and completes the definitions, checks every block, tells the servers. */
int xios_lite_close_definition(xios_lite_client_t client);
/** Starts timestep `step` (1, 2, ...). */
int xios_lite_update_calendar(xios_lite_client_t client, int64_t step);
/** Hands this step's values of field `id`: an array of `rank` extents,
 * (ni, nj) for a field on a 2-D grid, (ni, nj, levels) for a grid with an
 * axis, (ni, nj, n1, n2) for a grid with two axes, ni fastest (C: data[(k*nj + j)*ni + i]; Fortran:
 * a(i, j, k)). The extents must equal this client's block of the field's domain and the axis size,
 * otherwise EP_ERR_COUNT with both shapes in the message. With the domain's data_* set, the array
 * is the model's own (halo'd, 1-D or compressed): any rank whose extents hold the values per level
 * the data_* give, times the levels (the last extent when there are several). */
int xios_lite_send_field(xios_lite_client_t client, const char* id, const double* data, int rank,
                         const int64_t* extents);
/** The same from single-precision values (the file's precision is the
 * field's `prec`). */
int xios_lite_send_field_float(xios_lite_client_t client, const char* id, const float* data,
                               int rank, const int64_t* extents);
/** XIOS's xios_recv_field: fills `data` (extents as for send_field) with
 * this client's block of field `id` from the file in read mode holding it,
 * the record of the current step's period (record 0 before the first
 * update_calendar). Local. A missing file, variable or record is
 * EP_ERR_ARGUMENT with the field, step, record and file in the message. */
int xios_lite_recv_field(xios_lite_client_t client, const char* id, double* data, int rank,
                         const int64_t* extents);
/** Collective: flushes, waits for the servers, prints the report (EP rank 0).
 * Releases the client and sets *client to NULL, also on failure. */
int xios_lite_finalise(xios_lite_client_t* client);
/** Releases a client without finalising (after an error): it tells the
 * servers and the other clients that it left, so that nobody waits for it
 * (bounded by the finalise timeout). */
int xios_lite_client_free(xios_lite_client_t* client);

/** Message of the calling thread's last failure in this interface or in
 * ep/ep.h's ("" when none), the same as ep_last_error(). */
const char* xios_lite_last_error(void);

/* NOLINTEND(readability-identifier-naming) */

#ifdef __cplusplus
}
#endif

#endif /* XIOS_LITE_XIOS_LITE_H */
