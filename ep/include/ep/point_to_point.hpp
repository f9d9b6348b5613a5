// The point-to-point API of an endpoint communicator, written once for both
// kinds: Communicator (ranks of one group) and InterCommunicator (ranks of
// the remote group). A new call is added here and in ep/src/p2p, and both
// kinds have it.
//
// Not collective. Every endpoint may call concurrently with the others (one
// thread per handle, as for every call on a handle). Errors are ep::Error
// naming the call, the caller's rank and the bad value (ep/error.hpp).
#pragma once

#include <mpi.h>

#include <optional>

#include "ep/request.hpp"

namespace ep {

class Communicator;

/// Which end of a message a point-to-point rank argument names: a source may
/// be kAnySource (and its tag kAnyTag), a destination may not.
enum class PeerRole { kDestination, kSource };

namespace detail {

/// The calls themselves. `Self` provides
///   const Communicator& p2p_route(const char* call, PeerRole role, int peer,
///                                 int tag, int count) const;
/// which checks the handle and what only `Self` knows about the arguments,
/// and returns the endpoint communicator that carries the message, in whose
/// numbering `peer` is meant (a Communicator returns itself; an
/// InterCommunicator its bridge, numbered remote group first).
template <class Self>
class PointToPoint {
 public:
  /// MPI_Send: returns when `buf` may be reused. Between threads of one process
  /// a large message waits for the matching receive (rendezvous).
  void send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag) const;
  /// MPI_Ssend: returns once the matching receive has been matched. Between
  /// processes this is when the destination process has matched it (see docs/ep.md).
  void ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag) const;
  [[nodiscard]] Request isend(const void* buf, int count, MPI_Datatype datatype, int dest,
                              int tag) const;
  [[nodiscard]] Request issend(const void* buf, int count, MPI_Datatype datatype, int dest,
                               int tag) const;
  /// MPI_Recv; `source` may be kAnySource, `tag` kAnyTag.
  Status recv(void* buf, int count, MPI_Datatype datatype, int source, int tag) const;
  [[nodiscard]] Request irecv(void* buf, int count, MPI_Datatype datatype, int source,
                              int tag) const;
  Status sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag) const;
  Status sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag) const;

  /// MPI_Probe / MPI_Iprobe: the message stays queued.
  Status probe(int source, int tag) const;
  [[nodiscard]] std::optional<Status> iprobe(int source, int tag) const;
  /// MPI_Mprobe / MPI_Improbe: the message is removed from matching and only
  /// the returned Message can receive it.
  [[nodiscard]] Message mprobe(int source, int tag) const;
  [[nodiscard]] std::optional<Message> improbe(int source, int tag) const;

 protected:
  PointToPoint() = default;

 private:
  [[nodiscard]] const Self& self() const { return static_cast<const Self&>(*this); }
};

}  // namespace detail
}  // namespace ep
