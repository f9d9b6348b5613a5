// Message tags the kernels of collectives/ use for their own point-to-point
// traffic on the caller's communicator.
//
// The kernels send on the communicator they are given (no duplicate: a dup per
// call would cost a collective), so their tags are reserved at the top of the
// range every MPI and the endpoint layer guarantee (0..32767). User code must
// not receive with MPI_ANY_TAG on a communicator while a kernel runs on it,
// and must not use these tags. Matching within a kernel relies on MPI's
// non-overtaking rule: every rank runs the same stages in the same order, so
// the n-th message from a peer with a given tag is the n-th receive posted.
#pragma once

namespace collectives::detail {

inline constexpr int kAlltoallvDataTag = 32760;    ///< alltoallv blocks (every algorithm)
inline constexpr int kAlltoallvCountsTag = 32761;  ///< Bruck: block sizes carried along
inline constexpr int kAllreduceTag = 32762;        ///< recursive-k allreduce vectors

static_assert(kAlltoallvDataTag > 0 && kAllreduceTag <= 32767, "tags in the guaranteed range");

}  // namespace collectives::detail
