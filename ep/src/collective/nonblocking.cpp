// ibarrier, ibcast, iallreduce and ialltoallv: the instances that the
// registry (nonblocking_registry.hpp) sequences and starts.
//
// Each call does its endpoint's share of the local work right away, in its
// own thread, and returns; none waits for another endpoint:
//   ibarrier    nothing locally; MPI_Ibarrier once every local thread is in.
//   ibcast      the root copies its buffer into the instance; MPI_Ibcast of
//               that copy; every other thread copies the result out when it
//               polls the completed request.
//   iallreduce  contributions are folded into a process buffer in thread
//               order as they arrive (whoever completes a run of the fold
//               does it), then MPI_Iallreduce; each thread copies out. The
//               rank-order variant (layout-independent sums, or a
//               non-commutative op on ranks not in process order) copies each
//               contribution into a slot, MPI_Iallgatherv's the slots, and
//               each thread folds all of them in EP rank order when it polls
//               the completed request.
//   ialltoallv  each thread packs its blocks for the other processes into a
//               private staging buffer, and copies the blocks between itself
//               and the local threads that arrived before it (so each pair is
//               copied once, by the later one, directly). One MPI_Ialltoallw
//               then sends, per process pair, a derived type over the local
//               threads' staging regions: one message per pair without a
//               copy into a common buffer. Each thread unpacks its own blocks.
// With one endpoint per process (and, where ranks matter, process order) the
// instance hands the user's buffers straight to MPI.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "collective/alltoall_support.hpp"
#include "collective/collective_support.hpp"
#include "collective/fold_support.hpp"
#include "collective/nonblocking_registry.hpp"
#include "ep/collectives.hpp"

namespace ep {

namespace {

using detail::BlockArgs;
using detail::CollectiveCall;
using detail::CommState;
using detail::Elements;
using detail::ExchangeSpec;
using detail::FailureSlot;
using detail::NbcInstance;
using detail::NbcRegistry;
using detail::TypedBuffer;
using detail::TypedScratch;
using detail::TypeLayout;

// Joins the endpoint's next nonblocking collective (creating it with `make`
// when first), contributes with `contribute` and returns the request. A
// failed contribution is reported by the request: the instance must still
// count it, or the other endpoints would never complete.
template <class Instance, class Make, class Contribute>
Request start_nonblocking(const Communicator& comm, const CollectiveCall& call, Make&& make,
                          Contribute&& contribute) {
  const std::shared_ptr<NbcRegistry> registry = NbcRegistry::of(comm.state());
  std::shared_ptr<NbcInstance> instance =
      registry->join(call, [&]() -> std::shared_ptr<NbcInstance> { return make(); });
  // join() checked the name, and each name has one instance class.
  auto& typed = static_cast<Instance&>(*instance);
  instance->failure().guard(call.name, call.rank, [&] { contribute(typed); });
  registry->contributed(instance);
  return detail::make_collective_request(call, comm.state(), std::move(instance));
}

// Byte-count mismatch between one endpoint's buffer and the process's copy.
void check_same_bytes(const CollectiveCall& call, std::size_t mine, std::size_t process,
                      FailureSlot& failure) {
  if (mine == process) return;
  failure.record(Error(mine < process ? ErrorKind::kTruncate : ErrorKind::kCount, call.name,
                       call.rank,
                       "buffer holds " + std::to_string(mine) + " bytes, other endpoints give " +
                           std::to_string(process) + " (type signatures must match)"));
}

// ---- ibarrier ---------------------------------------------------------------

class Ibarrier final : public NbcInstance {
 public:
  using NbcInstance::NbcInstance;

 protected:
  MPI_Request start() override {
    if (comm().single_process()) return MPI_REQUEST_NULL;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(comm().internal_comm(), &request), name(), call_of(0).rank);
    return request;
  }
  void finish(int /*thread*/, FailureSlot& /*mine*/) override {}
};

// ---- ibcast -----------------------------------------------------------------

class Ibcast final : public NbcInstance {
 public:
  Ibcast(const CollectiveCall& call, std::shared_ptr<CommState> comm, int count, MPI_Datatype type,
         const TypeLayout& layout, int root)
      : NbcInstance(call, std::move(comm)),
        count_(count),
        type_(type),
        layout_(layout),
        root_(root),
        direct_(call.comm.rank_map().max_endpoints_per_process() == 1),
        targets_(static_cast<std::size_t>(call.local_size())) {
    if (!direct_) scratch_ = TypedScratch(count, type, call.name, call.rank);
  }

