// A small C++ model against the installed packages: the last rank serves,
// every thread of the other ranks is a client; 3 steps of t(j, i) =
// 1000 step + 10 j + i; a collectives allreduce sums the threads' rows.
// Prints "model_cpp: done" on client 0 when all went well.
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <span>
#include <vector>

#include <collectives/allreduce.hpp>
#include <collectives/communicator.hpp>
#include <collectives/ep_comm.hpp>
#include <ep/ep.hpp>
#include <xios_lite/client.hpp>
#include <xios_lite/server.hpp>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const char* config = argc > 1 ? argv[1] : "iodef.xml";
  constexpr int kNi = 8;
  constexpr int kNj = 4;
  int failed = 0;
  xios_lite::World world =
      xios_lite::split_world(MPI_COMM_WORLD, xios_lite::role_of_last_ranks(MPI_COMM_WORLD, 1));
  if (world.role == xios_lite::Role::kServer) {
    try {
      (void)xios_lite::run_server(world, config);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "model_cpp server: %s\n", e.what());
      failed = 1;
    }
  } else {
    std::vector<ep::Communicator> eps;
#pragma omp parallel reduction(+ : failed)
    {
#pragma omp single
      eps = ep::create_endpoints(world.local, omp_get_num_threads());
      ep::Communicator& comm = eps[static_cast<std::size_t>(omp_get_thread_num())];
      const int j0 = kNj * comm.rank() / comm.size();
      const int j1 = kNj * (comm.rank() + 1) / comm.size();
      std::vector<double> rows{static_cast<double>(j1 - j0)};
      collectives::allreduce(collectives::EpComm(comm), std::span<double>(rows), MPI_SUM);
      failed += rows[0] == kNj ? 0 : 1;
      try {
        xios_lite::ClientOptions options;
        options.print_report = false;
        xios_lite::Client out(comm, world, config, options);
        out.set_domain_block("d", {0, kNi, j0, j1 - j0});
        out.close_definition();
        for (int step = 1; step <= 3; ++step) {
          out.update_calendar(step);
          std::vector<double> t;
          for (int j = j0; j < j1; ++j) {
            for (int i = 0; i < kNi; ++i) t.push_back(1000.0 * step + 10.0 * j + i);
          }
          out.send_field("t", t);
        }
        (void)out.finalise();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "model_cpp client %d: %s\n", comm.rank(), e.what());
        failed += 1;
      }
      if (comm.rank() == 0 && failed == 0) {
        std::printf("model_cpp: done\n");
      }
      comm.free();
    }
  }
  xios_lite::free_world(world);
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
