/* XIOS's own interface, in C: the calls of XIOS's C layer (cxios_*), which
 * XIOS's Fortran module `xios` is made of and C and C++ models call, over
 * xios_lite. The Fortran module `xios` (fortran/xios/) binds to these.
 *
 *   MPI_Fint comm;
 *   cxios_init_client("client", 6, NULL, &comm);      one thread per process
 *   cxios_context_initialize("atmosphere", 10, &comm);
 *   xios_handle_t dom;
 *   cxios_domain_handle_create(&dom, "domain_A", 8);
 *   cxios_set_domain_ni_glo(dom, 100);                 one call per attribute
 *   cxios_set_domain_data_ibegin(dom, -1);             a halo'd array
 *   cxios_context_close_definition();
 *   for each step: cxios_update_calendar(step);
 *                  cxios_write_data_k83("field_A", 7, data, ni + 2, nj + 4, llm);
 *   cxios_context_finalize();
 *   cxios_finalize();
 *
 * Strings come with their length, as from Fortran (trailing blanks are
 * dropped). Every function returns 0 or a code of xios_lite/xios_lite.h
 * (XIOS_LITE_ERR_IO, XIOS_LITE_ERR_CONFIG, or ep/ep.h's EP_ERR_*) and the
 * message of the calling thread's last failure is cxios_last_error() (the
 * same as ep_last_error()); XIOS's calls return nothing, so a model written
 * for XIOS ignores the code and checks nothing, as it did. The few that
 * return a value in XIOS (cxios_is_defined_*, cxios_field_is_active)
 * return it here too, false after a failure.
 *
 * Threads: each OpenMP thread may be a client of its own
 * (cxios_context_initialize_ep with its endpoint); the contexts and the
 * current context are the calling thread's. cxios_init_client and
 * cxios_finalize are called by one thread per process. Collective:
 * cxios_init_client and cxios_finalize (MPI_COMM_WORLD, with the servers),
 * cxios_context_initialize, cxios_context_close_definition and
 * cxios_context_finalize (the context's clients). */
#ifndef XIOS_LITE_XIOS_H
#define XIOS_LITE_XIOS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "ep/ep.h"
#include "xios_lite/xios_date.h"
#include "xios_lite/xios_lite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NOLINTBEGIN(readability-identifier-naming) */

/** A handle of a context or of an element of its definitions (Fortran:
 * the daddr of type(xios_field), type(xios_file), ...). */
typedef void* xios_handle_t;

/** XIOS's xios_duration and xios_date (Fortran bind(C) types): the types of
 * xios_lite/xios_date.h under the names of XIOS's C interface. */
typedef xios_lite_duration cxios_duration;
typedef xios_lite_date cxios_date;

/** The types of attributes (xios_lite/xios_attributes.def). */
enum {
  CXIOS_STRING = 0,
  CXIOS_BOOL = 1,
  CXIOS_INT = 2,
  CXIOS_DOUBLE = 3,
  CXIOS_DURATION = 4,
  CXIOS_DATE = 5,
  CXIOS_INT_1D = 6,
  CXIOS_BOOL_1D = 7,
  CXIOS_BOOL_2D = 8,
  CXIOS_DOUBLE_1D = 9,
  CXIOS_DOUBLE_2D = 10,
  CXIOS_DOUBLE_3D = 11
};

/* ---- the process ---- */
/** xios_initialize: local_comm NULL unless the model split MPI_COMM_WORLD
 * itself; *return_comm gets the model's processes. Collective over
 * MPI_COMM_WORLD. Initialises MPI when the model did not. */
int cxios_init_client(const char* client_id, int len, const MPI_Fint* local_comm,
                      MPI_Fint* return_comm);
/** xios_finalize. */
int cxios_finalize(void);

/* ---- contexts ---- */
/** xios_context_initialize with the model's communicator: one client per process. */
int cxios_context_initialize(const char* context_id, int len, const MPI_Fint* comm);
/** The same with an endpoint: every thread of `comm` is a client of its own. */
int cxios_context_initialize_ep(const char* context_id, int len, ep_comm_t comm);
int cxios_context_close_definition(void);
int cxios_context_finalize(void);
/** xios_solve_inheritance: inheritance is solved at close here; nothing to do. */
int cxios_solve_inheritance(void);
int cxios_context_set_current(xios_handle_t context);
int cxios_context_get_current(xios_handle_t* context);

