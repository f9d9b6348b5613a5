// The two kernels of collectives/collectives.h that take MPI handles, with
// Fortran handles (MPI_Type_f2c, MPI_Op_f2c), for ep_kernels_mod; the
// others are bound there directly. Not a public C interface.
#include <mpi.h>

#include "collectives/collectives.h"

extern "C" {

// NOLINTBEGIN(readability-identifier-naming)

int ep_f_kernels_allreduce(ep_comm_t comm, void* inout, int count, MPI_Fint datatype, MPI_Fint op,
                           int algorithm, int radix) {
  return collectives_allreduce(comm, inout, count, MPI_Type_f2c(datatype), MPI_Op_f2c(op),
                               algorithm, radix);
}

int ep_f_halo_exchange(collectives_halo_t plan, void* field, int levels, MPI_Fint datatype) {
  return collectives_halo_exchange(plan, field, levels, MPI_Type_f2c(datatype));
}

// NOLINTEND(readability-identifier-naming)

}  // extern "C"
