// One context served on the server processes: run_server's machinery
// (receiving endpoints, record assembly, writer thread, acknowledgements)
// for a context given by its parsed definitions and where its clients
// connect. run_server serves the one context of a split_world launch;
// serve_contexts one of these per context opened, each in its own thread.
#pragma once

#include <mpi.h>

#include "xios_lite/config.hpp"
#include "xios_lite/server.hpp"

namespace xios_lite::server {

struct ContextService {
  const char* call = "xios_lite::run_server";  ///< the public call, in messages
  /// This context's server processes. Every collective call of the context
  /// (the endpoints' creation, the parallel files' communicator) is made on
  /// it, so two contexts served at once by the same processes never mix
  /// their collectives.
  MPI_Comm servers = MPI_COMM_NULL;
  MPI_Comm peer = MPI_COMM_NULL;  ///< the connection's peer communicator (both leaders in it)
  int client_leader = 0;          ///< rank in `peer` of the clients' leader
  int tag = 0;                    ///< the connection handshake's tag
  ServerOptions options;
  /// Wait at most the timeout for the clients' leader to start connecting
  /// (its handshake message, probed, not taken), and fail on every server
  /// process of the context when it does not: a context opened with
  /// open_context whose clients never construct their Client must not
  /// leave the servers inside the connection, which has no timeout.
  /// run_server does not (its clients may compute before they connect).
  bool await_clients = false;
};

/// Serves the context until every client finalised (run_server, which see
/// for errors). Collective over `service.servers`, one thread per process.
ServerReport serve_context(Config cfg, const ContextService& service);

}  // namespace xios_lite::server
