// Collective operations on endpoint communicators, with MPI's semantics.
//
// Every endpoint of the communicator calls each collective, in the same
// order (MPI's rule, applied to threads). The algorithms are hierarchical:
// the threads of a process combine in shared memory (sharing the work on
// large vectors), one endpoint per process talks MPI on the communicator's
// internal duplicate, and the result spreads back to the threads.
//
// Buffers, counts and datatypes follow MPI: any datatype, MPI_IN_PLACE where
// MPI allows it, counts and displacements in elements of the given type.
// Errors (bad root, negative count, mismatch that can be detected) throw
// ep::Error naming the call, the EP rank and the value.
//
// Thread safety: each endpoint calls with its own handle; the calls of one
// endpoint are not reentrant (one collective at a time per endpoint).
#pragma once

#include <mpi.h>

#include <span>

#include "ep/communicator.hpp"

namespace ep {

/// How reductions combine floating-point values.
struct ReduceOptions {
  /// false: hierarchical (threads, then processes): bitwise identical from run
  /// to run for the same layout (processes x threads), but a different layout
  /// may round differently.
  /// true: every contribution is combined in EP rank order with the same
  /// evaluation order whatever the layout, so 4 ranks give the same bits as
  /// 4 processes, 2x2 or 1x4 threads (climate runs must reproduce across
  /// layouts). Costs an allgather of the contributions.
  bool layout_independent = false;
};

/// MPI_Barrier.
void barrier(const Communicator& comm);

/// MPI_Bcast from EP rank `root`.
void bcast(const Communicator& comm, void* buffer, int count, MPI_Datatype datatype, int root);

/// MPI_Reduce to EP rank `root`; sendbuf may be MPI_IN_PLACE at the root.
/// Non-commutative ops combine in EP rank order.
void reduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
            MPI_Datatype datatype, MPI_Op op, int root, const ReduceOptions& options = {});

/// MPI_Allreduce; sendbuf may be MPI_IN_PLACE.
void allreduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options = {});

/// MPI_Gather to EP rank `root`: block r of the root's recvbuf (recvcount
/// elements of recvtype at element r * recvcount) receives EP rank r's
/// sendbuf. recvbuf, recvcount and recvtype are significant at the root only;
/// sendbuf may be MPI_IN_PLACE at the root (its block is already in place).
void gather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);

/// MPI_Gatherv: EP rank r's block goes to element displs[r] of the root's
/// recvbuf, recvcounts[r] elements. The spans (one entry per EP rank) are
/// significant at the root only; sendbuf may be MPI_IN_PLACE at the root.
void gatherv(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, std::span<const int> recvcounts, std::span<const int> displs,
             MPI_Datatype recvtype, int root);

/// MPI_Scatter from EP rank `root`: EP rank r receives block r of the root's
/// sendbuf (sendcount elements at element r * sendcount). sendbuf, sendcount
/// and sendtype are significant at the root only; recvbuf may be
/// MPI_IN_PLACE at the root (its block stays in sendbuf).
void scatter(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);

/// MPI_Scatterv: EP rank r receives sendcounts[r] elements from element
/// displs[r] of the root's sendbuf. The spans (one entry per EP rank) are
/// significant at the root only; recvbuf may be MPI_IN_PLACE at the root.
void scatterv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
              std::span<const int> displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root);

/// MPI_Allgather: every endpoint receives every EP rank's block, block r at
/// element r * recvcount. sendbuf may be MPI_IN_PLACE (each endpoint's block
/// is already in place in its recvbuf).
void allgather(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype);

/// MPI_Allgatherv: EP rank r's block lands at element displs[r] of every
/// recvbuf, recvcounts[r] elements (one entry per EP rank). sendbuf may be
/// MPI_IN_PLACE (the block is taken from displs[rank] of recvbuf).
void allgatherv(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, std::span<const int> recvcounts, std::span<const int> displs,
                MPI_Datatype recvtype);

/// MPI_Reduce_scatter: the vector of sum(recvcounts) elements is reduced
/// over all endpoints and EP rank r receives the recvcounts[r] elements that
/// follow those of ranks 0..r-1. sendbuf may be MPI_IN_PLACE (the input is the
/// whole recvbuf, the result its first recvcounts[rank] elements).
/// Non-commutative ops combine in EP rank order. With options.layout_independent
/// every block is c0 op (c1 op (... op cn-1)) whatever the layout, as in reduce
/// (the blocks travel with one alltoall instead of an allgather).
void reduce_scatter(const Communicator& comm, const void* sendbuf, void* recvbuf,
                    std::span<const int> recvcounts, MPI_Datatype datatype, MPI_Op op,
                    const ReduceOptions& options = {});

