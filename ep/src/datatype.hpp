// Datatype layout and the typed copies of the intra-process path.
//
// Between threads of one process data moves without MPI. Contiguous data is
// copied with memcpy; anything else goes through MPI_Pack/MPI_Unpack. Both
// sides share one process, so MPI's native pack format of a contiguous
// buffer is its bytes in memory; the copies rely on that (true of Open MPI
// and MPICH for the native representation) to pack only the side that needs it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace ep::detail {

struct TypeLayout {
  int size = 0;             // MPI_Type_size: bytes of data per element
  MPI_Aint true_lb = 0;     // offset of the first byte of data
  bool contiguous = false;  // count elements are one dense run of bytes
};

/// Layout of `type`; throws ep::Error naming `call` and `ep_rank` for an invalid type.
TypeLayout layout_of(MPI_Datatype type, const char* call, int ep_rank);

/// A typed buffer: MPI's (buf, count, datatype) triple plus its layout.
struct TypedBuffer {
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  TypeLayout layout;

  [[nodiscard]] std::size_t bytes() const {
    return static_cast<std::size_t>(count) * static_cast<std::size_t>(layout.size);
  }
  /// The same data in packed form (bytes() dense bytes) at `packed`.
  [[nodiscard]] TypedBuffer packed_at(const std::byte* packed) const {
    return {packed, count, type, TypeLayout{layout.size, 0, true}};
  }
};

/// Writes the packed form of `src` (src.bytes() bytes) to `packed`.
void pack_into(const TypedBuffer& src, std::byte* packed);

/// Unpacks `bytes` packed bytes into `dst` (bytes <= dst.bytes()).
void unpack_from(const std::byte* packed, std::size_t bytes, const TypedBuffer& dst);

/// Copies the first `bytes` of `src` into `dst` with one copy when both are
/// contiguous or one side is (otherwise through a packed scratch buffer).
void copy_typed(const TypedBuffer& src, const TypedBuffer& dst, std::size_t bytes);

/// Byte offset of element `index` of `type` (its extent times the index).
MPI_Aint element_offset(MPI_Datatype type, MPI_Aint index, const char* call, int rank);

/// Storage for `count` elements of `type`, laid out as MPI expects (data()
/// points where element 0 starts, honouring the type's lower bound).
class TypedScratch {
 public:
  TypedScratch() = default;
  /// Zero-filled storage for `count` elements of `type`.
  TypedScratch(int count, MPI_Datatype type, const char* call, int rank);
  /// Lays the scratch out for `count` elements of `type` again, keeping the
  /// memory it holds when that is enough (up to kMaxKeptBytes): for a
  /// scratch kept from call to call, since allocating large blocks afresh
  /// costs more than the work (glibc maps and unmaps them, and the next call
  /// faults every page in again). The contents are undefined.
  void reshape(int count, MPI_Datatype type, const char* call, int rank);
  [[nodiscard]] void* data() noexcept {
    // Empty for zero elements: MPI and the copies never touch the pointer then.
    return used_ == 0 ? nullptr : storage_.data() - true_lb_;
  }
  [[nodiscard]] TypedBuffer view(int count, MPI_Datatype type, const TypeLayout& layout) {
    return {data(), count, type, layout};
  }

  static constexpr std::size_t kMaxKeptBytes = std::size_t{64} << 20;

 private:
  std::vector<std::byte> storage_;  // its size is the capacity
  std::size_t used_ = 0;            // bytes of the current layout
  MPI_Aint true_lb_ = 0;
};

}  // namespace ep::detail
