// The transports ep_pingpong compares, behind one small interface so the same
// kernels (pingpong_kernels.hpp) time all of them.
//
// A channel is the calling participant's (process's or thread's) end of the
// conversation. Peers are numbered in the channel's own terms: EP rank, MPI
// rank or thread index. Every channel offers
//   send/recv (blocking), isend/irecv -> Request, wait_all, barrier
// with byte counts (MPI_BYTE) and a user tag.
//
//   EpChannel            the endpoint layer (both the intra-process fast path
//                        and inter-process endpoints)
//   MpiChannel           plain MPI between processes: the baseline
//   MpiThreadTagChannel  MPI between threads of one process, the endpoint tag
//                        encoding on the wire and MPI_Mprobe-style matching by
//                        tag: the endpoint design without its fast path
//
// Thread safety: a channel object belongs to one thread; channels of one
// MPI_Comm may be used by different threads at once (MPI_THREAD_MULTIPLE).
#pragma once

#include <mpi.h>

#include <span>

#include "bench_mpi.hpp"  // YieldingBackoff: the endpoint layer's waiting policy
#include "ep/ep.hpp"

namespace bench {

/// Calls MPI_Barrier, or is an OpenMP barrier of the team the caller is in.
/// Between repetitions every participant of a point meets here.
class Barrier {
 public:
  /// The OpenMP team of the calling thread (an orphaned `omp barrier`).
  static Barrier threads() { return Barrier(MPI_COMM_NULL); }
  /// MPI_Barrier over `comm`, by one thread per process.
  static Barrier processes(MPI_Comm comm) { return Barrier(comm); }

  void operator()() const {
    if (comm_ == MPI_COMM_NULL) {
#pragma omp barrier
    } else {
      ep::check_mpi(MPI_Barrier(comm_), "MPI_Barrier", -1);
    }
  }

 private:
  explicit Barrier(MPI_Comm comm) : comm_(comm) {}
  MPI_Comm comm_;
};

/// (a) ep_intra and (c) ep_inter: one endpoint of an endpoint communicator.
class EpChannel {
 public:
  using Request = ep::Request;

  EpChannel(const ep::Communicator& comm, Barrier barrier) : comm_(comm), barrier_(barrier) {}

  void send(const void* buf, int bytes, int peer, int tag) const {
    comm_.send(buf, bytes, MPI_BYTE, peer, tag);
  }
  void recv(void* buf, int bytes, int peer, int tag) const {
    comm_.recv(buf, bytes, MPI_BYTE, peer, tag);
  }
  [[nodiscard]] Request isend(const void* buf, int bytes, int peer, int tag) const {
    return comm_.isend(buf, bytes, MPI_BYTE, peer, tag);
  }
  [[nodiscard]] Request irecv(void* buf, int bytes, int peer, int tag) const {
    return comm_.irecv(buf, bytes, MPI_BYTE, peer, tag);
  }
  void wait_all(std::span<Request> requests) const { ep::wait_all(requests); }
  void barrier() const { barrier_(); }

 private:
  const ep::Communicator& comm_;
  Barrier barrier_;
};

/// (b) mpi_proc: what a user of plain MPI writes, blocking calls and all.
class MpiChannel {
 public:
  using Request = MPI_Request;

  explicit MpiChannel(MPI_Comm comm) : comm_(comm) {}

