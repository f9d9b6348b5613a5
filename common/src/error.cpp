#include "common/error.hpp"

#include <array>
#include <string>

#include "common/enum_names.hpp"

namespace common {

namespace {

std::string format_message(const std::string& call, int ep_rank, const std::string& detail) {
  std::string text = call;
  if (ep_rank >= 0) text += ": ep rank " + std::to_string(ep_rank);
  text += ": " + detail;
  return text;
}

constexpr auto kErrorKindNames =
    enum_names<ErrorKind>({{ErrorKind::kRank, "kRank"},
                           {ErrorKind::kTag, "kTag"},
                           {ErrorKind::kCount, "kCount"},
                           {ErrorKind::kTruncate, "kTruncate"},
                           {ErrorKind::kTooManyEndpoints, "kTooManyEndpoints"},
                           {ErrorKind::kThreadLevel, "kThreadLevel"},
                           {ErrorKind::kFreedComm, "kFreedComm"},
                           {ErrorKind::kArgument, "kArgument"},
                           {ErrorKind::kRequest, "kRequest"},
                           {ErrorKind::kMpi, "kMpi"},
                           {ErrorKind::kNoMemory, "kNoMemory"},
                           {ErrorKind::kIo, "kIo"},
                           {ErrorKind::kConfig, "kConfig"}});

}  // namespace

const char* name_of(ErrorKind kind) noexcept {
  return enum_name(kErrorKindNames, kind, "an unknown ErrorKind");
}

Error::Error(ErrorKind kind, const std::string& call, int ep_rank, const std::string& detail,
             int mpi_code)
    : std::runtime_error(format_message(call, ep_rank, detail)),
      kind_(kind),
      call_(call),
      ep_rank_(ep_rank),
      mpi_code_(mpi_code) {}

void check_mpi(int rc, const char* call, int rank) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(ErrorKind::kMpi, call, rank,
              "MPI error " + std::to_string(rc) + " (" + std::string(text, length) + ")", rc);
}

}  // namespace common
