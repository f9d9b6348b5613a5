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

}  // namespace ep
