// A thin typed layer over the endpoint API: the MPI datatype comes from the
// element type, counts come from spans, results are returned as values.
//
//   std::vector<double> halo(n);
//   ep::send(comm, std::span<const double>(field), right, /*tag=*/7);
//   ep::Status st = ep::recv(comm, std::span<double>(halo), left, 7);
//   double total = ep::allreduce(comm, local_sum, MPI_SUM);
//   std::vector<int> all = ep::allgather(comm, comm.rank());
//
// The point-to-point calls take either kind of endpoint communicator
// (ep::Communicator, ep::InterCommunicator: ranks of the remote group), and
// the intercommunicator collectives (bcast, allreduce) have their span forms
// too. Buffers of raw bytes are spans of std::byte (MPI_BYTE).
//
// Every call here is a one-line forward to the void* / count / MPI_Datatype
// form (communicator.hpp, collectives.hpp): there is one implementation, and
// collectivity, thread safety and errors are those of the call forwarded to.
// A span longer than INT_MAX elements throws ep::Error(kCount) naming the call.
//
// A user struct gets a datatype by specialising common::datatype_traits:
//
//   template <> struct common::datatype_traits<Particle> {
//     static MPI_Datatype get() { return particle_type(); }  // committed once
//   };
#pragma once

#include <mpi.h>

#include <climits>
#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "common/datatype.hpp"
#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"

namespace ep {

// The datatype of an element type lives below ep (common/datatype.hpp):
// the kernels of collectives use it without the endpoint runtime.
using common::datatype_of;
using common::HasDatatype;

/// Either kind of endpoint communicator: point-to-point ranks are EP ranks of
/// the group (Communicator) or of the remote group (InterCommunicator).
template <class C>
concept EndpointCommunicator = std::same_as<C, Communicator> || std::same_as<C, InterCommunicator>;

namespace detail {
using common::count_of;  // a span's length as an MPI count (common/error.hpp)
}  // namespace detail

// ---- point-to-point (on a Communicator or an InterCommunicator) ----

template <EndpointCommunicator C, HasDatatype T>
void send(const C& comm, std::span<const T> data, int dest, int tag) {
  comm.send(data.data(), detail::count_of(data.size(), "ep::send", comm.rank()), datatype_of<T>(),
            dest, tag);
}

/// Receives into `data`; the Status tells the actual source, tag and size.
template <EndpointCommunicator C, HasDatatype T>
Status recv(const C& comm, std::span<T> data, int source, int tag) {
  return comm.recv(data.data(), detail::count_of(data.size(), "ep::recv", comm.rank()),
                   datatype_of<T>(), source, tag);
}

template <EndpointCommunicator C, HasDatatype T>
[[nodiscard]] Request isend(const C& comm, std::span<const T> data, int dest, int tag) {
  return comm.isend(data.data(), detail::count_of(data.size(), "ep::isend", comm.rank()),
                    datatype_of<T>(), dest, tag);
}

template <EndpointCommunicator C, HasDatatype T>
[[nodiscard]] Request irecv(const C& comm, std::span<T> data, int source, int tag) {
  return comm.irecv(data.data(), detail::count_of(data.size(), "ep::irecv", comm.rank()),
                    datatype_of<T>(), source, tag);
}

template <EndpointCommunicator C, HasDatatype S, HasDatatype R>
Status sendrecv(const C& comm, std::span<const S> send_data, int dest, int send_tag,
                std::span<R> recv_data, int source, int recv_tag) {
  return comm.sendrecv(send_data.data(),
                       detail::count_of(send_data.size(), "ep::sendrecv", comm.rank()),
                       datatype_of<S>(), dest, send_tag, recv_data.data(),
                       detail::count_of(recv_data.size(), "ep::sendrecv", comm.rank()),
                       datatype_of<R>(), source, recv_tag);
}

// ---- collectives (collective over every endpoint of `comm`) ----

template <HasDatatype T>
void bcast(const Communicator& comm, std::span<T> data, int root) {
  bcast(comm, data.data(), detail::count_of(data.size(), "ep::bcast", comm.rank()),
        datatype_of<T>(), root);
}

/// In-place allreduce of `data`.
template <HasDatatype T>
void allreduce(const Communicator& comm, std::span<T> data, MPI_Op op,
               const ReduceOptions& options = {}) {
  allreduce(comm, MPI_IN_PLACE, data.data(),
            detail::count_of(data.size(), "ep::allreduce", comm.rank()), datatype_of<T>(), op,
            options);
}

template <HasDatatype T>
void allreduce(const Communicator& comm, std::span<const T> send, std::span<T> recv, MPI_Op op,
               const ReduceOptions& options = {}) {
  allreduce(comm, send.data(), recv.data(),
            detail::count_of(send.size(), "ep::allreduce", comm.rank()), datatype_of<T>(), op,
            options);
}

/// The reduction of one value over all endpoints.
template <HasDatatype T>
[[nodiscard]] T allreduce(const Communicator& comm, T value, MPI_Op op,
                          const ReduceOptions& options = {}) {
  T result{};
  allreduce(comm, &value, &result, 1, datatype_of<T>(), op, options);
  return result;
}

/// Reduce to `root`; `recv` is significant at the root only (may be empty elsewhere).
template <HasDatatype T>
void reduce(const Communicator& comm, std::span<const T> send, std::span<T> recv, MPI_Op op,
            int root, const ReduceOptions& options = {}) {
  reduce(comm, send.data(), recv.data(), detail::count_of(send.size(), "ep::reduce", comm.rank()),
         datatype_of<T>(), op, root, options);
}

/// Every endpoint's `send` block, in EP rank order; recv.size() is size() * send.size().
template <HasDatatype T>
void allgather(const Communicator& comm, std::span<const T> send, std::span<T> recv) {
  const int n = detail::count_of(send.size(), "ep::allgather", comm.rank());
  allgather(comm, send.data(), n, datatype_of<T>(), recv.data(), n, datatype_of<T>());
}

/// One value from every endpoint, in EP rank order.
template <HasDatatype T>
[[nodiscard]] std::vector<T> allgather(const Communicator& comm, const T& value) {
  std::vector<T> all(static_cast<std::size_t>(comm.size()));
  allgather(comm, &value, 1, datatype_of<T>(), all.data(), 1, datatype_of<T>());
  return all;
}

/// Gather to `root`; `recv` (size() * send.size()) is significant at the root only.
template <HasDatatype T>
void gather(const Communicator& comm, std::span<const T> send, std::span<T> recv, int root) {
  const int n = detail::count_of(send.size(), "ep::gather", comm.rank());
  gather(comm, send.data(), n, datatype_of<T>(), recv.data(), n, datatype_of<T>(), root);
}

/// Scatter from `root`: block r of `send` (size() * recv.size()) goes to EP rank r.
template <HasDatatype T>
void scatter(const Communicator& comm, std::span<const T> send, std::span<T> recv, int root) {
  const int n = detail::count_of(recv.size(), "ep::scatter", comm.rank());
  scatter(comm, send.data(), n, datatype_of<T>(), recv.data(), n, datatype_of<T>(), root);
}

/// Alltoall with blocks of send.size() / size() elements.
template <HasDatatype T>
void alltoall(const Communicator& comm, std::span<const T> send, std::span<T> recv) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  if (send.size() % ranks != 0 || recv.size() != send.size()) {
    throw Error(ErrorKind::kCount, "ep::alltoall", comm.rank(),
                "send span of " + std::to_string(send.size()) + " and recv span of " +
                    std::to_string(recv.size()) + " elements are not size() equal blocks");
  }
  const int block = detail::count_of(send.size() / ranks, "ep::alltoall", comm.rank());
  alltoall(comm, send.data(), block, datatype_of<T>(), recv.data(), block, datatype_of<T>());
}

