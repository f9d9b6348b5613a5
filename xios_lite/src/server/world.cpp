// The roles of an xios_lite run: which processes of the world serve, and
// the split into the clients' and the servers' communicators.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ep/error.hpp"
#include "xios_lite/contexts.hpp"
#include "xios_lite/server.hpp"

namespace xios_lite {

Role role_of_last_ranks(MPI_Comm world, int n_servers) {
  int rank = 0;
  int size = 0;
  ep::check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(world, &size), "MPI_Comm_size", -1);
  if (n_servers < 0 || n_servers >= size) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::role_of_last_ranks", -1,
                    std::to_string(n_servers) + " servers out of range [0, " +
                        std::to_string(size - 1) + "] for " + std::to_string(size) +
                        " processes (at least one client)");
  }
  return rank >= size - n_servers ? Role::kServer : Role::kClient;
}

namespace {

constexpr std::size_t kNameBytes = 64;

// What each process tells the others in split_world: its role, its
// context and how its contexts come (clients only: 1 when it called
// initialize(), so that the servers, which learn nothing else before the
// first context is opened, know to run serve_contexts).
struct Entry {
  int role = 0;  // 1: server
  int length = 0;
  int open_contexts = 0;
  std::array<char, kNameBytes> name{};
};

World split_entries(MPI_Comm world, Role role, const std::string& context, bool open_contexts);

std::string names_of(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

// The split by role, from every process's entry.
World split_roles(MPI_Comm world, Role role, const std::vector<Entry>& all) {
  int rank = 0;
  int size = 0;
  ep::check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(world, &size), "MPI_Comm_size", -1);
  const int mine = role == Role::kServer ? 1 : 0;
  World w;
  w.role = role;
  w.world = world;
  for (int r = 0; r < size; ++r) {
    if (all[static_cast<std::size_t>(r)].role == 1) {
      if (w.server_leader < 0) {
        w.server_leader = r;
      }
      ++w.server_processes;
    } else {
      if (w.server_processes > 0) {
        throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::split_world", -1,
                        "world rank " + std::to_string(r) +
                            " is a client after a server: servers must be the last ranks");
      }
      ++w.client_processes;
    }
  }
  if (w.client_processes == 0) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::split_world", -1, "no client process");
  }
  ep::check_mpi(MPI_Comm_split(world, mine, rank, &w.local), "MPI_Comm_split", -1);
  return w;
}

}  // namespace

World split_world(MPI_Comm world, Role role) { return split_world(world, role, ""); }

World split_world(MPI_Comm world, Role role, const std::string& context) {
  return split_entries(world, role, context, false);
}

World initialize(MPI_Comm world, Role role) {
  return split_entries(world, role, "", role == Role::kClient);
}

namespace {

World split_entries(MPI_Comm world, Role role, const std::string& context, bool open_contexts) {
  constexpr const char* kCall = "xios_lite::split_world";
  int rank = 0;
  int size = 0;
  ep::check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(world, &size), "MPI_Comm_size", -1);
  Entry mine;
  mine.role = role == Role::kServer ? 1 : 0;
  mine.length = static_cast<int>(context.size());
  mine.open_contexts = open_contexts ? 1 : 0;
  context.copy(mine.name.data(), std::min(context.size(), kNameBytes - 1));
  std::vector<Entry> all(static_cast<std::size_t>(size));
  ep::check_mpi(
      MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, world),
      "MPI_Allgather", -1);
  // Every process reaches the same verdict from the same table.
  std::vector<std::string> contexts;  // named by clients, in order of first appearance
  bool unnamed = false;
  int opening = 0;  // clients that called initialize()
  int clients = 0;
  int servers = 0;
  int my_server = -1;
  for (int r = 0; r < size; ++r) {
    const Entry& e = all[static_cast<std::size_t>(r)];
    if (e.role == 1) {
      if (r == rank) my_server = servers;
      ++servers;
      continue;
    }
    if (servers > 0) {
      throw ep::Error(ep::ErrorKind::kArgument, kCall, -1,
                      "world rank " + std::to_string(r) +
                          " is a client after a server: servers must be the last ranks");
    }
    if (e.length >= static_cast<int>(kNameBytes)) {
      throw ep::Error(ep::ErrorKind::kArgument, kCall, -1,
                      "world rank " + std::to_string(r) + ": context name of " +
                          std::to_string(e.length) + " characters (at most " +
                          std::to_string(kNameBytes - 1) + ")");
    }
    ++clients;
    opening += e.open_contexts;
    const std::string name(e.name.data(), static_cast<std::size_t>(e.length));
    if (name.empty()) {
      unnamed = true;
    } else if (std::find(contexts.begin(), contexts.end(), name) == contexts.end()) {
      contexts.push_back(name);
    }
  }
  if (unnamed && !contexts.empty()) {
    throw ep::Error(ep::ErrorKind::kArgument, kCall, -1,
                    "some client processes name their context (" + names_of(contexts) +
                        ") and some do not: with several contexts every client names its own");
  }
  if (opening > 0 && (opening < clients || !contexts.empty())) {
    throw ep::Error(
        ep::ErrorKind::kArgument, kCall, -1,
        std::to_string(opening) + " of " + std::to_string(clients) +
            " client processes called initialize() (contexts opened at run time) and "
            "the others split_world" +
            (contexts.empty() ? "" : " naming their context (" + names_of(contexts) + ")") +
            ": every client process makes the same call");
  }
  if (contexts.size() <= 1) {
    World w = split_roles(world, role, all);
    w.context = contexts.empty() ? "" : contexts.front();
    if (opening > 0) {
      // Every process of the split reaches this point (the same table): the
      // duplicate is collective over all of them, clients and servers.
      w.open_contexts = true;
      ep::check_mpi(MPI_Comm_dup(world, &w.control), "MPI_Comm_dup", -1);
    }
    return w;
  }
  const int n = static_cast<int>(contexts.size());
  if (servers > 0 && servers < n) {
    throw ep::Error(ep::ErrorKind::kArgument, kCall, -1,
                    std::to_string(n) + " contexts (" + names_of(contexts) + ") need at least " +
                        std::to_string(n) + " server processes, one for each; there are " +
                        std::to_string(servers));
  }
  // This process's context: its own, or for a server the context whose
  // share holds it (shares as even as possible, the first ones one more).
  int color = 0;
  if (role == Role::kServer) {
    for (int c = 0, first = 0; c < n; ++c) {
      const int share = servers / n + (c < servers % n ? 1 : 0);
      if (my_server >= first && my_server < first + share) color = c;
      first += share;
    }
  } else {
    color =
        static_cast<int>(std::find(contexts.begin(), contexts.end(), context) - contexts.begin());
  }
  MPI_Comm part = MPI_COMM_NULL;
  ep::check_mpi(MPI_Comm_split(world, color, rank, &part), "MPI_Comm_split", -1);
  World w = split_world(part, role);
  w.context = contexts[static_cast<std::size_t>(color)];
  w.context_world = part;
  return w;
}

}  // namespace

void free_world(World& world) {
  if (world.local != MPI_COMM_NULL) {
    ep::check_mpi(MPI_Comm_free(&world.local), "MPI_Comm_free", -1);
  }
  if (world.control != MPI_COMM_NULL) {
    ep::check_mpi(MPI_Comm_free(&world.control), "MPI_Comm_free", -1);
  }
  if (world.context_world != MPI_COMM_NULL) {
    ep::check_mpi(MPI_Comm_free(&world.context_world), "MPI_Comm_free", -1);
    world.world = MPI_COMM_NULL;
  }
}

}  // namespace xios_lite
