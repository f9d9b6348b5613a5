// The one mechanism of the nonblocking reductions (ireduction.hpp; the calls
// are in iallreduce.cpp, ireduce.cpp, iscan.cpp and ireduce_scatter.cpp): one
// NbcInstance class (Ireduction) with the three paths of the blocking forms,
// so that each gives the blocking form's bits on the same layout:
//   - direct: one endpoint per process, MPI's own nonblocking reduction on
//     the user's buffers;
//   - hierarchical: the contributions are folded in thread order into a
//     process vector as they arrive (whoever completes a run of the fold does
//     it; scan prefixes are taken when the last contribution arrives), then
//     one MPI_Iallreduce / Ireduce / Ireduce_scatter / Iexscan across the
//     processes; each thread takes its part of the result when it polls;
//   - rank order (layout-independent sums, or a non-commutative op on ranks
//     not in process order): each contribution is copied into its slot, one
//     MPI_Iallgatherv fills every slot, and each thread folds the ranks it
//     needs in EP rank order when it polls.
// The fold order and the slots are those of fold.hpp, shared with the
// blocking reductions.
#include "collective/ireduction.hpp"

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
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

class Ireduction final : public NbcInstance {
 public:
  using Kind = detail::ReductionKind;
  enum class Mode {
    kDirect,        // one endpoint per process: MPI on the user's buffers
    kHierarchical,  // fold in thread order, MPI across processes
    kRankOrder,     // allgather every contribution, fold in EP rank order
  };

  struct Args {
    Kind kind;
    Mode mode = Mode::kHierarchical;
    Elements e;  // type and op
    int count;   // elements of every contribution
    int root = -1;
    std::vector<int> block_counts;  // kReduceScatter: the result's elements per EP rank
  };

  Ireduction(const CollectiveCall& call, std::shared_ptr<CommState> comm, Args args)
      : NbcInstance(call, std::move(comm)),
        args_(std::move(args)),
        sendbufs_(static_cast<std::size_t>(call.local_size())),
        recvbufs_(static_cast<std::size_t>(call.local_size())),
        present_(static_cast<std::size_t>(call.local_size()), false),
        folded_from_(call.local_size()) {
    const RankMap& map = call.comm.rank_map();
    if (args_.mode == Mode::kHierarchical) {
      const bool prefix = args_.kind == Kind::kScan || args_.kind == Kind::kExscan;
      const int copies = prefix ? call.local_size() : 1;  // checked by the caller
      acc_ = TypedScratch(args_.count * copies, args_.e.type, call.name, call.rank);
      if (prefix || args_.kind == Kind::kReduceScatter) {
        before_ = TypedScratch(args_.count, args_.e.type, call.name, call.rank);
      }
    } else if (args_.mode == Mode::kRankOrder) {
      slots_ = detail::SlotLayout(map, args_.count);  // fits: checked by the caller
      all_ = TypedScratch(args_.count * map.size(), args_.e.type, call.name, call.rank);
    }
    if (args_.kind == Kind::kReduceScatter) {
      block_offsets_.assign(static_cast<std::size_t>(map.size()) + 1, 0);
      for (int r = 0; r < map.size(); ++r) {
        const auto ri = static_cast<std::size_t>(r);
        block_offsets_[ri + 1] = block_offsets_[ri] + args_.block_counts[ri];
      }
    }
  }

  void contribute(const CollectiveCall& call, const Args& mine, const void* sendbuf,
                  void* recvbuf) {
    // The instance folds and cuts with its creator's arguments: a thread of
    // this process that passed others would be read out of bounds.
    if (mine.count != args_.count || mine.root != args_.root || mine.e.type != args_.e.type ||
        mine.e.op != args_.e.op || mine.block_counts != args_.block_counts) {
      throw Error(ErrorKind::kArgument, call.name, call.rank,
                  "count, root, datatype, op or recvcounts differ from those of other endpoints "
                  "of the process");
    }
    const auto t = static_cast<std::size_t>(call.thread);
    sendbufs_[t] = sendbuf;
    recvbufs_[t] = recvbuf;
    if (args_.mode == Mode::kRankOrder) {
      // Distinct slots: no lock.
      detail::copy_elements(args_.e, contribution(call.thread),
                            slot({comm().process_rank(), call.thread}), args_.count);
      return;
    }
    if (args_.mode != Mode::kHierarchical || is_prefix()) return;
    // Right fold in thread order, c0 op (c1 op (... op c_{T-1})), the order of
    // fold_right and so of the blocking reductions (same bits), taken one
    // input at a time as contributions arrive: whoever completes a run of
    // consecutive contributions from the top folds it.
    std::lock_guard lock(fold_mutex_);
    present_[t] = true;
    while (folded_from_ > 0 && present_[static_cast<std::size_t>(folded_from_ - 1)]) {
      const int k = folded_from_ - 1;
      if (k == call.local_size() - 1) {
        detail::copy_elements(args_.e, contribution(k), acc_.data(), args_.count);
      } else {
        detail::reduce_local(call, args_.e, contribution(k), acc_.data(), args_.count);
      }
      folded_from_ = k;
    }
  }

