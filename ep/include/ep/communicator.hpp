// Endpoint communicators: every OpenMP thread is a rank of its own.
//
// An endpoint communicator is created collectively from a parent MPI
// communicator; each process contributes its own number of endpoints
// (1..256, processes may differ). EP ranks are numbered process-major: all
// endpoints of parent rank 0, then parent rank 1, and so on.
//
//   std::vector<ep::Communicator> eps;
//   #pragma omp parallel
//   {
//   #pragma omp single
//     eps = ep::create_endpoints(MPI_COMM_WORLD, omp_get_num_threads());
//     ep::Communicator& comm = eps[omp_get_thread_num()];
//     comm.send(&x, 1, MPI_DOUBLE, (comm.rank() + 1) % comm.size(), 0);
//   }
//
// Thread safety: each Communicator handle is used by one thread at a time
// (its endpoint). Handles of one communicator are used concurrently by their
// threads; that is the point of the design.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "ep/backoff.hpp"
#include "ep/point_to_point.hpp"
#include "ep/rank_map.hpp"
#include "ep/request.hpp"

namespace ep {

inline constexpr int kAnySource = MPI_ANY_SOURCE;
inline constexpr int kAnyTag = MPI_ANY_TAG;
inline constexpr int kProcNull = MPI_PROC_NULL;

/// Messages up to this many bytes between threads of one process are copied
/// eagerly into the receiver's queue when no receive is posted yet; larger
/// ones wait for the receiver, which copies once from the sender's buffer.
/// The value is where the two protocols cost the same on the development
/// machine (docs/ep_pingpong.md, "Protocol thresholds"); the file named by
/// EP_P2P_TUNING (scripts/tune_p2p.py measures it per machine) replaces it.
/// Override per communicator with EndpointOptions or for a whole run with the
/// environment variable EP_EAGER_THRESHOLD (bytes).
inline constexpr std::size_t kDefaultEagerThreshold = std::size_t{4} * 1024;

/// Bytes of unexpected eager messages (copied, not yet received) that one
/// endpoint's queue may hold from the threads of its process. Past the cap a
/// sender falls back to rendezvous: its message waits in its own buffer until
/// the receive matches (a blocking send then waits for the receive, as MPI
/// allows a standard send to), so nothing is lost and the queue's memory
/// stays bounded. Override per communicator with EndpointOptions or for a
/// whole run with the environment variable EP_EAGER_CAP (bytes). Messages
/// from other processes are held by MPI, not counted here.
inline constexpr std::size_t kDefaultEagerCap = std::size_t{64} * 1024 * 1024;

struct EndpointOptions {
  /// Unset: EP_EAGER_THRESHOLD from the environment, else the EP_P2P_TUNING
  /// file's eager_threshold, else kDefaultEagerThreshold.
  std::optional<std::size_t> eager_threshold;
  /// Unset: EP_EAGER_CAP from the environment, else kDefaultEagerCap. Passed
  /// on to communicators made from this one.
  std::optional<std::size_t> eager_cap;
  /// Behave as if MPI_TAG_UB were at most this (>= 32767): runs the narrow
  /// tag layouts of other MPIs (tag_encoding.hpp) on this one. Unset:
  /// EP_TAG_UB from the environment, else the library's MPI_TAG_UB. Passed
  /// on to communicators made from this one; the smallest over the
  /// processes applies.
  std::optional<long long> tag_ub;
  /// The most duplicate MPI communicators ("channels") a narrow tag layout
  /// may spend on one endpoint communicator (1..kMaxTagChannels). Past it the
  /// source thread travels in a header instead (see "Tag encoding" in
  /// docs/ep.md): fewer MPI communicators, at the cost of a packed copy for
  /// small messages and a second MPI message for large ones. Unset:
  /// EP_TAG_CHANNELS from the environment, else kMaxTagChannels. Passed on
  /// to communicators made from this one; the smallest over the processes
  /// applies.
  std::optional<int> max_tag_channels;
  /// Whether a receive from one endpoint of another process, with a specific
  /// tag and no earlier receive of this endpoint that could take the same
  /// message, goes straight to MPI (MPI_Irecv; see "Direct receives" in
  /// docs/ep.md). Off, every receive matches in the endpoint's queue; a
  /// truncated receive behaves the same either way (MPI's rule: the part
  /// that fits is received, the message consumed, and the receive fails with
  /// kTruncate). Unset: EP_DIRECT_RECEIVE (0 or 1) from the environment, else
  /// on with Open MPI and off with other MPIs (MPICH 4.0 aborts the job on a
  /// truncated receive completed by MPI_Test, since it raises the error on
  /// MPI_COMM_WORLD; receives matched in the queue never hand MPI a buffer
  /// too small). Passed on to communicators made from this one; each process
  /// may choose differently.
  std::optional<bool> direct_receive;
  /// How this process's waits wait from this creation on (ep/backoff.hpp):
  /// kSpin for threads with cores of their own, kPark for shared or
  /// oversubscribed cores, kAuto to spin when the endpoints this
  /// communicator puts on each node (all its processes there together) fit
  /// that node's online CPUs and park otherwise. Process-wide, like
  /// OMP_WAIT_POLICY: the latest create_endpoints of a process sets it.
  /// Unset: EP_WAIT_POLICY (spin, park or auto) from the environment, else
  /// kAuto.
  std::optional<WaitPolicy> wait_policy;
};

namespace detail {
class CommState;
}

/// One endpoint of an endpoint communicator (the analogue of MPI_Comm for a thread).
/// The point-to-point calls (send, recv, isend, probe, ...) come from
/// detail::PointToPoint (ep/point_to_point.hpp), shared with InterCommunicator.
class Communicator : public detail::PointToPoint<Communicator> {
 public:
  Communicator() = default;  ///< a null handle; any call on it throws ep::Error
  Communicator(std::shared_ptr<detail::CommState> state, int local_thread);

