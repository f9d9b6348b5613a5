// Sync-then-kill: a crash loses at most one sync period.
//
//   mpiexec -n 2 sync_kill_model CONFIG.xml run   (last rank serves; after 4
//       steps and a pause for the server to write and sync, client rank 0
//       kills its own process with SIGKILL, which ends the whole job)
//   sync_kill_model CONFIG.xml check FILE.nc     (no MPI launch: reads the
//       file the killed job left and checks the synced records exactly)
//
// The configuration writes field "t" (16 x 8) every step with sync_freq 2ts.
#include <mpi.h>
#include <netcdf.h>
#include <omp.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "ep/communicator.hpp"
#include "model_field.hpp"
#include "model_program.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/server.hpp"

namespace {

using xios_test::model_field::kNi;
using xios_test::model_field::kNj;
constexpr int kSynced = 4;  // steps written and synced before the kill

int check(const std::string& path) {
  int nc = -1;
  int var = -1;
  int time_dim = -1;
  std::size_t records = 0;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR ||
      nc_inq_varid(nc, "t", &var) != NC_NOERR || nc_inq_dimid(nc, "time", &time_dim) != NC_NOERR ||
      nc_inq_dimlen(nc, time_dim, &records) != NC_NOERR) {
    std::printf("sync_kill_model: %s cannot be read after the kill\n", path.c_str());
    return 1;
  }
  if (records < kSynced) {
    std::printf("sync_kill_model: %s has %zu records, %d were synced\n", path.c_str(), records,
                kSynced);
    nc_close(nc);
    return 1;
  }
  std::vector<double> got(static_cast<std::size_t>(kSynced) * kNj * kNi);
  const std::size_t start[3] = {0, 0, 0};
  const std::size_t count[3] = {kSynced, kNj, kNi};
  int bad = nc_get_vara_double(nc, var, start, count, got.data()) == NC_NOERR ? 0 : 1;
  bad += xios_test::model_field::mismatches(got, kSynced);
  nc_close(nc);
  std::printf("sync_kill_model: %s: %zu records, the %d synced ones %s\n", path.c_str(), records,
              kSynced, bad == 0 ? "read back exactly" : "differ");
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[2]) == "check") {
    return check(argv[3]);
  }
  xios_test::model_program::init_mpi(&argc, &argv, 3, "sync_kill_model CONFIG.xml run|check FILE");
  const std::string cfg = argv[1];
  xios_lite::World world =
      xios_lite::split_world(MPI_COMM_WORLD, xios_lite::role_of_last_ranks(MPI_COMM_WORLD, 1));
  if (world.role == xios_lite::Role::kServer) {
    try {
      (void)xios_lite::run_server(world, cfg);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sync_kill_model server: %s\n", e.what());
    }
    MPI_Finalize();
    return 0;
  }
  std::vector<ep::Communicator> eps;
#pragma omp parallel
  {
#pragma omp single
    eps = ep::create_endpoints(world.local, omp_get_num_threads());
    ep::Communicator& comm = eps[static_cast<std::size_t>(omp_get_thread_num())];
    xios_lite::ClientOptions options;
    options.print_report = false;
    xios_lite::Client client(comm, world, cfg, options);
    xios_test::model_program::write_field_steps(client, comm, kSynced + 1);
    // Step kSynced+1 pushes out step kSynced's record; give the server time
    // to write and sync it, then crash without finalising.
    client.update_calendar(kSynced + 2);
    std::this_thread::sleep_for(std::chrono::seconds(3));
#pragma omp barrier
    if (comm.rank() == 0) {
      std::printf("sync_kill_model: killing the model after %d synced steps\n", kSynced);
      std::fflush(stdout);
      std::raise(SIGKILL);
    }
#pragma omp barrier
    std::this_thread::sleep_for(std::chrono::seconds(60));  // the kill ends the job first
  }
  MPI_Finalize();
  return 1;
}