  void contribute(const CollectiveCall& call, const TypedBuffer& buffer, int root) {
    if (root != root_) {
      throw Error(ErrorKind::kRank, call.name, call.rank,
                  "root " + std::to_string(root) + " differs from root " + std::to_string(root_) +
                      " given by other endpoints of the process");
    }
    targets_[static_cast<std::size_t>(call.thread)] = buffer;
    if (direct_ || call.rank != root_) return;
    // The root's buffer is free again once its request completes, which may
    // be before the other threads copy: they copy from the instance's copy.
    check_same_bytes(call, buffer.bytes(), process_bytes(), failure());
    copy_typed(buffer, scratch_view(), std::min(buffer.bytes(), process_bytes()));
  }

 protected:
  MPI_Request start() override {
    if (comm().single_process()) return MPI_REQUEST_NULL;
    const int root_process = comm().rank_map().locate(root_).process;
    MPI_Request request = MPI_REQUEST_NULL;
    if (direct_) {
      const TypedBuffer& only = targets_[0];
      check_mpi(MPI_Ibcast(const_cast<void*>(only.buf), only.count, only.type, root_process,
                           comm().internal_comm(), &request),
                name(), call_of(0).rank);
    } else {
      check_mpi(MPI_Ibcast(scratch_.data(), count_, type_, root_process, comm().internal_comm(),
                           &request),
                name(), call_of(0).rank);
    }
    return request;
  }

  void finish(int thread, FailureSlot& mine) override {
    const CollectiveCall call = call_of(thread);
    if (direct_ || call.rank == root_) return;
    const TypedBuffer& target = targets_[static_cast<std::size_t>(thread)];
    check_same_bytes(call, target.bytes(), process_bytes(), mine);
    copy_typed(scratch_view(), target, std::min(target.bytes(), process_bytes()));
  }

 private:
  [[nodiscard]] std::size_t process_bytes() const {
    return static_cast<std::size_t>(count_) * static_cast<std::size_t>(layout_.size);
  }
  TypedBuffer scratch_view() { return scratch_.view(count_, type_, layout_); }

  int count_;
  MPI_Datatype type_;
  TypeLayout layout_;
  int root_;
  bool direct_;
  TypedScratch scratch_;
  std::vector<TypedBuffer> targets_;  // per local thread: its buffer
};

// ---- iallreduce -------------------------------------------------------------

class Iallreduce final : public NbcInstance {
 public:
  enum class Mode {
    kDirect,        // one endpoint per process: MPI on the user's buffers
    kHierarchical,  // fold in thread order, MPI_Iallreduce across processes
    kRankOrder,     // allgather every contribution, fold in EP rank order
  };

  struct Args {
    Elements e;  // type and op
    int count;
    Mode mode;
  };

  Iallreduce(const CollectiveCall& call, std::shared_ptr<CommState> comm, const Args& args)
      : NbcInstance(call, std::move(comm)),
        args_(args),
        sendbufs_(static_cast<std::size_t>(call.local_size())),
        recvbufs_(static_cast<std::size_t>(call.local_size())),
        present_(static_cast<std::size_t>(call.local_size()), false),
        folded_from_(call.local_size()) {
    const RankMap& map = call.comm.rank_map();
    if (args.mode == Mode::kHierarchical) {
      acc_ = TypedScratch(args.count, args.e.type, call.name, call.rank);
    } else if (args.mode == Mode::kRankOrder) {
      slots_ = detail::SlotLayout(map, args.count);  // fits: checked by the caller
      all_ = TypedScratch(args.count * map.size(), args.e.type, call.name, call.rank);
    }
  }

