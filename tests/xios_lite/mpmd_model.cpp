// The model side of an MPMD launch, as XIOS users launch it:
//
//   mpiexec -n 1 mpmd_model iodef_minimal.xml : -n 1 xios_lite_server iodef_minimal.xml
//
// Every thread is a client; after finalise the model reads the file back
// and checks every value. Exit status 0 when all is right, 1 otherwise.
#include <mpi.h>
#include <netcdf.h>
#include <omp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ep/communicator.hpp"
#include "model_field.hpp"
#include "model_program.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/server.hpp"

using xios_test::model_field::kNi;
using xios_test::model_field::kNj;

int main(int argc, char** argv) {
  xios_test::model_program::init_mpi(&argc, &argv, 2, "mpmd_model CONFIG.xml");
  const std::string cfg = argv[1];
  constexpr int kSteps = 3;
  xios_lite::World world = xios_lite::split_world(MPI_COMM_WORLD, xios_lite::Role::kClient);
  int failed = xios_test::model_program::run_on_endpoints(
      world.local, "mpmd_model", [&](ep::Communicator& comm) {
        xios_lite::ClientOptions options;
        options.print_report = true;
        xios_lite::Client client(comm, world, cfg, options);
        xios_test::model_program::write_field_steps(client, comm, kSteps);
        (void)client.finalise();
        return true;
      });
  if (world.local != MPI_COMM_NULL) {
    int rank = 0;
    MPI_Comm_rank(world.local, &rank);
    if (rank == 0 && failed == 0) {
      int nc = -1;
      int var = -1;
      std::vector<double> got(static_cast<std::size_t>(kSteps) * kNj * kNi);
      if (nc_open("minimal_out.nc", NC_NOWRITE, &nc) != NC_NOERR ||
          nc_inq_varid(nc, "t", &var) != NC_NOERR ||
          nc_get_var_double(nc, var, got.data()) != NC_NOERR) {
        std::fprintf(stderr, "mpmd_model: cannot read t from minimal_out.nc\n");
        failed = 1;
      } else {
        failed += xios_test::model_field::mismatches(got, kSteps);
        nc_close(nc);
        std::printf("mpmd_model: %s\n", failed == 0 ? "file read back exactly" : "values differ");
      }
    }
  }
  xios_lite::free_world(world);
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
