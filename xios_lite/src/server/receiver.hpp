// One receiving endpoint of a server process. It takes event buffers from
// any client (transport::EventReader), places their data in the process's
// RecordAssembly, follows the control events (the definition, a client's
// error, finalise, a client leaving) and carries the error channel: the
// first problem it sees (a write error, a client's error, a client gone) is
// sent to every client at once.
//
// It stops when no client is running any more: each one finalised, left
// without finalise (its Client was destroyed: it said so), or is gone. A
// client is gone when nothing came from it for `timeout_s` while others
// went on talking after its last message: the clock of a client starts at
// its last message, and it counts only once another client shows that the
// run goes on (a live client calling the library sends at least a
// heartbeat every second or so). A pause of the whole model (all clients
// computing) starts no clock.
//
// Thread safety: a Receiver belongs to one thread (its endpoint's); the
// assembly and the writer it shares are thread-safe.
#pragma once

#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "process_context.hpp"
#include "xios_lite/report.hpp"

namespace xios_lite::server {

struct ReceiverOutcome {
  ServerReport stats;              ///< busy_s, idle_s and bytes_received of this endpoint
  std::vector<int> finalised;      ///< clients that finalised (they wait for an acknowledgement)
  std::vector<int> left;           ///< clients that left without finalise
  std::vector<int> gone;           ///< clients this endpoint stopped waiting for
  std::string definition_error;    ///< the clients' definition failure, as they sent it
  std::vector<std::string> notes;  ///< client errors, leaving clients, silences: for the report
  std::string failure;             ///< a corrupt event ("" when none)
};

/// Receives until no client of `inter` is running (see above). Events
/// that need the process's definitions (data, missing pieces, the
/// clients' blocks) wait aside until client 0's completed definitions
/// arrive (ProcessContext). Not collective; errors sent to clients are
/// waited for (bounded) before returning.
ReceiverOutcome receive_until_finalised(const ep::InterCommunicator& inter, ProcessContext& context,
                                        double timeout_s);

}  // namespace xios_lite::server
