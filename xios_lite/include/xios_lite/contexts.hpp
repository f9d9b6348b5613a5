// XIOS's launch: contexts opened at run time on the same client processes,
// all served by one set of server processes.
//
// An XIOS model starts the servers knowing nothing (`mpiexec -n 2 model :
// -n 1 xios_server.exe`), then opens its contexts one after the other on the
// same processes (xios_context_initialize("atmosphere"), define, close,
// xios_context_initialize("surface"), ...), writes to them alternately and
// ends with xios_finalize. Here:
//
//   client processes (one thread each)
//     World w = initialize(MPI_COMM_WORLD, Role::kClient);
//     ContextLink atm = open_context(w, w.local, "atmosphere", atmosphere_xml);
//     ... every thread (its endpoint over atm.world.local):
//         Client(ep, atm.world, "iodef.xml", {.definitions = parsed atmosphere_xml});
//         define, close_definition  (atm.world carries the connection tag)
//     ContextLink srf = open_context(w, w.local, "surface", surface_xml);
//     ... every thread: its Client of "surface"; the time loop over both;
//         finalise each
//     free_world(atm.world); free_world(srf.world);
//     close_contexts(w);
//     free_world(w);
//   server processes (xios_lite_server does this when the clients called
//   initialize; run_server when they called split_world)
//     World w = initialize(MPI_COMM_WORLD, Role::kServer);
//     serve_contexts(w);
//     free_world(w);
//
// Protocol (src/transport/context_link.hpp): the first process of a
// context's clients sends the context's name and definitions (XML text, as
// the model may have edited them) to the server leader, which hands it to
// every server process in the order it received the announcements (so the
// server processes make their collective calls for the contexts in the same
// order), and answers, once every server process parsed the text, whether
// the servers serve the context (or why not). Its Clients connect with a
// tag fresh in its first process, which the announcement carried to the
// servers. Every context then has its own server
// endpoints, intercommunicator, assembly and writer thread, served
// concurrently with the others (see serve_contexts for NetCDF).
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "xios_lite/server.hpp"

namespace xios_lite {

/// XIOS's xios_initialize: the split of `world` for a launch whose clients
/// open their contexts at run time. Collective over `world`, one thread per
/// process: client processes call it with Role::kClient; server processes
/// with Role::kServer or split_world(world, Role::kServer) (the same call:
/// the servers learn from the clients' entries that contexts will be
/// opened, World::open_contexts). The World's `local` is this role's
/// processes; `control` a private duplicate of `world`. Throws ep::Error on
/// every process when some clients call initialize() and others
/// split_world, and for the errors of split_world.
[[nodiscard]] World initialize(MPI_Comm world, Role role);

/// An opened context: its World (client role: `world` the peer
/// communicator of the connection, `local` a duplicate of the context's
/// client communicator, `client_leader` the world rank of its first
/// process, the server counts, `context` its name, `connection_tag`) and
/// the tag the context's Clients connect with (a Client on link.world uses
/// it; ClientOptions::connection_tag may also name it). Free the
/// World with free_world (collective over the context's client processes).
struct ContextLink {
  World world;
  int connection_tag = 0;
};

/// XIOS's xios_context_initialize: opens `context` on the server processes
/// with the definitions `definitions_xml` (the XML text of an iodef.xml or
/// of the context alone, parsed on the servers with parse_config_string;
/// the Clients pass the same definitions, parsed, in
/// ClientOptions::definitions). Collective over `context_clients` (an MPI
/// communicator of this context's client processes, a subset of the client
/// processes of `world`; one thread per process). Several contexts may
/// live on the same processes or on disjoint ones, and may be opened at
/// the same time. Waits at most `timeout_s` (default 60 s) for the
/// servers' answer. Throws ep::Error, on every process of context_clients,
/// when `world` is not from initialize() on a client, when the servers
/// refuse the context (its text does not parse, its name is already open,
/// a second context with one_file files over several server processes:
/// see serve_contexts) naming the context and the server's message, and
/// when no answer comes in time.
[[nodiscard]] ContextLink open_context(const World& world, MPI_Comm context_clients,
                                       const std::string& context,
                                       const std::string& definitions_xml,
                                       std::optional<double> timeout_s = std::nullopt);

/// XIOS's xios_finalize: tells the servers that no more contexts will be
/// opened. Call after every Client of every context finalised. Collective
/// over the client processes of `world` (world.local, one thread per
/// process), bounded by `timeout_s` (default 60 s): throws ep::Error when
/// some client process does not come, or the server leader does not take
/// the message.
void close_contexts(const World& world, std::optional<double> timeout_s = std::nullopt);

/// The servers of a launch with initialize(): waits for the contexts to be
/// opened, serves each (receiving endpoints, assembly, writer thread, as
/// run_server does) concurrently with the others, and returns once the
/// clients called close_contexts and every opened context finalised.
/// Collective over the server processes (world.local), one thread per
/// process; each context runs ServerOptions::threads receiving endpoints
/// and one writer thread on every server process.
///
/// NetCDF: every NetCDF call of every context of a process takes one
/// process-wide lock (NetCDF-C is not thread-safe). A context with one_file
/// files over several server processes makes collective calls while it
/// holds the lock; two such contexts at once could each hold the lock on a
/// different process while waiting for the other process in their own
/// collective, so the servers refuse (at open_context, naming both) a
/// second such context while one is served. Any number of multiple_file
/// contexts, and one one_file context beside them, are served at once.
///
/// Waits: with no context being served, the servers wait at most the
/// timeout (ServerOptions::finalise_timeout_s, default 60 s) for the next
/// opening or close_contexts; each context's own waits are run_server's,
/// bounded by its finalise_timeout. Returns the process's figures summed
/// over its contexts. Throws ep::Error naming every context that failed
/// and why (a context refused at opening is the clients' error, not the
/// servers'), or the wait that ran out.
ServerReport serve_contexts(const World& world, const ServerOptions& options = {});

}  // namespace xios_lite
