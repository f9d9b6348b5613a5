#include "datatype.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "ep/error.hpp"

namespace ep::detail {

TypeLayout layout_of(MPI_Datatype type, const char* call, int ep_rank) {
  if (type == MPI_DATATYPE_NULL) {
    throw Error(ErrorKind::kArgument, call, ep_rank, "datatype is MPI_DATATYPE_NULL");
  }
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

TypedScratch::TypedScratch(int count, MPI_Datatype type, const char* call, int rank) {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), call, rank);
  check_mpi(MPI_Type_get_true_extent(type, &true_lb_, &true_extent), call, rank);
  const MPI_Aint span = count == 0 ? 0 : (count - 1) * extent + true_extent;
  storage_.resize(static_cast<std::size_t>(span));
}

MPI_Aint element_offset(MPI_Datatype type, MPI_Aint index, const char* call, int rank) {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), call, rank);
  return index * extent;
}

}  // namespace ep::detail
