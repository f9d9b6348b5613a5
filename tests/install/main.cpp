// Downstream smoke program: compiled and linked against an installed ep by the
// install.find_package test (not run). It uses the public headers and one
// collective entry point so that a missing symbol or usage requirement fails.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include <ep/ep.hpp>

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  std::vector<ep::Communicator> endpoints = ep::create_endpoints(MPI_COMM_WORLD, 1);
  std::printf("EP rank %d of %d\n", endpoints[0].rank(), endpoints[0].size());
  endpoints[0].free();
  MPI_Finalize();
  return 0;
}
