#include "checks.hpp"

#include <mpi.h>

#include <climits>
#include <new>
#include <string>

#include "comm_state.hpp"
#include "ep/tag_encoding.hpp"

namespace ep::detail {

void check_entries(std::size_t entries, int size, const char* what, const char* call, int rank) {
  if (entries < static_cast<std::size_t>(size)) {
    throw Error(ErrorKind::kArgument, call, rank,
                std::string(what) + " has " + std::to_string(entries) +
                    " entries; the communicator has " + std::to_string(size) + " ranks");
  }
}

void check_counts(std::span<const int> counts, int size, const char* what, const char* call,
                  int rank) {
  check_entries(counts.size(), size, what, call, rank);
  for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r) {
    if (counts[r] < 0) {
      throw Error(ErrorKind::kCount, call, rank,
                  std::string(what) + "[" + std::to_string(r) + "] = " + std::to_string(counts[r]) +
                      " is negative");
    }
  }
}

// The endpoint layer's user tags are exactly the MPI minimum guarantee for
// MPI_TAG_UB, so the fallback below and the user tag limit are one number.
static_assert(kMaxUserTag == 32767, "user tags span the MPI minimum tag range");

CommState& usable_state(const Communicator& comm, const char* call) {
  if (comm.is_null()) throw Error(ErrorKind::kFreedComm, call, -1, "null endpoint communicator");
  CommState& state = *comm.state();
  if (state.is_freed(comm.local_thread())) {
    throw Error(ErrorKind::kFreedComm, call, comm.rank(), "use of a freed endpoint communicator");
  }
  return state;
}

void check_count(int count, const char* call, int rank) {
  if (count < 0) {
    throw Error(ErrorKind::kCount, call, rank, "count " + std::to_string(count) + " is negative");
  }
}

int checked_int_count(long long a, long long b, const char* what, const char* call, int rank) {
  if (a < 0 || b < 0 || (b != 0 && a > INT_MAX / b)) {
    throw Error(ErrorKind::kCount, call, rank,
                std::string(what) + ": " + std::to_string(a) + " x " + std::to_string(b) +
                    " exceeds the largest MPI count (" + std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(a * b);
}

int checked_int_count(std::size_t n, const char* what, const char* call, int rank) {
  if (!fits_int_count(n)) {
    throw Error(ErrorKind::kCount, call, rank,
                std::string(what) + ": " + std::to_string(n) + " exceeds the largest MPI count (" +
                    std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(n);
}

bool fits_int_count(std::size_t n) noexcept { return n <= static_cast<std::size_t>(INT_MAX); }

ErrorKind kind_of(const std::exception& error, ErrorKind otherwise) {
  return dynamic_cast<const std::bad_alloc*>(&error) != nullptr ? ErrorKind::kNoMemory : otherwise;
}

long long mpi_tag_upper_bound(const char* call, int rank) {
  void* value = nullptr;
  int flag = 0;
  check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag), call, rank);
  return flag != 0 ? *static_cast<int*>(value) : kMaxUserTag;
}

void check_root(int root, int size, const char* call, int rank) {
  if (root < 0 || root >= size) {
    throw Error(
        ErrorKind::kRank, call, rank,
        "root " + std::to_string(root) + " out of range [0, " + std::to_string(size - 1) + "]");
  }
}

void check_in_place_only_at_root(const void* buffer, int root, const char* call, int rank) {
  if (buffer == MPI_IN_PLACE && rank != root) {
    throw Error(ErrorKind::kArgument, call, rank,
                "MPI_IN_PLACE is only allowed at the root (" + std::to_string(root) + ")");
  }
}

}  // namespace ep::detail
