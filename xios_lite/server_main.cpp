// xios_lite_server (installed also as xios_server.exe): the server
// executable of an MPMD launch
//
//   mpiexec -n 4 model : -n 1 xios_lite_server [iodef.xml] [--timeout SECONDS] [--threads N]
//   mpiexec -n 4 model : -n 1 xios_server.exe                  (XIOS's launch line)
//
// --threads N: receiving endpoints (threads) of each server process, per
// context (default: XIOS_LITE_SERVER_THREADS, else 1). --timeout: the
// finalise timeout (default: the configuration's, else 60 s).
//
// Which protocol the clients use is in the split itself: every process
// calls split_world (these ones with Role::kServer), and the clients'
// entries say whether they called initialize(), XIOS's xios_initialize
// (World::open_contexts):
// - they did: the clients open their contexts at run time (open_context)
//   and send their definitions with them; these processes run
//   serve_contexts and read no file;
// - they did not (split_world and Client): these processes run run_server
//   on the configuration file, ./iodef.xml when none is named (as XIOS's
//   xios_server.exe reads it), which the clients' definitions must match.
// Exit status 0 on success, 1 on any error (printed).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "xios_lite/contexts.hpp"
#include "xios_lite/server.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string config = "iodef.xml";
  int first_option = 1;
  if (argc > 1 && std::string(argv[1]).rfind("--", 0) != 0) {
    config = argv[1];
    first_option = 2;
  }
  xios_lite::ServerOptions options;
  for (int i = first_option; i < argc; ++i) {
    const std::string option = argv[i];
    if ((option != "--timeout" && option != "--threads") || i + 1 >= argc) {
      std::fprintf(stderr,
                   "xios_lite_server: unknown option or missing value: %s\n"
                   "usage: xios_lite_server [CONFIG.xml] [--timeout SECONDS] [--threads N]\n",
                   argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char* end = nullptr;
    const char* value = argv[++i];
    if (option == "--timeout") {
      options.finalise_timeout_s = std::strtod(value, &end);
    } else {
      options.threads = static_cast<int>(std::strtol(value, &end, 10));
    }
    if (end == value || *end != '\0') {
      std::fprintf(stderr, "xios_lite_server: %s takes a number, not '%s'\n", option.c_str(),
                   value);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int status = 0;
  try {
    xios_lite::World world = xios_lite::split_world(MPI_COMM_WORLD, xios_lite::Role::kServer);
    const xios_lite::ServerReport r = world.open_contexts
                                          ? xios_lite::serve_contexts(world, options)
                                          : xios_lite::run_server(world, config, options);
    std::printf(
        "xios_lite_server %d: received %.0f B, wrote %.0f B, %.1f MB/s, busy %.3f s, idle %.3f s\n",
        r.server, r.bytes_received, r.bytes_written, r.write_mbps(), r.busy_s, r.idle_s);
    xios_lite::free_world(world);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xios_lite_server (world rank %d): %s\n", rank, e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
