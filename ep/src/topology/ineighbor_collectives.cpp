// Nonblocking neighbourhood collectives on Cartesian and graph endpoint
// communicators, on the instance machinery of nonblocking_registry.hpp.
//
// The same blocks (neighbor_blocks.hpp) and the same wire format as the
// blocking forms: one message per process pair and direction, the blocks in
// the route's key order (topology.hpp). Nobody waits for anybody:
//   - each endpoint, in its call, packs its blocks for other processes into
//     a private staging buffer, and copies the blocks between itself and the
//     local endpoints that called before it (each local edge is copied once,
//     by the later of its two ends, straight from buffer to buffer);
//   - the last local call posts one receive per peer process and one send
//     per peer process, whose datatype gathers the blocks where the threads
//     staged them (no copy into a common buffer);
//   - once they complete, each endpoint unpacks its own incoming blocks
//     when it polls its request.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "collective/nonblocking_registry.hpp"
#include "collective/segment_exchange.hpp"
#include "comm_state.hpp"
#include "ep/error.hpp"
#include "ep/topology.hpp"
#include "spin_lock.hpp"
#include "team/collective_call.hpp"
#include "topology/neighbor_blocks.hpp"
#include "topology/topology.hpp"

namespace ep::detail {

namespace {

class Ineighbor final : public NbcInstance {
 public:
  Ineighbor(const CollectiveCall& call, std::shared_ptr<CommState> comm, const Topology& topology)
      : NbcInstance(call, std::move(comm)),
        topology_(topology),
        threads_(static_cast<std::size_t>(call.local_size())),
        present_(static_cast<std::size_t>(call.local_size()), false) {}

  // `copy_local` false: the blocks between local endpoints are moved by
  // someone else (a persistent plan's own handshake) and left alone here.
  void contribute(const CollectiveCall& call, NeighborBlocks blocks, bool copy_local) {
    const auto t = static_cast<std::size_t>(call.thread);
    // Outgoing blocks for other processes: staged now, by this thread.
    const std::vector<detail::BlockRef>& refs = topology_.send_refs[t];
    Contribution mine;
    mine.staged_at.reserve(refs.size());
    std::size_t total = 0;
    for (const detail::BlockRef& ref : refs) {
      mine.staged_at.push_back(total);
      total += blocks.send[static_cast<std::size_t>(ref.slot)].bytes();
    }
    mine.staging = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(total, 1));
    for (std::size_t i = 0; i < refs.size(); ++i) {
      detail::pack_into(blocks.send[static_cast<std::size_t>(refs[i].slot)],
                        mine.staging.get() + mine.staged_at[i]);
    }
    mine.blocks = std::move(blocks);
    std::vector<bool> earlier;
    {
      std::lock_guard lock(arrive_mutex_);
      threads_[t] = std::move(mine);
      earlier = present_;
      present_[t] = true;
    }
    if (!copy_local) return;
    // Local edges with an end here and the other end at an endpoint that
    // called before (or here): both buffers stay valid, since no request of
    // the instance completes before every local endpoint has contributed.
    for (const detail::LocalEdge& edge : topology_.local_in[t]) {
      const auto from = static_cast<std::size_t>(edge.send_thread);
      if (from == t || earlier[from]) copy_edge(call, edge, call.thread);
    }
    for (std::size_t y = 0; y < earlier.size(); ++y) {
      if (!earlier[y]) continue;
      for (const detail::LocalEdge& edge : topology_.local_in[y]) {
        if (edge.send_thread == call.thread) copy_edge(call, edge, static_cast<int>(y));
      }
    }
  }