  void contribute(const CollectiveCall& call, const void* sendbuf, void* recvbuf) {
    const auto t = static_cast<std::size_t>(call.thread);
    sendbufs_[t] = sendbuf;
    recvbufs_[t] = recvbuf;
    const void* contribution = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (args_.mode == Mode::kRankOrder) {
      // Distinct slots: no lock.
      detail::copy_elements(args_.e, contribution, slot({comm().process_rank(), call.thread}),
                            args_.count);
      return;
    }
    if (args_.mode != Mode::kHierarchical) return;
    // Right fold in thread order, c0 op (c1 op (... op c_{T-1})), the order of
    // fold_right and so of the blocking allreduce (same bits), taken one
    // input at a time as contributions arrive: whoever completes a run of
    // consecutive contributions from the top folds it.
    std::lock_guard lock(fold_mutex_);
    present_[t] = true;
    while (folded_from_ > 0 && present_[static_cast<std::size_t>(folded_from_ - 1)]) {
      const int k = folded_from_ - 1;
      const auto ki = static_cast<std::size_t>(k);
      const void* input = sendbufs_[ki] == MPI_IN_PLACE ? recvbufs_[ki] : sendbufs_[ki];
      if (k == call.local_size() - 1) {
        detail::copy_elements(args_.e, input, acc_.data(), args_.count);
      } else {
        detail::reduce_local(call, args_.e, input, acc_.data(), args_.count);
      }
      folded_from_ = k;
    }
  }

 protected:
  MPI_Request start() override {
    MPI_Request request = MPI_REQUEST_NULL;
    const int rank = call_of(0).rank;
    switch (args_.mode) {
      case Mode::kDirect:
        check_mpi(MPI_Iallreduce(sendbufs_[0], recvbufs_[0], args_.count, args_.e.type, args_.e.op,
                                 comm().internal_comm(), &request),
                  name(), rank);
        break;
      case Mode::kHierarchical:
        if (comm().single_process()) break;
        check_mpi(MPI_Iallreduce(MPI_IN_PLACE, acc_.data(), args_.count, args_.e.type, args_.e.op,
                                 comm().internal_comm(), &request),
                  name(), rank);
        break;
      case Mode::kRankOrder:
        if (comm().single_process()) break;
        check_mpi(
            slots_.start_allgather(all_.data(), args_.e.type, comm().internal_comm(), &request),
            name(), rank);
        break;
    }
    return request;
  }

  void finish(int thread, FailureSlot& /*mine*/) override {
    void* target = recvbufs_[static_cast<std::size_t>(thread)];
    if (args_.mode == Mode::kHierarchical) {
      detail::copy_elements(args_.e, acc_.data(), target, args_.count);
    } else if (args_.mode == Mode::kRankOrder) {
      // Every thread folds every contribution itself: the same evaluation
      // order whatever the layout, and no thread waits for another.
      const CollectiveCall call = call_of(thread);
      detail::fold_right(call, args_.e, slots_.in_rank_order(args_.e, all_.data(), call.size()),
                         target, args_.count);
    }
  }

 private:
  void* slot(Location where) { return args_.e.at(all_.data(), slots_.first_element(where)); }

  Args args_;
  std::vector<const void*> sendbufs_;  // per local thread (may be MPI_IN_PLACE)
  std::vector<void*> recvbufs_;
  // kHierarchical: acc_ holds c_{folded_from_} op ... op c_{T-1}.
  std::mutex fold_mutex_;
  std::vector<bool> present_;
  int folded_from_;
  TypedScratch acc_;
  // kRankOrder: every contribution, in the slots of fold.hpp
  TypedScratch all_;
  detail::SlotLayout slots_;
};

// ---- ialltoallv -------------------------------------------------------------

class Ialltoallv final : public NbcInstance {
 public:
  // The user's arguments, kept for MPI in direct mode (MPI reads the arrays
  // until completion).
  struct DirectArgs {
    const void* sendbuf;
    std::vector<int> sendcounts, sdispls;
    MPI_Datatype sendtype;
    void* recvbuf;
    std::vector<int> recvcounts, rdispls;
    MPI_Datatype recvtype;
  };

  Ialltoallv(const CollectiveCall& call, std::shared_ptr<CommState> comm, bool direct)
      : NbcInstance(call, std::move(comm)),
        direct_(direct),
        specs_(static_cast<std::size_t>(call.local_size())),
        staging_(static_cast<std::size_t>(call.local_size())),
        region_offsets_(static_cast<std::size_t>(call.local_size())),
        present_(static_cast<std::size_t>(call.local_size()), false) {}

