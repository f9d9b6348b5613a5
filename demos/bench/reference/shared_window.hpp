// The shared-memory window of the ref.shm references: one segment of doubles
// per process of a node (MPI_Win_allocate_shared), every segment mapped into
// this address space, and one passive-target epoch held for the window's
// life (MPI_Win_sync needs one). The experts' on-node hybrid ("MPI+MPI"):
// processes load and store each other's segments directly and order the
// accesses with MPI_Win_sync and a barrier.
//
// Construction and destruction are collective over the node communicator;
// a window belongs to one thread (the references are single-threaded).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace bench {

/// The processes of `comm` that share memory with this one (MPI_Comm_split_type,
/// ranks kept in order). ref.shm runs on one node: when some rank of `comm`
/// is elsewhere, every rank throws std::runtime_error naming `who`, its rank
/// and the counts (each sees the same two sizes, so all throw or none).
/// Collective over `comm`; the caller frees the result.
MPI_Comm shared_node_of(MPI_Comm comm, const char* who);

class SharedWindow {
 public:
  SharedWindow() = default;
  /// Collective over `node` (all its processes share memory): `doubles`
  /// values per process. Throws ep::Error naming the failing MPI call.
  SharedWindow(MPI_Comm node, std::size_t doubles);
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;
  SharedWindow(SharedWindow&& other) noexcept;
  SharedWindow& operator=(SharedWindow&& other) noexcept;
  ~SharedWindow();

  /// Process `rank`'s segment (a rank of the node communicator).
  [[nodiscard]] double* segment(int rank) const {
    return segments_[static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] std::size_t processes() const { return segments_.size(); }

  /// Makes every process's stores before the call visible to every
  /// process's loads after it: MPI_Win_sync, a barrier over `node`, and
  /// MPI_Win_sync again. Collective over `node`.
  void exchange_point(MPI_Comm node) const;

 private:
  void release() noexcept;

  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<double*> segments_;
};

}  // namespace bench