/// Alltoallv with counts and displacements in elements of T.
template <HasDatatype T>
void alltoallv(const Communicator& comm, std::span<const T> send, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<T> recv, std::span<const int> recvcounts,
               std::span<const int> rdispls) {
  alltoallv(comm, send.data(), sendcounts, sdispls, datatype_of<T>(), recv.data(), recvcounts,
            rdispls, datatype_of<T>());
}

// ---- intercommunicator collectives (collective over both groups) ----

/// MPI_Bcast across the groups: `root` as for the void* form (MPI_ROOT,
/// MPI_PROC_NULL in the sending group, the root's rank in the receiving one).
template <HasDatatype T>
void bcast(const InterCommunicator& inter, std::span<T> data, int root) {
  bcast(inter, data.data(), detail::count_of(data.size(), "ep::bcast", inter.rank()),
        datatype_of<T>(), root);
}

/// `recv` gets the reduction of the other group's `send` spans.
template <HasDatatype T>
void allreduce(const InterCommunicator& inter, std::span<const T> send, std::span<T> recv,
               MPI_Op op) {
  allreduce(inter, send.data(), recv.data(),
            detail::count_of(send.size(), "ep::allreduce", inter.rank()), datatype_of<T>(), op);
}

/// The reduction of the other group's values.
template <HasDatatype T>
[[nodiscard]] T allreduce(const InterCommunicator& inter, T value, MPI_Op op) {
  T result{};
  allreduce(inter, &value, &result, 1, datatype_of<T>(), op);
  return result;
}

}  // namespace ep
