// The mechanism behind every nonblocking reduction (iallreduce, ireduce,
// iscan, iexscan, ireduce_scatter(_block)): one nonblocking collective
// instance with the paths and fold order of the blocking forms, so that each
// gives the blocking form's bits on the same layout (see ireduction.cpp).
// Each call checks its own arguments and starts its endpoint's part here.
#pragma once

#include <mpi.h>

#include <vector>

#include "ep/collectives.hpp"
#include "ep/communicator.hpp"
#include "ep/request.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

enum class ReductionKind { kAllreduce, kReduce, kScan, kExscan, kReduceScatter };

/// Starts the calling endpoint's part of a reduction of one vector of
/// `count` elements: kAllreduce, kReduce (to `root`; -1 otherwise), kScan or
/// kExscan. Argument errors throw from here, before the endpoint joins the
/// instance; size mismatches and MPI failures are reported by the request.
Request start_vector_reduction(const Communicator& comm, const CollectiveCall& call,
                               ReductionKind kind, const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, int root,
                               const ReduceOptions& options);

/// The whole of a call that checks nothing of its own (iallreduce, iscan,
/// iexscan): enters the collective as `name`, then start_vector_reduction.
Request vector_reduction(const Communicator& comm, const char* name, ReductionKind kind,
                         const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, const ReduceOptions& options);

/// Starts the calling endpoint's part of a reduce_scatter whose EP rank r
/// receives block_counts[r] elements of the reduced vector.
Request start_reduce_scatter(const Communicator& comm, const CollectiveCall& call,
                             const void* sendbuf, void* recvbuf, std::vector<int> block_counts,
                             MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options);

}  // namespace ep::detail
