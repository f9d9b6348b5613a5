// What the stand-alone model programs of these tests (mpmd_model,
// sync_kill_model, kill_model, config_model) share: MPI started with
// MPI_THREAD_MULTIPLE or a usage message, each endpoint's share of the rows
// of a domain, the steps of model_field's field and a run on every endpoint. Header only, so the
// programs share it without a library.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "model_field.hpp"
#include "xios_lite/client.hpp"

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

/// Writes model_field's field "t" on domain "d" from this endpoint's even
/// share of the rows: sets the block, closes the definition, then calls
/// update_calendar and send_field at steps 1..steps. Collective as the calls.
inline void write_field_steps(xios_lite::Client& client, const ep::Communicator& comm, int steps) {
  const Rows rows = even_rows(model_field::kNj, comm);
  client.set_domain_block("d", {0, model_field::kNi, rows.j0, rows.j1 - rows.j0});
  client.close_definition();
  for (int s = 1; s <= steps; ++s) {
    client.update_calendar(s);
    client.send_field("t", model_field::rows(s, rows.j0, rows.j1));
  }
}

/// Runs `body(comm)` on one endpoint per OpenMP thread of this process
/// (endpoints made over `local`, freed at the end); `body` returns whether
/// its endpoint's checks passed. An exception is printed as "<who>: <what>".
/// Returns how many endpoints failed. Collective over `local`.
template <class Body>
int run_on_endpoints(MPI_Comm local, const std::string& who, Body&& body) {
  std::vector<ep::Communicator> eps;
  int failed = 0;
#pragma omp parallel reduction(+ : failed)
  {
#pragma omp single
    eps = ep::create_endpoints(local, omp_get_num_threads());
    ep::Communicator& comm = eps[static_cast<std::size_t>(omp_get_thread_num())];
    try {
      failed += body(comm) ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
      failed += 1;
    }
    comm.free();
  }
  return failed;
}

}  // namespace xios_test::model_program