  void contribute_direct(DirectArgs args) { direct_args_ = std::move(args); }

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
      if (q != me)
        detail::pack_region(spec, map, q, staging.get() + offsets[static_cast<std::size_t>(q)]);
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
    detail::copy_local_block(call, own, call.rank, own, call.rank, failure());
    for (const int y : earlier) {
      const ExchangeSpec& other = *specs_[static_cast<std::size_t>(y)];
      const int other_rank = map.ep_rank(me, y);
      detail::copy_local_block(call, own, call.rank, other, other_rank, failure());
      detail::copy_local_block(call, other, other_rank, own, call.rank, failure());
    }
  }

 protected:
  MPI_Request start() override {
    const CollectiveCall call = call_of(0);
    MPI_Request request = MPI_REQUEST_NULL;
    if (direct_) {
      const DirectArgs& a = direct_args_;
      const bool in_place = a.sendbuf == MPI_IN_PLACE;
      check_mpi(MPI_Ialltoallv(a.sendbuf, in_place ? nullptr : a.sendcounts.data(),
                               in_place ? nullptr : a.sdispls.data(), a.sendtype, a.recvbuf,
                               a.recvcounts.data(), a.rdispls.data(), a.recvtype,
                               comm().internal_comm(), &request),
                call.name, call.rank);
      return request;
    }
    if (comm().single_process()) return MPI_REQUEST_NULL;
    const RankMap& map = comm().rank_map();
    const int processes = map.num_processes();
    const int me = comm().process_rank();
    std::vector<const ExchangeSpec*> specs;
    for (const auto& spec : specs_) specs.push_back(spec.get());
    recv_offset_.assign(static_cast<std::size_t>(processes), 0);
    recv_size_.assign(static_cast<std::size_t>(processes), 0);
    std::size_t recv_total = 0;
    for (int q = 0; q < processes; ++q) {
      if (q == me) continue;
      const auto qi = static_cast<std::size_t>(q);
      recv_offset_[qi] = recv_total;
      recv_size_[qi] = detail::expected_segment_size(map, q, specs);
      recv_total += recv_size_[qi];
    }
    recv_ = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(recv_total, 1));
    // The message to q gathers the local threads' regions for q where they
    // lie (absolute addresses, MPI_BOTTOM).
    sends_ = std::make_unique<detail::ByteRuns>(processes, nullptr);
    recvs_ = std::make_unique<detail::ByteRuns>(processes, recv_.get());
    for (int q = 0; q < processes; ++q) {
      if (q == me) continue;
      const auto qi = static_cast<std::size_t>(q);
      for (std::size_t s = 0; s < specs_.size(); ++s) {
        sends_->add(q, staging_[s].get() + region_offsets_[s][qi], specs_[s]->region_bytes[qi]);
      }
      recvs_->add(q, recv_.get() + recv_offset_[qi], recv_size_[qi]);
    }
    sends_->build(call.name, call.rank);
    recvs_->build(call.name, call.rank);
    check_mpi(MPI_Ialltoallw(sends_->buffer(), sends_->counts(), sends_->displs(), sends_->types(),
                             recvs_->mutable_buffer(), recvs_->counts(), recvs_->displs(),
                             recvs_->types(), comm().internal_comm(), &request),
              call.name, call.rank);
    return request;
  }

  void finish(int thread, FailureSlot& mine) override {
    if (direct_ || comm().single_process()) return;
    const CollectiveCall call = call_of(thread);
    const ExchangeSpec& spec = *specs_[static_cast<std::size_t>(thread)];
    for (int q = 0; q < call.processes(); ++q) {
      if (q == comm().process_rank()) continue;
      const auto qi = static_cast<std::size_t>(q);
      detail::unpack_segment(call, spec, q, recv_.get() + recv_offset_[qi], recv_size_[qi], mine);
    }
  }

 private:
  bool direct_;
  DirectArgs direct_args_{};
  std::mutex arrive_mutex_;
  std::vector<std::unique_ptr<ExchangeSpec>> specs_;      // per local thread
  std::vector<std::unique_ptr<std::byte[]>> staging_;     // per local thread
  std::vector<std::vector<std::size_t>> region_offsets_;  // [thread][process]
  std::vector<bool> present_;
  std::unique_ptr<std::byte[]> recv_;
  std::vector<std::size_t> recv_offset_;
  std::vector<std::size_t> recv_size_;
  std::unique_ptr<detail::ByteRuns> sends_;
  std::unique_ptr<detail::ByteRuns> recvs_;
};

}  // namespace

