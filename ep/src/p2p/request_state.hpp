// Shared state of one nonblocking operation.
//
// A request is owned by the endpoint (thread) that started it, but it can be
// matched and completed by another thread: the thread that drains the
// process's MPI queue, or a sender of the same process that reads its ring into the
// receiver's queues while it waits for its match. Those writers fill the fields
// and then publish with a release store to `phase`; the owner reads `phase` with acquire before it
// looks at anything else.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "datatype.hpp"
#include "ep/backoff.hpp"
#include "ep/error.hpp"
#include "ep/request.hpp"

namespace ep::detail {

class CommState;

/// A large intra-process copy that both sides make (rendezvous of
/// contiguous data, at least kMinBytes): the thread that matches the
/// message opens it, and copies chunks until none is left; the sender,
/// waiting for its send, takes chunks too, so the copy uses both cores.
/// Every byte is still copied once, from the send buffer to the receive
/// buffer. The matcher completes both requests once every chunk is done
/// (p2p/matching_engine.cpp, receive_matched); the helper only copies.
struct SharedCopy {
  static constexpr std::size_t kMinBytes = std::size_t{256} * 1024;
  static constexpr std::size_t kChunkBytes = std::size_t{64} * 1024;

  // Written by the matcher before it opens the copy (release on `open`).
  const std::byte* from = nullptr;
  std::byte* to = nullptr;
  std::size_t bytes = 0;
  std::size_t chunks = 0;
  std::atomic<bool> open{false};
  alignas(64) std::atomic<std::size_t> next{0};  // the next chunk to take
  alignas(64) std::atomic<std::size_t> done{0};  // chunks copied

  /// Takes and copies chunks until none is left (any thread, once open).
  void copy_chunks() noexcept;
};

struct RequestState;

/// What a persistent request (MPI-4's *_init calls) runs at each ep::start.
/// Made by the init call and set in RequestState::persistent before the
/// request is returned; it belongs to the owner thread, which alone starts
/// and polls it.
class PersistentOperation {
 public:
  PersistentOperation() = default;
  PersistentOperation(const PersistentOperation&) = delete;
  PersistentOperation& operator=(const PersistentOperation&) = delete;
  virtual ~PersistentOperation() = default;

  /// Begins one round of the operation: sets `request.progress`, which the
  /// owner's test/wait polls until it returns true. Called by ep::start on
  /// an inactive request whose phase is back to kPosted; a throw leaves the
  /// request inactive.
  virtual void start(RequestState& request) = 0;
};

enum class Phase : int {
  kPosted,      // receive waiting in its mailbox for a match; intra send waiting for its receiver
  kMpiPending,  // an MPI request (isend, or imrecv after a match) carries the rest
  kComplete,
};

struct RequestState {
  enum class Kind { kSend, kRecv };

  RequestState(Kind k, std::shared_ptr<CommState> c, int thread, int rank)
      : kind(k), comm(std::move(c)), owner_thread(thread), owner_rank(rank) {}

  Kind kind;
  // Keeps the communicator alive while pending. Null for a request that was
  // complete when its call returned (a receive whose message was there
  // already, completed_send): nothing reads it once `phase` is kComplete.
  std::shared_ptr<CommState> comm;
  int owner_thread;
  int owner_rank;
  const char* call = "";  // the API call that created it, for error messages

  // Receive arguments (kRecv): the match criteria and the destination buffer.
  TypedBuffer recv_buffer;
  int want_source = MPI_ANY_SOURCE;
  int want_tag = MPI_ANY_TAG;

  // A receive posted straight to MPI (p2p/inter_process.hpp, direct
  // receives): `mpi_request` is its MPI_Irecv and no mailbox holds it.
  // Set by the owner before the request is shared, read only by the owner.
  bool direct = false;
  // Whether waiting on it needs the drain on every poll: a mailbox receive
  // that may match a message from another process. Other requests drain only
  // now and then, for the progress of the rest of the process.
  bool needs_drain = false;
  unsigned polls = 0;  // the owner's polls, counting the sparse drains
  // A receive: the rings of local senders it may match from (RingChoice in
  // p2p/matching_engine.hpp: a local thread, all, or none), read by the
  // owner's polls.
  int ring_thread = -2;
  // An intra-process send waiting for its match (rendezvous, synchronous):
  // the receiver's thread, whose queues the sender's polls read its ring
  // into, so that the send completes whether or not the receiver polls. -1
  // otherwise.
  int settles_thread = -1;
  // The sender's polls of such a send so far: it reads the receiver's ring
  // only after kPollsBeforeSettling of them (p2p/wait.cpp, poll).
  unsigned settle_polls = 0;
  // A large rendezvous send whose copy the sender helps with (made by the
  // sender, opened by the matcher); null otherwise.
  std::unique_ptr<SharedCopy> shared_copy;

  // A persistent request: the operation every ep::start runs (set once,
  // before the request is shared; null for every other request), and
  // whether a start is in progress. `active` goes true at ep::start and
  // false again in the wait/test that collects the round, which leaves the
  // request complete and inactive instead of null (MPI's persistent
  // requests); an inactive one is skipped by the any/some calls like a null
  // one. Owner thread only: no other thread ever sees either field.
  std::shared_ptr<PersistentOperation> persistent;
  bool active = false;

  std::atomic<Phase> phase{Phase::kPosted};
  // Operations that advance in steps (nonblocking collectives): polled by the
  // owner's test/wait; returns true once the operation is complete.
  std::function<bool()> progress;
  MPI_Request mpi_request = MPI_REQUEST_NULL;
  // A send under the source-header layout (p2p/inter_process.cpp): the
  // header, with the packed data of a small message, kept until MPI is done
  // with it; and the header's MPI_Isend when the data goes apart
  // (mpi_request). Owner thread only.
  std::vector<std::byte> wire;
  MPI_Request header_request = MPI_REQUEST_NULL;
  // A receive whose message from another process is longer than its buffer:
  // the whole message, received here first (MPI never sees a receive too
  // small for what it matched); its first bytes go to the buffer once it
  // has arrived (receive_remote, test_mpi).
  std::vector<std::byte> overflow;
  Status status;

  // Set (before phase becomes kComplete) when the operation failed.
  bool failed = false;
  ErrorKind error_kind = ErrorKind::kArgument;
  std::string error_detail;

  /// Publishes the result; the owner may be parked waiting for it
  /// (ep/backoff.hpp), so it is woken.
  void complete() {
    phase.store(Phase::kComplete, std::memory_order_release);
    notify_waiters();
  }
  void fail(ErrorKind kind_of_error, std::string detail) {
    failed = true;
    error_kind = kind_of_error;
    error_detail = std::move(detail);
    complete();
  }
};

/// A request that is complete from the start (null peer, eager send).
std::shared_ptr<RequestState> completed_request(RequestState::Kind kind,
                                                std::shared_ptr<CommState> comm, int thread,
                                                int rank, Status status = {});

}  // namespace ep::detail