 protected:
  MPI_Request start() override {
    switch (args_.mode) {
      case Mode::kDirect:
        return start_direct();
      case Mode::kHierarchical:
        return start_hierarchical();
      case Mode::kRankOrder:
        break;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    if (!comm().single_process()) {
      check_mpi(slots_.start_allgather(all_.data(), args_.e.type, comm().internal_comm(), &request),
                name(), call_of(0).rank);
    }
    return request;
  }

  void finish(int thread, FailureSlot& /*mine*/) override {
    if (args_.mode == Mode::kDirect) return;
    const CollectiveCall call = call_of(thread);
    if (args_.kind == Kind::kReduce && call.rank != args_.root) return;
    void* target = recvbufs_[static_cast<std::size_t>(thread)];
    if (args_.mode == Mode::kHierarchical) {
      finish_hierarchical(call, target);
      return;
    }
    // Every thread folds what it needs itself: the same evaluation order
    // whatever the layout, and no thread waits for another.
    const std::vector<const void*> slots = slots_.in_rank_order(args_.e, all_.data(), call.size());
    const auto ranks_up_to = [&](int end) {
      return std::span<const void* const>(slots.data(), static_cast<std::size_t>(end));
    };
    switch (args_.kind) {
      case Kind::kAllreduce:
      case Kind::kReduce:
        detail::fold_right(call, args_.e, slots, target, args_.count);
        break;
      case Kind::kScan:
        detail::fold_right(call, args_.e, ranks_up_to(call.rank + 1), target, args_.count);
        break;
      case Kind::kExscan:
        detail::fold_right(call, args_.e, ranks_up_to(call.rank), target, args_.count);
        break;
      case Kind::kReduceScatter: {
        const auto r = static_cast<std::size_t>(call.rank);
        std::vector<const void*> blocks(slots.size());
        for (std::size_t i = 0; i < slots.size(); ++i) {
          blocks[i] = args_.e.at(slots[i], block_offsets_[r]);
        }
        detail::fold_right(call, args_.e, blocks, target, args_.block_counts[r]);
        break;
      }
    }
  }

 private:
  [[nodiscard]] bool is_prefix() const {
    return args_.kind == Kind::kScan || args_.kind == Kind::kExscan;
  }
  [[nodiscard]] const void* contribution(int thread) const {
    const auto t = static_cast<std::size_t>(thread);
    return sendbufs_[t] == MPI_IN_PLACE ? recvbufs_[t] : sendbufs_[t];
  }
  void* slot(Location where) { return args_.e.at(all_.data(), slots_.first_element(where)); }
  void* prefix(int thread) {
    return args_.e.at(acc_.data(), static_cast<MPI_Aint>(thread) * args_.count);
  }
  [[nodiscard]] int root_process() const { return comm().rank_map().locate(args_.root).process; }

  MPI_Request start_direct() {
    MPI_Request request = MPI_REQUEST_NULL;
    const void* send = sendbufs_[0];
    void* recv = recvbufs_[0];
    const MPI_Comm mpi = comm().internal_comm();
    const Elements& e = args_.e;
    int rc = MPI_SUCCESS;
    switch (args_.kind) {
      case Kind::kAllreduce:
        rc = MPI_Iallreduce(send, recv, args_.count, e.type, e.op, mpi, &request);
        break;
      case Kind::kReduce:
        rc = MPI_Ireduce(send, recv, args_.count, e.type, e.op, root_process(), mpi, &request);
        break;
      case Kind::kScan:
        rc = MPI_Iscan(send, recv, args_.count, e.type, e.op, mpi, &request);
        break;
      case Kind::kExscan:
        rc = MPI_Iexscan(send, recv, args_.count, e.type, e.op, mpi, &request);
        break;
      case Kind::kReduceScatter:
        rc =
            MPI_Ireduce_scatter(send, recv, args_.block_counts.data(), e.type, e.op, mpi, &request);
        break;
    }
    check_mpi(rc, name(), call_of(0).rank);
    return request;
  }

  MPI_Request start_hierarchical() {
    const CollectiveCall call = call_of(0);
    const Elements& e = args_.e;
    if (is_prefix()) take_prefixes(call);
    if (args_.kind == Kind::kReduceScatter) to_slot_order();
    if (comm().single_process()) return MPI_REQUEST_NULL;
    MPI_Request request = MPI_REQUEST_NULL;
    const MPI_Comm mpi = comm().internal_comm();
    int rc = MPI_SUCCESS;
    switch (args_.kind) {
      case Kind::kAllreduce:
        rc = MPI_Iallreduce(MPI_IN_PLACE, acc_.data(), args_.count, e.type, e.op, mpi, &request);
        break;
      case Kind::kReduce: {
        const bool at_root = root_process() == comm().process_rank();
        rc = MPI_Ireduce(at_root ? MPI_IN_PLACE : acc_.data(), acc_.data(), args_.count, e.type,
                         e.op, root_process(), mpi, &request);
        break;
      }
      case Kind::kScan:
      case Kind::kExscan:
        // The last thread's inclusive prefix is the process total.
        rc = MPI_Iexscan(prefix(call.local_size() - 1), before_.data(), args_.count, e.type, e.op,
                         mpi, &request);
        break;
      case Kind::kReduceScatter:
        // Never in place: see ProcessVectors in reduce_scatter.cpp (MPICH 4.0.2).
        rc = MPI_Ireduce_scatter(before_.data(), share_.data(), process_totals_.data(), e.type,
                                 e.op, mpi, &request);
        break;
    }
    check_mpi(rc, name(), call.rank);
    return request;
  }

  // Inclusive prefixes of the local contributions in thread order,
  // p_t = p_{t-1} op c_t, the evaluation of the blocking scan's local step.
  // Every contribution is still valid: no request completes before start.
  void take_prefixes(const CollectiveCall& call) {
    for (int t = 0; t < call.local_size(); ++t) {
      detail::copy_elements(args_.e, contribution(t), prefix(t), args_.count);
      if (t > 0) detail::reduce_local(call, args_.e, prefix(t - 1), prefix(t), args_.count);
    }
  }

  // The process's blocks of the folded vector, in slot order (the order
  // MPI_Ireduce_scatter cuts a process vector in), into before_; notes where
  // each thread's block lands and the element count of every process, and
  // makes room for this process's share of the result (share_).
  void to_slot_order() {
    const RankMap& map = comm().rank_map();
    process_totals_.assign(static_cast<std::size_t>(map.num_processes()), 0);
    share_offsets_.assign(static_cast<std::size_t>(comm().local_size()), 0);
    int at = 0;
    for (int p = 0; p < map.num_processes(); ++p) {
      for (int t = 0; t < map.endpoints_of(p); ++t) {
        const auto r = static_cast<std::size_t>(map.ep_rank(p, t));
        const int n = args_.block_counts[r];
        if (p == comm().process_rank()) {
          share_offsets_[static_cast<std::size_t>(t)] = at;
        }
        detail::copy_elements(args_.e, args_.e.at(acc_.data(), block_offsets_[r]),
                              args_.e.at(before_.data(), at), n);
        process_totals_[static_cast<std::size_t>(p)] += n;
        at += n;
      }
    }
    if (!comm().single_process()) {
      share_ = TypedScratch(process_totals_[static_cast<std::size_t>(comm().process_rank())],
                            args_.e.type, name(), call_of(0).rank);
    }
  }

  void finish_hierarchical(const CollectiveCall& call, void* target) {
    const Elements& e = args_.e;
    const bool after_first_process = comm().process_rank() > 0;
    switch (args_.kind) {
      case Kind::kAllreduce:
      case Kind::kReduce:
        detail::copy_elements(e, acc_.data(), target, args_.count);
        break;
      case Kind::kReduceScatter: {
        // MPI left this process's blocks in share_, in slot order (with one
        // process they are in before_ already, which is its share).
        const int own_first = share_offsets_[static_cast<std::size_t>(call.thread)] -
                              first_of_process(comm().process_rank());
        const void* share = comm().single_process() ? before_.data() : share_.data();
        detail::copy_elements(e, e.at(share, own_first), target,
                              args_.block_counts[static_cast<std::size_t>(call.rank)]);
        break;
      }
      case Kind::kScan:
        detail::copy_elements(e, prefix(call.thread), target, args_.count);
        if (after_first_process) detail::reduce_local(call, e, before_.data(), target, args_.count);
        break;
      case Kind::kExscan:
        if (call.thread == 0) {
          if (after_first_process) detail::copy_elements(e, before_.data(), target, args_.count);
          break;
        }
        detail::copy_elements(e, prefix(call.thread - 1), target, args_.count);
        if (after_first_process) detail::reduce_local(call, e, before_.data(), target, args_.count);
        break;
    }
  }

  // Element where process `p`'s blocks start in the slot-ordered vector.
  [[nodiscard]] int first_of_process(int p) const {
    int first = 0;
    for (int q = 0; q < p; ++q) first += process_totals_[static_cast<std::size_t>(q)];
    return first;
  }

  Args args_;
  std::vector<const void*> sendbufs_;  // per local thread (may be MPI_IN_PLACE)
  std::vector<void*> recvbufs_;
  std::vector<MPI_Aint> block_offsets_;  // kReduceScatter: element of rank r's block
  // kHierarchical: acc_ holds c_{folded_from_} op ... op c_{T-1} (the local
  // prefixes, one vector per thread, for scans); before_ the combination of
  // the processes before this one (scans) or the slot-ordered vector
  // (reduce_scatter).
  std::mutex fold_mutex_;
  std::vector<bool> present_;
  int folded_from_;
  TypedScratch acc_;
  TypedScratch before_;
  TypedScratch share_;               // kReduceScatter: this process's share of the result
  std::vector<int> process_totals_;  // kReduceScatter
  std::vector<int> share_offsets_;   // kReduceScatter: per local thread, in slot order
  // kRankOrder: every contribution, in the slots of fold.hpp
  TypedScratch all_;
  detail::SlotLayout slots_;
};

// The checks and the path choice of the blocking forms, then the start.
Request start_reduction(const Communicator& comm, const CollectiveCall& call, const void* sendbuf,
                        void* recvbuf, Ireduction::Args args, const ReduceOptions& options) {
  if (recvbuf == MPI_IN_PLACE) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
  }
  using Kind = Ireduction::Kind;
  using Mode = Ireduction::Mode;
  const RankMap& map = call.comm.rank_map();
  const bool prefix = args.kind == Kind::kScan || args.kind == Kind::kExscan;
  if (args.kind == Kind::kAllreduce || args.kind == Kind::kReduce) {
    if (detail::use_rank_order(call, args.e.op, options)) {
      args.mode = Mode::kRankOrder;
    } else if (call.one_endpoint_per_process(detail::RankOrder::kAny)) {
      args.mode = Mode::kDirect;
    }
  } else if (!options.layout_independent && call.one_endpoint_per_process() &&
             !(args.kind == Kind::kReduceScatter && sendbuf == MPI_IN_PLACE)) {
    // A reduce_scatter in place takes the hierarchical path, which hands
    // MPI two buffers (see ProcessVectors in reduce_scatter.cpp).
    args.mode = Mode::kDirect;
  } else if (prefix ? !map.process_major() || options.layout_independent
                    : detail::use_rank_order(call, args.e.op, options)) {
    args.mode = Mode::kRankOrder;
  }
  if (args.mode == Mode::kRankOrder) {
    // The allgather of every contribution counts elements in ints.
    detail::checked_int_count(args.count, map.size(), "count x ranks of the rank-order reduction",
                              call.name, call.rank);
  } else if (args.mode == Mode::kHierarchical && prefix) {
    detail::checked_int_count(args.count, call.local_size(),
                              "count x threads of the local prefixes", call.name, call.rank);
  }
  return start_nonblocking<Ireduction>(
      comm, call, [&] { return std::make_shared<Ireduction>(call, comm.state(), args); },
      [&](Ireduction& instance) { instance.contribute(call, args, sendbuf, recvbuf); });
}

}  // namespace

