// The library's own loops for MPI's predefined reduction ops on the
// predefined C types: what every local fold of the library (fold.hpp's
// reduce_local and fold_right, and the line exchange of small reductions
// within a process) runs instead of MPI_Reduce_local, whose call and
// dispatch cost more than the arithmetic on short vectors (callgrind, 8-byte
// allreduce at 1 process x 2 threads).
//
// Accepted: MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN on MPI_FLOAT, MPI_DOUBLE
// and the C integer types (MPI_INT, MPI_LONG, MPI_LONG_LONG, MPI_SHORT,
// MPI_SIGNED_CHAR and their unsigned forms, MPI_INT8_T .. MPI_UINT64_T);
// the logical and bitwise ops (MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR,
// MPI_BXOR) on the C integer types. These are the pairs MPI defines for
// those types (MPI 4.0, 6.9.2), so nothing MPI would refuse is accepted.
// Anything else (user ops, derived types, MPI_MAXLOC, MPI_REPLACE, long
// double, complex, Fortran types) has no entry and folds through MPI.
//
// Each op is written as `in op inout`, MPI_Reduce_local's operands:
//   sum, product   in + inout, in * inout; integers wrap modulo 2^bits (as
//                  MPI's own loops do in practice), computed unsigned so
//                  that C++ sees no signed overflow
//   max            inout > in ? inout : in   (Open MPI's loop: on a tie, and
//   min            inout < in ? inout : in    when either is a NaN, `in`)
//   land, lor      inout && in, inout || in   (0 or 1)
//   lxor           (inout != 0) != (in != 0)  (0 or 1)
//   band/bor/bxor  inout & in, inout | in, inout ^ in
// Only max and min of floating types and a NaN's payload can tell operand
// orders apart; every local fold of the library uses these loops, so its
// paths agree bit for bit whatever MPI would pick there. They are also
// exact where Open MPI 4.1's own vector loops are not (8- and 16-bit sums
// that overflow saturate, open-mpi/ompi#8045; MPI_UNSIGNED_LONG compared
// as signed in max and min, #10276): within a process such reductions are
// now right, across processes MPI's combine still decides.
//
// Buffers need not be aligned for the element type (elements move through
// memcpy). Thread safety: the entries are constant; the loops touch only
// their arguments.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace ep::detail {

/// The loops of one predefined op on one predefined type.
struct PredefinedFold {
  /// Bytes of one element (the type's size and extent).
  int element_bytes = 0;
  /// inout = in op inout on `n` elements (MPI_Reduce_local's contract).
  void (*combine)(const void* in, void* inout, int n) = nullptr;
  /// target = in(0) op (in(1) op (... op in(inputs - 1))) on `n` elements,
  /// where in(k) = first + k * stride: fold.hpp's right fold over inputs
  /// laid out at a fixed distance, without a list of pointers, the same
  /// evaluation per element as combine() applied from the last input down
  /// (same bits). `inputs` >= 1; `target` must not overlap any input.
  void (*fold_strided)(const std::byte* first, std::size_t stride, int inputs, void* target,
                       int n) = nullptr;
};

/// The library's loops for `op` on `type`, or null when MPI folds the pair
/// (see the file comment). A few comparisons of handles; no MPI call.
[[nodiscard]] const PredefinedFold* predefined_fold(MPI_Datatype type, MPI_Op op) noexcept;

}  // namespace ep::detail
