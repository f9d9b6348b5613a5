// MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw.
//
// One aggregated message per process pair (see aggregated_exchange.hpp for its
// format), never a gather to one root. Small exchanges (at most
// kOneRoundBytes leaving the process; on a communicator within one process,
// at most kOneRoundLocalBytes between its threads) run in one gather-release
// round: the leader packs, exchanges and unpacks (or copies) for every local
// thread while they wait. Larger ones share the work out in the staged protocol:
//   1. every thread describes its blocks (packing its outgoing data first
//      under MPI_IN_PLACE), publishes them and arrives, as for the one round;
//   2. the leader finds the exchange too large for one round, lays out one
//      send staging buffer (a segment per destination process, a region per
//      local thread in it) and the receive staging (a segment per source
//      process, at the size this process expects), and hands the layout on
//      in the round's release;
//   3. every thread packs its own regions, in parallel;
//   4. the leader exchanges the segments (below) while every thread copies
//      the blocks it receives from the threads of this process directly
//      (copy_typed, no MPI);
//   5. every thread unpacks its own blocks from the received segments.
// On a communicator within one process, alltoall and alltoallv take one
// exchange round (exchange_staged): every thread stages its small blocks,
// or leaves larger ones in its send buffer, and reads its own from the
// others' staging or send buffers. In place with blocks too large to stage
// they take the general path below; beyond kMaxStagedThreads threads, not
// in place, a lighter one round (exchange_within_process): the leader
// copies every block from the arguments each thread shares, with no spec
// or plan.
// With one endpoint per process and EP ranks in process order each block
// travels as a message of its own instead (segment_exchange.hpp, exchange_peer_blocks): no team, no
// staging.
//
// The segments travel as point-to-point messages on the internal
// communicator (kAlltoallSegmentTag), one per process pair, each received
// through a matched probe at the size it was sent: one MPI step, where a
// collective exchange would need the sizes agreed first (MPI libraries abort
// on a collective whose sides disagree). A segment of an unexpected size
// lands whole in a buffer of its own, and the block whose two sides disagree
// is found in its size rows by its receiver (kTruncate or kCount), on
// whichever processes hold it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "collective/aggregated_exchange.hpp"
#include "collective/internal_tags.hpp"
#include "collective/segment_exchange.hpp"
#include "ep/collectives.hpp"
#include "p2p/test_hooks.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::BlockArgs;
using detail::CollectiveCall;
using detail::ExchangeSpec;
using detail::FailureSlot;
using detail::SegmentLanding;
using detail::TypeLayout;

// A staging buffer kept by a thread from call to call. Allocating the
// staging afresh on every call cost more than the exchange itself (glibc
// hands large freed blocks back to the system, and the next call faults them
// in again: 4x slower at 64 KiB blocks on 2x2). A thread leads at most one
// blocking collective at a time, so one buffer per role and thread is
// enough; requests above kMaxKept bytes get a buffer of their own, freed
// after the call, so a single huge exchange does not pin its memory.
class KeptBuffer {
 public:
  static constexpr std::size_t kMaxKept = std::size_t{64} << 20;