/* ---- handles and the definitions' tree ---- */
/** xios_get_handle: `kind` is "context", "field", "fieldgroup", "file",
 * "filegroup", "domain", "domaingroup", "axis", "axisgroup", "scalar",
 * "scalargroup", "grid", "gridgroup", "variable", "variablegroup",
 * "calendar_wrapper", "zoom_domain", "zoom_axis", ... (the kinds of
 * xios_attributes.def). */
int cxios_handle_create(const char* kind, const char* id, int len, xios_handle_t* out);
/** xios_is_valid_<kind>. */
bool cxios_valid_id(const char* kind, const char* id, int len);
/** xios_add_child: a new element of `child_kind` under `parent`; id_len < 0: no id. */
int cxios_add_child(xios_handle_t parent, const char* child_kind, const char* id, int id_len,
                    xios_handle_t* child);

/** One attribute of a handle, any type: `value` points to the type's C form
 * (char[len] with extents[0] = len for a string, int for a bool, int, double,
 * cxios_duration, cxios_date, or a contiguous array of int (bools 0/1) or
 * double with `rank` extents, first fastest). */
int cxios_set_attr(xios_handle_t h, const char* name, int name_len, int type, const void* value,
                   int rank, const int64_t* extents);
/** The same read back; *defined = 0 (value untouched) when not defined.
 * Strings are blank-padded to extents[0]; arrays fill at most the extents. */
int cxios_get_attr(xios_handle_t h, const char* name, int name_len, int type, void* value, int rank,
                   const int64_t* extents, int* defined);
bool cxios_is_defined_attr(xios_handle_t h, const char* name, int name_len);

/* One call per attribute, as XIOS names them: cxios_set_<kind>_<name>,
 * cxios_get_<kind>_<name>, cxios_is_defined_<kind>_<name>, for every
 * interface line of xios_attributes.def (XIOS_ATTRIBUTE and XIOS_REFUSED;
 * the table maps the latter onto the former) and the group kinds. An
 * attribute refused in configuration files and not set by the model (use
 * none) is refused alike when set here, at xios_close_context_definition.
 * Strings: (hdl, const char*, int len); scalars by value; arrays (hdl,
 * values, extent1[, extent2[, extent3]]). */
#define XIOS_C_string const char *value, int len
#define XIOS_C_OUT_string char *value, int len
#define XIOS_C_bool bool value
#define XIOS_C_OUT_bool bool* value
#define XIOS_C_int int value
#define XIOS_C_OUT_int int* value
#define XIOS_C_double double value
#define XIOS_C_OUT_double double* value
#define XIOS_C_duration cxios_duration value
#define XIOS_C_OUT_duration cxios_duration* value
#define XIOS_C_date cxios_date value
#define XIOS_C_OUT_date cxios_date* value
#define XIOS_C_int_1d const int *value, int extent1
#define XIOS_C_OUT_int_1d int *value, int extent1
#define XIOS_C_bool_1d const bool *value, int extent1
#define XIOS_C_OUT_bool_1d bool *value, int extent1
#define XIOS_C_bool_2d const bool *value, int extent1, int extent2
#define XIOS_C_OUT_bool_2d bool *value, int extent1, int extent2
#define XIOS_C_double_1d const double *value, int extent1
#define XIOS_C_OUT_double_1d double *value, int extent1
#define XIOS_C_double_2d const double *value, int extent1, int extent2
#define XIOS_C_OUT_double_2d double *value, int extent1, int extent2
#define XIOS_C_double_3d const double *value, int extent1, int extent2, int extent3
#define XIOS_C_OUT_double_3d double *value, int extent1, int extent2, int extent3

#define XIOS_C_DECLARE(kind, name, type)                               \
  int cxios_set_##kind##_##name(xios_handle_t hdl, XIOS_C_##type);     \
  int cxios_get_##kind##_##name(xios_handle_t hdl, XIOS_C_OUT_##type); \
  bool cxios_is_defined_##kind##_##name(xios_handle_t hdl);
