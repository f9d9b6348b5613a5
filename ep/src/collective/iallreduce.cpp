// MPI_Iallreduce on an endpoint communicator. Contributions are folded into a
// process buffer in thread order as they arrive (whoever completes a run of
// the fold does it), then MPI_Iallreduce; each thread copies out. The
// rank-order variant (layout-independent sums, or a non-commutative op on
// ranks not in process order) copies each contribution into its slot,
// MPI_Iallgatherv's the slots, and each thread folds all of them in EP rank
// order when it polls the completed request. The fold order and the slots
// are those of fold.hpp, shared with the blocking reductions. With one
// endpoint per process the user's buffers go to MPI directly.
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "collective/aggregated_exchange.hpp"
#include "collective/fold.hpp"
#include "collective/nonblocking_registry.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep {

namespace {

using detail::CollectiveCall;
using detail::CommState;
using detail::Elements;
using detail::FailureSlot;
using detail::NbcInstance;
using detail::TypedScratch;

using detail::start_nonblocking;

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

}  // namespace

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

}  // namespace ep
