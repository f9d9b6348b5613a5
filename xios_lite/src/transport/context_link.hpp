// The wire of contexts opened at run time (xios_lite/contexts.hpp): what the
// clients tell the server leader on World::control, what it relays to the
// other server processes and what it answers.
//
//   context leader --kAnnounceTag--> server leader --kRelayTag--> server processes 1..
//     (open: name, definitions text,          (in the order received: every server
//      reply tag, connection tag)              process opens the contexts in one order)
//   context leader <--reply tag----- server leader, once every server process parsed the text
//   clients' Client == create_intercomm on World::control, connection tag == servers
//
// Tags: kAnnounceTag for every announcement (any client to the server
// leader); each opening's reply and connection tags are fresh in the
// sending process (a process-wide counter, next_link_tags), so two contexts
// whose leaders share a process never cross-match, and contexts with
// different leaders cannot either: the server leader receives every
// handshake from a named source. None of these tags is used on the model's
// communicators: World::control is private to xios_lite.
//
// Every wait here is bounded (receive_within, wait_within): a process that
// died or never calls leaves an error naming what was waited for, never a hang.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xios_lite/server.hpp"

namespace xios_lite::transport {

inline constexpr int kAnnounceTag = 11;            // clients -> server leader, on World::control
inline constexpr int kRelayTag = 12;               // server leader -> the other server processes
inline constexpr double kDefaultLinkTimeout = 60;  // seconds, as the configuration's default

enum class LinkKind : std::int32_t {
  kOpen = 1,   // a context opened (open_context)
  kClose = 2,  // no more contexts (close_contexts)
  kStop = 3,   // relayed only: the server leader gave up waiting (the text says why)
};

/// One announcement (and, among the servers, one relayed decision).
struct Announcement {
  LinkKind kind = LinkKind::kOpen;
  int client_leader = -1;  ///< world rank of the context's first client process
  int client_processes = 0;
  int reply_tag = 0;
  int connection_tag = 0;
  std::string context;
  std::string text;  ///< definitions (kOpen), why (kStop)
};

[[nodiscard]] std::vector<char> pack(const Announcement& a);
/// nullopt for a malformed message.
[[nodiscard]] std::optional<Announcement> unpack_announcement(const std::vector<char>& bytes);

/// The server leader's answer to an opening: "" (accepted) or why not.
[[nodiscard]] std::vector<char> pack_answer(const std::string& error, int server_processes);
/// {error, server processes}; nullopt for a malformed message.
[[nodiscard]] std::optional<std::pair<std::string, int>> unpack_answer(
    const std::vector<char>& bytes);

/// A fresh (reply, connection) tag pair of this process. Thread-safe.
[[nodiscard]] std::pair<int, int> next_link_tags();

/// Receives one message from `source` (or MPI_ANY_SOURCE) with `tag` on
/// `comm`, polling every `nap_us` microseconds until `limit_s` seconds
/// passed: nullopt then. `from` gets the sender.
[[nodiscard]] std::optional<std::vector<char>> receive_within(MPI_Comm comm, int source, int tag,
                                                              double limit_s, int* from = nullptr,
                                                              int nap_us = 100);

/// Tests `request` until it completes or `limit_s` passed. Returns whether it
/// completed (an incomplete request is left as it is).
[[nodiscard]] bool wait_within(MPI_Request& request, double limit_s);

/// Sends `bytes` and waits at most `limit_s` for the send to complete;
/// returns whether it did. The buffer of a send still pending is kept
/// alive (MPI may still read it).
[[nodiscard]] bool send_within(std::vector<char> bytes, int dest, int tag, MPI_Comm comm,
                               double limit_s);

/// Throws ep::Error(kArgument) naming `call` unless `world` is a process of
/// `role` in a launch whose contexts open at run time (initialize()):
/// `wrong_role` says why on a process of the other role, `not_opened` on a
/// World without a control communicator. Local; every process of a role
/// decides alike, so all throw or none.
void require_open_contexts_world(const World& world, Role role, const char* call,
                                 const char* wrong_role, const char* not_opened);

}  // namespace xios_lite::transport
