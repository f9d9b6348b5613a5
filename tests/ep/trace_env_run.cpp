// A small traced run for the demo test: with EP_TRACE=<dir> in the
// environment (and no trace call in the program), every endpoint exchanges
// messages of every size class with its ring neighbours and joins an
// allreduce; the trace file of each process must appear when the program
// frees its communicator. scripts/plot_trace.py then draws the pictures
// (tests/ep/trace_plot_check.sh).
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "ep/ep.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int status = 0;
  std::vector<ep::Communicator> endpoints;
#pragma omp parallel reduction(| : status)
  {
    try {
#pragma omp single
      endpoints = ep::create_endpoints(MPI_COMM_WORLD, omp_get_num_threads());
      ep::Communicator& c = endpoints[static_cast<std::size_t>(omp_get_thread_num())];
      const int n = c.size();
      const int right = (c.rank() + 1) % n;
      const int left = (c.rank() + n - 1) % n;
      for (const int bytes : {8, 500, 5000, 50000}) {
        std::vector<char> out(static_cast<std::size_t>(bytes), 'o');
        std::vector<char> in(static_cast<std::size_t>(bytes));
        for (int step = 0; step < 3; ++step) {
          (void)c.sendrecv(out.data(), bytes, MPI_BYTE, right, 1, in.data(), bytes, MPI_BYTE, left,
                           1);
        }
      }
      double sum = 1.0;
      ep::allreduce(c, MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM);
      if (sum != static_cast<double>(n)) status = 1;
      c.free();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "trace_env_run: %s\n", e.what());
      status = 1;
    }
  }
  MPI_Finalize();
  return status;
}
