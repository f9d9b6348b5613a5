// Timing kernels of ep_pingpong, written once against the channel interface
// of pingpong_channels.hpp.
//
// Method (OSU/IMB): for each point a warm-up, then `repetitions` timed batches
// with a barrier before each; the per-operation time of every batch gives
// t_min/t_avg/t_max. Only the initiator (the side that starts the exchange,
// and that owns the clock) returns a Sample.
//
// Both kernels check the data they received after the warm-up, so a transport
// that delivers the wrong bytes, or none, fails loudly instead of looking fast.
//
// Thread safety: each participant calls a kernel with its own channel and its
// own Buffers; the kernels share nothing else.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_buffers.hpp"
#include "bench_cli.hpp"
#include "bench_report.hpp"

namespace bench {

inline constexpr int kDataTag = 1;
inline constexpr int kAckTag = 2;
inline constexpr int kAckBytes = static_cast<int>(sizeof(int));

/// Who starts each exchange (and owns the clock) and who answers.
enum class Role { kInitiator, kResponder };

/// What one participant hands back for one point.
struct Sample {
  std::size_t bytes = 0;
  long iterations = 0;  ///< round trips (latency) or messages (streaming) per repetition
  int repetitions = 0;
  int window = 0;
  TimeStats time;  ///< per one-way message
};

/// How much work each point gets. Iteration counts fall with the message size
/// so that every point moves about the same number of bytes and the whole
/// sweep stays within its time budget.
struct Sizing {
  long base_iterations = 0;  ///< round trips per repetition for sizes <= flat_bytes (the preset's)
  int repetitions = 0;       ///< (the preset's: ep_pingpong's kPreset)
  std::size_t flat_bytes = 32 * 1024;  ///< above this, iterations halve per doubling of size
  long min_iterations = 10;
  int max_window = 64;  ///< messages in flight, small sizes
  /// Cap on window * size. Each message of a window has its own buffer (MPI
  /// forbids concurrent receives into one buffer). 4 MiB per side keeps the
  /// working set at 8 MiB, what osu_bw's two reused buffers span at 4 MiB and
  /// about what the last-level cache of the 2-core development VM holds (a
  /// memcpy there runs at ~28 GB/s over 8 MiB, ~4.4 GB/s over 16 MiB), so the
  /// test compares transports rather than DRAM bandwidth.
  std::size_t window_bytes = 4u << 20;
  int min_windows = 3;

  [[nodiscard]] long latency_iterations(std::size_t bytes) const {
    return bench::scaled_iterations(base_iterations, flat_bytes, bytes, min_iterations);
  }
  /// Messages in flight: max_window, fewer when their buffers would exceed window_bytes.
  [[nodiscard]] int window(std::size_t bytes) const {
    const std::size_t fit = window_bytes / std::max<std::size_t>(bytes, 1);
    return static_cast<int>(std::clamp<std::size_t>(fit, 1, static_cast<std::size_t>(max_window)));
  }
  /// Windows per repetition: 4 messages per latency round trip, since a streamed
  /// small message costs a fraction of a round trip and a repetition must stay
  /// long against the barrier and clock around it.
  [[nodiscard]] long stream_windows(std::size_t bytes) const {
    return std::max<long>(min_windows, 4 * latency_iterations(bytes) / window(bytes));
  }
  [[nodiscard]] static long warmup(long iterations) { return std::max(2L, iterations / 10); }
};

namespace detail {

// A byte pattern that differs between sizes, directions and window slots, so a
// message delivered to the wrong buffer, or not at all, cannot pass the check.
inline unsigned pattern_seed(std::size_t bytes, Role sender, int slot) {
  const auto size_part = static_cast<unsigned>(bytes % 251u);
  return size_part * 7u + (sender == Role::kInitiator ? 0u : 101u) + static_cast<unsigned>(slot);
}

inline std::byte pattern_byte(std::size_t i, unsigned seed) {
  return static_cast<std::byte>((i * 131u + seed) & 0xffu);
}

inline void fill_pattern(std::byte* p, std::size_t bytes, unsigned seed) {
  for (std::size_t i = 0; i < bytes; ++i) p[i] = pattern_byte(i, seed);
}

inline void check_pattern(const std::byte* p, std::size_t bytes, unsigned seed, const char* test) {
  for (std::size_t i = 0; i < bytes; ++i) {
    if (p[i] != pattern_byte(i, seed)) {
      throw std::runtime_error(std::string(test) + ": wrong data received in a " +
                               std::to_string(bytes) + "-byte message at byte " +
                               std::to_string(i));
    }
  }
}

inline int checked_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT32_MAX)) {
    throw std::invalid_argument("ep_pingpong: message of " + std::to_string(bytes) +
                                " bytes does not fit an MPI int count");
  }
  return static_cast<int>(bytes);
}