/// MPI_Reduce_scatter_block: reduce_scatter with recvcount elements for every
/// EP rank (a vector of size() * recvcount elements). sendbuf may be MPI_IN_PLACE.
void reduce_scatter_block(const Communicator& comm, const void* sendbuf, void* recvbuf,
                          int recvcount, MPI_Datatype datatype, MPI_Op op,
                          const ReduceOptions& options = {});

/// MPI_Scan: EP rank r receives c0 op c1 op ... op cr (the contributions of
/// ranks 0..r, in rank order). sendbuf may be MPI_IN_PLACE. With
/// options.layout_independent the combination is c0 op (c1 op (... op cr)),
/// whatever the layout.
void scan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
          MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options = {});

/// MPI_Exscan: EP rank r > 0 receives c0 op ... op c(r-1); the recvbuf of
/// EP rank 0 is left untouched (MPI leaves it undefined). sendbuf may be
/// MPI_IN_PLACE. options as for scan.
void exscan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
            MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options = {});

/// MPI_Alltoall: block j of sendbuf (sendcount elements of sendtype at
/// element j * sendcount) goes to EP rank j; block i of recvbuf (recvcount
/// elements at element i * recvcount) comes from EP rank i. sendbuf may be
/// MPI_IN_PLACE (the data is taken from recvbuf; sendcount and sendtype are
/// ignored). Between two processes everything travels as one message,
/// packed and unpacked by the threads in parallel; blocks between threads of
/// one process are copied directly.
void alltoall(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
              void* recvbuf, int recvcount, MPI_Datatype recvtype);

/// MPI_Alltoallv: sendcounts[j] elements from element sdispls[j] of sendbuf
/// go to EP rank j; recvcounts[i] elements from EP rank i land at element
/// rdispls[i] of recvbuf (spans of at least size() entries). sendbuf may be
/// MPI_IN_PLACE (sendcounts, sdispls and sendtype are then ignored and may
/// be empty). A block whose two sides disagree on its size throws
/// ep::Error(kTruncate or kCount) on the process that sees it.
void alltoallv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
               std::span<const int> sdispls, MPI_Datatype sendtype, void* recvbuf,
               std::span<const int> recvcounts, std::span<const int> rdispls,
               MPI_Datatype recvtype);

/// MPI_Alltoallw: as alltoallv with one datatype per peer and displacements
/// in bytes. A block of count 0 may name any type, MPI_DATATYPE_NULL included.
/// sendbuf may be MPI_IN_PLACE (the send arrays are then ignored).
void alltoallw(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<const MPI_Datatype> sendtypes, void* recvbuf,
               std::span<const int> recvcounts, std::span<const int> rdispls,
               std::span<const MPI_Datatype> recvtypes);

// ---- nonblocking collectives ----
//
// Collective like the blocking forms: every endpoint of the communicator
// calls each one, each thread with its own handle. Each returns a Request of
// the calling endpoint (only that thread may complete it), completed by ep::wait,
// ep::test and their all/any/some forms (like point-to-point requests, and
// mixed with them freely). The call returns without waiting for any other
// endpoint; the operation progresses while its owner polls it. Buffers
// follow MPI's rules: not touched by the caller until the request completes.
// As MPI requires, every endpoint starts the nonblocking (and blocking)
// collectives of a communicator in the same order; any number may be
// outstanding, and they may be completed in any order. A collective cannot
// be cancelled. Errors in the arguments throw from the call; errors found
// while the operation runs throw from the wait/test that completes it.

/// MPI_Ibarrier: completes once every endpoint of the communicator has called it.
[[nodiscard]] Request ibarrier(const Communicator& comm);

/// MPI_Ibcast from EP rank `root`.
[[nodiscard]] Request ibcast(const Communicator& comm, void* buffer, int count,
                             MPI_Datatype datatype, int root);

/// MPI_Iallreduce; sendbuf may be MPI_IN_PLACE. Gives the same bits as
/// allreduce with the same options on the same layout. Non-commutative ops
/// combine in EP rank order: on a communicator whose ranks are not in process
/// order (after a split, say) such an op, like options.layout_independent,
/// takes the rank-order path: every contribution is gathered and each
/// endpoint folds all of them itself when it completes the request (count *
/// size() must fit an int).
[[nodiscard]] Request iallreduce(const Communicator& comm, const void* sendbuf, void* recvbuf,
                                 int count, MPI_Datatype datatype, MPI_Op op,
                                 const ReduceOptions& options = {});