  // A buffer of at least `bytes` bytes (contents undefined), valid until the
  // next get() on this object or until `oversize` is released.
  std::byte* get(std::size_t bytes, std::unique_ptr<std::byte[]>& oversize) {
    bytes = std::max<std::size_t>(bytes, 1);
    if (bytes > kMaxKept) {
      oversize = std::make_unique_for_overwrite<std::byte[]>(bytes);
      return oversize.get();
    }
    if (bytes > capacity_) {
      data_.reset();  // before allocating: never hold both
      data_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
      capacity_ = bytes;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t capacity_ = 0;
};

thread_local KeptBuffer t_send_staging;
thread_local KeptBuffer t_recv_staging;

// What the leader lays out for the whole process, shared by its threads.
struct ProcessExchange {
  // Send staging: segment q holds the regions of threads 0..T-1, thread s's
  // at region_offset[q * T + s]. The buffers belong to the leader thread
  // (KeptBuffer), or to `oversize_*` for very large exchanges.
  std::byte* send = nullptr;
  std::vector<std::size_t> region_offset;
  std::vector<std::size_t> send_offset;  // per process: segment start
  std::vector<std::size_t> send_size;
  // Where the other processes' segments land (the leader's receive staging,
  // at the sizes this process expects).
  SegmentLanding landing;
  std::unique_ptr<std::byte[]> oversize_send;
  std::unique_ptr<std::byte[]> oversize_recv;
  // Set by the leader once the segments have landed; read by the team after
  // the barrier (or release) that follows the exchange.
  bool received = false;
  FailureSlot failure;
};

// Lays out and allocates the send and receive staging (leader only).
void plan(const CollectiveCall& call, std::span<const ExchangeSpec* const> specs,
          ProcessExchange& px) {
  const RankMap& map = call.comm.rank_map();
  const int processes = call.processes();
  const int me = call.comm.process_rank();
  const auto threads = static_cast<std::size_t>(call.local_size());
  std::vector<std::size_t> expected(static_cast<std::size_t>(processes), 0);
  for (int q = 0; q < processes; ++q) {
    if (q != me)
      expected[static_cast<std::size_t>(q)] = detail::expected_segment_size(map, q, specs);
  }
  const std::size_t recv_total = px.landing.expect(expected, me);
  px.region_offset.assign(static_cast<std::size_t>(processes) * threads, 0);
  px.send_offset.assign(static_cast<std::size_t>(processes), 0);
  px.send_size.assign(static_cast<std::size_t>(processes), 0);
  std::size_t send_total = 0;
  for (int q = 0; q < processes; ++q) {
    if (q == me) continue;
    const auto qi = static_cast<std::size_t>(q);
    px.send_offset[qi] = send_total;
    for (std::size_t s = 0; s < threads; ++s) {
      px.region_offset[qi * threads + s] = send_total;
      send_total += specs[s]->region_bytes[qi];
    }
    px.send_size[qi] = send_total - px.send_offset[qi];
  }
  if (detail::testing::take_injection(detail::testing::Fault::kExchangeStaging)) {
    throw std::bad_alloc();
  }
  // Contents undefined: every byte is written by a pack, or by MPI, before
  // it is read.
  px.landing.land_in(t_recv_staging.get(recv_total, px.oversize_recv));
  px.send = t_send_staging.get(send_total, px.oversize_send);
}

// The leader's MPI part: one point-to-point message per process pair. It
// sends this process's segment to every other process, runs `overlap` (work
// of its own, which must not throw) while they travel, and receives every
// other process's segment through a matched probe, at the size it was sent:
// MPI never sees sizes that disagree, and unpack_segment reports the blocks
// that do. Without send staging (planning failed) the segments go out empty,
// which their receivers report as malformed instead of waiting for them.
template <class Overlap>
void exchange_segments(const CollectiveCall& call, ProcessExchange& px, Overlap&& overlap) {
  const int processes = call.processes();
  const int me = call.comm.process_rank();
  detail::ByteRuns sends(processes, px.send);
  if (px.send != nullptr) {
    for (int q = 0; q < processes; ++q) {
      const auto qi = static_cast<std::size_t>(q);
      if (q != me) sends.add(q, px.send + px.send_offset[qi], px.send_size[qi]);
    }
  }
  sends.build(call.name, call.rank);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * static_cast<std::size_t>(processes));
  for (int q = 0; q < processes; ++q) {
    if (q == me) continue;
    detail::send_segment(call, call.mpi(), detail::kAlltoallSegmentTag, q,
                         detail::segment_of(sends, q), requests);
  }
  std::forward<Overlap>(overlap)();
  // Every other process's segment, matched as it arrives and received at the
  // size it was sent (SegmentLanding).
  std::vector<int> others;
  for (int q = 0; q < processes; ++q) {
    if (q != me) others.push_back(q);
  }
  detail::receive_probed(call, detail::kAlltoallSegmentTag, std::move(others), requests,
                         [&](int q, std::size_t bytes, MPI_Message& message) {
                           return px.landing.receive(call, q, bytes, message);
                         });
  detail::wait_mpi_all(requests, call);
  px.received = true;
}

// Blocks between threads of this process: this thread pulls what each local
// thread sends it.
void copy_local(const CollectiveCall& call, std::span<const ExchangeSpec* const> specs,
                FailureSlot& failure) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const ExchangeSpec& mine = *specs[static_cast<std::size_t>(call.thread)];
  for (int s = 0; s < call.local_size(); ++s) {
    detail::copy_local_block(call, *specs[static_cast<std::size_t>(s)], map.ep_rank(me, s), mine,
                             call.rank, failure);
  }
}