  // ---- identity and rank map (local, O(1), thread-safe) ----
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const;
  /// Effective eager threshold of this communicator, in bytes.
  [[nodiscard]] std::size_t eager_threshold() const;
  /// Effective cap on the unexpected eager bytes one endpoint holds (kDefaultEagerCap).
  [[nodiscard]] std::size_t eager_cap() const;
  /// Whether receives may go straight to MPI: EndpointOptions::direct_receive,
  /// and a tag layout that names the sender on the wire (false under the
  /// source-header layout; docs/ep.md, "Tag encoding").
  [[nodiscard]] bool direct_receive() const;
  /// Index of this endpoint among its process's endpoints (0..local_size()-1).
  [[nodiscard]] int local_thread() const noexcept { return thread_; }
  /// Endpoints of this process.
  [[nodiscard]] int local_size() const;
  /// Rank of this endpoint's process in the parent communicator.
  [[nodiscard]] int process_rank() const;
  [[nodiscard]] const RankMap& rank_map() const;
  /// The parent communicator the endpoints were created from.
  [[nodiscard]] MPI_Comm parent() const;
  [[nodiscard]] bool is_null() const noexcept { return state_ == nullptr; }

  // ---- point-to-point: see detail::PointToPoint (ep/point_to_point.hpp) ----

  // ---- lifetime ----
  /// MPI_Comm_free. Collective over all endpoints: each endpoint frees its own
  /// handle; the last endpoint of each process releases the MPI communicators
  /// underneath (collective over the processes). Any later use of any handle
  /// of this endpoint throws ep::Error(kFreedComm).
  void free();

  [[nodiscard]] const std::shared_ptr<detail::CommState>& state() const noexcept { return state_; }

 private:
  friend class detail::PointToPoint<Communicator>;

  detail::CommState& checked_state(const char* call) const;
  // PointToPoint's hook: checks the handle; the arguments are checked by the
  // call itself, in this communicator's numbering.
  const Communicator& p2p_route(const char* call, PeerRole role, int peer, int tag,
                                int count) const;

  std::shared_ptr<detail::CommState> state_;
  int thread_ = -1;
  int rank_ = -1;
};

/// MPI_Comm_create_endpoints. Collective over `parent`; called by one thread
/// of each process, which then hands element i to thread i. `n_local` is this
/// process's endpoint count (1..kMaxEndpointsPerProcess).
/// Throws ep::Error when MPI is not initialised, or not with MPI_THREAD_MULTIPLE
/// for n_local > 1 (one endpoint per process works at any thread level: the
/// layer starts no thread, its MPI calls come from the caller), when
/// n_local is out of range, or when MPI_TAG_UB is too small to address the
/// endpoints (below 32767, or more endpoints per process than the narrow tag
/// layout of tag_encoding.hpp can address with this bound).
std::vector<Communicator> create_endpoints(MPI_Comm parent, int n_local,
                                           const EndpointOptions& options = {});

}  // namespace ep
