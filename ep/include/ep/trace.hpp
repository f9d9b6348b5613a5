// Communication tracing of the endpoint layer: per EP rank, the point-to-point
// sends by size class and by peer (a communication matrix) and the time spent
// in point-to-point calls, in collectives and outside communication.
//
// Switching it on: set EP_TRACE=<directory> before the program starts (read
// when the first endpoint communicator is created), or call ep::trace::enable.
// Off by default; when off, each traced call costs one relaxed atomic load and
// a predictable branch (measured in docs/ep.md, "Tracing").
//
// Where it goes: one JSON file per process, <directory>/trace.<world rank>.json,
// holding that process's endpoints (schema in docs/ep.md). With EP_TRACE the
// file is written when the process frees its last endpoint communicator and
// again at process exit if anything changed since; with the API, by write().
// scripts/plot_trace.py merges the files of a directory and draws the pictures.
//
// What counts: user point-to-point sends (send, ssend, isend, issend, the send
// half of sendrecv) are counted with their payload bytes; messages the library
// sends inside collectives are not (they are collective time). Time: the
// outermost traced call of an endpoint is timed (a wait inside send is not
// counted twice); wait/test on a nonblocking collective's request counts as
// collective time, on any other request as point-to-point time.
//
// Endpoints are identified by their origin: the MPI_COMM_WORLD rank of their
// process and their thread index in the create_endpoints call that made them
// (the same through dup, split and intercommunicators). In a communicator made
// by create_endpoints over MPI_COMM_WORLD, EP rank = position of (process,
// thread) in process-major order; the plotting script numbers them so.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace ep {

class Communicator;

namespace trace {

/// Seed 003's size classes of a message's payload: [0] < 100 B,
/// [1] 100 B .. 999 B, [2] 1000 B .. 10000 B, [3] > 10000 B (decimal units).
inline constexpr int kSizeClasses = 4;
[[nodiscard]] constexpr int size_class(std::size_t bytes) noexcept {
  if (bytes < 100) return 0;
  if (bytes < 1000) return 1;
  if (bytes <= 10000) return 2;
  return 3;
}

/// Message counts and payload bytes by size class.
struct ClassCounts {
  std::array<std::uint64_t, kSizeClasses> count{};
  std::array<std::uint64_t, kSizeClasses> bytes{};
  void add(std::size_t payload) noexcept {
    const auto c = static_cast<std::size_t>(size_class(payload));
    ++count[c];
    bytes[c] += payload;
  }
  friend bool operator==(const ClassCounts&, const ClassCounts&) = default;
};

/// What one endpoint recorded since enable().
struct EndpointCounters {
  ClassCounts sends;                   ///< every traced send of this endpoint
  std::map<int, ClassCounts> by_peer;  ///< sends by destination rank (see counters())
  double p2p_seconds = 0.0;            ///< in point-to-point calls and their waits
  double collective_seconds = 0.0;     ///< in collectives (and waits on their requests)
  double outside_seconds = 0.0;        ///< wall time since enable() minus the two above
  std::uint64_t p2p_calls = 0;         ///< outermost point-to-point calls timed
  std::uint64_t collective_calls = 0;  ///< outermost collective calls timed
};

/// Starts a new trace that write() and the automatic write put under
/// `directory` (created if missing): clears what was recorded so far and
/// restarts the wall clock. Not collective (each process traces on its own);
/// call after MPI_Init, from one thread, while no endpoint of this process
/// communicates (e.g. before create_endpoints or between two barriers).
/// Throws ep::Error(kArgument) for an empty directory or before MPI_Init.
void enable(const std::string& directory);

/// Stops recording (what was recorded stays, for write() and counters()).
/// Same rules as enable(). The wall clock stops too.
void disable();

/// Whether tracing records now. Any thread, any time.
[[nodiscard]] bool enabled() noexcept;

/// Writes this process's trace file, <directory>/trace.<world rank>.json, and
/// returns its path. Not collective; one thread of the process calls it while
/// no endpoint of this process communicates (e.g. after a barrier). Throws
/// ep::Error(kArgument) when tracing was never enabled or the file cannot be
/// written.
std::string write();

/// The calling endpoint's record, with by_peer keyed by EP rank in `comm`
/// (destinations outside `comm` are left out of by_peer, not out of sends).
/// Not collective; the calling thread must own `comm`'s handle, and no thread
/// may be sending on this endpoint meanwhile.
[[nodiscard]] EndpointCounters counters(const Communicator& comm);

}  // namespace trace
}  // namespace ep