// Up to this many bytes sent to other processes by all the threads of a
// process together, the leader alone packs, exchanges and unpacks for all of
// them in one gather-release round: serial copies of this size cost less
// than the three team barriers the staged protocol adds to the round.
constexpr std::size_t kOneRoundBytes = std::size_t{128} * 1024;
// The same for a communicator within one process, counted in the bytes of
// every block between its threads: the leader's serial copies against the
// two team barriers (and the parallel copies) of the staged path. 1 process
// x 2 threads, blocks of 8 B to 16 KiB: the staged path took about 4 us
// whatever the size (ep_collectives), and one thread copies 32 KiB in a
// few microseconds.
constexpr std::size_t kOneRoundLocalBytes = std::size_t{32} * 1024;

// The call as seen by local thread `thread` (for work the leader does on its
// behalf: errors name that endpoint). Copies do not time.
CollectiveCall on_behalf_of(const CollectiveCall& call, int thread) {
  const int rank = call.comm.rank_map().ep_rank(call.comm.process_rank(), thread);
  return {call.comm, call.team, thread, rank, call.name};
}

// Unpacks `receiver`'s blocks from every other process's segment.
void unpack_received(const CollectiveCall& receiver, const ExchangeSpec& spec,
                     const ProcessExchange& px, FailureSlot& failure) {
  for (int q = 0; q < receiver.processes(); ++q) {
    if (q == receiver.comm.process_rank()) continue;
    detail::unpack_segment(receiver, spec, q, px.landing.segment(q), px.landing.bytes(q), failure);
  }
}

// The leader's side of the one-round exchange, after the arrivals. Every
// step's failure is recorded in `px.failure`, never thrown: the MPI protocol
// (a segment to and from every other process) runs whatever failed before
// it, as on the staged path, which other processes may be taking.
void exchange_for_all(const CollectiveCall& call, std::span<const ExchangeSpec* const> specs,
                      ProcessExchange& px) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const int processes = call.processes();
  const auto threads = static_cast<std::size_t>(call.local_size());
  FailureSlot& failure = px.failure;
  const auto step = [&](auto&& work) { failure.guard(call.name, call.rank, work); };
  const auto copy_all_local = [&] {
    for (std::size_t t = 0; t < threads; ++t) {
      step([&] { copy_local(on_behalf_of(call, static_cast<int>(t)), specs, failure); });
    }
  };
  if (processes == 1) {  // no MPI stage: nothing leaves the process
    copy_all_local();
    return;
  }
  step([&] { plan(call, specs, px); });
  if (px.send != nullptr) {
    step([&] {
      for (int q = 0; q < processes; ++q) {
        if (q == me) continue;
        for (std::size_t t = 0; t < threads; ++t) {
          const std::size_t at = px.region_offset[static_cast<std::size_t>(q) * threads + t];
          detail::pack_region(*specs[t], map, q, px.send + at);
        }
      }
    });
  }
  // The blocks between threads of this process are copied while the
  // segments travel.
  step([&] { exchange_segments(call, px, copy_all_local); });
  if (!px.received) return;
  for (std::size_t t = 0; t < threads; ++t) {
    step([&] { unpack_received(on_behalf_of(call, static_cast<int>(t)), *specs[t], px, failure); });
  }
}

