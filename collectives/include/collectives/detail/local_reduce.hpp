// inout[i] = inout[i] op in[i] for the predefined MPI operations, element by
// element in the caller's threads (comm.parallel_for), without calling MPI:
// in the funneled form only the master thread may call MPI, but every thread
// combines. Operations this file does not know (user ops, MPI_LAND on
// doubles, ...) fall back to MPI_Reduce_local on the calling thread.
//
// For the builtin operations a op b == b op a bit for bit (IEEE addition and
// multiplication are commutative), so only the grouping of a reduction decides
// its rounding, never the side an operand sits on.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>

#include "collectives/communicator.hpp"
#include "common/datatype.hpp"
#include "common/error.hpp"

namespace collectives::detail {

/// Elements one parallel_for iteration combines.
inline constexpr std::size_t kReduceChunk = 8192;

template <class T, class F>
void combine_chunked(const auto& comm, std::span<const T> in, std::span<T> inout, F op) {
  const std::size_t n = inout.size();
  const int chunks = static_cast<int>((n + kReduceChunk - 1) / kReduceChunk);
  if (chunks <= 1) {  // one chunk: not worth waking a team
    for (std::size_t i = 0; i < n; ++i) inout[i] = op(inout[i], in[i]);
    return;
  }
  comm.parallel_for(chunks, [&](int c) {
    const std::size_t begin = static_cast<std::size_t>(c) * kReduceChunk;
    const std::size_t end = std::min(n, begin + kReduceChunk);
    for (std::size_t i = begin; i < end; ++i) inout[i] = op(inout[i], in[i]);
  });
}

/// inout = inout op in (same length). Not collective.
template <Communicator C, common::HasDatatype T>
void local_reduce(const C& comm, std::span<const T> in, std::span<T> inout, MPI_Op op) {
  if constexpr (requires(T a) { a + a; }) {
    if (op == MPI_SUM) {
      combine_chunked<T>(comm, in, inout, [](T a, T b) { return static_cast<T>(a + b); });
      return;
    }
  }
  if constexpr (requires(T a) { a* a; }) {
    if (op == MPI_PROD) {
      combine_chunked<T>(comm, in, inout, [](T a, T b) { return static_cast<T>(a * b); });
      return;
    }
  }
  if constexpr (std::is_arithmetic_v<T>) {
    if (op == MPI_MIN) {
      combine_chunked<T>(comm, in, inout, [](T a, T b) { return std::min(a, b); });
      return;
    }
    if (op == MPI_MAX) {
      combine_chunked<T>(comm, in, inout, [](T a, T b) { return std::max(a, b); });
      return;
    }
  }
  common::check_mpi(MPI_Reduce_local(in.data(), inout.data(), static_cast<int>(inout.size()),
                                     common::datatype_of<T>(), op),
                    "collectives::allreduce (MPI_Reduce_local)", comm.rank());
}

}  // namespace collectives::detail
