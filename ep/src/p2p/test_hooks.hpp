// TEST ONLY: failure injection and counters for the point-to-point paths
// and the MPI stage of collectives.
//
// The failure paths of the drain (an MPI call that fails, a wire tag that
// names no endpoint) and of a collective's MPI stage cannot be provoked from a correct program on a
// healthy MPI, yet they decide whether a receive fails or hangs. The library's own tests arm them
// here; nothing else may. The hooks are compiled in always (one relaxed atomic load per remote
// receive and per probe while disarmed) so that the tested code is the shipped code. Not part of
// the API: the header lives in ep/src and is not installed.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <cstddef>

namespace ep {
class Communicator;
}

namespace ep::detail::testing {

enum class Fault {
  kRemoteReceive,  ///< MPI_Mrecv / MPI_Imrecv of a matched message returns MPI_ERR_OTHER
  kDrainProbe,     ///< the drain's MPI_Improbe returns MPI_ERR_OTHER
  kWireTag,        ///< a drained wire tag decodes to no endpoint
  /// A collective's wait on its MPI request (the blocking collectives' MPI
  /// stage) reports MPI_ERR_OTHER once the request has completed, so every
  /// process is through the MPI call and only this one fails.
  kCollectiveWait,
  /// The leader of a blocking all-to-all between processes cannot allocate
  /// its staging (std::bad_alloc while planning), so its process has nothing
  /// to send: the exchange must still complete everywhere.
  kExchangeStaging,  // the last one: test_hooks.cpp sizes its table by it
};

/// Makes the next `count` occurrences of `fault` in this process fail (0
/// disarms). An injected receive failure still receives the message (into
/// scratch) so that MPI's own state stays consistent; a probe failure takes
/// no message.
void inject(Fault fault, int count);

/// How many armed failures of `fault` have not happened yet.
[[nodiscard]] int injections_left(Fault fault);

/// Called by the library where `fault` can happen: true when this
/// occurrence must fail (and consumes one armed failure).
[[nodiscard]] bool take_injection(Fault fault) noexcept;

/// The most unexpected eager bytes `comm`'s endpoint (its mailbox) has held
/// since the communicator was created; at most comm.eager_cap() while no
/// ep::Message is handed back. Takes the mailbox lock.
[[nodiscard]] std::size_t eager_high_water(const Communicator& comm);
/// The unexpected eager bytes it holds now.
[[nodiscard]] std::size_t eager_bytes(const Communicator& comm);

/// Whether `comm` carries the source thread in a message header (the
/// source-header tag layout, ep/tag_encoding.hpp): there a small message is
/// received whole when it arrives, and only a large or synchronous one waits
/// in MPI for its match (received with MPI_Irecv).
[[nodiscard]] bool source_in_header(const Communicator& comm);

/// A parked waiter that nobody notifies sleeps `micros` (0: the library's
/// own kParkMicros) before it polls again on its own: a long value shows
/// whether the thread that publishes what a waiter waits for wakes it.
void set_park_micros(int micros);

/// Records that one drain call routed `messages` messages (called by every
/// drain; keeps the largest).
void note_drain_routed(int messages) noexcept;
/// The most messages one drain call of this process has routed since the
/// last reset; bounded by kDrainBudget (p2p/inter_process.hpp).
[[nodiscard]] int max_drain_routed();
void reset_max_drain_routed();

}  // namespace ep::detail::testing
