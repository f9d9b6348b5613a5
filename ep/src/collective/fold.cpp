#include "collective/fold.hpp"

#include <cstddef>

#include "ep/error.hpp"

namespace ep::detail {

Elements make_elements(const CollectiveCall& call, int count, MPI_Datatype type, MPI_Op op) {
  check_count(count, call.name, call.rank);
  if (op == MPI_OP_NULL) {
    throw Error(ErrorKind::kArgument, call.name, call.rank, "op is MPI_OP_NULL");
  }
  return {type, op, layout_of(type, call.name, call.rank),
          element_offset(type, 1, call.name, call.rank), predefined_fold(type, op)};
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
  if (e.predefined != nullptr) {
    e.predefined->combine(in, inout, n);
    return;
  }
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

void fold_right_slice(const CollectiveCall& call, const Elements& e,
                      std::span<const void* const> inputs, void* target, int first, int last) {
  if (last <= first || inputs.empty()) return;
  std::vector<const void*> shifted(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) shifted[i] = e.at(inputs[i], first);
  fold_right(call, e, shifted, e.at(target, first), last - first);
}

bool use_rank_order(const CollectiveCall& call, MPI_Op op, const ReduceOptions& options) {
  return options.layout_independent ||
         (!call.comm.rank_map().process_major() && !is_commutative(call, op));
}

SlotLayout::SlotLayout(const RankMap& map, int count)
    : map_(&map),
      count_(count),
      first_slot_(static_cast<std::size_t>(map.num_processes()) + 1, 0),
      counts_(static_cast<std::size_t>(map.num_processes())),
      displs_(static_cast<std::size_t>(map.num_processes())) {
  for (int p = 0; p < map.num_processes(); ++p) {
    const auto pi = static_cast<std::size_t>(p);
    first_slot_[pi + 1] = first_slot_[pi] + map.endpoints_of(p);
    counts_[pi] = map.endpoints_of(p) * count;
    displs_[pi] = first_slot_[pi] * count;
  }
}

int SlotLayout::start_allgather(void* base, MPI_Datatype type, MPI_Comm comm,
                                MPI_Request* request) const {
  return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, counts_.data(), displs_.data(),
                         type, comm, request);
}

std::vector<const void*> SlotLayout::in_rank_order(const Elements& e, const void* base,
                                                   int ranks) const {
  std::vector<const void*> inputs(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    inputs[static_cast<std::size_t>(r)] = e.at(base, first_element(map_->locate(r)));
  }
  return inputs;
}

}  // namespace ep::detail
