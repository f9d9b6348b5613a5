// The block exchange of block_exchange.hpp: one NbcInstance class,
// BlockExchange, for every nonblocking collective that moves blocks.
#include "collective/block_exchange.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "collective/nonblocking_registry.hpp"
#include "spin_lock.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

namespace {

class BlockExchange final : public NbcInstance {
 public:
  BlockExchange(const CollectiveCall& call, std::shared_ptr<CommState> comm)
      : NbcInstance(call, std::move(comm)),
        specs_(static_cast<std::size_t>(call.local_size())),
        staging_(static_cast<std::size_t>(call.local_size())),
        region_offsets_(static_cast<std::size_t>(call.local_size())),
        present_(static_cast<std::size_t>(call.local_size()), false) {}

  void contribute(const CollectiveCall& call, ExchangeSpec spec) {
    const RankMap& map = call.comm.rank_map();
    const int me = call.comm.process_rank();
    const auto t = static_cast<std::size_t>(call.thread);
    // Blocks for other processes go to a private staging buffer now, in this
    // thread: packing is spread over the threads as they arrive.
    std::vector<std::size_t> offsets(static_cast<std::size_t>(map.num_processes()), 0);
    std::size_t total = 0;
    for (int q = 0; q < map.num_processes(); ++q) {
      if (q == me) continue;
      offsets[static_cast<std::size_t>(q)] = total;
      total += spec.region_bytes[static_cast<std::size_t>(q)];
    }
    auto staging = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(total, 1));
    for (int q = 0; q < map.num_processes(); ++q) {
      if (q != me) pack_region(spec, map, q, staging.get() + offsets[static_cast<std::size_t>(q)]);
    }
    std::vector<int> earlier;
    {
      std::lock_guard lock(arrive_mutex_);
      specs_[t] = std::make_unique<ExchangeSpec>(std::move(spec));
      staging_[t] = std::move(staging);
      region_offsets_[t] = std::move(offsets);
      for (int y = 0; y < call.local_size(); ++y) {
        if (present_[static_cast<std::size_t>(y)]) earlier.push_back(y);
      }
      present_[t] = true;
    }
    // Blocks within the process: copied once per pair, by the later of the
    // two, straight from the sender's buffer into the receiver's (both stay
    // valid: neither request can complete before every thread contributed).
    const ExchangeSpec& own = *specs_[t];
    copy_local_block(call, own, call.rank, own, call.rank, failure());
    for (const int y : earlier) {
      const ExchangeSpec& other = *specs_[static_cast<std::size_t>(y)];
      const int other_rank = map.ep_rank(me, y);
      copy_local_block(call, own, call.rank, other, other_rank, failure());
      copy_local_block(call, other, other_rank, own, call.rank, failure());
    }
  }

 protected:
  // With one process nothing leaves it: the contributions copied every block.
  std::vector<MPI_Request> start_requests() override {
    if (comm().single_process()) return {};
    return start_segments();
  }

  // Sends this process's segment to every other process; the receives follow
  // in post_more.
  std::vector<MPI_Request> start_segments() {
    const CollectiveCall call = call_of(0);
    const RankMap& map = comm().rank_map();
    const int processes = map.num_processes();
    const int me = comm().process_rank();
    std::vector<const ExchangeSpec*> specs;
    for (const auto& spec : specs_) specs.push_back(spec.get());
    std::vector<std::size_t> expected(static_cast<std::size_t>(processes), 0);
    for (int q = 0; q < processes; ++q) {
      if (q != me) expected[static_cast<std::size_t>(q)] = expected_segment_size(map, q, specs);
    }
    const std::size_t recv_total = landing_.expect(expected, me);
    recv_ = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(recv_total, 1));
    landing_.land_in(recv_.get());
    // The message to q gathers the local threads' regions for q where they
    // lie (absolute addresses, MPI_BOTTOM).
    sends_ = std::make_unique<ByteRuns>(processes, nullptr);
    for (int q = 0; q < processes; ++q) {
      if (q == me) continue;
      const auto qi = static_cast<std::size_t>(q);
      for (std::size_t s = 0; s < specs_.size(); ++s) {
        sends_->add(q, staging_[s].get() + region_offsets_[s][qi], specs_[s]->region_bytes[qi]);
      }
    }
    sends_->build(call.name, call.rank);
    // The segments travel as point-to-point messages, each received at the
    // size it was sent (post_more): a block whose two sides disagree reaches
    // unpack_segment, which reports it, instead of MPI, which would abort.
    return send_probed_segments(probe_turns(), weak_from_this(), call, comm().internal_comm(),
                                segments_, [&](int q) { return segment_of(*sends_, q); });
  }

  // Matches the segment of every process whose turn it is (ProbeTurns) and
  // starts its receive: into its place in the staging when it has the size
  // this process expects, else whole into a buffer of its own.
  bool post_more(std::vector<MPI_Request>& requests) override {
    const CollectiveCall call = call_of(0);
    return match_probed_segments(probe_turns(), segments_, call, comm().internal_comm(), requests,
                                 [&](int q, std::size_t bytes, MPI_Message& message) {
                                   return landing_.receive(call, q, bytes, message);
                                 });
  }

  // Before any endpoint copies its result out: a block whose two sides
  // disagree fails the requests of every endpoint of this process, as in the
  // blocking forms (each endpoint's finish would see only its own blocks).
  void mpi_completed(std::span<const MPI_Status> /*statuses*/) override {
    if (comm().single_process()) return;
    for (int t = 0; t < comm().local_size(); ++t) {
      const CollectiveCall call = call_of(t);
      const ExchangeSpec& spec = *specs_[static_cast<std::size_t>(t)];
      for (int q = 0; q < call.processes(); ++q) {
        if (q == comm().process_rank()) continue;
        check_segment(call, spec, q, landing_.segment(q), landing_.bytes(q), failure());
      }
    }
  }

  void finish(int thread, FailureSlot& mine) override {
    if (comm().single_process()) return;
    const CollectiveCall call = call_of(thread);
    const ExchangeSpec& spec = *specs_[static_cast<std::size_t>(thread)];
    for (int q = 0; q < call.processes(); ++q) {
      if (q == comm().process_rank()) continue;
      unpack_segment(call, spec, q, landing_.segment(q), landing_.bytes(q), mine);
    }
  }

 private:
  SpinLock arrive_mutex_;  // a few moves per arrival (spin_lock.hpp says why not a mutex)
  std::vector<std::unique_ptr<ExchangeSpec>> specs_;      // per local thread
  std::vector<std::unique_ptr<std::byte[]>> staging_;     // per local thread
  std::vector<std::vector<std::size_t>> region_offsets_;  // [thread][process]
  std::vector<bool> present_;
  std::unique_ptr<std::byte[]> recv_;  // where the segments of the expected sizes land
  SegmentLanding landing_;
  std::unique_ptr<ByteRuns> sends_;
  ProbedSegments segments_;
};

}  // namespace

Request start_block_exchange(const Communicator& comm, const CollectiveCall& call,
                             const BlockArgs& send, const BlockArgs& recv, bool in_place) {
  if (recv.buf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
  }
  // Described (and, in place, packed) before joining: argument errors throw
  // here, before the instance counts on this endpoint, and the in-place data
  // is safe before any other thread can write into recvbuf.
  ExchangeSpec spec = make_exchange_spec(call, send, recv, in_place);
  return start_nonblocking<BlockExchange>(
      comm, call, [&] { return std::make_shared<BlockExchange>(call, comm.state()); },
      [&](BlockExchange& instance) { instance.contribute(call, std::move(spec)); });
}

}  // namespace ep::detail
