// Roles and the server side.
//
// Every process of MPI_COMM_WORLD is either a client process (its threads are
// output clients) or a server process. Two launches lead to the same World:
//
//   in-program split: the last N ranks serve
//     World w = split_world(MPI_COMM_WORLD, role_of_last_ranks(MPI_COMM_WORLD, N));
//     if (w.role == Role::kServer) { run_server(w, "iodef.xml"); }
//     else { ... clients ... }
//
//   MPMD: mpiexec -n 2 model : -n 1 xios_lite_server iodef.xml
//     the model calls split_world(MPI_COMM_WORLD, Role::kClient) and the
//     xios_lite_server executable calls split_world(..., Role::kServer).
//
//   contexts opened at run time on the same clients (XIOS's launch:
//   xios_initialize, then xios_context_initialize per context): see
//   xios_lite/contexts.hpp (initialize, open_context, close_contexts,
//   serve_contexts); xios_lite_server runs serve_contexts for such clients.
//
// A server process runs one or more receiving endpoints (one thread each,
// ServerOptions::threads) and one writer thread that makes every NetCDF
// call, so writing overlaps receiving. The endpoints of all server processes
// split each domain into row bands; a process writes its endpoints' adjacent
// bands as one block.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "xios_lite/report.hpp"

namespace xios_lite {

enum class Role { kClient, kServer };

struct World {
  Role role = Role::kClient;
  MPI_Comm world = MPI_COMM_NULL;  ///< the communicator split (usually MPI_COMM_WORLD)
  MPI_Comm local = MPI_COMM_NULL;  ///< this role's processes
  int client_leader = 0;           ///< world rank of the first client process
  int server_leader = -1;          ///< world rank of the first server process (-1: no servers)
  int client_processes = 0;
  int server_processes = 0;
  /// The context these processes run (several contexts: see the
  /// split_world overload below); "" : the configuration's only one.
  /// Client and run_server use it when they are not given one.
  std::string context;
  /// With several contexts, `world` is this context's part of the world
  /// (its clients and its share of the servers), owned: free_world frees it.
  MPI_Comm context_world = MPI_COMM_NULL;
  /// The clients split with initialize() (xios_lite/contexts.hpp): they
  /// open their contexts at run time with open_context and the servers
  /// serve them with serve_contexts instead of run_server. The same on
  /// every process of the split.
  bool open_contexts = false;
  /// With open_contexts: a private duplicate of the split communicator
  /// (the same ranks) that carries the contexts' announcements and
  /// connection handshakes, so that they never match the model's own
  /// messages on MPI_COMM_WORLD. Owned: free_world frees it.
  MPI_Comm control = MPI_COMM_NULL;
  /// A context's World from open_context: the tag its Clients connect with
  /// (ClientOptions::connection_tag, when set, is used instead).
  std::optional<int> connection_tag;
};

/// Role of the calling process when the last `n_servers` ranks of `world`
/// serve. Local. Throws ep::Error(kArgument) when n_servers is negative or
/// leaves no client.
[[nodiscard]] Role role_of_last_ranks(MPI_Comm world, int n_servers);

/// Splits `world` by role. Collective over `world`, called by one thread per
/// process. Throws ep::Error on every process when there is no client
/// process or when the server processes are not the last ranks of `world`.
[[nodiscard]] World split_world(MPI_Comm world, Role role);

/// Several contexts in one run (coupled components, XIOS's contexts with
/// their own clients): a client process names the context its threads
/// write (every thread of a process the same); servers pass "". When the
/// clients name more than one context, each context gets its own clients
/// and a share of the server processes (in the order the contexts first
/// appear among the client ranks, as even as possible, the first ones one
/// more) and the World returned is that context's: `world` holds only its
/// clients and servers, and Client and run_server on it know nothing of
/// the other contexts. Without servers (synchronous mode) each context's
/// clients write alone. Collective over `world`, one thread per process.
/// Throws ep::Error on every process for fewer server processes than
/// contexts (but more than none), clients that name a context and clients
/// that name none, a context name over 63 characters, and the errors of
/// split_world(world, role). With one context (or none named) it is
/// split_world(world, role) and sets World::context.
[[nodiscard]] World split_world(MPI_Comm world, Role role, const std::string& context);

/// Frees world.local (and the context's part of the world). Collective
/// over the processes of the role; with open_contexts it also frees
/// World::control, a communicator of the whole split, so that every process
/// of the split (clients and servers alike) calls free_world.
void free_world(World& world);

struct ServerOptions {
  /// Overrides the configuration's finalise_timeout.
  std::optional<double> finalise_timeout_s;
  /// Receiving endpoints (threads) of this server process, 1..256. Unset:
  /// the environment variable XIOS_LITE_SERVER_THREADS, else 1. Processes
  /// may differ; a value out of range on any server process fails them all.
  std::optional<int> threads;
};

/// Serves the clients until every one of them has finalised: receives,
/// reassembles and writes. Collective over the server processes (and part
/// of the client/server intercommunicator creation, which the clients'
/// Client constructor completes). Called by one thread per server process;
/// it starts the process's other receiving endpoints' threads and joins
/// them before returning. Returns the process's report: its endpoints'
/// busy/idle time and bytes received summed, its writer's figures (the
/// clients' reports list every endpoint, the writer's figures under the
/// process's first one).
/// Throws ep::Error for a World from initialize() (its clients open their
/// contexts: serve_contexts serves them), a configuration error or definitions that differ
/// from the clients' (at connection), for a failed definition on the
/// clients, for a write error (after every client was told), for missing
/// data (naming file, variable, time and clients), and for clients that
/// left without finalise or went quiet past the timeout (naming them; see
/// docs/xios_lite.md, "No wait without an end").
ServerReport run_server(const World& world, const std::string& config_path,
                        const ServerOptions& options = {});

}  // namespace xios_lite
