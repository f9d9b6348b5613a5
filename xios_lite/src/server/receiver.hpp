// One receiving endpoint of a server process. It takes event buffers from
// any client, places their data in the process's RecordAssembly, follows the
// control events (a failed definition, a client's finalise) and carries the
// error channel: the writer's first error is sent to every client at once.
//
// Thread safety: a Receiver belongs to one thread (its endpoint's); the
// assembly and the writer it shares are thread-safe.
#pragma once

#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "record_assembly.hpp"
#include "writer_thread.hpp"
#include "xios_lite/report.hpp"

namespace xios_lite::server {

struct ReceiverOutcome {
  ServerReport stats;            ///< busy_s, idle_s and bytes_received of this endpoint
  int unfinished = 0;            ///< clients that had not finalised when the loop ended
  std::string definition_error;  ///< the clients' definition failure, as they sent it
  std::string failure;           ///< a timeout or a corrupt event ("" when none)
};

/// Receives until every client of `inter` has finalised, until `timeout_s`
/// after the first finalise (the failure names the missing clients), or up
/// to a corrupt event. Not collective; errors sent to clients are waited for
/// before returning.
ReceiverOutcome receive_until_finalised(const ep::InterCommunicator& inter,
                                        RecordAssembly& assembly, const WriterThread& writer,
                                        double timeout_s);

}  // namespace xios_lite::server