#define XIOS_C_GROUPED_domain(name, type) XIOS_C_DECLARE(domaingroup, name, type)
#define XIOS_C_GROUPED_axis(name, type) XIOS_C_DECLARE(axisgroup, name, type)
#define XIOS_C_GROUPED_scalar(name, type) XIOS_C_DECLARE(scalargroup, name, type)
#define XIOS_C_GROUPED_grid(name, type) XIOS_C_DECLARE(gridgroup, name, type)
#define XIOS_C_GROUPED_field(name, type) XIOS_C_DECLARE(fieldgroup, name, type)
#define XIOS_C_GROUPED_file(name, type) XIOS_C_DECLARE(filegroup, name, type)
#define XIOS_C_GROUPED_variable(name, type) XIOS_C_DECLARE(variablegroup, name, type)
#define XIOS_C_GROUPED_calendar_wrapper(name, type)
#define XIOS_C_GROUPED_context(name, type)
#define XIOS_C_GROUPED_zoom_domain(name, type)
#define XIOS_C_GROUPED_zoom_axis(name, type)
#define XIOS_C_GROUPED_extract_domain(name, type)
#define XIOS_C_GROUPED_extract_axis(name, type)

#define XIOS_ATTRIBUTE(kind, name, type, use) \
  XIOS_C_DECLARE(kind, name, type)            \
  XIOS_C_GROUPED_##kind(name, type)
#include "xios_lite/xios_attributes.def"
#undef XIOS_ATTRIBUTE

/** Handles by id, as XIOS names them: cxios_<kind>_handle_create(&hdl, id, len).
 *  XIOS_C_HANDLE_KINDS(X) applies X to every kind (the definitions use it too). */
#define XIOS_C_HANDLE_KINDS(X) \
  X(context)                   \
  X(field)                     \
  X(fieldgroup)                \
  X(file)                      \
  X(filegroup)                 \
  X(domain)                    \
  X(domaingroup)               \
  X(axis)                      \
  X(axisgroup)                 \
  X(scalar)                    \
  X(scalargroup)               \
  X(grid)                      \
  X(gridgroup)                 \
  X(variable)                  \
  X(variablegroup)             \
  X(calendar_wrapper)
#define XIOS_C_HANDLE(kind) \
  int cxios_##kind##_handle_create(xios_handle_t* out, const char* id, int len);
XIOS_C_HANDLE_KINDS(XIOS_C_HANDLE)
#undef XIOS_C_HANDLE

/* ---- the calendar ---- */
int cxios_set_timestep(cxios_duration timestep);
/** xios_get_calendar_type: "Gregorian", "NoLeap", "D360", ..., blank-padded to len. */
int cxios_get_calendar_type(char* type, int len);
int cxios_get_time_origin(cxios_date* date);
int cxios_get_start_date(cxios_date* date);
int cxios_set_time_origin(cxios_date date);
int cxios_set_start_date(cxios_date date);

/* ---- the time loop ---- */
int cxios_update_calendar(int step);
/** xios_send_field: `rank` extents of the model's array (first fastest),
 * its values in that order; k8 double, k4 float. */
int cxios_write_data_k8(const char* field_id, int len, const double* data, int rank,
                        const int64_t* extents);
int cxios_write_data_k4(const char* field_id, int len, const float* data, int rank,
                        const int64_t* extents);
/** xios_recv_field into a double array. */
int cxios_read_data_k8(const char* field_id, int len, double* data, int rank,
                       const int64_t* extents);
/** XIOS's names for ranks 0 to 3 (the others through the forms above). */
int cxios_write_data_k80(const char* field_id, int len, const double* data);
int cxios_write_data_k81(const char* field_id, int len, const double* data, int extent1);
int cxios_write_data_k82(const char* field_id, int len, const double* data, int extent1,
                         int extent2);
int cxios_write_data_k83(const char* field_id, int len, const double* data, int extent1,
                         int extent2, int extent3);
/** xios_field_is_active: whether a file needs the field (after close). */
bool cxios_field_is_active(const char* field_id, int len);
/** The same with the failure as a code: *active = 0 or 1. */
int cxios_field_is_active_checked(const char* field_id, int len, int* active);
/** xios_getvar: a <variable> of the current context or of "xios", as
 * `type` (CXIOS_STRING: a char[value_len] blank-padded). *found = 0 when absent. */
int cxios_getvar(const char* name, int len, int type, void* value, int value_len, int* found);

/** The message of the calling thread's last failure ("" when none). */
const char* cxios_last_error(void);

/* NOLINTEND(readability-identifier-naming) */

#ifdef __cplusplus
}
#endif

#endif /* XIOS_LITE_XIOS_H */
