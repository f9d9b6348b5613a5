#include "collective/predefined_fold.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ep::detail {

namespace {

template <class T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

template <class T>
void store(std::byte* at, T value) {
  std::memcpy(at, &value, sizeof value);
}

// The ops, `in op inout` as the file comment of the header writes them.
// Integer sums and products go through 64 unsigned bits (modular), and the
// narrowing back is modular too (C++20), so they wrap without signed overflow.
struct Sum {
  template <class T>
  static T apply(T in, T inout) {
    if constexpr (std::is_integral_v<T>) {
      const std::uint64_t wide = static_cast<std::uint64_t>(in) + static_cast<std::uint64_t>(inout);
      return static_cast<T>(wide);
    } else {
      return in + inout;
    }
  }
};
struct Prod {
  template <class T>
  static T apply(T in, T inout) {
    if constexpr (std::is_integral_v<T>) {
      const std::uint64_t wide = static_cast<std::uint64_t>(in) * static_cast<std::uint64_t>(inout);
      return static_cast<T>(wide);
    } else {
      return in * inout;
    }
  }
};
struct Max {
  template <class T>
  static T apply(T in, T inout) {
    return inout > in ? inout : in;
  }
};
struct Min {
  template <class T>
  static T apply(T in, T inout) {
    return inout < in ? inout : in;
  }
};
struct Land {
  template <class T>
  static T apply(T in, T inout) {
    return static_cast<T>(inout != 0 && in != 0);
  }
};
struct Lor {
  template <class T>
  static T apply(T in, T inout) {
    return static_cast<T>(inout != 0 || in != 0);
  }
};
struct Lxor {
  template <class T>
  static T apply(T in, T inout) {
    return static_cast<T>((inout != 0) != (in != 0));
  }
};
struct Band {
  template <class T>
  static T apply(T in, T inout) {
    return static_cast<T>(inout & in);
  }
};
struct Bor {
  template <class T>
  static T apply(T in, T inout) {
    return static_cast<T>(inout | in);
  }
};
struct Bxor {
  template <class T>
  static T apply(T in, T inout) {
    return static_cast<T>(inout ^ in);
  }
};

template <class T, class Op>
void combine(const void* in, void* inout, int n) {
  const auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  for (int i = 0; i < n; ++i, a += sizeof(T), b += sizeof(T)) {
    store(b, Op::template apply<T>(load<T>(a), load<T>(b)));
  }
}

// The last input copied into the target, then each earlier one applied as
// `in` to it, down to in(0): fold.hpp's fold_right, element by element the
// same evaluation, and the same memory traffic (the whole last input read
// at once; read element by element, the 64-byte fold at 1 x 2 measured
// slower).
template <class T, class Op>
void fold_strided(const std::byte* first, std::size_t stride, int inputs, void* target, int n) {
  const std::byte* input = first + static_cast<std::size_t>(inputs - 1) * stride;
  std::memcpy(target, input, static_cast<std::size_t>(n) * sizeof(T));
  while (input != first) {
    input -= stride;
    combine<T, Op>(input, target, n);
  }
}

template <class T, class Op>
constexpr PredefinedFold kFold{static_cast<int>(sizeof(T)), &combine<T, Op>, &fold_strided<T, Op>};

// The ops MPI defines on T: the arithmetic four on every type, the logical
// and bitwise ones on integers only. The most used first.
template <class T>
const PredefinedFold* fold_of(MPI_Op op) noexcept {
  if (op == MPI_SUM) return &kFold<T, Sum>;
  if (op == MPI_MAX) return &kFold<T, Max>;
  if (op == MPI_MIN) return &kFold<T, Min>;
  if (op == MPI_PROD) return &kFold<T, Prod>;
  if constexpr (std::is_integral_v<T>) {
    if (op == MPI_LAND) return &kFold<T, Land>;
    if (op == MPI_LOR) return &kFold<T, Lor>;
    if (op == MPI_LXOR) return &kFold<T, Lxor>;
    if (op == MPI_BAND) return &kFold<T, Band>;
    if (op == MPI_BOR) return &kFold<T, Bor>;
    if (op == MPI_BXOR) return &kFold<T, Bxor>;
  }
  return nullptr;
}

}  // namespace

const PredefinedFold* predefined_fold(MPI_Datatype type, MPI_Op op) noexcept {
  // The types of most reductions first. MPI_LONG_LONG is the handle of
  // MPI_LONG_LONG_INT (Open MPI and MPICH define it so).
  if (type == MPI_DOUBLE) return fold_of<double>(op);
  if (type == MPI_FLOAT) return fold_of<float>(op);
  if (type == MPI_INT) return fold_of<int>(op);
  if (type == MPI_LONG) return fold_of<long>(op);
  if (type == MPI_LONG_LONG) return fold_of<long long>(op);
  if (type == MPI_UNSIGNED) return fold_of<unsigned>(op);
  if (type == MPI_UNSIGNED_LONG) return fold_of<unsigned long>(op);
  if (type == MPI_UNSIGNED_LONG_LONG) return fold_of<unsigned long long>(op);
  if (type == MPI_SHORT) return fold_of<short>(op);
  if (type == MPI_UNSIGNED_SHORT) return fold_of<unsigned short>(op);
  if (type == MPI_SIGNED_CHAR) return fold_of<signed char>(op);
  if (type == MPI_UNSIGNED_CHAR) return fold_of<unsigned char>(op);
  if (type == MPI_INT8_T) return fold_of<std::int8_t>(op);
  if (type == MPI_INT16_T) return fold_of<std::int16_t>(op);
  if (type == MPI_INT32_T) return fold_of<std::int32_t>(op);
  if (type == MPI_INT64_T) return fold_of<std::int64_t>(op);
  if (type == MPI_UINT8_T) return fold_of<std::uint8_t>(op);
  if (type == MPI_UINT16_T) return fold_of<std::uint16_t>(op);
  if (type == MPI_UINT32_T) return fold_of<std::uint32_t>(op);
  if (type == MPI_UINT64_T) return fold_of<std::uint64_t>(op);
  return nullptr;
}

}  // namespace ep::detail
