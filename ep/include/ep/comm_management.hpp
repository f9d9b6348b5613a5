// Making new endpoint communicators from existing ones: dup, split, compare,
// and intercommunicators (create, point-to-point, barrier, bcast, allreduce,
// merge).
//
// All creation calls are collective over every endpoint of the communicator
// (each thread calls with its own handle) and return that thread's handle of
// the new communicator. Bad arguments anywhere (a bad colour on one endpoint
// of another process, say) make every endpoint throw the same ep::Error
// instead of leaving the others waiting, wherever the check can see them.
//
// Free: Communicator::free() (and InterCommunicator::free()) is collective; a
// freed handle throws ep::Error(kFreedComm) on any later use.
#pragma once

#include <mpi.h>

#include <optional>

#include "ep/communicator.hpp"
#include "ep/request.hpp"

namespace ep {

/// MPI_Comm_dup: same endpoints, same ranks, fresh matching (messages on the
/// copy never match messages on the original).
[[nodiscard]] Communicator dup(const Communicator& comm);

/// MPI_Comm_split. Endpoints that pass the same `color` (>= 0) form a new
/// communicator, ranked by `key`, ties broken by the old rank. `color` may
/// differ between the threads of one process: the process then has endpoints
/// in several new communicators. MPI_UNDEFINED returns a null handle. A
/// colour below 0 other than MPI_UNDEFINED throws ep::Error(kArgument) on
/// every endpoint. In the new communicator a process's endpoints get local
/// thread indices in the order of their new ranks, and parent() is a process
/// communicator made for it (its ranks are what process_rank() reports),
/// released by free().
[[nodiscard]] Communicator split(const Communicator& comm, int color, int key);

/// MPI_Comm_compare (local, not collective): MPI_IDENT for two handles of the
/// same communicator, MPI_CONGRUENT for the same endpoints in the same rank
/// order (dup), MPI_SIMILAR for the same endpoints in another order,
/// MPI_UNEQUAL otherwise. An endpoint is identified by its process and its
/// thread index in the create_endpoints call that made it, whatever splits
/// and merges it went through (so the endpoints of two create_endpoints
/// calls of one process with the same thread index count as one: the thread
/// that drives them).
[[nodiscard]] int compare(const Communicator& a, const Communicator& b);

namespace detail {
struct InterAccess;
}

/// One endpoint of an endpoint intercommunicator: two disjoint groups of
/// endpoints (clients and I/O servers, say, with different endpoint counts),
/// where point-to-point ranks name endpoints of the other (remote) group.
///
/// The two groups must live on disjoint sets of processes (as MPI requires of
/// the process groups of MPI_Intercomm_create); a process with endpoints in
/// both groups is reported as an error at creation.
///
/// Point-to-point calls behave as on a Communicator, with `dest` and `source`
/// in [0, remote_size()) (or MPI_PROC_NULL, and kAnySource for receives) and
/// Status::source a remote rank. Requests and Messages complete with the
/// usual ep::wait / ep::mrecv family. Argument errors name rank(); an error
/// found while completing a request (truncation) names the endpoint by its
/// rank in the internal two-group communicator, remote_size() + rank().
///
/// Thread safety: as Communicator (one handle per thread).
class InterCommunicator : public detail::PointToPoint<InterCommunicator> {
 public:
  InterCommunicator() = default;  ///< a null handle; any call on it throws ep::Error

  [[nodiscard]] bool is_null() const noexcept { return bridge_.is_null(); }
  /// MPI_Comm_test_inter.
  [[nodiscard]] static constexpr bool is_inter() noexcept { return true; }
  /// Rank of this endpoint in its (local) group.
  [[nodiscard]] int rank() const noexcept { return group_.rank(); }
  /// Size of the local group.
  [[nodiscard]] int size() const;
  /// MPI_Comm_remote_size: size of the other group.
  [[nodiscard]] int remote_size() const;

  // ---- point-to-point across the groups (ranks are remote ranks): the
  // calls of detail::PointToPoint (ep/point_to_point.hpp), as on a Communicator ----

