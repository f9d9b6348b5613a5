// The hooks of communication tracing (ep/trace.hpp) that the rest of ep/src
// calls: counting a send, timing a call (TraceScope), and following the
// communicators' lifetimes for the automatic write. Off, every hook is one
// relaxed atomic load and a branch that is not taken; the work is out of line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "ep/trace.hpp"

namespace ep::detail {

class CommState;  // comm_state.hpp: the EP ranks traced calls name

/// Whether tracing records (ep::trace::enable / EP_TRACE).
extern std::atomic<bool> g_trace_on;
[[nodiscard]] inline bool trace_on() noexcept { return g_trace_on.load(std::memory_order_relaxed); }

enum class TraceKind { kP2p, kCollective };

/// One endpoint's record, written only by the thread that owns the endpoint
/// (no locks); read by write()/counters() while nobody communicates.
struct alignas(64) EndpointTrace {
  int thread = 0;  // creation thread index (the process is this process)
  trace::ClassCounts sends;
  // Key: peer origin, (MPI_COMM_WORLD rank << 32) | creation thread.
  std::unordered_map<std::uint64_t, trace::ClassCounts> peers;
  double seconds[2] = {0.0, 0.0};  // by TraceKind
  std::uint64_t calls[2] = {0, 0};
  int depth = 0;  // nesting of traced calls: only the outermost is timed
  TraceKind open_kind = TraceKind::kP2p;
  double open_since = 0.0;
};

/// Counts a send of `bytes` payload bytes from `rank` (local thread
/// `thread`) to `dest`, both EP ranks of `comm`. Call only when trace_on().
void trace_send(const CommState& comm, int rank, int thread, int dest, std::size_t bytes);

/// Times the outermost traced call of an endpoint, from construction to
/// destruction. Copies are inactive (a CollectiveCall copied for another
/// thread does not time twice).
class TraceScope {
 public:
  TraceScope() noexcept = default;
  TraceScope(TraceKind kind, const CommState& comm, int rank, int thread) {
    if (trace_on()) [[unlikely]]
      open(kind, comm, rank, thread);
  }
  TraceScope(const TraceScope&) noexcept {}
  TraceScope& operator=(const TraceScope&) = delete;
  ~TraceScope() {
    if (record_ != nullptr) [[unlikely]]
      close();
  }

 private:
  void open(TraceKind kind, const CommState& comm, int rank, int thread);
  void close() noexcept;
  EndpointTrace* record_ = nullptr;
};

/// A communicator state with `local_endpoints` endpoints in this process was
/// made / its last local endpoint freed it (the communicator calls both,
/// communicator/comm_state.cpp). The first call reads EP_TRACE; the release
/// that leaves no communicator alive writes the trace file when EP_TRACE
/// switched tracing on.
void trace_comm_created(int local_endpoints);
void trace_comm_released();

}  // namespace ep::detail
