#include "datatype.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "ep/error.hpp"

namespace ep::detail {

namespace {

// The layout of the predefined types that carry most messages, without the
// three MPI queries: a predefined basic type is one dense element of its C
// type, starting at offset 0 (MPI 4.0, 5.1.2). Null for any other type.
const TypeLayout* predefined_layout(MPI_Datatype type) {
  static constexpr TypeLayout kOne{1, 0, true};
  static constexpr TypeLayout kInt{static_cast<int>(sizeof(int)), 0, true};
  static constexpr TypeLayout kFloat{static_cast<int>(sizeof(float)), 0, true};
  static constexpr TypeLayout kDouble{static_cast<int>(sizeof(double)), 0, true};
  static constexpr TypeLayout kLong{static_cast<int>(sizeof(long)), 0, true};
  static constexpr TypeLayout kLongLong{static_cast<int>(sizeof(long long)), 0, true};
  if (type == MPI_BYTE || type == MPI_CHAR || type == MPI_UNSIGNED_CHAR || type == MPI_PACKED) {
    return &kOne;
  }
  if (type == MPI_DOUBLE) return &kDouble;
  if (type == MPI_INT || type == MPI_UNSIGNED) return &kInt;
  if (type == MPI_FLOAT) return &kFloat;
  if (type == MPI_LONG || type == MPI_UNSIGNED_LONG) return &kLong;
  if (type == MPI_LONG_LONG || type == MPI_UNSIGNED_LONG_LONG) return &kLongLong;
  return nullptr;
}

}  // namespace

TypeLayout layout_of(MPI_Datatype type, const char* call, int ep_rank) {
  if (type == MPI_DATATYPE_NULL) {
    throw Error(ErrorKind::kArgument, call, ep_rank, "datatype is MPI_DATATYPE_NULL");
  }
  if (const TypeLayout* known = predefined_layout(type)) return *known;
  TypeLayout layout;
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_extent = 0;
  check_mpi(MPI_Type_size(type, &layout.size), call, ep_rank);
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), call, ep_rank);
  check_mpi(MPI_Type_get_true_extent(type, &layout.true_lb, &true_extent), call, ep_rank);
  // Dense when the data of one element fills its true extent and the next
  // element starts right after it (extent == true extent).
  layout.contiguous = static_cast<MPI_Aint>(layout.size) == true_extent && extent == true_extent;
  return layout;
}

namespace {

const std::byte* data_start(const TypedBuffer& b) {
  return static_cast<const std::byte*>(b.buf) + b.layout.true_lb;
}

std::byte* data_start_mut(const TypedBuffer& b) { return const_cast<std::byte*>(data_start(b)); }

int whole_elements(const TypedBuffer& b, std::size_t bytes) {
  return b.layout.size == 0 ? 0 : static_cast<int>(bytes / static_cast<std::size_t>(b.layout.size));
}

}  // namespace

void pack_into(const TypedBuffer& src, std::byte* packed) {
  const std::size_t bytes = src.bytes();
  if (bytes == 0) return;
  if (src.layout.contiguous) {
    std::memcpy(packed, data_start(src), bytes);
    return;
  }
  int position = 0;
  check_mpi(MPI_Pack(src.buf, src.count, src.type, packed, static_cast<int>(bytes), &position,
                     MPI_COMM_SELF),
            "MPI_Pack", -1);
}

void unpack_from(const std::byte* packed, std::size_t bytes, const TypedBuffer& dst) {
  if (bytes == 0) return;
  if (dst.layout.contiguous) {
    std::memcpy(data_start_mut(dst), packed, bytes);
    return;
  }
  // Only whole elements can be unpacked into a non-contiguous type; matching
  // type signatures (the MPI rule) always give whole elements.
  const int elements = whole_elements(dst, bytes);
  int position = 0;
  check_mpi(MPI_Unpack(packed, static_cast<int>(bytes), &position, const_cast<void*>(dst.buf),
                       elements, dst.type, MPI_COMM_SELF),
            "MPI_Unpack", -1);
}

void copy_typed(const TypedBuffer& src, const TypedBuffer& dst, std::size_t bytes) {
  if (bytes == 0) return;
  if (src.layout.contiguous) {
    unpack_from(data_start(src), bytes, dst);
    return;
  }
  if (dst.layout.contiguous && bytes == src.bytes()) {
    pack_into(src, data_start_mut(dst));
    return;
  }
  std::vector<std::byte> scratch(src.bytes());
  pack_into(src, scratch.data());
  unpack_from(scratch.data(), bytes, dst);
}

namespace {

// Bytes that `count` elements of `type` span; sets `true_lb`.
std::size_t span_of(int count, MPI_Datatype type, MPI_Aint& true_lb, const char* call, int rank) {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), call, rank);
  check_mpi(MPI_Type_get_true_extent(type, &true_lb, &true_extent), call, rank);
  return static_cast<std::size_t>(count == 0 ? 0 : (count - 1) * extent + true_extent);
}

}  // namespace

TypedScratch::TypedScratch(int count, MPI_Datatype type, const char* call, int rank) {
  used_ = span_of(count, type, true_lb_, call, rank);
  storage_.resize(used_);
}

void TypedScratch::reshape(int count, MPI_Datatype type, const char* call, int rank) {
  used_ = span_of(count, type, true_lb_, call, rank);
  const bool too_small = used_ > storage_.size();
  const bool oversized = storage_.size() > kMaxKeptBytes && used_ < storage_.size();
  if (too_small || oversized) {
    storage_.clear();
    storage_.shrink_to_fit();  // never hold both
    storage_.resize(used_);
  }
}

MPI_Aint element_offset(MPI_Datatype type, MPI_Aint index, const char* call, int rank) {
  // A predefined basic type's extent is its size: no MPI query.
  if (const TypeLayout* known = predefined_layout(type)) return index * known->size;
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), call, rank);
  return index * extent;
}

}  // namespace ep::detail