// The one-round exchanges' end for the threads other than the leader:
// arrives (after sharing what the leader needs) and waits for the release.
// Returns the leader's payload; when the leader's work failed, throws its
// error (the FailureSlot the payload points to, which the leader keeps until
// the barrier here).
const void* follow_round(CollectiveCall& call) {
  call.team.arrive(call.thread);
  const detail::LocalTeam::Release release = call.team.wait_release(call.thread);
  if (!release.failed) return release.payload;
  std::exception_ptr error;
  try {
    static_cast<const FailureSlot*>(release.payload)->rethrow(call.name, call.rank);
  } catch (...) {
    error = std::current_exception();
  }
  call.team.barrier();
  std::rethrow_exception(error);
}

// The leader's end of a one-round exchange whose work is done: releases the
// others with the outcome and, after a failure, throws it once every thread
// has read it.
void lead_round_end(CollectiveCall& call, const FailureSlot& failure) {
  if (!failure.failed()) {
    call.team.release(call.thread, false);
    return;
  }
  call.team.release(call.thread, true, &failure);
  call.team.barrier();  // every thread has read the failure
  failure.rethrow(call.name, call.rank);
}

// Small exchanges in one gather-release round: every thread publishes its
// spec and arrives; the leader does the whole exchange for the process
// (exchange_for_all) and releases. When the leader finds the exchange too
// large, it lays out the staged protocol instead (plan, into `staged`, which
// the caller keeps until the protocol's last barrier) and hands the layout on
// in the release: every local thread then returns it, and the caller runs
// the rest of the staged protocol with it. Returns null, on every local
// thread, when the round did the whole exchange.
std::shared_ptr<ProcessExchange> exchange_in_one_round(CollectiveCall& call,
                                                       const ExchangeSpec& spec,
                                                       std::shared_ptr<ProcessExchange>& staged) {
  call.team.share(call.thread, spec);
  if (!call.leader()) {
    const void* payload = follow_round(call);
    if (payload == nullptr) return nullptr;
    // A copy: the leader's `staged` lives until the staged protocol's last
    // barrier, which this thread has yet to reach.
    return *static_cast<const std::shared_ptr<ProcessExchange>*>(payload);
  }
  call.team.open_round(call.thread);
  call.team.await_arrivals(call.thread);
  const int me = call.comm.process_rank();
  const auto threads = static_cast<std::size_t>(call.local_size());
  std::vector<const ExchangeSpec*> specs(threads);
  std::size_t outgoing = 0;
  std::size_t local = 0;
  for (std::size_t t = 0; t < threads; ++t) {
    specs[t] = &call.team.shared<ExchangeSpec>(static_cast<int>(t));
    for (int q = 0; q < call.processes(); ++q) {
      if (q != me) outgoing += specs[t]->region_bytes[static_cast<std::size_t>(q)];
    }
    local += specs[t]->expected_bytes[static_cast<std::size_t>(me)];
  }
  const bool too_large =
      call.processes() > 1 ? outgoing > kOneRoundBytes : local > kOneRoundLocalBytes;
  if (too_large) {
    // Planning failures are recorded in the layout's failure slot and
    // reported after the protocol, which every process runs to its end.
    staged = std::make_shared<ProcessExchange>();
    if (call.processes() > 1) {
      staged->failure.guard(call.name, call.rank, [&] { plan(call, specs, *staged); });
    }
    call.team.release(call.thread, false, &staged);
    return staged;
  }
  ProcessExchange px;
  exchange_for_all(call, specs, px);
  lead_round_end(call, px.failure);
  return nullptr;
}

