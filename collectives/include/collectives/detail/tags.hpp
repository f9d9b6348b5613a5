// Message tags of the kernels' own point-to-point traffic, all in one table.
//
// The kernels send only on communicators of their own (kernel_comm() of the
// caller's, or a plan's private_split(); communicator.hpp, "The kernels' own
// messages"), never on the caller's, so no user tag is reserved and a user may
// receive with MPI_ANY_TAG while a kernel runs. The tags below need only keep
// the kernels' messages apart from each other on those communicators.
// Matching within a kernel relies on MPI's non-overtaking rule: every rank
// runs the same stages in the same order, so the n-th message from a peer
// with a given tag is the n-th receive posted; kernels that run one after the
// other on one communicator complete every message before returning.
#pragma once

namespace collectives::detail {

inline constexpr int kAlltoallvDataTag = 1;    ///< alltoallv blocks (every algorithm)
inline constexpr int kAlltoallvCountsTag = 2;  ///< Bruck: block sizes carried along
inline constexpr int kAllreduceTag = 3;        ///< recursive-k allreduce vectors

// 32767 is the least MPI_TAG_UB any MPI (and the endpoint layer) guarantees.
static_assert(kAlltoallvDataTag > 0 && kAllreduceTag <= 32767, "tags in the guaranteed range");

}  // namespace collectives::detail