namespace detail {

Request start_vector_reduction(const Communicator& comm, const CollectiveCall& call,
                               ReductionKind kind, const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, int root,
                               const ReduceOptions& options) {
  Ireduction::Args args{kind,
                        Ireduction::Mode::kHierarchical,
                        detail::make_elements(call, count, datatype, op),
                        count,
                        root,
                        {}};
  return start_reduction(comm, call, sendbuf, recvbuf, std::move(args), options);
}

Request vector_reduction(const Communicator& comm, const char* name, ReductionKind kind,
                         const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, const ReduceOptions& options) {
  const CollectiveCall call = detail::begin_collective(comm, name);
  return start_vector_reduction(comm, call, kind, sendbuf, recvbuf, count, datatype, op, -1,
                                options);
}

Request start_reduce_scatter(const Communicator& comm, const CollectiveCall& call,
                             const void* sendbuf, void* recvbuf, std::vector<int> block_counts,
                             MPI_Datatype datatype, MPI_Op op, const ReduceOptions& options) {
  long long length = 0;
  for (const int n : block_counts) length += n;
  const int count = detail::checked_int_count(length, 1, "vector elements", call.name, call.rank);
  Ireduction::Args args{ReductionKind::kReduceScatter,
                        Ireduction::Mode::kHierarchical,
                        detail::make_elements(call, count, datatype, op),
                        count,
                        -1,
                        std::move(block_counts)};
  return start_reduction(comm, call, sendbuf, recvbuf, std::move(args), options);
}

}  // namespace detail

}  // namespace ep
