#include "team/on_leader.hpp"

#include <string>
#include <string_view>

#include "checks.hpp"

namespace ep::detail {

LeaderFailure failure_of(const std::exception& error) {
  const auto* ep_error = dynamic_cast<const Error*>(&error);
  if (ep_error == nullptr) {
    return {kind_of(error, ErrorKind::kArgument), error.what(), MPI_SUCCESS};
  }
  // ep::Error formats "call[: ep rank N]: detail" (error.cpp); the other
  // endpoints rethrow the detail under their own rank.
  std::string prefix = ep_error->call();
  if (ep_error->ep_rank() >= 0) prefix += ": ep rank " + std::to_string(ep_error->ep_rank());
  prefix += ": ";
  std::string_view text = ep_error->what();
  if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  return {ep_error->kind(), std::string(text), ep_error->mpi_code()};
}

}  // namespace ep::detail