/// MPI_Ireduce to EP rank `root`, with reduce's arguments; gives the same
/// bits as reduce with the same options on the same layout (iallreduce's
/// rule for non-commutative ops applies: the rank-order path gathers every
/// contribution, and the root folds them when it completes its request).
[[nodiscard]] Request ireduce(const Communicator& comm, const void* sendbuf, void* recvbuf,
                              int count, MPI_Datatype datatype, MPI_Op op, int root,
                              const ReduceOptions& options = {});

/// MPI_Iscan, with scan's arguments and bits.
[[nodiscard]] Request iscan(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options = {});

/// MPI_Iexscan, with exscan's arguments and bits (EP rank 0's recvbuf untouched).
[[nodiscard]] Request iexscan(const Communicator& comm, const void* sendbuf, void* recvbuf,
                              int count, MPI_Datatype datatype, MPI_Op op,
                              const ReduceOptions& options = {});

/// MPI_Ireduce_scatter, with reduce_scatter's arguments and bits. recvcounts
/// is read during the call only.
[[nodiscard]] Request ireduce_scatter(const Communicator& comm, const void* sendbuf, void* recvbuf,
                                      std::span<const int> recvcounts, MPI_Datatype datatype,
                                      MPI_Op op, const ReduceOptions& options = {});

/// MPI_Ireduce_scatter_block, with reduce_scatter_block's arguments and bits.
[[nodiscard]] Request ireduce_scatter_block(const Communicator& comm, const void* sendbuf,
                                            void* recvbuf, int recvcount, MPI_Datatype datatype,
                                            MPI_Op op, const ReduceOptions& options = {});

// The calls below move blocks without combining them. All but
// iallgather(v) share one mechanism: in its call each endpoint stages its blocks for other
// processes and copies those between itself and the local endpoints that called before it; the last
// local caller starts one MPI_Ialltoallw (one message per process pair); each endpoint unpacks its
// own blocks when it completes its request. Count, displacement and type arrays are read during the
// call only. A block whose two sides disagree on its size throws ep::Error(kTruncate or kCount)
// from the wait/test.

/// MPI_Ialltoall, with alltoall's arguments (sendbuf may be MPI_IN_PLACE).
[[nodiscard]] Request ialltoall(const Communicator& comm, const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype);

/// MPI_Ialltoallv, with alltoallv's arguments and aggregation (one message
/// per process pair). sendbuf may be MPI_IN_PLACE. The count and displacement
/// arrays are read during the call only.
[[nodiscard]] Request ialltoallv(const Communicator& comm, const void* sendbuf,
                                 std::span<const int> sendcounts, std::span<const int> sdispls,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 std::span<const int> recvcounts, std::span<const int> rdispls,
                                 MPI_Datatype recvtype);

/// MPI_Ialltoallw, with alltoallw's arguments (displacements in bytes, one
/// type per peer, sendbuf may be MPI_IN_PLACE).
[[nodiscard]] Request ialltoallw(const Communicator& comm, const void* sendbuf,
                                 std::span<const int> sendcounts, std::span<const int> sdispls,
                                 std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                                 std::span<const int> recvcounts, std::span<const int> rdispls,
                                 std::span<const MPI_Datatype> recvtypes);

/// MPI_Igather to EP rank `root`, with gather's arguments (recv arguments
/// significant at the root only; sendbuf may be MPI_IN_PLACE at the root).
[[nodiscard]] Request igather(const Communicator& comm, const void* sendbuf, int sendcount,
                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root);

/// MPI_Igatherv, with gatherv's arguments.
[[nodiscard]] Request igatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf,
                               std::span<const int> recvcounts, std::span<const int> displs,
                               MPI_Datatype recvtype, int root);

/// MPI_Iscatter from EP rank `root`, with scatter's arguments (send
/// arguments significant at the root only; recvbuf may be MPI_IN_PLACE there).
[[nodiscard]] Request iscatter(const Communicator& comm, const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root);

/// MPI_Iscatterv, with scatterv's arguments.
[[nodiscard]] Request iscatterv(const Communicator& comm, const void* sendbuf,
                                std::span<const int> sendcounts, std::span<const int> displs,
                                MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root);

/// MPI_Iallgather, with allgather's arguments (sendbuf may be MPI_IN_PLACE).
/// Unlike the calls above, each endpoint packs its block once into a slot
/// shared by its process, and one MPI_Iallgatherv of the process regions
/// moves every block once; each endpoint unpacks all of them when it
/// completes its request.
[[nodiscard]] Request iallgather(const Communicator& comm, const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                 MPI_Datatype recvtype);

/// MPI_Iallgatherv, with allgatherv's arguments (sendbuf may be MPI_IN_PLACE).
[[nodiscard]] Request iallgatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void* recvbuf,
                                  std::span<const int> recvcounts, std::span<const int> displs,
                                  MPI_Datatype recvtype);

}  // namespace ep
