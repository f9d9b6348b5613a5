/* The C interface of the kernels a model calls from collectives/, over an
 * endpoint communicator (ep_comm_t of ep/ep.h): the recursive-k allreduce,
 * the halo exchange plan, the spectral transposition plan and the two Krylov
 * solves (GCR on the Helmholtz problem, CG on the 27-point Poisson problem).
 * Fortran: module ep_kernels_mod (fortran/ep_kernels_mod.f90).
 *
 * Each function is the C++ kernel of the same name with collectives::EpComm
 * over the endpoint (collectives/communicator.hpp); what each needs and does
 * is documented there, and only the choices a model makes are arguments here.
 * Errors: EP_OK or an EP_ERR_* code of ep/ep.h, the message in
 * ep_last_error() (the calling thread's), naming the call and the EP rank.
 * Threads: every thread calls with its own endpoint handle and its own plan
 * handles; a plan belongs to the thread that created it. "Collective" means
 * every endpoint of the communicator calls, in the same order. */
#ifndef COLLECTIVES_COLLECTIVES_H
#define COLLECTIVES_COLLECTIVES_H

#include <mpi.h>

#include "ep/ep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A C interface keeps C's naming (snake_case types, upper-case constants). */
/* NOLINTBEGIN(readability-identifier-naming) */

/** Allreduce algorithms (collectives::AllreduceAlgorithm). */
enum {
  COLLECTIVES_ALLREDUCE_LIBRARY = 0,            /**< ep_allreduce (hierarchical) */
  COLLECTIVES_ALLREDUCE_RECURSIVE_DOUBLING = 1, /**< recursive-k with k = 2 */
  COLLECTIVES_ALLREDUCE_RECURSIVE_K = 2         /**< recursive-k with the given radix */
};

/** Halo algorithms (collectives::HaloAlgorithm), all giving the same halos. */
enum {
  COLLECTIVES_HALO_TWO_SWEEP = 0,
  COLLECTIVES_HALO_NEIGHBOR = 1,
  COLLECTIVES_HALO_DIRECT = 2,
  COLLECTIVES_HALO_SPLIT = 3
};

/** Stencils: 5 (no corners) or 9 points. */
enum { COLLECTIVES_STENCIL_FIVE_POINT = 5, COLLECTIVES_STENCIL_NINE_POINT = 9 };

/** Spaces of the transposition (collectives::Space). */
enum {
  COLLECTIVES_SPACE_GRID = 0,
  COLLECTIVES_SPACE_YZ = 1,
  COLLECTIVES_SPACE_XZ = 2,
  COLLECTIVES_SPACE_SPECTRAL = 3
};

/** CG preconditioners (collectives::solvers::CgPreconditioner). */
enum {
  COLLECTIVES_CG_NONE = 0,
  COLLECTIVES_CG_JACOBI = 1,
  COLLECTIVES_CG_SYMMETRIC_GAUSS_SEIDEL = 2
};

/** In-place allreduce of `count` elements with one of the algorithms above
 * (radix: k of RECURSIVE_K, >= 2; ignored otherwise). datatype: double,
 * float, int or long long, by their C or Fortran handle (MPI_DOUBLE or
 * MPI_REAL8...); any other is EP_ERR_ARGUMENT. Collective. */
int collectives_allreduce(ep_comm_t comm, void* inout, int count, MPI_Datatype datatype, MPI_Op op,
                          int algorithm, int radix);

/** A halo exchange plan (collectives::HaloPlan): the ni x nj domain split
 * evenly into px x py subdomains (subdomain by * px + bx belongs to EP rank
 * by * px + bx; ranks beyond px * py own nothing), halo `width`, a stencil,
 * an algorithm, and land: NULL, or ni * nj flags (index gj * ni + gi,
 * nonzero = land) whose all-land subdomains take no part. Collective;
 * every endpoint passes the same values (a difference is an error on every
 * endpoint, not a hang). */
