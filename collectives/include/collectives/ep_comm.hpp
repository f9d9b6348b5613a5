// The endpoint backend of the kernels' communicator interface
// (communicator.hpp): EpComm wraps one endpoint of an endpoint communicator,
// each thread a rank of its own. Its operations are the endpoint layer's
// calls (src/ep_comm.cpp); including this header, and linking the library
// collectives, brings in the endpoint runtime, which MpiComm and
// FunneledComm alone do not need.
//
//   ep::Communicator world = ...;            // this thread's endpoint
//   collectives::EpComm comm(world);
//   collectives::allreduce(comm, std::span<double>(sums), MPI_SUM);
//
// Thread safety: an EpComm is used by its own thread (its endpoint's).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/detail/process_board.hpp"
#include "ep/backoff.hpp"
#include "ep/communicator.hpp"
#include "ep/process_shared.hpp"
#include "ep/rank_map.hpp"
#include "ep/request.hpp"

namespace collectives {

struct EpBackend {
  using Handle = ep::Communicator;
  using Request = ep::Request;
  static constexpr std::string_view kName = "ep";
};

/// One endpoint of an endpoint communicator. Its operations are defined in
/// src/ep_comm.cpp (see COLLECTIVES_DECLARE_BACKEND_OPERATIONS).
using EpComm = BasicComm<EpBackend>;
COLLECTIVES_DECLARE_BACKEND_OPERATIONS(EpComm);

// The per-message calls stay inline.
template <>
[[nodiscard]] inline ep::Request EpComm::isend(const void* buf, int count, MPI_Datatype type,
                                               int dest, int tag) const {
  return comm_->isend(buf, count, type, dest, tag);
}
template <>
[[nodiscard]] inline ep::Request EpComm::irecv(void* buf, int count, MPI_Datatype type, int source,
                                               int tag) const {
  return comm_->irecv(buf, count, type, source, tag);
}

// The rest of the class is compiled once, in src/ep_comm.cpp.
extern template class BasicComm<EpBackend>;

static_assert(Communicator<EpComm>);

/// The threads of one process share their address space: the plans' zero-
/// copy path (detail/process_board.hpp) for the endpoints of one process,
/// whose waits park like every wait of the endpoint layer.
template <>
struct detail::ProcessSharing<EpComm> {
  static std::vector<int> local_threads(const EpComm& comm) {
    std::vector<int> threads(static_cast<std::size_t>(comm.size()), -1);
    const ep::Communicator& ep_comm = comm.get();
    const ep::RankMap& map = ep_comm.rank_map();
    const int process = ep_comm.process_rank();
    for (int r = 0; r < comm.size(); ++r) {
      const ep::Location where = map.locate(r);
      if (where.process == process) threads[static_cast<std::size_t>(r)] = where.thread;
    }
    return threads;
  }
  static int local_thread(const EpComm& comm) { return comm.get().local_thread(); }
  static std::shared_ptr<ProcessBoard> board(const EpComm& comm) {
    const ep::Communicator& ep_comm = comm.get();
    const int threads = ep_comm.local_size();
    return ep::share_in_process<ProcessBoard>(ep_comm, [threads] {
      const BoardWaits waits{[] { ep::notify_waiters(); },
                             [](const std::atomic<std::uint64_t>& counter, std::uint64_t value) {
                               ep::Backoff backoff;
                               while (counter.load(std::memory_order_acquire) < value) {
                                 backoff.pause();
                               }
                             }};
      return std::make_shared<ProcessBoard>(threads, waits);
    });
  }
};

}  // namespace collectives
