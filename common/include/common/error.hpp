// The one error convention of the project: every failure is a common::Error
// exception naming the call, the rank and the offending value. Every library
// of the tree throws it (ep, collectives, xios_lite: ep::Error is this type),
// so one catch clause and one C shim (common/c_status.hpp) serve them all.
//
// MPI return codes are never ignored: check_mpi() turns a non-success code
// into an Error carrying the MPI error string.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace common {

/// What kind of misuse or failure an Error reports (maps onto MPI error
/// classes where MPI has one). Each C interface gives each kind its code
/// through its own table (common/c_status.hpp): the endpoint layer's kinds
/// in ep/ep.h, the output library's (kIo, kConfig) in xios_lite/xios_lite.h.
/// A new kind goes last, and kErrorKindCount names it; every table then
/// fails to compile until it says the new kind's code.
enum class ErrorKind {
  kRank,      ///< rank out of range (MPI_ERR_RANK)
  kTag,       ///< tag out of range (MPI_ERR_TAG)
  kCount,     ///< negative or overflowing count (MPI_ERR_COUNT)
  kTruncate,  ///< message longer than the receive buffer (MPI_ERR_TRUNCATE)
  kTooManyEndpoints,
  kThreadLevel,  ///< MPI not initialised with MPI_THREAD_MULTIPLE
  kFreedComm,    ///< use of a freed endpoint communicator (MPI_ERR_COMM)
  kArgument,     ///< any other invalid argument (MPI_ERR_ARG)
  kRequest,      ///< invalid request (MPI_ERR_REQUEST)
  kMpi,          ///< an MPI call itself returned an error
  kNoMemory,     ///< memory could not be allocated (MPI_ERR_NO_MEM)
  kIo,           ///< a file could not be opened, read or written (NetCDF, a configuration file)
  kConfig,       ///< a configuration's content is invalid (XML syntax, elements, attributes)
};

/// The number of kinds: tables indexed by kind check their size against it.
inline constexpr std::size_t kErrorKindCount = static_cast<std::size_t>(ErrorKind::kConfig) + 1;

/// The enumerator's name ("kRank", ...), for messages and tests.
[[nodiscard]] const char* name_of(ErrorKind kind) noexcept;

/// The exception every library of the tree throws on bad input or failure.
/// what() reads like "ep::send: ep rank 3: tag 40000 out of range [0, 32767]".
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& call, int ep_rank, const std::string& detail,
        int mpi_code = MPI_SUCCESS);

  [[nodiscard]] ErrorKind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  /// Rank of the caller (an endpoint or an MPI rank), or -1 when the call
  /// has none yet (creation).
  [[nodiscard]] int ep_rank() const noexcept { return ep_rank_; }
  /// The MPI error code behind the failure (MPI_SUCCESS for argument errors).
  [[nodiscard]] int mpi_code() const noexcept { return mpi_code_; }

 private:
  ErrorKind kind_;
  std::string call_;
  int ep_rank_;
  int mpi_code_;
};

/// Throws Error(kMpi) naming `call`, `rank` and the MPI error string when
/// `rc` is not MPI_SUCCESS. Thread-safe.
void check_mpi(int rc, const char* call, int rank);

/// A length as an MPI count; throws Error(kCount) naming `call` and `rank`
/// when it exceeds INT_MAX. Thread-safe.
inline int count_of(std::size_t n, const char* call, int rank) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    throw Error(ErrorKind::kCount, call, rank,
                "span of " + std::to_string(n) + " elements exceeds INT_MAX");
  }
  return static_cast<int>(n);
}

}  // namespace common