// A communicator within one process, alltoall or alltoallv (one type per
// side) without MPI_IN_PLACE: one gather-release round in which the leader
// copies every block straight from its sender's buffer into its receiver's,
// from the arguments each thread shares, with no ExchangeSpec (nothing
// allocated, each type looked up once per thread, in parallel). At 1 process
// x 2 threads the spec and the plan took most of an 8 B alltoall. A block
// whose two sides disagree is found by the leader; every local endpoint
// then throws that error, as on the other paths.
struct LocalSide {
  const BlockArgs* args = nullptr;
  TypeLayout layout;
  MPI_Aint extent = 0;

  LocalSide(const CollectiveCall& call, const BlockArgs& a) : args(&a) {
    detail::check_block_args(call, a);
    layout = detail::layout_of(a.type, call.name, call.rank);
    extent = detail::element_offset(a.type, 1, call.name, call.rank);
  }
  // The block for (or from) EP rank `j`, as describe_blocks lays it out.
  [[nodiscard]] detail::TypedBuffer block(int j) const {
    const auto index = static_cast<std::size_t>(j);
    const int count = args->per_peer ? args->counts[index] : args->count;
    const MPI_Aint offset = args->per_peer ? static_cast<MPI_Aint>(args->displs[index]) * extent
                                           : static_cast<MPI_Aint>(j) * count * extent;
    return {static_cast<const std::byte*>(args->buf) + offset, count, args->type, layout};
  }
};
struct LocalSides {
  LocalSide send;
  LocalSide recv;
};

void exchange_within_process(CollectiveCall& call, const BlockArgs& send, const BlockArgs& recv) {
  // The receive side first, as make_exchange_spec checks them.
  const LocalSide into(call, recv);
  const LocalSides mine{LocalSide(call, send), into};
  call.team.share(call.thread, mine);
  if (!call.leader()) {
    (void)follow_round(call);
    return;
  }
  call.team.open_round(call.thread);
  call.team.await_arrivals(call.thread);
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  FailureSlot failure;
  for (int t = 0; t < call.local_size(); ++t) {
    const CollectiveCall receiver = on_behalf_of(call, t);
    const LocalSide& into = call.team.shared<LocalSides>(t).recv;
    for (int s = 0; s < call.local_size(); ++s) {
      const int sender = map.ep_rank(me, s);
      failure.guard(call.name, receiver.rank, [&] {
        const detail::TypedBuffer source =
            call.team.shared<LocalSides>(s).send.block(receiver.rank);
        const detail::TypedBuffer target = into.block(sender);
        if (source.bytes() != target.bytes()) {
          detail::record_block_mismatch(receiver, failure, sender, receiver.rank, source.bytes(),
                                        target.bytes());
        }
        detail::copy_typed(source, target, std::min(source.bytes(), target.bytes()));
      });
    }
  }
  lead_round_end(call, failure);
}

