#include "collective/fold_support.hpp"

#include "ep/error.hpp"

namespace ep::detail {

Elements make_elements(const CollectiveCall& call, int count, MPI_Datatype type, MPI_Op op) {
  check_count(count, call.name, call.rank);
  if (op == MPI_OP_NULL) {
    throw Error(ErrorKind::kArgument, call.name, call.rank, "op is MPI_OP_NULL");
  }
  return {type, op, layout_of(type, call.name, call.rank),
          element_offset(type, 1, call.name, call.rank)};
}

bool is_commutative(const CollectiveCall& call, MPI_Op op) {
  int commute = 0;
  check_mpi(MPI_Op_commutative(op, &commute), call.name, call.rank);
  return commute != 0;
}

std::pair<int, int> slice_of(const CollectiveCall& call, int count) {
  const auto threads = static_cast<long long>(call.local_size());
  const auto first = static_cast<int>(count * static_cast<long long>(call.thread) / threads);
  const auto last = static_cast<int>(count * static_cast<long long>(call.thread + 1) / threads);
  return {first, last};
}

void reduce_local(const CollectiveCall& call, const Elements& e, const void* in, void* inout,
                  int n) {
  if (n <= 0) return;
  check_mpi(MPI_Reduce_local(in, inout, n, e.type, e.op), call.name, call.rank);
}

void copy_elements(const Elements& e, const void* src, void* dst, int n) {
  if (n <= 0 || src == dst) return;
  const TypedBuffer source{src, n, e.type, e.layout};
  copy_typed(source, {dst, n, e.type, e.layout}, source.bytes());
}

void fold_right(const CollectiveCall& call, const Elements& e, std::span<const void* const> inputs,
                void* target, int n) {
  if (n <= 0 || inputs.empty()) return;
  copy_elements(e, inputs.back(), target, n);
  for (auto i = static_cast<std::ptrdiff_t>(inputs.size()) - 2; i >= 0; --i) {
    reduce_local(call, e, inputs[static_cast<std::size_t>(i)], target, n);
  }
}

}  // namespace ep::detail