 protected:
  std::vector<MPI_Request> start_requests() override {
    const std::size_t receives = topology_.recv_routes.size();
    const std::size_t sends = topology_.send_routes.size();
    if (receives + sends == 0) return {};
    const CollectiveCall call = call_of(0);
    // Incoming messages: one buffer, each route's blocks one after the other.
    recv_start_.assign(receives + 1, 0);
    recv_at_.resize(receives);
    std::size_t total = 0;
    for (std::size_t k = 0; k < receives; ++k) {
      recv_start_[k] = total;
      for (const detail::SlotRef& ref : topology_.recv_routes[k].blocks) {
        recv_at_[k].push_back(total);
        total += recv_block(ref.thread, ref.slot).bytes();
      }
      check_message_size(call, total - recv_start_[k]);
    }
    recv_start_[receives] = total;
    recv_data_ = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(total, 1));
    // Outgoing messages: the staged blocks in route order, as byte runs.
    sends_ = std::make_unique<detail::ByteRuns>(static_cast<int>(sends), nullptr);
    std::vector<std::size_t> send_bytes(sends, 0);
    std::vector<std::vector<std::pair<const std::byte*, std::size_t>>> runs(sends);
    for (std::size_t k = 0; k < sends; ++k) runs[k].resize(topology_.send_routes[k].blocks.size());
    for (std::size_t t = 0; t < threads_.size(); ++t) {
      const Contribution& c = threads_[t];
      const std::vector<detail::BlockRef>& refs = topology_.send_refs[t];
      for (std::size_t i = 0; i < refs.size(); ++i) {
        const auto route = static_cast<std::size_t>(refs[i].route);
        const std::size_t bytes = c.blocks.send[static_cast<std::size_t>(refs[i].slot)].bytes();
        runs[route][static_cast<std::size_t>(refs[i].block)] = {c.staging.get() + c.staged_at[i],
                                                                bytes};
        send_bytes[route] += bytes;
      }
    }
    for (std::size_t k = 0; k < sends; ++k) {
      check_message_size(call, send_bytes[k]);
      for (const auto& [start, bytes] : runs[k]) sends_->add(static_cast<int>(k), start, bytes);
    }
    sends_->build(call.name, call.rank);
    std::vector<MPI_Request> requests;
    requests.reserve(receives + sends);
    for (std::size_t k = 0; k < receives; ++k) {
      detail::post_segment(call, comm().internal_comm(), detail::kNeighborTag,
                           topology_.recv_routes[k].process, recv_data_.get() + recv_start_[k],
                           recv_start_[k + 1] - recv_start_[k], requests);
    }
    for (std::size_t k = 0; k < sends; ++k) {
      detail::send_segment(call, comm().internal_comm(), detail::kNeighborTag,
                           topology_.send_routes[k].process,
                           detail::segment_of(*sends_, static_cast<int>(k)), requests);
    }
    return requests;
  }

  void mpi_completed(std::span<const MPI_Status> statuses) override {
    const CollectiveCall call = call_of(0);
    for (std::size_t k = 0; k < topology_.recv_routes.size(); ++k) {
      ErrorKind kind = ErrorKind::kCount;
      const std::string problem = detail::received_size_problem(
          statuses[k], topology_.recv_routes[k].process, recv_start_[k + 1] - recv_start_[k], kind);
      if (!problem.empty()) throw Error(kind, call.name, call.rank, problem);
    }
  }

  void finish(int thread, FailureSlot& /*mine*/) override {
    const auto t = static_cast<std::size_t>(thread);
    for (const detail::BlockRef& ref : topology_.recv_refs[t]) {
      const TypedBuffer& target = threads_[t].blocks.recv[static_cast<std::size_t>(ref.slot)];
      const std::size_t at =
          recv_at_[static_cast<std::size_t>(ref.route)][static_cast<std::size_t>(ref.block)];
      detail::unpack_from(recv_data_.get() + at, target.bytes(), target);
    }
  }

 private:
  // One local endpoint's part, written once under arrive_mutex_.
  struct Contribution {
    NeighborBlocks blocks;
    std::unique_ptr<std::byte[]> staging;  // its blocks for other processes
    std::vector<std::size_t> staged_at;    // by index in its send_refs
  };

  const TypedBuffer& recv_block(int thread, int slot) const {
    return threads_[static_cast<std::size_t>(thread)].blocks.recv[static_cast<std::size_t>(slot)];
  }

  // Copies local edge `edge` into thread `recv_thread`, after the size check.
  void copy_edge(const CollectiveCall& call, const detail::LocalEdge& edge, int recv_thread) {
    const TypedBuffer& source = threads_[static_cast<std::size_t>(edge.send_thread)]
                                    .blocks.send[static_cast<std::size_t>(edge.send_slot)];
    const TypedBuffer& target = recv_block(recv_thread, edge.recv_slot);
    ErrorKind kind = ErrorKind::kArgument;
    const std::string problem =
        detail::local_edge_mismatch(call, edge, recv_thread, source.bytes(), target.bytes(), kind);
    if (!problem.empty()) {
      failure().record(Error(kind, call.name, call.rank, problem));
      return;
    }
    detail::copy_typed(source, target, source.bytes());
  }

