// The clients' side of contexts opened at run time (xios_lite/contexts.hpp):
// a context's first process announces it to the server leader and waits for
// the answer, which every process of the context then learns.
#include "xios_lite/contexts.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "ep/error.hpp"
#include "transport/context_link.hpp"

namespace xios_lite {
namespace {

std::string seconds(double s) {
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + " s";
}

// The checks every process makes alike (so all throw, or none).
void require_client_world(const World& world, const char* call) {
  transport::require_open_contexts_world(
      world, Role::kClient, call, "called on a server process (the servers run serve_contexts)",
      "the World does not come from initialize() (split_world launches have one context per "
      "client process, served by run_server)");
}

// What the context's first process learned, for every process of the context.
struct Verdict {
  std::int32_t connection_tag = 0;
  std::int32_t client_leader = -1;
  std::int32_t server_processes = 0;
  std::int32_t error_bytes = 0;
};

// Broadcasts the leader's verdict over `comm`, each wait bounded: the
// leader's own waits are, so the others give it a little longer.
std::string share_verdict(MPI_Comm comm, bool leader, Verdict& v, std::string& error,
                          double limit_s) {
  if (leader) v.error_bytes = static_cast<std::int32_t>(error.size());
  MPI_Request request = MPI_REQUEST_NULL;
  ep::check_mpi(MPI_Ibcast(&v, sizeof v, MPI_BYTE, 0, comm, &request), "MPI_Ibcast", -1);
  if (!transport::wait_within(request, limit_s)) {
    return "the context's first process did not answer within " + seconds(limit_s);
  }
  if (!leader) error.assign(static_cast<std::size_t>(v.error_bytes), '\0');
  if (v.error_bytes > 0) {
    ep::check_mpi(MPI_Ibcast(error.data(), v.error_bytes, MPI_CHAR, 0, comm, &request),
                  "MPI_Ibcast", -1);
    if (!transport::wait_within(request, limit_s)) {
      return "the context's first process did not answer within " + seconds(limit_s);
    }
  }
  return "";
}

}  // namespace

ContextLink open_context(const World& world, MPI_Comm context_clients, const std::string& context,
                         const std::string& definitions_xml, std::optional<double> timeout_s) {
  constexpr const char* kCall = "xios_lite::open_context";
  require_client_world(world, kCall);
  const double limit_s = timeout_s.value_or(transport::kDefaultLinkTimeout);
  int rank = 0;
  int size = 0;
  int world_rank = 0;
  ep::check_mpi(MPI_Comm_rank(context_clients, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(context_clients, &size), "MPI_Comm_size", -1);
  ep::check_mpi(MPI_Comm_rank(world.control, &world_rank), "MPI_Comm_rank", -1);
  const std::string where =
      "context '" + context + "' (world rank " + std::to_string(world_rank) + "): ";
  if (context.empty()) {
    throw ep::Error(ep::ErrorKind::kArgument, kCall, -1,
                    "world rank " + std::to_string(world_rank) + ": empty context name");
  }
  Verdict v;
  std::string error;
  const bool leader = rank == 0;
  if (leader) {
    transport::Announcement a;
    a.kind = transport::LinkKind::kOpen;
    a.client_leader = world_rank;
    a.client_processes = size;
    std::tie(a.reply_tag, a.connection_tag) = transport::next_link_tags();
    a.context = context;
    a.text = definitions_xml;
    v.connection_tag = a.connection_tag;
    v.client_leader = world_rank;
    const std::string server =
        "the server leader (world rank " + std::to_string(world.server_leader) + ")";
    if (!transport::send_within(transport::pack(a), world.server_leader, transport::kAnnounceTag,
                                world.control, limit_s)) {
      error = server + " did not take the opening within " + seconds(limit_s) +
              " (are the servers running serve_contexts? did these clients call close_contexts?)";
    } else if (const auto reply = transport::receive_within(world.control, world.server_leader,
                                                            a.reply_tag, limit_s)) {
      const auto answer = transport::unpack_answer(*reply);
      if (!answer) {
        error = server + " sent a malformed answer";
      } else {
        error = answer->first;
        v.server_processes = answer->second;
      }
    } else {
      error = "no answer from " + server + " within " + seconds(limit_s);
    }
  }
  const std::string lost = share_verdict(context_clients, leader, v, error, limit_s + 5);
  if (!lost.empty()) {
    throw ep::Error(ep::ErrorKind::kRequest, kCall, -1, where + lost);
  }
  if (!error.empty()) {
    throw ep::Error(ep::ErrorKind::kArgument, kCall, -1, where + error);
  }
  ContextLink link;
  link.connection_tag = v.connection_tag;
  World& w = link.world;
  w.role = Role::kClient;
  // The connection's peer is the private duplicate of the world: its
  // handshake tags never meet the model's messages.
  w.world = world.control;
  ep::check_mpi(MPI_Comm_dup(context_clients, &w.local), "MPI_Comm_dup", -1);
  w.client_leader = v.client_leader;
  w.server_leader = world.server_leader;
  w.client_processes = size;
  w.server_processes = v.server_processes;
  w.context = context;
  w.connection_tag = link.connection_tag;
  return link;
}

void close_contexts(const World& world, std::optional<double> timeout_s) {
  constexpr const char* kCall = "xios_lite::close_contexts";
  require_client_world(world, kCall);
  const double limit_s = timeout_s.value_or(transport::kDefaultLinkTimeout);
  int rank = 0;
  int world_rank = 0;
  ep::check_mpi(MPI_Comm_rank(world.local, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_rank(world.control, &world_rank), "MPI_Comm_rank", -1);
  // Every client process is past its openings (each answered) before the
  // close leaves: the server leader never hears of a context after it.
  MPI_Request request = MPI_REQUEST_NULL;
  ep::check_mpi(MPI_Ibarrier(world.local, &request), "MPI_Ibarrier", -1);
  if (!transport::wait_within(request, limit_s)) {
    throw ep::Error(ep::ErrorKind::kRequest, kCall, -1,
                    "world rank " + std::to_string(world_rank) +
                        ": some client process did not call close_contexts within " +
                        seconds(limit_s));
  }
  if (rank == 0) {
    transport::Announcement a;
    a.kind = transport::LinkKind::kClose;
    a.client_leader = world_rank;
    if (!transport::send_within(transport::pack(a), world.server_leader, transport::kAnnounceTag,
                                world.control, limit_s)) {
      throw ep::Error(ep::ErrorKind::kRequest, kCall, -1,
                      "world rank " + std::to_string(world_rank) +
                          ": the server leader (world rank " + std::to_string(world.server_leader) +
                          ") did not take the close within " + seconds(limit_s));
    }
  }
}

}  // namespace xios_lite