  /// MPI_Comm_free: collective over both groups. Later use throws kFreedComm.
  void free();

 private:
  friend struct detail::InterAccess;
  friend class detail::PointToPoint<InterCommunicator>;

  // PointToPoint's hook: checks what the bridge would accept but an
  // intercommunicator must not (a peer outside the remote group) and returns
  // the bridge, whose ranks 0..remote_size()-1 are the remote group.
  const Communicator& p2p_route(const char* call, PeerRole role, int peer, int tag,
                                int count) const;

  // Every endpoint of both groups in one communicator, numbered from this
  // group's side: ranks 0..remote_size()-1 are the remote group in its own
  // order (so remote ranks need no translation, even in the statuses of
  // requests), then this group. The other group numbers it the other way.
  Communicator bridge_;
  // This group alone (a dup of the local communicator), for the stages of
  // the collectives that stay inside one group.
  Communicator group_;
  // Where this group goes in merge() when both groups pass the same `high`
  // (the two sides agree on it at creation).
  bool local_first_ = true;
};

/// MPI_Comm_compare of two intercommunicators (local, not collective):
/// MPI_IDENT for two handles of the same intercommunicator, MPI_CONGRUENT
/// when both the local and the remote groups have the same endpoints in the
/// same rank order (two intercommunicators made from the same groups),
/// MPI_SIMILAR when both have the same endpoints but some order differs,
/// MPI_UNEQUAL otherwise. Endpoints are identified as by compare on
/// communicators. Throws ep::Error(kFreedComm) for a null or freed handle.
[[nodiscard]] int compare(const InterCommunicator& a, const InterCommunicator& b);

/// MPI_Intercomm_create: collective over the endpoints of both groups. Each
/// group calls with its own `local_comm` and the same `local_leader` (an EP
/// rank of local_comm) on all its endpoints; `peer_comm` (an MPI
/// communicator holding both leaders' processes, typically MPI_COMM_WORLD),
/// `remote_leader` (the rank in peer_comm of the other leader's process) and
/// `tag` (an MPI tag for the leaders' messages on peer_comm, which must not
/// be used by other traffic between them at the same time) matter at the
/// local leader only, as in MPI. Throws ep::Error on every endpoint of the
/// group for a local_leader out of range or differing between endpoints, a
/// remote_leader out of range of peer_comm or inside the local group, a bad
/// tag, and (on both groups) when the groups share a process.
[[nodiscard]] InterCommunicator create_intercomm(const Communicator& local_comm, int local_leader,
                                                 MPI_Comm peer_comm, int remote_leader, int tag);

/// MPI_Intercomm_merge: collective over both groups; every endpoint of a
/// group passes the same `high`. The group that passed false comes first; if
/// both passed the same value, the order is fixed by the creation (the same
/// on both sides). Local threads keep their indices. parent() of the result
/// is a process communicator made for it (released by free()).
[[nodiscard]] Communicator merge(const InterCommunicator& inter, bool high);

/// MPI_Barrier on an intercommunicator: returns once every endpoint of both
/// groups has entered.
void barrier(const InterCommunicator& inter);

/// MPI_Bcast on an intercommunicator. In the sending group the root passes
/// MPI_ROOT and every other endpoint MPI_PROC_NULL (which returns at once);
/// every endpoint of the receiving group passes the root's rank in the
/// sending group.
void bcast(const InterCommunicator& inter, void* buffer, int count, MPI_Datatype datatype,
           int root);

/// MPI_Allreduce on an intercommunicator: every endpoint receives the
/// reduction of the other group's contributions (in that group's rank order,
/// so non-commutative ops are honoured). MPI_IN_PLACE is not allowed, as in MPI.
void allreduce(const InterCommunicator& inter, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op);

/// MPI_Comm_test_inter, for code written for either kind.
[[nodiscard]] inline bool is_inter(const Communicator& /*comm*/) noexcept { return false; }
[[nodiscard]] inline bool is_inter(const InterCommunicator& /*comm*/) noexcept { return true; }

}  // namespace ep