inline Role other(Role role) {
  return role == Role::kInitiator ? Role::kResponder : Role::kInitiator;
}

}  // namespace detail

/// Ping-pong latency: the initiator sends `bytes`, the responder sends them
/// back; time per message is half the round trip.
template <class Channel>
std::optional<Sample> measure_latency(const Channel& ch, Role role, int peer, std::size_t bytes,
                                      const Sizing& sizing, Buffers& buf) {
  const int count = detail::checked_count(bytes);
  const long iterations = sizing.latency_iterations(bytes);
  buf.reserve(bytes);
  detail::fill_pattern(buf.send(), bytes, detail::pattern_seed(bytes, role, 0));
  std::memset(buf.recv(), 0, bytes);

  auto round_trips = [&](long n) {
    for (long i = 0; i < n; ++i) {
      if (role == Role::kInitiator) {
        ch.send(buf.send(), count, peer, kDataTag);
        ch.recv(buf.recv(), count, peer, kDataTag);
      } else {
        ch.recv(buf.recv(), count, peer, kDataTag);
        ch.send(buf.send(), count, peer, kDataTag);
      }
    }
  };

  ch.barrier();
  round_trips(Sizing::warmup(iterations));
  detail::check_pattern(buf.recv(), bytes, detail::pattern_seed(bytes, detail::other(role), 0),
                        "latency");

  std::vector<double> per_message(static_cast<std::size_t>(sizing.repetitions));
  for (double& t : per_message) {
    ch.barrier();
    const double start = MPI_Wtime();
    round_trips(iterations);
    t = (MPI_Wtime() - start) / (2.0 * static_cast<double>(iterations));
  }
  if (role != Role::kInitiator) return std::nullopt;
  return Sample{bytes, iterations, sizing.repetitions, 0, TimeStats::from_seconds(per_message)};
}

/// Streaming (OSU osu_bw style): the initiator keeps a window of sends in
/// flight into distinct receive buffers, the responder acknowledges each
/// complete window. Several pairs may run at once in one barrier group (the
/// message-rate test): the closing barrier then makes a batch last as long as
/// its slowest pair. Time per message = batch time / messages of one pair.
template <class Channel>
std::optional<Sample> measure_stream(const Channel& ch, Role role, int peer, std::size_t bytes,
                                     const Sizing& sizing, Buffers& buf, bool owns_clock) {
  const int count = detail::checked_count(bytes);
  const int window = sizing.window(bytes);
  const long windows = sizing.stream_windows(bytes);
  const auto slot_bytes = static_cast<std::size_t>(window) * bytes;
  buf.reserve(std::max<std::size_t>(slot_bytes, sizeof(int)));
  if (role == Role::kInitiator) {
    for (int k = 0; k < window; ++k) {
      detail::fill_pattern(buf.send(k * bytes), bytes, detail::pattern_seed(bytes, role, k));
    }
  } else {
    std::memset(buf.recv(), 0, slot_bytes);
  }

  std::vector<typename Channel::Request> requests(static_cast<std::size_t>(window));
  int ack = 0;
  auto stream = [&](long n) {
    for (long w = 0; w < n; ++w) {
      if (role == Role::kInitiator) {
        for (int k = 0; k < window; ++k) {
          requests[k] = ch.isend(buf.send(k * bytes), count, peer, kDataTag);
        }
        ch.wait_all(requests);
        ch.recv(&ack, kAckBytes, peer, kAckTag);
      } else {
        for (int k = 0; k < window; ++k) {
          requests[k] = ch.irecv(buf.recv(k * bytes), count, peer, kDataTag);
        }
        ch.wait_all(requests);
        ch.send(&ack, kAckBytes, peer, kAckTag);
      }
    }
  };

  ch.barrier();
  stream(Sizing::warmup(windows));
  if (role == Role::kResponder) {
    for (int k = 0; k < window; ++k) {
      detail::check_pattern(buf.recv(k * bytes), bytes,
                            detail::pattern_seed(bytes, Role::kInitiator, k), "stream");
    }
  }

  std::vector<double> per_message(static_cast<std::size_t>(sizing.repetitions));
  const double messages = static_cast<double>(windows) * window;
  for (double& t : per_message) {
    ch.barrier();
    const double start = MPI_Wtime();
    stream(windows);
    ch.barrier();
    t = (MPI_Wtime() - start) / messages;
  }
  if (!owns_clock) return std::nullopt;
  return Sample{bytes, windows * window, sizing.repetitions, window,
                TimeStats::from_seconds(per_message)};
}

}  // namespace bench