  static void check_message_size(const CollectiveCall& call, std::size_t bytes) {
    if (!detail::fits_int_count(bytes)) {
      throw Error(ErrorKind::kCount, call.name, call.rank,
                  "an aggregated message between two processes exceeds 2^31-1 bytes");
    }
  }

  const Topology& topology_;  // immutable, kept alive by the communicator state
  SpinLock arrive_mutex_;     // a few moves per arrival (spin_lock.hpp says why not a mutex)
  std::vector<Contribution> threads_;  // per local thread
  std::vector<bool> present_;
  // Set by start_requests(), read by the pollers after completion.
  std::vector<std::size_t> recv_start_;            // by route, plus the end
  std::vector<std::vector<std::size_t>> recv_at_;  // [route][block]: byte offset
  std::unique_ptr<std::byte[]> recv_data_;
  std::unique_ptr<detail::ByteRuns> sends_;
};

// Every variant: check (throwing from the call), list the blocks, start.
template <typename Fill>
Request start_ineighbor(const Communicator& comm, const char* name, Fill&& fill) {
  const Topology& topology = detail::topology_of(comm, name);
  const CollectiveCall call = detail::begin_collective(comm, name);
  NeighborPreparation preparation(call, topology.endpoints[static_cast<std::size_t>(call.thread)]);
  NeighborBlocks blocks = preparation.run(std::forward<Fill>(fill));
  if (!blocks.error.empty()) throw Error(blocks.error_kind, call.name, call.rank, blocks.error);
  return detail::start_nonblocking<Ineighbor>(
      comm, call, [&] { return std::make_shared<Ineighbor>(call, comm.state(), topology); },
      [&](Ineighbor& instance) { instance.contribute(call, std::move(blocks), true); });
}

}  // namespace

Request start_ineighbor_remote(const Communicator& comm, const char* name, NeighborBlocks blocks) {
  const Topology& topology = detail::topology_of(comm, name);
  const CollectiveCall call = detail::begin_collective(comm, name);
  return detail::start_nonblocking<Ineighbor>(
      comm, call, [&] { return std::make_shared<Ineighbor>(call, comm.state(), topology); },
      [&](Ineighbor& instance) { instance.contribute(call, std::move(blocks), false); });
}

}  // namespace ep::detail

namespace ep {

using detail::NeighborPreparation;
using detail::start_ineighbor;

Request ineighbor_allgather(const Communicator& comm, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype) {
  return start_ineighbor(comm, "ep::ineighbor_allgather", [&](NeighborPreparation& p) {
    detail::fill_neighbor_allgather(p, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

Request ineighbor_allgatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                             std::span<const int> displs, MPI_Datatype recvtype) {
  return start_ineighbor(comm, "ep::ineighbor_allgatherv", [&](NeighborPreparation& p) {
    detail::fill_neighbor_allgatherv(p, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype);
  });
}

Request ineighbor_alltoall(const Communicator& comm, const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype) {
  return start_ineighbor(comm, "ep::ineighbor_alltoall", [&](NeighborPreparation& p) {
    detail::fill_neighbor_alltoall(p, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

Request ineighbor_alltoallv(const Communicator& comm, const void* sendbuf,
                            std::span<const int> sendcounts, std::span<const int> sdispls,
                            MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                            std::span<const int> rdispls, MPI_Datatype recvtype) {
  return start_ineighbor(comm, "ep::ineighbor_alltoallv", [&](NeighborPreparation& p) {
    detail::fill_neighbor_alltoallv(p, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype);
  });
}

Request ineighbor_alltoallw(const Communicator& comm, const void* sendbuf,
                            std::span<const int> sendcounts, std::span<const MPI_Aint> sdispls,
                            std::span<const MPI_Datatype> sendtypes, void* recvbuf,
                            std::span<const int> recvcounts, std::span<const MPI_Aint> rdispls,
                            std::span<const MPI_Datatype> recvtypes) {
  return start_ineighbor(comm, "ep::ineighbor_alltoallw", [&](NeighborPreparation& p) {
    detail::fill_neighbor_alltoallw(p, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                    rdispls, recvtypes);
  });
}

}  // namespace ep
