// Clients and servers check at connection that they read the same
// definitions (xios_lite::definition_text): a digest of each side's text is
// reduced over the intercommunicator, and when anything differs each
// group's endpoint 0 sends its text across, so that every endpoint names
// the first line where it differs from the other side's endpoint 0. Without
// it, a server that read another file saw only "data outside this server's
// rows", 30 s into the run.
#pragma once

#include <string>

#include "ep/comm_management.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::transport {

/// Collective over every endpoint of both groups of `inter`; `servers`
/// tells which side calls (the servers' endpoint 0 sends its text first).
/// Returns "" when every endpoint of both groups read the same definitions,
/// else (on every endpoint of both groups) what differs.
[[nodiscard]] std::string check_same_definitions(const ep::InterCommunicator& inter,
                                                 const Config& cfg, bool servers);

}  // namespace xios_lite::transport
