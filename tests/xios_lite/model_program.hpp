// What the stand-alone model programs of these tests (mpmd_model,
// sync_kill_model, kill_model, config_model) share: MPI started with
// MPI_THREAD_MULTIPLE or a usage message, and each endpoint's share of the
// rows of a domain. Header only, so the programs share it without a library.
#pragma once

#include <mpi.h>

#include <cstdio>

#include "ep/communicator.hpp"

namespace xios_test::model_program {

/// MPI_Init_thread asking for MPI_THREAD_MULTIPLE. With fewer than
/// `min_args` arguments (the program's name included) or a lower thread
/// level, prints "usage: <usage>" and aborts the job. Call once, first.
inline void init_mpi(int* argc, char*** argv, int min_args, const char* usage) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (*argc < min_args || provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "usage: %s (needs MPI_THREAD_MULTIPLE)\n", usage);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/// Rows j0 .. j1 (j1 excluded) of a domain of `nj` rows: this endpoint's
/// share when the rows are split evenly over the endpoints of `comm`.
struct Rows {
  int j0;
  int j1;
};
inline Rows even_rows(int nj, const ep::Communicator& comm) {
  return {nj * comm.rank() / comm.size(), nj * (comm.rank() + 1) / comm.size()};
}

}  // namespace xios_test::model_program
