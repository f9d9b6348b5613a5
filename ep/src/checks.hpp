// Checks every call shares, each written once so that the same misuse reads
// the same whichever call meets it: the handle (null or freed), counts, and
// the int limit of MPI counts. All throw ep::Error naming the call and the
// endpoint rank (see ep/error.hpp).
#pragma once

#include <cstddef>
#include <exception>
#include <span>

#include "ep/communicator.hpp"
#include "ep/error.hpp"

namespace ep::detail {

class CommState;

/// The shared state behind `comm`. Throws ep::Error(kFreedComm) for a null
/// handle (rank -1) or a handle whose endpoint was freed (its rank).
CommState& usable_state(const Communicator& comm, const char* call);

/// Throws ep::Error(kRank) when `root` is outside [0, size).
void check_root(int root, int size, const char* call, int rank);
/// Throws ep::Error(kArgument) when `buffer` is MPI_IN_PLACE at a rank other than `root`.
void check_in_place_only_at_root(const void* buffer, int root, const char* call, int rank);

/// Throws ep::Error(kCount) when `count` is negative.
void check_count(int count, const char* call, int rank);

/// Throws ep::Error(kArgument) when the array `what` has fewer than `size`
/// entries (one per EP rank).
void check_entries(std::size_t entries, int size, const char* what, const char* call, int rank);
/// check_entries, then ep::Error(kCount) naming the first negative entry of `counts`.
void check_counts(std::span<const int> counts, int size, const char* what, const char* call,
                  int rank);

/// `a` x `b` as an MPI int count. Throws ep::Error(kCount) naming `what`
/// when the product does not fit (MPI counts are ints).
int checked_int_count(long long a, long long b, const char* what, const char* call, int rank);
/// `n` as an MPI int count; throws ep::Error(kCount) naming `what` when it does not fit.
int checked_int_count(std::size_t n, const char* what, const char* call, int rank);
/// True when `n` fits an MPI int count (for paths that record errors instead of throwing).
[[nodiscard]] bool fits_int_count(std::size_t n) noexcept;

/// The detail of an ep::Error standing for something thrown that is not a
/// std::exception, so that a team's failure path covers every throw.
inline constexpr const char* kForeignException = "an exception not derived from std::exception";

/// The ErrorKind that a foreign exception (not an ep::Error) stands for
/// when it is rethrown as one: std::bad_alloc is kNoMemory, anything else `otherwise`.
[[nodiscard]] ErrorKind kind_of(const std::exception& error, ErrorKind otherwise);

/// MPI_TAG_UB as MPI reports it on MPI_COMM_WORLD (MPI-4.0 section 9.1.1);
/// the standard's guaranteed minimum, kMaxUserTag, when it reports none.
long long mpi_tag_upper_bound(const char* call, int rank);

}  // namespace ep::detail
