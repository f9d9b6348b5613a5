// The one home of the reduction fold order and of the rank-order slot
// layout, used by reduce, allreduce, iallreduce, reduce_scatter, scan and
// exscan: a right fold c0 op (c1 op (... op cn-1)) over the inputs in the
// order given, so that the layout-independent forms of all reductions agree
// bit for bit.
#pragma once

#include <mpi.h>

#include <span>
#include <utility>
#include <vector>

#include "collective/predefined_fold.hpp"
#include "datatype.hpp"
#include "ep/collectives.hpp"
#include "ep/rank_map.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

/// An element type with what folds need: its layout and extent, and the
/// library's loops for the op when it has them (predefined_fold.hpp; null:
/// MPI_Reduce_local folds).
struct Elements {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  TypeLayout layout;
  MPI_Aint extent = 0;
  const PredefinedFold* predefined = nullptr;

  /// Pointer to element `index` of the vector at `base`.
  [[nodiscard]] const void* at(const void* base, MPI_Aint index) const {
    return static_cast<const std::byte*>(base) + index * extent;
  }
  [[nodiscard]] void* at(void* base, MPI_Aint index) const {
    return static_cast<std::byte*>(base) + index * extent;
  }
};

/// Checks the count, type and op of a reduction (throws ep::Error).
Elements make_elements(const CollectiveCall& call, int count, MPI_Datatype type, MPI_Op op);

/// MPI_Op_commutative.
bool is_commutative(const CollectiveCall& call, MPI_Op op);

/// This thread's share [first, last) of `count` elements.
std::pair<int, int> slice_of(const CollectiveCall& call, int count);

/// inout = in op inout on `n` elements (MPI_Reduce_local, or the library's
/// loop of a predefined op on a predefined type).
void reduce_local(const CollectiveCall& call, const Elements& e, const void* in, void* inout,
                  int n);

/// Copies `n` elements from `src` to `dst`.
void copy_elements(const Elements& e, const void* src, void* dst, int n);

/// target = inputs[0] op (inputs[1] op (... op inputs[k-1])) on `n` elements,
/// each input pointing at its first element. Nothing happens for no inputs.
void fold_right(const CollectiveCall& call, const Elements& e, std::span<const void* const> inputs,
                void* target, int n);

/// fold_right on the slice [first, last) of every input, into the same
/// slice of `target` (each input and `target` pointing at element 0). The
/// threads of a team share a vector out this way (see slice_of).
void fold_right_slice(const CollectiveCall& call, const Elements& e,
                      std::span<const void* const> inputs, void* target, int first, int last);

/// Whether a reduction must fold in EP rank order (every contribution
/// gathered, then folded in rank order) instead of hierarchically (threads,
/// then processes): when asked for (layout-independent bits), or when the
/// op is not commutative and EP ranks are not in process order.
bool use_rank_order(const CollectiveCall& call, MPI_Op op, const ReduceOptions& options);

/// The rank-order slot layout: one slot of `count` elements per endpoint,
/// process-major (process p's threads from slot first_slot(p) on, in thread
/// order), which is what one MPI_Iallgatherv of the process blocks fills.
/// Folding the slots in EP rank order gives the same evaluation whatever the
/// layout, hence the same bits. The caller checks that count x size() fits an int.
class SlotLayout {
 public:
  SlotLayout() = default;
  SlotLayout(const RankMap& map, int count);

  /// Element index where the slot of the endpoint at `where` starts.
  [[nodiscard]] MPI_Aint first_element(Location where) const {
    return static_cast<MPI_Aint>(first_slot_[static_cast<std::size_t>(where.process)] +
                                 where.thread) *
           count_;
  }
  /// Elements of all slots together.
  [[nodiscard]] MPI_Aint total_elements() const {
    return static_cast<MPI_Aint>(first_slot_.back()) * count_;
  }
  /// Starts the in-place MPI_Iallgatherv of the process blocks of `base` over `comm`.
  int start_allgather(void* base, MPI_Datatype type, MPI_Comm comm, MPI_Request* request) const;
  /// The slots of EP ranks 0..ranks-1 of the buffer at `base`, in rank order.
  [[nodiscard]] std::vector<const void*> in_rank_order(const Elements& e, const void* base,
                                                       int ranks) const;

 private:
  const RankMap* map_ = nullptr;
  int count_ = 0;
  std::vector<int> first_slot_{0};  // per process, plus the total
  std::vector<int> counts_;         // per process: elements of its block
  std::vector<int> displs_;         // per process: where its block starts
};

}  // namespace ep::detail
