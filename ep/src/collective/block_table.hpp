// Block tables: the collectives that move one block per EP rank through a
// process-level MPI call (allgather and its v-form) and the reductions that
// cut or prefix a vector (reduce_scatter, scan): blocks indexed by EP rank
// and the byte plan of the process-level MPI call.
//
// EP ranks need not be process-major (split orders them by key), so the
// process-level MPI calls never rely on EP rank order: their buffers hold the
// blocks in "slot order" (process by process, each process's threads in
// thread order) and the threads place each block by EP rank, through the rank
// map, when they copy in and out. That works for any order; when the blocks
// already lie in slot order in the user's buffer, MPI uses it directly.
//
// Thread safety: the functions are called by the endpoints of one
// collective; what one thread publishes is read by the others only between
// the team barriers that the collectives place around it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "datatype.hpp"
#include "ep/error.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

/// Below this many bytes per process one thread does a process's packing
/// and unpacking alone (saving a team barrier); above it the threads share it.
inline constexpr std::size_t kParallelCopyBytes = std::size_t{64} * 1024;

/// One endpoint's (buf, count, datatype) with the layout the copies need:
/// the typed buffer of datatype.hpp, its one definition.
using Block = TypedBuffer;

/// `count` elements of `type` at `buf`; checks the count and the type.
Block make_block(const void* buf, int count, MPI_Datatype type, const CollectiveCall& call);

/// A buffer cut into one block per EP rank: MPI's (buf, counts, displs,
/// datatype) of the v-forms, or (buf, count, datatype) of the fixed-count
/// forms (block r at element r * count). Keeps views of the spans.
class BlockTable {
 public:
  BlockTable() = default;
  /// Fixed-count form: every block has `count` elements, block r starts at r * count.
  BlockTable(const void* buf, int count, MPI_Datatype type, const CollectiveCall& call);
  /// v-form; `what` names the arguments in errors ("recvcounts", "sendcounts").
  /// Throws ep::Error when a span is shorter than the communicator or a count is negative.
  BlockTable(const void* buf, std::span<const int> counts, std::span<const int> displs,
             MPI_Datatype type, const CollectiveCall& call, const char* what);

  [[nodiscard]] int count(int rank) const {
    return uniform_ >= 0 ? uniform_ : counts_[static_cast<std::size_t>(rank)];
  }
  /// Displacement of block `rank` in elements of the type.
  [[nodiscard]] MPI_Aint displ(int rank) const {
    return uniform_ >= 0 ? static_cast<MPI_Aint>(rank) * uniform_
                         : displs_[static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] std::size_t bytes(int rank) const {
    return static_cast<std::size_t>(count(rank)) * static_cast<std::size_t>(layout_.size);
  }
  [[nodiscard]] Block block(int rank) const {
    return {static_cast<const std::byte*>(buf_) + displ(rank) * extent_, count(rank), type_,
            layout_};
  }
  [[nodiscard]] const TypeLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] MPI_Aint extent() const noexcept { return extent_; }
  /// Where the data of element 0 starts (the buffer plus the type's true lower bound).
  [[nodiscard]] const std::byte* data_start() const {
    return static_cast<const std::byte*>(buf_) + layout_.true_lb;
  }

 private:
  const void* buf_ = nullptr;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  TypeLayout layout_;
  MPI_Aint extent_ = 0;
  int uniform_ = 0;
  std::span<const int> counts_;
  std::span<const int> displs_;
};

/// Byte layout of the buffer of a process-level MPI call that moves the
/// blocks of a BlockTable: MPI counts and displacements per process (MPI_BYTE)
/// and where each EP rank's block lies from the buffer's start.
struct ProcessPlan {
  std::vector<int> counts;
  std::vector<int> displs;
  std::vector<MPI_Aint> offset;   ///< per EP rank (meaningless for the skipped process)
  std::size_t staging_bytes = 0;  ///< size of the staging buffer (0 when direct)
  bool direct = false;            ///< the buffer is the table's own (at data_start())
  bool overflow = false;          ///< a count or displacement does not fit an int
  std::size_t moved_bytes = 0;    ///< bytes of all planned blocks

  /// Throws ep::Error(kCount) when `overflow`.
  void check(const CollectiveCall& call) const;
};

/// Plans the blocks of `table` for every process except `skip` (-1: none;
/// its count is 0, for MPI_IN_PLACE at a root). The blocks go in slot order
/// into a staging buffer or, with `allow_direct`, stay where they are when
/// the type is contiguous and each process's blocks lie back to back in
/// thread order in the table's buffer. Never throws (see ProcessPlan::overflow:
/// it is raised in the MPI stage so that the whole team learns of it).
ProcessPlan plan_processes(const CollectiveCall& call, const BlockTable& table, int skip,
                           bool allow_direct);

/// Copies `src` to `dst` when they hold the same number of bytes (matching
/// type signatures, the MPI rule). Otherwise copies what fits and returns the
/// error for the caller to raise once the collective is complete: raising at
/// once would leave the other endpoints waiting for this one.
std::optional<Error> copy_checked(const TypedBuffer& src, const TypedBuffer& dst,
                                  const CollectiveCall& call, int block_rank);

/// Raises the first deferred error, if any.
inline void raise(const std::optional<Error>& deferred) {
  if (deferred) throw *deferred;
}

}  // namespace ep::detail
