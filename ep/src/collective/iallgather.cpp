// MPI_Iallgather and MPI_Iallgatherv on an endpoint communicator. Every
// endpoint's block is needed by every endpoint, so the blocks travel once,
// not once per receiving endpoint as a block exchange would send them: in
// its call each endpoint packs its block into its slot of a shared buffer
// (slots in process-major order, each as long as the receivers' counts say);
// the last local call sends the process's region to every other process;
// each endpoint unpacks every slot into its own recvbuf when it completes
// its request.
//
// The regions travel as point-to-point segments on the internal
// communicator, matched in ProbeTurns order like the block exchanges'
// (ProbeTurns, segment_exchange.hpp) and received at the size they were sent: each
// carries a row with the size of every block in it, so a block whose sender
// and this process disagree on its size fails the requests of this process
// with kTruncate or kCount naming it, where one MPI_Iallgatherv at the
// expected sizes would make MPI abort the job.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collective/nonblocking_registry.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

namespace {

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
  // Sends this process's segment (size row, then its region of the slots)
  // to every other process; the receives follow in post_more.
  std::vector<MPI_Request> start_requests() override {
    if (comm().single_process()) return {MPI_REQUEST_NULL};
    const CollectiveCall call = call_of(0);
    const RankMap& map = comm().rank_map();
    const int me = comm().process_rank();
    const auto mi = static_cast<std::size_t>(me);
    const std::size_t row =
        detail::kSizeEntryBytes * static_cast<std::size_t>(map.endpoints_of(me));
    const auto region = static_cast<std::size_t>(process_bytes_[mi]);
    outgoing_.resize(row + region);
    for (int t = 0; t < map.endpoints_of(me); ++t) {
      const std::uint64_t bytes = slot_bytes_[static_cast<std::size_t>(map.ep_rank(me, t))];
      detail::write_size_entry(outgoing_.data(), static_cast<std::size_t>(t), bytes);
    }
    std::memcpy(outgoing_.data() + row,
                slots_.get() + static_cast<std::size_t>(process_displs_[mi]), region);
    const int count = detail::checked_int_count(outgoing_.size(), "bytes of a process's segment",
                                                call.name, call.rank);
    return detail::send_probed_segments(
        probe_turns(), weak_from_this(), call, comm().internal_comm(), segments_, [&](int /*q*/) {
          return detail::SegmentBuffer{outgoing_.data(), count, MPI_BYTE};
        });
  }

  // Receives each process's segment whole, at the size it was sent.
  bool post_more(std::vector<MPI_Request>& requests) override {
    const CollectiveCall call = call_of(0);
    return detail::match_probed_segments(probe_turns(), segments_, call, comm().internal_comm(),
                                         requests,
                                         [&](int q, std::size_t bytes, MPI_Message& message) {
                                           return landing_.receive(call, q, bytes, message);
                                         });
  }

  // Before any endpoint copies its result out: checks every segment's size
  // row against this process's slots (a mismatch fails every request of the
  // process) and places the regions that fit.
  void mpi_completed(std::span<const MPI_Status> /*statuses*/) override {
    if (comm().single_process()) return;
    const RankMap& map = comm().rank_map();
    const CollectiveCall call = call_of(0);
    for (int q = 0; q < map.num_processes(); ++q) {
      if (q == comm().process_rank()) continue;
      const std::span<const std::byte> segment(landing_.segment(q), landing_.bytes(q));
      if (!segment_fits(call, q, segment)) continue;
      const std::size_t row =
          detail::kSizeEntryBytes * static_cast<std::size_t>(map.endpoints_of(q));
      const auto qi = static_cast<std::size_t>(q);
      std::memcpy(slots_.get() + static_cast<std::size_t>(process_displs_[qi]),
                  segment.data() + row, static_cast<std::size_t>(process_bytes_[qi]));
    }
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
  // Whether process q's segment holds exactly the blocks this process
  // expects from it; records the first that does not in failure().
  bool segment_fits(const CollectiveCall& call, int q, std::span<const std::byte> segment) {
    const RankMap& map = comm().rank_map();
    const std::size_t row = detail::kSizeEntryBytes * static_cast<std::size_t>(map.endpoints_of(q));
    if (segment.size() < row) {
      failure().record(ErrorKind::kTruncate,
                       "the message from process " + std::to_string(q) +
                           " is malformed (shorter than its size row): the processes disagree on "
                           "the collective's sizes",
                       -1);
      return false;
    }
    std::size_t data = 0;
    for (int t = 0; t < map.endpoints_of(q); ++t) {
      const std::uint64_t sent =
          detail::read_size_entry(segment.data(), static_cast<std::size_t>(t));
      const int r = map.ep_rank(q, t);
      const std::size_t expected = slot_bytes_[static_cast<std::size_t>(r)];
      if (sent != expected) {
        failure().record(sent > expected ? ErrorKind::kTruncate : ErrorKind::kCount,
                         "the block of ep rank " + std::to_string(r) + " carries " +
                             std::to_string(sent) + " bytes but the endpoints of process " +
                             std::to_string(call.comm.process_rank()) + " expect " +
                             std::to_string(expected) +
                             " (send and receive type signatures must match)",
                         -1);
        return false;
      }
      data += expected;
    }
    if (segment.size() != row + data) {
      failure().record(ErrorKind::kTruncate,
                       "the message from process " + std::to_string(q) +
                           " is malformed (its blocks do not add up to its size row)",
                       -1);
      return false;
    }
    return true;
  }

  std::vector<Blocks> mine_;             // per local thread, written by that thread only
  std::vector<std::size_t> slot_at_;     // by EP rank: byte offset of its slot
  std::vector<std::size_t> slot_bytes_;  // by EP rank
  std::vector<int> process_displs_;      // by process: MPI_Iallgatherv's arguments
  std::vector<int> process_bytes_;
  std::unique_ptr<std::byte[]> slots_;
  std::vector<std::byte> outgoing_;  // this process's segment
  detail::SegmentLanding landing_;   // per process: its segment as received, in a buffer of its own
  detail::ProbedSegments segments_;
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

}  // namespace ep::detail

namespace ep {

Request iallgather(const Communicator& comm, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::iallgather");
  detail::check_count(recvcount, call.name, call.rank);
  const std::vector<int> counts(static_cast<std::size_t>(call.size()), recvcount);
  std::vector<MPI_Aint> displs(counts.size());
  for (std::size_t r = 0; r < displs.size(); ++r) {
    displs[r] = static_cast<MPI_Aint>(r) * recvcount;
  }
  return detail::start_iallgather(
      comm, call,
      detail::describe(call, sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype));
}

Request iallgatherv(const Communicator& comm, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, std::span<const int> recvcounts,
                    std::span<const int> displs, MPI_Datatype recvtype) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::iallgatherv");
  detail::check_counts(recvcounts, call.size(), "recvcounts", call.name, call.rank);
  detail::check_entries(displs.size(), call.size(), "displs", call.name, call.rank);
  const std::vector<MPI_Aint> element_displs(displs.begin(), displs.begin() + call.size());
  return detail::start_iallgather(comm, call,
                                  detail::describe(call, sendbuf, sendcount, sendtype, recvbuf,
                                                   recvcounts, element_displs, recvtype));
}

}  // namespace ep
