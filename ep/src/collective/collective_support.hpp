// Shared machinery of the collective algorithms: entering a collective,
// waiting on MPI without busy-polling, argument checks and typed scratch
// buffers.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "comm_state.hpp"
#include "datatype.hpp"
#include "ep/communicator.hpp"

namespace ep::detail {

/// One endpoint's view of the collective it is in.
struct CollectiveCall {
  CommState& comm;
  LocalTeam& team;
  int thread;  // local thread index
  int rank;    // EP rank
  const char* name;

  /// The endpoint that talks MPI for its process (local thread 0).
  [[nodiscard]] bool leader() const noexcept { return thread == 0; }
  [[nodiscard]] int size() const noexcept { return comm.rank_map().size(); }
  [[nodiscard]] int local_size() const noexcept { return comm.local_size(); }
  [[nodiscard]] int processes() const noexcept { return comm.rank_map().num_processes(); }
  [[nodiscard]] MPI_Comm mpi() const noexcept { return comm.internal_comm(); }
};

/// Checks the handle and returns the call context. Throws kFreedComm.
CollectiveCall begin_collective(const Communicator& comm, const char* name);

/// Waits for an MPI request with the project's backoff (Open MPI's blocking
/// collectives busy-poll, which starves oversubscribed cores).
void wait_mpi(MPI_Request& request, const char* call, int rank);

void check_root(int root, int size, const char* call, int rank);
void check_count(int count, const char* call, int rank);

/// Storage for `count` elements of `type`, laid out as MPI expects (data()
/// points where element 0 starts, honouring the type's lower bound).
class TypedScratch {
 public:
  TypedScratch() = default;
  TypedScratch(int count, MPI_Datatype type, const char* call, int rank);
  [[nodiscard]] void* data() noexcept { return storage_.data() - true_lb_; }
  [[nodiscard]] TypedBuffer view(int count, MPI_Datatype type, const TypeLayout& layout) {
    return {data(), count, type, layout};
  }

 private:
  std::vector<std::byte> storage_;
  MPI_Aint true_lb_ = 0;
};

/// Byte offset of element `index` of `type` (its extent times the index).
MPI_Aint element_offset(MPI_Datatype type, MPI_Aint index, const char* call, int rank);

}  // namespace ep::detail