// A communicator within one process, alltoall and alltoallv (in place or
// not): one exchange round of LocalTeam. Each thread stages a header (the
// size of every block it sends and of every block it expects) and, when
// its blocks for the other threads are small (kInlineBytes in all), those
// blocks themselves in destination order; larger ones stay in its send
// buffer, the header says so and its LocalSide is in its team slot. Its
// block to itself never goes through the staging: it is copied between
// publishing and waiting, while the others publish (in place it is already
// where it belongs). Once every thread has published, each copies the block
// every other thread has for it, from the staging or straight from the
// sender's buffer. A sender whose blocks were all staged leaves at once:
// one synchronisation, where the leader's gather-release round is two in a
// row and copies every block alone. A sender that left its blocks in its
// buffer waits only for its readers to say they are done with it
// (LocalTeam::exchange_read_done), not for a barrier. Under MPI_IN_PLACE
// the send data is the receive buffer its owner overwrites, so it must be
// staged: a thread whose blocks do not fit its staging stages a mark
// saying so, and every thread, having read every header, returns false
// (together) for the caller's other paths. Every thread reads every
// header, so a block whose two sides disagree anywhere is found by all of
// them, in EP rank order (the first of receiver, then sender): every
// endpoint of the process throws it, as on the other paths, once it has
// received what fits.
constexpr std::uint64_t kTooLarge = ~std::uint64_t{0};
constexpr std::uint64_t kInSendBuffer = ~std::uint64_t{0} - 1;
// Up to this many bytes of blocks for the other threads, staging them (a
// second copy) costs less than the second synchronisation that reading them
// in place needs (the sender waiting for its readers): 1 process x 2
// threads, ep_collectives, t_min medians of 4 launches at load 6: blocks
// read in place took 1.24-1.35 us from 1 to 8 KiB; staged, 1 KiB blocks
// took 0.76 us, 2 KiB 0.94 us and 4 KiB 1.37 us.
constexpr std::size_t kInlineBytes = 2048;
// Above this many threads the header and its all-pairs check outgrow the
// staging: the other paths take the exchange.
constexpr int kMaxStagedThreads = 64;

// The staged header of one thread: [0] the total bytes of its staged blocks
// (or kTooLarge, or kInSendBuffer: then its LocalSide is in its team slot),
// [1] unused, [2 + t] the block it sends to local thread t, [2 + T + t] the
// block it expects from local thread t. Its staged blocks follow (at
// data_at), those for the other threads in thread order.
struct StagedHeader {
  const std::byte* at;
  std::size_t threads;
  [[nodiscard]] std::uint64_t word(std::size_t index) const {
    std::uint64_t value = 0;
    std::memcpy(&value, at + index * sizeof value, sizeof value);
    return value;
  }
  [[nodiscard]] std::uint64_t total() const { return word(0); }
  [[nodiscard]] std::uint64_t sends(int t) const { return word(2 + static_cast<std::size_t>(t)); }
  [[nodiscard]] std::uint64_t expects(int t) const {
    return word(2 + threads + static_cast<std::size_t>(t));
  }
  // Where sender `s`'s staged block for `t` starts (t != s).
  [[nodiscard]] std::size_t staged_at(std::size_t data_at, int s, int t) const {
    std::size_t offset = data_at;
    for (int u = 0; u < t; ++u) {
      if (u != s) offset += sends(u);
    }
    return offset;
  }
};

