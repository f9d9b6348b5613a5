// Communication tracing: the per-endpoint records, the hooks that fill them,
// the public switch (ep/trace.hpp) and the automatic write for EP_TRACE.
#include "trace/recorder.hpp"

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "checks.hpp"
#include "comm_state.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "trace/trace_file.hpp"

namespace ep::detail {

std::atomic<bool> g_trace_on{false};

namespace {

// Records are found by creation thread index; more threads per process than
// this are not traced (no process runs that many endpoints).
constexpr int kMaxTracedThreads = 4096;

double now_seconds() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Process-wide state. The slots are read without the lock (acquire loads) and
// filled under it; everything else changes only under the lock.
struct Tracer {
  std::mutex mutex;
  std::array<std::atomic<EndpointTrace*>, kMaxTracedThreads> slots{};
  std::string directory;
  bool ever_enabled = false;
  bool from_environment = false;
  int world_rank = 0;
  int world_size = 1;
  double started = 0.0;
  double stopped = 0.0;  // 0 while recording
  int live_communicators = 0;
  int max_local_endpoints = 0;
  // Bumped whenever a communicator state is made, so that the per-thread
  // cache of a communicator's process-to-world table can never be stale.
  std::atomic<std::uint64_t> generation{0};
};

Tracer& tracer() {
  // Never destroyed: the exit-time write runs after static destructors may.
  static Tracer* instance = new Tracer;
  return *instance;
}

std::uint64_t origin_key(const Location& origin) noexcept {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(origin.process)) << 32) |
         static_cast<std::uint32_t>(origin.thread);
}

int creation_thread(const CommState& comm, int rank, int thread) {
  return comm.origins().empty() ? thread : comm.origins()[static_cast<std::size_t>(rank)].thread;
}

EndpointTrace* slot_record(int thread) {
  if (thread < 0 || thread >= kMaxTracedThreads) return nullptr;
  Tracer& t = tracer();
  std::atomic<EndpointTrace*>& slot = t.slots[static_cast<std::size_t>(thread)];
  EndpointTrace* record = slot.load(std::memory_order_acquire);
  if (record != nullptr) return record;
  std::lock_guard lock(t.mutex);
  record = slot.load(std::memory_order_relaxed);
  if (record == nullptr) {
    record = new EndpointTrace;
    record->thread = thread;
    slot.store(record, std::memory_order_release);
  }
  return record;
}

EndpointTrace* record_of(const CommState& comm, int rank, int thread) {
  return slot_record(creation_thread(comm, rank, thread));
}

// The origin of EP rank `dest` of `comm`. A create_endpoints numbering (no
// origins table) counts processes in the communicator's own group: translated
// to MPI_COMM_WORLD once per communicator and thread.
Location peer_origin(const CommState& comm, int dest) {
  if (!comm.origins().empty()) return comm.origins()[static_cast<std::size_t>(dest)];
  struct WorldTable {
    const CommState* comm = nullptr;
    std::uint64_t generation = ~std::uint64_t{0};
    std::vector<Location> origins;
  };
  thread_local WorldTable cache;
  const std::uint64_t generation = tracer().generation.load(std::memory_order_acquire);
  if (cache.comm != &comm || cache.generation != generation) {
    cache.origins = comm.world_origins("ep::trace", -1);
    cache.comm = &comm;
    cache.generation = generation;
  }
  return cache.origins[static_cast<std::size_t>(dest)];
}

void write_at_exit() {
  try {
    ep::trace::write();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ep::trace: EP_TRACE: trace not written at exit: %s\n", e.what());
  }
}

void enable_locked(Tracer& t, const std::string& directory) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    throw Error(ErrorKind::kArgument, "ep::trace::enable", -1, "MPI is not initialised");
  }
  if (directory.empty()) {
    throw Error(ErrorKind::kArgument, "ep::trace::enable", -1, "empty trace directory");
  }
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &t.world_rank), "ep::trace::enable", -1);
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &t.world_size), "ep::trace::enable", -1);
  prepare_trace_directory(directory);
  for (auto& slot : t.slots) {
    EndpointTrace* record = slot.load(std::memory_order_relaxed);
    if (record == nullptr) continue;
    const int thread = record->thread;
    *record = EndpointTrace{};
    record->thread = thread;
  }
  t.directory = directory;
  t.ever_enabled = true;
  t.started = now_seconds();
  t.stopped = 0.0;
  g_trace_on.store(true, std::memory_order_relaxed);
}

}  // namespace

