// MPI groups as the layer uses them: a group freed at the end of its scope,
// and the translation of a whole group's ranks into another group.
//
// Base layer: every layer may use it (the communicator constructors, the
// world origins of a communicator that the trace and compare read).
#pragma once

#include <mpi.h>

#include <vector>

namespace ep::detail {

/// Frees an MPI group when it goes out of scope.
class ScopedGroup {
 public:
  ScopedGroup() = default;
  ScopedGroup(const ScopedGroup&) = delete;
  ScopedGroup& operator=(const ScopedGroup&) = delete;
  ~ScopedGroup() {
    if (group_ != MPI_GROUP_NULL) MPI_Group_free(&group_);
  }
  [[nodiscard]] MPI_Group* out() noexcept { return &group_; }
  [[nodiscard]] MPI_Group get() const noexcept { return group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

/// Ranks in `to` of ranks 0..n-1 of `from` (MPI_UNDEFINED where absent).
std::vector<int> translate_all(MPI_Group from, MPI_Group to, const char* call, int rank);

}  // namespace ep::detail