bool exchange_staged(CollectiveCall& call, const BlockArgs& send, const BlockArgs& recv,
                     bool in_place) {
  detail::LocalTeam& team = call.team;
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const int threads = call.local_size();
  const auto n = static_cast<std::size_t>(threads);
  // The receive side first, as make_exchange_spec checks them.
  const LocalSide into(call, recv);
  const LocalSide from = in_place ? into : LocalSide(call, send);
  const std::size_t data_at = (sizeof(std::uint64_t) * (2 * n + 2) + 63) / 64 * 64;
  std::byte* staging = team.exchange_staging(call.thread);
  const auto put = [&](std::size_t index, std::uint64_t value) {
    std::memcpy(staging + index * sizeof value, &value, sizeof value);
  };
  std::uint64_t total = 0;  // for the other threads
  for (int t = 0; t < threads; ++t) {
    const int peer = map.ep_rank(me, t);
    const std::uint64_t bytes = from.block(peer).bytes();
    if (t != call.thread) total += bytes;
    put(2 + static_cast<std::size_t>(t), bytes);
    put(2 + n + static_cast<std::size_t>(t), into.block(peer).bytes());
  }
  const std::size_t room = detail::LocalTeam::kExchangeBytes - data_at;
  const bool inline_blocks = total <= (in_place ? room : std::min(room, kInlineBytes));
  put(0, inline_blocks ? total : (in_place ? kTooLarge : kInSendBuffer));
  put(1, 0);
  team.share(call.thread, from);  // read (in place of staged blocks) until its readers are done
  if (inline_blocks) {
    std::byte* next = staging + data_at;
    for (int t = 0; t < threads; ++t) {
      if (t == call.thread) continue;
      const detail::TypedBuffer block = from.block(map.ep_rank(me, t));
      detail::pack_into(block, next);
      next += block.bytes();
    }
  }
  team.exchange_publish(call.thread);
  FailureSlot failure;
  if (!in_place) {  // in place, this thread's block to itself is where it belongs
    failure.guard(call.name, call.rank, [&] {
      const detail::TypedBuffer source = from.block(call.rank);
      const detail::TypedBuffer target = into.block(call.rank);
      detail::copy_typed(source, target, std::min(source.bytes(), target.bytes()));
    });
  }
  team.exchange_await_all(call.thread);
  thread_local std::vector<StagedHeader> headers;
  headers.resize(n);
  bool in_send_buffers = false;
  for (int s = 0; s < threads; ++s) {
    headers[static_cast<std::size_t>(s)] = {team.exchanged(call.thread, s), n};
    const std::uint64_t head = headers[static_cast<std::size_t>(s)].total();
    if (head == kTooLarge) return false;
    in_send_buffers = in_send_buffers || head == kInSendBuffer;
  }
  // A failed copy to itself is this endpoint's own error; a block whose
  // sides disagree comes first, as on the other paths.
  FailureSlot mismatch;
  for (int receiver = 0; receiver < threads && !mismatch.failed(); ++receiver) {
    const int t = map.locate(receiver).thread;  // one process: EP ranks 0 .. threads - 1
    for (int sender = 0; sender < threads; ++sender) {
      const int s = map.locate(sender).thread;
      const std::uint64_t sent = headers[static_cast<std::size_t>(s)].sends(t);
      const std::uint64_t expected = headers[static_cast<std::size_t>(t)].expects(s);
      if (sent != expected) {
        detail::record_block_mismatch(on_behalf_of(call, t), mismatch, map.ep_rank(me, s),
                                      map.ep_rank(me, t), sent, expected);
        break;
      }
    }
  }
  failure.guard(call.name, call.rank, [&] {
    for (int s = 0; s < threads; ++s) {
      if (s == call.thread) continue;
      const StagedHeader& header = headers[static_cast<std::size_t>(s)];
      const detail::TypedBuffer target = into.block(map.ep_rank(me, s));
      const std::size_t fits = std::min<std::size_t>(header.sends(call.thread), target.bytes());
      if (header.total() == kInSendBuffer) {
        detail::copy_typed(team.shared<LocalSide>(s).block(call.rank), target, fits);
        continue;
      }
      detail::unpack_from(header.at + header.staged_at(data_at, s, call.thread), fits, target);
    }
  });
  // The send buffers are read until here: each reader says so, and each
  // owner of one waits for its readers only (no barrier).
  if (in_send_buffers) team.exchange_read_done(call.thread);
  if (headers[static_cast<std::size_t>(call.thread)].total() == kInSendBuffer) {
    team.exchange_await_readers(call.thread);
  }
  mismatch.rethrow(call.name, call.rank);
  failure.rethrow(call.name, call.rank);
  return true;
}