void trace_send(const CommState& comm, int rank, int thread, int dest, std::size_t bytes) {
  EndpointTrace* record = record_of(comm, rank, thread);
  if (record == nullptr) return;
  record->sends.add(bytes);
  record->peers[origin_key(peer_origin(comm, dest))].add(bytes);
}

void TraceScope::open(TraceKind kind, const CommState& comm, int rank, int thread) {
  EndpointTrace* record = record_of(comm, rank, thread);
  if (record == nullptr) return;
  if (record->depth++ == 0) {
    record->open_kind = kind;
    record->open_since = now_seconds();
  }
  record_ = record;
}

void TraceScope::close() noexcept {
  if (--record_->depth != 0) return;
  const auto k = static_cast<std::size_t>(record_->open_kind);
  record_->seconds[k] += now_seconds() - record_->open_since;
  ++record_->calls[k];
}

void trace_comm_created(int local_endpoints) {
  Tracer& t = tracer();
  static std::once_flag environment_read;
  std::call_once(environment_read, [&t] {
    const char* directory = std::getenv("EP_TRACE");
    if (directory == nullptr || *directory == '\0') return;
    std::lock_guard lock(t.mutex);
    enable_locked(t, directory);
    t.from_environment = true;
    std::atexit(write_at_exit);
  });
  std::lock_guard lock(t.mutex);
  ++t.live_communicators;
  if (local_endpoints > t.max_local_endpoints) t.max_local_endpoints = local_endpoints;
  t.generation.fetch_add(1, std::memory_order_acq_rel);
}

void trace_comm_released() {
  Tracer& t = tracer();
  bool write_now = false;
  {
    std::lock_guard lock(t.mutex);
    write_now = --t.live_communicators == 0 && t.from_environment;
  }
  if (write_now) write_at_exit();
}

}  // namespace ep::detail

namespace ep::trace {

using detail::EndpointTrace;
using detail::tracer;

void enable(const std::string& directory) {
  auto& t = tracer();
  std::lock_guard lock(t.mutex);
  detail::enable_locked(t, directory);
}

void disable() {
  auto& t = tracer();
  std::lock_guard lock(t.mutex);
  if (!detail::g_trace_on.load(std::memory_order_relaxed)) return;
  detail::g_trace_on.store(false, std::memory_order_relaxed);
  t.stopped = detail::now_seconds();
}

bool enabled() noexcept { return detail::trace_on(); }

std::string write() {
  auto& t = tracer();
  std::lock_guard lock(t.mutex);
  if (!t.ever_enabled) {
    throw Error(ErrorKind::kArgument, "ep::trace::write", -1,
                "tracing was never enabled (EP_TRACE or ep::trace::enable)");
  }
  detail::TraceFile file;
  file.process = t.world_rank;
  file.processes = t.world_size;
  file.recording = detail::g_trace_on.load(std::memory_order_relaxed);
  file.wall_seconds = (t.stopped != 0.0 ? t.stopped : detail::now_seconds()) - t.started;
  for (std::size_t thread = 0; thread < t.slots.size(); ++thread) {
    EndpointTrace* record = t.slots[thread].load(std::memory_order_acquire);
    // Every endpoint of the process appears, also those that never traced.
    if (record == nullptr && static_cast<int>(thread) >= t.max_local_endpoints) continue;
    file.endpoints.push_back(record);
    file.threads.push_back(static_cast<int>(thread));
  }
  return write_trace_file(t.directory, file);
}

EndpointCounters counters(const Communicator& comm) {
  constexpr const char* kCall = "ep::trace::counters";
  detail::CommState& state = detail::usable_state(comm, kCall);
  EndpointCounters result;
  EndpointTrace* record = detail::record_of(state, comm.rank(), comm.local_thread());
  if (record == nullptr) return result;
  const std::vector<Location> origins = state.world_origins(kCall, comm.rank());
  for (std::size_t rank = 0; rank < origins.size(); ++rank) {
    const auto found = record->peers.find(detail::origin_key(origins[rank]));
    if (found != record->peers.end()) result.by_peer[static_cast<int>(rank)] = found->second;
  }
  auto& t = tracer();
  std::lock_guard lock(t.mutex);
  result.sends = record->sends;
  result.p2p_seconds = record->seconds[0];
  result.collective_seconds = record->seconds[1];
  result.p2p_calls = record->calls[0];
  result.collective_calls = record->calls[1];
  if (t.ever_enabled) {
    const double wall = (t.stopped != 0.0 ? t.stopped : detail::now_seconds()) - t.started;
    result.outside_seconds = wall - result.p2p_seconds - result.collective_seconds;
  }
  return result;
}

}  // namespace ep::trace
