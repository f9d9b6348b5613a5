// MPI_Iallgather and MPI_Iallgatherv on an endpoint communicator. Every
// endpoint's block is needed by every endpoint, so the blocks travel once,
// not once per receiving endpoint as a block exchange would send them: in
// its call each endpoint packs its block into its slot of a shared buffer
// (slots in process-major order, each as long as the receivers' counts say);
// the last local call starts one in-place MPI_Iallgatherv of the process
// regions (bytes); each endpoint unpacks every slot into its own recvbuf when
// it completes its request.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collective/nonblocking_registry.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::CommState;
using detail::FailureSlot;
using detail::NbcInstance;
using detail::TypedBuffer;

// One endpoint's side of the call: its block, and where each EP rank's block
// lands in its recvbuf.
struct Blocks {
  TypedBuffer send;
  std::vector<TypedBuffer> recv;  // by EP rank
  bool in_place = false;          // its own block is in place already
};

class Iallgather final : public NbcInstance {
 public:
  // Slot sizes from the creator's receive blocks; every endpoint's are
  // checked against them.
  Iallgather(const CollectiveCall& call, std::shared_ptr<CommState> comm, const Blocks& creator)
      : NbcInstance(call, std::move(comm)), mine_(static_cast<std::size_t>(call.local_size())) {
    const RankMap& map = call.comm.rank_map();
    slot_at_.resize(creator.recv.size());
    std::size_t total = 0;
    for (int p = 0; p < map.num_processes(); ++p) {
      const std::size_t first = total;
      for (int t = 0; t < map.endpoints_of(p); ++t) {
        const auto r = static_cast<std::size_t>(map.ep_rank(p, t));
        slot_at_[r] = total;
        total += creator.recv[r].bytes();
      }
      process_displs_.push_back(detail::checked_int_count(first, "bytes before a process's blocks",
                                                          call.name, call.rank));
      process_bytes_.push_back(detail::checked_int_count(
          total - first, "bytes of a process's blocks", call.name, call.rank));
    }
    for (const TypedBuffer& block : creator.recv) slot_bytes_.push_back(block.bytes());
    slots_ = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(total, 1));
  }

  void contribute(const CollectiveCall& call, Blocks blocks) {
    for (std::size_t r = 0; r < blocks.recv.size(); ++r) {
      if (blocks.recv[r].bytes() != slot_bytes_[r]) {
        throw Error(ErrorKind::kArgument, call.name, call.rank,
                    "the block of ep rank " + std::to_string(r) + " is " +
                        std::to_string(blocks.recv[r].bytes()) +
                        " bytes here, but other endpoints of the process expect " +
                        std::to_string(slot_bytes_[r]));
      }
    }
    const auto me = static_cast<std::size_t>(call.rank);
    if (blocks.send.bytes() != slot_bytes_[me]) {
      throw Error(blocks.send.bytes() > slot_bytes_[me] ? ErrorKind::kTruncate : ErrorKind::kCount,
                  call.name, call.rank,
                  "sends " + std::to_string(blocks.send.bytes()) +
                      " bytes where the receivers' counts give " + std::to_string(slot_bytes_[me]));
    }
    // Distinct slots and distinct threads: no lock.
    detail::pack_into(blocks.send, slots_.get() + slot_at_[me]);
    mine_[static_cast<std::size_t>(call.thread)] = std::move(blocks);
  }

 protected:
  MPI_Request start() override {
    if (comm().single_process()) return MPI_REQUEST_NULL;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, slots_.get(), process_bytes_.data(),
                        process_displs_.data(), MPI_BYTE, comm().internal_comm(), &request),
        name(), call_of(0).rank);
    return request;
  }

  void finish(int thread, FailureSlot& /*mine*/) override {
    const Blocks& blocks = mine_[static_cast<std::size_t>(thread)];
    const auto me = static_cast<std::size_t>(call_of(thread).rank);
    for (std::size_t r = 0; r < blocks.recv.size(); ++r) {
      if (blocks.in_place && r == me) continue;
      detail::unpack_from(slots_.get() + slot_at_[r], slot_bytes_[r], blocks.recv[r]);
    }
  }

 private:
  std::vector<Blocks> mine_;             // per local thread, written by that thread only
  std::vector<std::size_t> slot_at_;     // by EP rank: byte offset of its slot
  std::vector<std::size_t> slot_bytes_;  // by EP rank
  std::vector<int> process_displs_;      // by process: MPI_Iallgatherv's arguments
  std::vector<int> process_bytes_;
  std::unique_ptr<std::byte[]> slots_;
};

// Checked and described before joining: argument errors throw from the call.
Request start_iallgather(const Communicator& comm, const CollectiveCall& call, Blocks blocks) {
  return detail::start_nonblocking<Iallgather>(
      comm, call, [&] { return std::make_shared<Iallgather>(call, comm.state(), blocks); },
      [&](Iallgather& instance) { instance.contribute(call, std::move(blocks)); });
}

// The receive blocks at `displs` (elements of recvtype) with `counts`, and
// the send block (in place: the caller's own receive block).
Blocks describe(const CollectiveCall& call, const void* sendbuf, int sendcount,
                MPI_Datatype sendtype, void* recvbuf, std::span<const int> counts,
                const std::vector<MPI_Aint>& displs, MPI_Datatype recvtype) {
  if (recvbuf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
  }
  Blocks blocks;
  blocks.in_place = sendbuf == MPI_IN_PLACE;
  const detail::TypeLayout layout = detail::layout_of(recvtype, call.name, call.rank);
  blocks.recv.reserve(static_cast<std::size_t>(call.size()));
  for (int r = 0; r < call.size(); ++r) {
    const auto ri = static_cast<std::size_t>(r);
    const MPI_Aint offset = detail::element_offset(recvtype, displs[ri], call.name, call.rank);
    blocks.recv.push_back(
        {static_cast<std::byte*>(recvbuf) + offset, counts[ri], recvtype, layout});
  }
  if (blocks.in_place) {
    blocks.send = blocks.recv[static_cast<std::size_t>(call.rank)];
  } else {
    detail::check_count(sendcount, call.name, call.rank);
    blocks.send = {sendbuf, sendcount, sendtype, detail::layout_of(sendtype, call.name, call.rank)};
  }
  return blocks;
}

}  // namespace

Request iallgather(const Communicator& comm, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::iallgather");
  detail::check_count(recvcount, call.name, call.rank);
  const std::vector<int> counts(static_cast<std::size_t>(call.size()), recvcount);
  std::vector<MPI_Aint> displs(counts.size());
  for (std::size_t r = 0; r < displs.size(); ++r) {
    displs[r] = static_cast<MPI_Aint>(r) * recvcount;
  }
  return start_iallgather(
      comm, call, describe(call, sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype));
}

Request iallgatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                    std::span<const int> displs, MPI_Datatype recvtype) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::iallgatherv");
  detail::check_counts(recvcounts, call.size(), "recvcounts", call.name, call.rank);
  detail::check_entries(displs.size(), call.size(), "displs", call.name, call.rank);
  const std::vector<MPI_Aint> element_displs(displs.begin(), displs.begin() + call.size());
  return start_iallgather(
      comm, call,
      describe(call, sendbuf, sendcount, sendtype, recvbuf, recvcounts, element_displs, recvtype));
}

}  // namespace ep