typedef struct collectives_halo_s* collectives_halo_t;
int collectives_halo_create(ep_comm_t comm, int ni, int nj, int px, int py, int periodic_x,
                            int periodic_y, int width, int stencil, int algorithm, const int* land,
                            collectives_halo_t* plan);
/** This endpoint's subdomain: nx x ny interior cells from global (x0, y0),
 * *takes_part 0 for a land or spare rank (nx = ny = 0). A field of `levels`
 * levels holds (nx + 2 width)(ny + 2 width) levels elements, x fastest, then
 * y, then the level; the interior starts at (width, width). Local. */
int collectives_halo_local(collectives_halo_t plan, int* nx, int* ny, int* x0, int* y0,
                           int* takes_part);
/** Fills the halo of one field of `levels` levels of `datatype` (elements up
 * to 16 bytes; the size must be the field size above). Collective over the
 * endpoints that take part (a land rank returns at once). */
int collectives_halo_exchange(collectives_halo_t plan, void* field, int levels,
                              MPI_Datatype datatype);
/** Releases the plan and sets *plan to NULL. Collective (the plan's private
 * communicator is freed): free plans in the same order on every endpoint. */
int collectives_halo_free(collectives_halo_t* plan);

/** A spectral transposition plan (collectives::TransposePlan of doubles):
 * an nx x ny x nz field on a cx x cy grid of EP ranks (cx * cy = size).
 * Collective, the same shape everywhere. */
typedef struct collectives_transpose_s* collectives_transpose_t;
int collectives_transpose_create(ep_comm_t comm, int nx, int ny, int nz, int cx, int cy,
                                 collectives_transpose_t* plan);
/** The local box of `space`: first point lo[3] and extent n[3] (x, y, z);
 * its array holds n[0] n[1] n[2] doubles, x fastest. Local. */
int collectives_transpose_box(collectives_transpose_t plan, int space, int* lo, int* n);
/** grid -> spectral and back (through yz and xz), bit for bit. Collective. */
int collectives_transpose_forward(collectives_transpose_t plan, const double* grid,
                                  double* spectral);
int collectives_transpose_backward(collectives_transpose_t plan, const double* spectral,
                                   double* grid);
/** Releases the plan and sets *plan to NULL. Collective, as for halo plans. */
int collectives_transpose_free(collectives_transpose_t* plan);

/** What a solve reports (collectives::solvers::SolveResult): residuals are
 * ||r|| / ||b||, the same on every endpoint; the box is this endpoint's
 * interior of the solution. */
typedef struct {
  int iterations;
  int converged;
  double initial_residual;
  double final_residual;
  double true_residual;
  int nx, ny, nz, x0, y0;
} collectives_solve_result_t;

/** GCR(restart) on the Helmholtz problem of collectives/solvers/gcr.hpp
 * (alpha, advection cx, cy, cz) on ni x nj x levels, split px x py; the
 * global sums use the allreduce algorithm given (radix as above). solution:
 * NULL, or room for `capacity` doubles that receives this endpoint's
 * nx * ny * nz interior (x fastest); too little room is EP_ERR_COUNT after
 * the solve. Collective. */
int collectives_gcr_solve(ep_comm_t comm, int ni, int nj, int px, int py, int periodic_x,
                          int periodic_y, int levels, double alpha, double cx, double cy, double cz,
                          int restart, int max_iterations, double tolerance,
                          int allreduce_algorithm, int radix, collectives_solve_result_t* result,
                          double* solution, long long capacity);
/** Preconditioned CG on HPCG's 27-point Poisson problem (exact solution all
 * ones; a non-periodic domain), as collectives_gcr_solve otherwise. */
int collectives_cg_solve(ep_comm_t comm, int ni, int nj, int px, int py, int levels,
                         int preconditioner, int max_iterations, double tolerance,
                         int allreduce_algorithm, int radix, collectives_solve_result_t* result,
                         double* solution, long long capacity);

/* NOLINTEND(readability-identifier-naming) */

#ifdef __cplusplus
}
#endif

#endif /* COLLECTIVES_COLLECTIVES_H */
