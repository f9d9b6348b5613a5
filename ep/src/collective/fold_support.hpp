// Element-wise folds shared by the reductions that cut or prefix a vector
// (reduce_scatter, scan, exscan). The same evaluation order as reduce.cpp:
// a right fold c0 op (c1 op (... op cn-1)) over the inputs in the order
// given, so that the layout-independent forms of all reductions agree bit
// for bit.
#pragma once

#include <mpi.h>

#include <span>
#include <utility>

#include "collective/collective_support.hpp"
#include "datatype.hpp"

namespace ep::detail {

/// An element type with what folds need: its layout and extent.
struct Elements {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  TypeLayout layout;
  MPI_Aint extent = 0;

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

/// inout = in op inout on `n` elements (MPI_Reduce_local).
void reduce_local(const CollectiveCall& call, const Elements& e, const void* in, void* inout,
                  int n);

/// Copies `n` elements from `src` to `dst`.
void copy_elements(const Elements& e, const void* src, void* dst, int n);

/// target = inputs[0] op (inputs[1] op (... op inputs[k-1])) on `n` elements,
/// each input pointing at its first element. Nothing happens for no inputs.
void fold_right(const CollectiveCall& call, const Elements& e, std::span<const void* const> inputs,
                void* target, int n);

}  // namespace ep::detail