Request ibarrier(const Communicator& comm) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::ibarrier");
  return start_nonblocking<Ibarrier>(
      comm, call, [&] { return std::make_shared<Ibarrier>(call, comm.state()); }, [](Ibarrier&) {});
}

Request ibcast(const Communicator& comm, void* buffer, int count, MPI_Datatype datatype, int root) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::ibcast");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_count(count, call.name, call.rank);
  const TypeLayout layout = detail::layout_of(datatype, call.name, call.rank);
  const TypedBuffer mine{buffer, count, datatype, layout};
  return start_nonblocking<Ibcast>(
      comm, call,
      [&] { return std::make_shared<Ibcast>(call, comm.state(), count, datatype, layout, root); },
      [&](Ibcast& instance) { instance.contribute(call, mine, root); });
}

Request iallreduce(const Communicator& comm, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::iallreduce");
  const Elements e = detail::make_elements(call, count, datatype, op);
  if (recvbuf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
  }
  const RankMap& map = call.comm.rank_map();
  Iallreduce::Args args{e, count, Iallreduce::Mode::kHierarchical};
  if (detail::use_rank_order(call, op, options)) {
    args.mode = Iallreduce::Mode::kRankOrder;
    // The allgather of every contribution counts elements in ints.
    detail::checked_int_count(count, map.size(), "count x ranks of the rank-order reduction",
                              call.name, call.rank);
  } else if (call.one_endpoint_per_process(detail::RankOrder::kAny)) {
    args.mode = Iallreduce::Mode::kDirect;
  }
  return start_nonblocking<Iallreduce>(
      comm, call, [&] { return std::make_shared<Iallreduce>(call, comm.state(), args); },
      [&](Iallreduce& instance) { instance.contribute(call, sendbuf, recvbuf); });
}

Request ialltoallv(const Communicator& comm, const void* sendbuf, std::span<const int> sendcounts,
                   std::span<const int> sdispls, MPI_Datatype sendtype, void* recvbuf,
                   std::span<const int> recvcounts, std::span<const int> rdispls,
                   MPI_Datatype recvtype) {
  const CollectiveCall call = detail::begin_collective(comm, "ep::ialltoallv");
  if (recvbuf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  BlockArgs send;
  send.buf = sendbuf;
  send.counts = sendcounts;
  send.displs = sdispls;
  send.per_peer = true;
  send.type = sendtype;
  BlockArgs recv = send;
  recv.is_send = false;
  recv.buf = recvbuf;
  recv.counts = recvcounts;
  recv.displs = rdispls;
  recv.type = recvtype;
  const RankMap& map = call.comm.rank_map();
  const bool direct = map.max_endpoints_per_process() == 1 && map.process_major();
  auto make = [&] { return std::make_shared<Ialltoallv>(call, comm.state(), direct); };
  if (direct) {
    detail::check_block_args(call, recv);
    if (!in_place) detail::check_block_args(call, send);
    const auto n = static_cast<std::size_t>(call.size());
    const auto first = [n](std::span<const int> s) {
      return std::vector<int>(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
    };
    Ialltoallv::DirectArgs args{sendbuf,
                                in_place ? std::vector<int>() : first(sendcounts),
                                in_place ? std::vector<int>() : first(sdispls),
                                sendtype,
                                recvbuf,
                                first(recvcounts),
                                first(rdispls),
                                recvtype};
    return start_nonblocking<Ialltoallv>(comm, call, make, [&](Ialltoallv& instance) {
      instance.contribute_direct(std::move(args));
    });
  }
  // Described (and, in place, packed) before joining: argument errors throw
  // here, before the instance counts on this endpoint, and the in-place data
  // is safe before any other thread can write into recvbuf.
  ExchangeSpec spec = detail::make_exchange_spec(call, send, recv, in_place);
  return start_nonblocking<Ialltoallv>(
      comm, call, make, [&](Ialltoallv& instance) { instance.contribute(call, std::move(spec)); });
}

}  // namespace ep