  void send(const void* buf, int bytes, int peer, int tag) const {
    ep::check_mpi(MPI_Send(buf, bytes, MPI_BYTE, peer, tag, comm_), "MPI_Send", -1);
  }
  void recv(void* buf, int bytes, int peer, int tag) const {
    ep::check_mpi(MPI_Recv(buf, bytes, MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv",
                  -1);
  }
  [[nodiscard]] Request isend(const void* buf, int bytes, int peer, int tag) const {
    MPI_Request request;
    ep::check_mpi(MPI_Isend(buf, bytes, MPI_BYTE, peer, tag, comm_, &request), "MPI_Isend", -1);
    return request;
  }
  [[nodiscard]] Request irecv(void* buf, int bytes, int peer, int tag) const {
    MPI_Request request;
    ep::check_mpi(MPI_Irecv(buf, bytes, MPI_BYTE, peer, tag, comm_, &request), "MPI_Irecv", -1);
    return request;
  }
  void wait_all(std::span<Request> requests) const {
    ep::check_mpi(
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall", -1);
  }
  void barrier() const { ep::check_mpi(MPI_Barrier(comm_), "MPI_Barrier", -1); }

 private:
  MPI_Comm comm_;
};

/// (d) mpi_thread_tags: threads of one process talk through MPI to their own
/// rank. The wire tag is ep::encode_tag({user tag, source thread, destination
/// thread}) and a receive first matches the message by that tag with a
/// matched probe, then receives it (MPI_Mrecv / MPI_Imrecv), as the endpoint
/// layer does for inter-process traffic. The probe is MPI_Improbe polled with
/// yielding backoff, i.e. MPI_Mprobe with the endpoint layer's waiting policy:
/// a blocking MPI_Mprobe busy-polls, which on this 2-core machine would time
/// the scheduler rather than the design.
class MpiThreadTagChannel {
 public:
  using Request = MPI_Request;

  /// `comm` is shared by all threads of the process (a dup of MPI_COMM_SELF or
  /// of a communicator the process is in); `thread` is the caller's index.
  MpiThreadTagChannel(MPI_Comm comm, int thread, Barrier barrier)
      : comm_(comm), thread_(thread), barrier_(barrier) {
    ep::check_mpi(MPI_Comm_rank(comm_, &self_), "MPI_Comm_rank", -1);
  }

  void send(const void* buf, int bytes, int peer_thread, int tag) const {
    ep::check_mpi(MPI_Send(buf, bytes, MPI_BYTE, self_, wire_tag(tag, thread_, peer_thread), comm_),
                  "MPI_Send", -1);
  }
  void recv(void* buf, int bytes, int peer_thread, int tag) const {
    MPI_Message message = probe(peer_thread, tag);
    ep::check_mpi(MPI_Mrecv(buf, bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv", -1);
  }
  [[nodiscard]] Request isend(const void* buf, int bytes, int peer_thread, int tag) const {
    MPI_Request request;
    ep::check_mpi(MPI_Isend(buf, bytes, MPI_BYTE, self_, wire_tag(tag, thread_, peer_thread), comm_,
                            &request),
                  "MPI_Isend", -1);
    return request;
  }
  /// Matches now (waiting for the message to arrive), receives without blocking.
  [[nodiscard]] Request irecv(void* buf, int bytes, int peer_thread, int tag) const {
    MPI_Message message = probe(peer_thread, tag);
    MPI_Request request;
    ep::check_mpi(MPI_Imrecv(buf, bytes, MPI_BYTE, &message, &request), "MPI_Imrecv", -1);
    return request;
  }
  void wait_all(std::span<Request> requests) const {
    YieldingBackoff backoff;
    for (;;) {
      int done = 0;
      ep::check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                                MPI_STATUSES_IGNORE),
                    "MPI_Testall", -1);
      if (done) return;
      backoff.pause();
    }
  }
  void barrier() const { barrier_(); }

 private:
  static int wire_tag(int tag, int source_thread, int dest_thread) {
    return ep::encode_tag({tag, source_thread, dest_thread});
  }

  MPI_Message probe(int peer_thread, int tag) const {
    const int wanted = wire_tag(tag, peer_thread, thread_);
    YieldingBackoff backoff;
    for (;;) {
      int found = 0;
      MPI_Message message;
      ep::check_mpi(MPI_Improbe(self_, wanted, comm_, &found, &message, MPI_STATUS_IGNORE),
                    "MPI_Improbe", -1);
      if (found) return message;
      backoff.pause();
    }
  }

  MPI_Comm comm_;
  int self_ = 0;
  int thread_;
  Barrier barrier_;
};

}  // namespace bench