void run_exchange(CollectiveCall& call, const ExchangeSpec& spec) {
  const RankMap& map = call.comm.rank_map();
  const int me = call.comm.process_rank();
  const int processes = call.processes();
  const auto threads = static_cast<std::size_t>(call.local_size());

  // The staged protocol's layout: made by the leader in the round and held
  // by every thread until the protocol's end (threads may still read its
  // failure slot after the last barrier).
  std::shared_ptr<ProcessExchange> staged;
  const std::shared_ptr<ProcessExchange> px = exchange_in_one_round(call, spec, staged);
  if (!px) return;
  // The specs were published before the round; its release makes them
  // visible to every thread.
  std::vector<const ExchangeSpec*> specs(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    specs[t] = &call.team.shared<ExchangeSpec>(static_cast<int>(t));
  }
  FailureSlot& failure = px->failure;
  const auto step = [&](auto&& work) { failure.guard(call.name, call.rank, work); };

  if (processes == 1) {
    step([&] { copy_local(call, specs, failure); });
    call.team.barrier();  // sources (user buffers, in-place copies) are read until here
    failure.rethrow(call.name, call.rank);
    return;
  }

  // Without staging (planning failed) nothing can be packed; the exchange
  // still runs (empty segments) and the failure is reported after it.
  if (px->send != nullptr) {
    step([&] {
      for (int q = 0; q < processes; ++q) {
        if (q == me) continue;
        const std::size_t at = px->region_offset[static_cast<std::size_t>(q) * threads +
                                                 static_cast<std::size_t>(call.thread)];
        detail::pack_region(spec, map, q, px->send + at);
      }
    });
  }
  call.team.barrier();
  // Every thread copies the blocks it receives from the threads of this
  // process while the leader's segments travel.
  const auto copy_own = [&] { step([&] { copy_local(call, specs, failure); }); };
  if (call.leader()) {
    step([&] { exchange_segments(call, *px, copy_own); });
  } else {
    copy_own();
  }
  call.team.barrier();
  if (px->received) step([&] { unpack_received(call, spec, *px, failure); });
  call.team.barrier();  // staging, specs and user send buffers are read until here
  failure.rethrow(call.name, call.rank);
}

void check_recvbuf(const CollectiveCall& call, const void* recvbuf) {
  if (recvbuf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
  }
}

// Runs the exchange described by `send` and `recv`: block by block when
// every process has one endpoint, in EP rank order (segment_exchange.hpp, exchange_peer_blocks),
// otherwise aggregated per process pair.
void exchange(CollectiveCall& call, const BlockArgs& send, const BlockArgs& recv, bool in_place) {
  const bool within_process = call.processes() == 1 && call.local_size() > 1;
  if (within_process && !send.per_peer_types && call.local_size() <= kMaxStagedThreads &&
      exchange_staged(call, send, recv, in_place)) {
    return;
  }
  if (within_process && !in_place && !send.per_peer_types) {
    exchange_within_process(call, send, recv);
    return;
  }
  ExchangeSpec spec = detail::make_exchange_spec(call, send, recv, in_place);
  if (call.one_endpoint_per_process()) {
    detail::exchange_peer_blocks(call, spec, {});
    return;
  }
  run_exchange(call, spec);
}

}  // namespace

void alltoall(const Communicator& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
              void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  CollectiveCall call = detail::begin_collective(comm, "ep::alltoall");
  check_recvbuf(call, recvbuf);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto [send, recv] =
      detail::alltoall_sides(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  exchange(call, send, recv, in_place);
}

void alltoallv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
               std::span<const int> sdispls, MPI_Datatype sendtype, void* recvbuf,
               std::span<const int> recvcounts, std::span<const int> rdispls,
               MPI_Datatype recvtype) {
  CollectiveCall call = detail::begin_collective(comm, "ep::alltoallv");
  check_recvbuf(call, recvbuf);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto [send, recv] = detail::alltoallv_sides(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                    recvcounts, rdispls, recvtype);
  exchange(call, send, recv, in_place);
}

void alltoallw(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<const MPI_Datatype> sendtypes, void* recvbuf,
               std::span<const int> recvcounts, std::span<const int> rdispls,
               std::span<const MPI_Datatype> recvtypes) {
  CollectiveCall call = detail::begin_collective(comm, "ep::alltoallw");
  check_recvbuf(call, recvbuf);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const auto [send, recv] = detail::alltoallw_sides(sendbuf, sendcounts, sdispls, sendtypes,
                                                    recvbuf, recvcounts, rdispls, recvtypes);
  exchange(call, send, recv, in_place);
}

}  // namespace ep
