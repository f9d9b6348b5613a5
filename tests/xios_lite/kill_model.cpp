// A process dies mid-run (SIGKILL), launched with mpiexec --enable-recovery
// so that the others go on:
//
//   kill_model CONFIG client   the last client process dies at step 3; the
//                              survivors run on (40 steps of 100 ms)
//   kill_model CONFIG server   the server process dies 1 s into the run
//
// Every surviving process prints what it saw, one line each, and ends:
//   "client <r>: during: <the first error of update_calendar, or none>"
//   "client <r>: finalise: <finalise's error, or none>"
//   "server: <run_server's error, or none>"
//   "process <world rank>: done after <seconds> s"
// The test (CMakeLists.txt) checks the lines and the time. Before, the
// surviving clients hung in finalise (rc 124 under timeout) when a client
// died, and took 45 s (a timeout per call) when the server died.
#include <mpi.h>
#include <omp.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "model_field.hpp"
#include "model_program.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/server.hpp"

namespace {

namespace mf = xios_test::model_field;

void run_client(const xios_lite::World& world, const std::string& config, bool kill_client) {
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(world.local, &process);
  MPI_Comm_size(world.local, &processes);
  const bool doomed = kill_client && process == processes - 1;
  std::vector<ep::Communicator> eps;
#pragma omp parallel default(shared)
  {
#pragma omp single
    eps = ep::create_endpoints(world.local, omp_get_num_threads());
    ep::Communicator& comm = eps[static_cast<std::size_t>(omp_get_thread_num())];
    const int r = comm.rank();
    const auto [j0, j1] = xios_test::model_program::even_rows(mf::kNj, comm);
    std::string during = "none";
    std::string at_finalise = "none";
    try {
      xios_lite::ClientOptions options;
      options.print_report = false;
      xios_lite::Client client(comm, world, config, options);
      client.set_domain_block("dom", {0, mf::kNi, j0, j1 - j0});
      client.close_definition();
      for (int s = 1; s <= 40; ++s) {
        try {
          client.update_calendar(s);
        } catch (const ep::Error& e) {
          during = during == "none" ? e.what() : during;
        }
        if (doomed && s == 3 && comm.local_thread() == 0) {
          std::raise(SIGKILL);
        }
        try {
          client.send_field("t", mf::rows(s, j0, j1));
        } catch (const ep::Error& e) {
          during = during == "none" ? e.what() : during;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(kill_client ? 100 : 50));
      }
      try {
        (void)client.finalise();
      } catch (const ep::Error& e) {
        at_finalise = e.what();
      }
    } catch (const std::exception& e) {
      at_finalise = std::string("outside: ") + e.what();
    }
#pragma omp critical
    {
      std::printf("client %d: during: %s\nclient %d: finalise: %s\n", r, during.c_str(), r,
                  at_finalise.c_str());
      std::fflush(stdout);
    }
  }
  // The endpoints are not freed: the dead process's would never be.
}

}  // namespace

int main(int argc, char** argv) {
  xios_test::model_program::init_mpi(&argc, &argv, 3, "kill_model CONFIG client|server");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string config = argv[1];
  const std::string victim = argv[2];
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const xios_lite::World world =
      xios_lite::split_world(MPI_COMM_WORLD, xios_lite::role_of_last_ranks(MPI_COMM_WORLD, 1));
  if (world.role == xios_lite::Role::kServer) {
    if (victim == "server") {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        std::raise(SIGKILL);
      }).detach();
    }
    std::string error = "none";
    try {
      (void)xios_lite::run_server(world, config);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::printf("server: %s\n", error.c_str());
  } else {
    run_client(world, config, victim == "client");
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("process %d: done after %.1f s\n", rank, took);
  std::fflush(stdout);
  // A process of the job is dead: Open MPI 4.1's MPI_Finalize may then wait
  // for it in its closing fence (about one run in ten here), which is MPI's
  // business, not the output's. The survivors end without it.
  std::_Exit(0);
}
