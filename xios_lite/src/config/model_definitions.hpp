// The definitions a model sets at run time (model_attributes.hpp), as they
// travel and as they complete a configuration.
//
// At close_definition every client puts what it set into the exchange
// (pack); every client then assembles all of them, in EP rank order, into
// its configuration and completes it (apply_model_definitions), so that all
// reach the same definitions or the same error. Client 0 then sends the
// servers the result as one client holding every domain whole
// (global_definitions), which the servers apply to their own copy of the
// configuration.
//
// Wire form (pack, transport/wire_codec.hpp): a sequence of sections (a
// domain or axis and its index, or the calendar), each listing the members
// set as a u8 tag -- the member's index in model_members(), that is its
// line in xios_attributes.def -- and the value in the codec's form, then a
// u8 0xff. It stays inside one process
// family (same build on both sides).
//
// Pure functions: thread-safe, no MPI.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "xios_lite/config.hpp"
#include "xios_lite/model_attributes.hpp"

namespace xios_lite::config {

/// What one client set, by index into Config::domains / Config::axes.
struct ModelDefinitions {
  std::map<int, DomainAttributes> domains;
  std::map<int, AxisAttributes> axes;
  std::optional<CalendarAttributes> calendar;
  [[nodiscard]] bool empty() const { return domains.empty() && axes.empty() && !calendar; }
};

[[nodiscard]] std::vector<std::byte> pack(const ModelDefinitions& d);
/// What pack() wrote. A short or malformed buffer throws common::Error
/// (kIo) naming `call`, `rank` and the offset (transport/wire_codec.hpp).
[[nodiscard]] ModelDefinitions unpack(std::span<const std::byte> bytes,
                                      const char* call = "xios_lite::config::unpack",
                                      int rank = -1);

/// Assembles every client's definitions (`clients` and `blocks` by EP rank;
/// `blocks[r][d]` is client r's block of domain d) into `cfg` and
/// completes it. Throws ep::Error naming the element and the clients that
/// disagree or leave something out.
void apply_model_definitions(Config& cfg, const std::vector<ModelDefinitions>& clients,
                             const std::vector<std::vector<Window>>& blocks);

/// The sizes, coordinates and calendar of a complete configuration, as the
/// definitions of one client holding every domain whole.
[[nodiscard]] ModelDefinitions global_definitions(const Config& cfg);

/// Applies global_definitions() to another copy of the configuration and
/// completes it (the servers). Throws like apply_model_definitions.
void apply_global_definitions(Config& cfg, const ModelDefinitions& global);

}  // namespace xios_lite::config
