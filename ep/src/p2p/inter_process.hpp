// The process-to-process path of point-to-point messages, in one place.
//
// A message to an endpoint of another process travels as one MPI message on
// the communicator's private duplicate (p2p_comm), its tag carrying the user
// tag and both thread indices (ep/tag_encoding.hpp):
//   send        send_inter: MPI_Isend / MPI_Issend, never blocking (a blocking
//               send of a large message could wait for a peer process whose
//               threads need this one to drain);
//   arrival     P2pState::drain: MPI_Improbe takes each waiting message out
//               of MPI's matching and hands it to the mailbox of its
//               destination thread (the matching engine), one drainer at a time;
//               a failure there fails the communicator's receives, never the
//               thread that happened to drain (p2p_state.hpp);
//   receive     receive_remote: MPI_Mrecv / MPI_Imrecv of the matched message
//               into the receive buffer;
//   completion  test_mpi: MPI_Test of the request that carries the rest.
// Ordering: MPI delivers one sender's messages in order and a single drainer
// appends them, so the non-overtaking rule carries over (matching_engine.hpp).
#pragma once

#include <cstddef>
#include <memory>

#include "datatype.hpp"
#include "ep/communicator.hpp"
#include "ep/rank_map.hpp"
#include "p2p/intra_process.hpp"
#include "p2p/matching_engine.hpp"
#include "p2p/request_state.hpp"

namespace ep::detail {

/// Remote messages up to this size are received with a blocking MPI_Mrecv at
/// match time: they travel in one eager fragment (Open MPI's shared-memory and
/// TCP eager limits are 4 KiB and 64 KiB), so the call does not wait.
inline constexpr std::size_t kMrecvInlineBytes = 1024;

/// The most messages one drain call routes. A thread drains while it waits
/// for its own request; under an endless stream for other endpoints an
/// unbounded drain would never return to that request. What is left stays
/// in MPI, in order, for the next drain (any thread's). 64 keeps the
/// per-call cost of the MPI_Improbe loop small against a wait's backoff step.
inline constexpr int kDrainBudget = 64;

/// Starts the send of `data` from `self`'s endpoint to the endpoint at `to`
/// (another process) described by `send` (its dest_thread is to.thread).
/// Returns the pending request, finished through MPI (test_mpi).
std::shared_ptr<RequestState> send_inter(const Communicator& self, const IntraSend& send,
                                         const TypedBuffer& data, Location to);

/// How far receive_remote got.
enum class Received {
  kNow,     ///< the data is in place
  kLater,   ///< an MPI_Imrecv carries the rest: the request is kMpiPending, the
            ///< owner finishes it with test_mpi
  kFailed,  ///< MPI failed: the request is failed (complete) with the error
};

/// Receives the matched remote `message` into `request`'s buffer. Any thread
/// may call it for the owner; an MPI failure fails the request (ep::Error
/// kMpi naming MPI_Mrecv/MPI_Imrecv, the sender, tag, size and MPI's code,
/// thrown by the owner's wait) and is never thrown here.
Received receive_remote(RequestState& request, Envelope& message);

/// Tests the MPI request that carries the rest of `request`; completes it
/// when done. Owner thread only.
bool test_mpi(RequestState& request);

}  // namespace ep::detail
