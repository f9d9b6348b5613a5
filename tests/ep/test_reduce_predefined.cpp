// Reductions with MPI's predefined ops on the predefined C types, which the
// library folds with loops of its own (ep/src/collective/predefined_fold.hpp)
// and, on a communicator within one process with a vector of at most 112
// bytes, on a path of their own (the line exchange decided at entry). For
// every type and op the library accepts there, at vector lengths on both
// sides of the 112-byte line and above the 16 KiB shared fold, in place and
// not: allreduce and reduce give, bit for bit,
//   - the serial right fold c0 op (c1 op (... op c(n-1))) in rank order,
//     written here with the op as the library's header defines it (ties of
//     max and min between signed zeros included);
//   - the same reduction through the general path: a user-defined op doing
//     the same arithmetic (MPI_Reduce_local and the general fold), and the
//     layout-independent form (the rank-order fold).
// And the entry's decision refuses nothing the general path accepts: empty
// vectors with null buffers, a predefined pair type and MPI_MAXLOC (which
// the library leaves to MPI), and every argument error still raised with
// the call, the rank and the value.
#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "coll_helpers.hpp"
#include "ep/ep.hpp"

namespace {

enum class Op { kSum, kProd, kMax, kMin, kLand, kLor, kLxor, kBand, kBor, kBxor };

constexpr Op kArithmeticOps[] = {Op::kSum, Op::kProd, Op::kMax, Op::kMin};
constexpr Op kIntegerOps[] = {Op::kSum, Op::kProd, Op::kMax,  Op::kMin, Op::kLand,
                              Op::kLor, Op::kLxor, Op::kBand, Op::kBor, Op::kBxor};

const char* name_of(Op op) {
  constexpr const char* kNames[] = {"MPI_SUM", "MPI_PROD", "MPI_MAX",  "MPI_MIN", "MPI_LAND",
                                    "MPI_LOR", "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR"};
  return kNames[static_cast<int>(op)];
}

MPI_Op mpi_op(Op op) {
  switch (op) {
    case Op::kSum:
      return MPI_SUM;
    case Op::kProd:
      return MPI_PROD;
    case Op::kMax:
      return MPI_MAX;
    case Op::kMin:
      return MPI_MIN;
    case Op::kLand:
      return MPI_LAND;
    case Op::kLor:
      return MPI_LOR;
    case Op::kLxor:
      return MPI_LXOR;
    case Op::kBand:
      return MPI_BAND;
    case Op::kBor:
      return MPI_BOR;
    case Op::kBxor:
      return MPI_BXOR;
  }
  return MPI_OP_NULL;
}

// in op inout, as predefined_fold.hpp defines each op (integer sums and
// products modulo 2^bits).
template <class T>
T apply(Op op, T in, T inout) {
  if constexpr (std::is_integral_v<T>) {
    // Zero-extended through T's unsigned form: the low bits of the sum and
    // the product are those of the signed arithmetic, modulo 2^bits.
    using Unsigned = std::make_unsigned_t<T>;
    const auto a = static_cast<std::uint64_t>(static_cast<Unsigned>(in));
    const auto b = static_cast<std::uint64_t>(static_cast<Unsigned>(inout));
    switch (op) {
      case Op::kSum: {
        const std::uint64_t sum = a + b;
        return static_cast<T>(sum);
      }
      case Op::kProd: {
        const std::uint64_t product = a * b;
        return static_cast<T>(product);
      }
      case Op::kLand:
        return static_cast<T>(inout != 0 && in != 0);
      case Op::kLor:
        return static_cast<T>(inout != 0 || in != 0);
      case Op::kLxor:
        return static_cast<T>((inout != 0) != (in != 0));
      case Op::kBand:
        return static_cast<T>(inout & in);
      case Op::kBor:
        return static_cast<T>(inout | in);
      case Op::kBxor:
        return static_cast<T>(inout ^ in);
      default:
        break;
    }
  } else {
    if (op == Op::kSum) return in + inout;
    if (op == Op::kProd) return in * inout;
  }
  if (op == Op::kMax) return inout > in ? inout : in;
  return inout < in ? inout : in;  // kMin
}

// The same op as a user-defined MPI op, one per (T, op), made once per
// process (every endpoint must pass the same handle).
template <class T, Op TheOp>
void apply_all(const T* in, T* inout, int len) {
  for (int k = 0; k < len; ++k) inout[k] = apply(TheOp, in[k], inout[k]);
}

template <class T, Op TheOp>
MPI_Op user_op_of() {
  static const MPI_Op kHandle = coll_test::user_op<T, apply_all<T, TheOp>>(/*commutes=*/true);
  return kHandle;
}

template <class T>
MPI_Op user_op(Op op) {
  switch (op) {
    case Op::kSum:
      return user_op_of<T, Op::kSum>();
    case Op::kProd:
      return user_op_of<T, Op::kProd>();
    case Op::kMax:
      return user_op_of<T, Op::kMax>();
    case Op::kMin:
      return user_op_of<T, Op::kMin>();
    case Op::kLand:
      return user_op_of<T, Op::kLand>();
    case Op::kLor:
      return user_op_of<T, Op::kLor>();
    case Op::kLxor:
      return user_op_of<T, Op::kLxor>();
    case Op::kBand:
      return user_op_of<T, Op::kBand>();
    case Op::kBor:
      return user_op_of<T, Op::kBor>();
    case Op::kBxor:
      return user_op_of<T, Op::kBxor>();
  }
  return MPI_OP_NULL;
}

// Element i of EP rank r's contribution: for floating types, values whose
// sums and products round differently in another order, equal values and
// signed zeros (ties of max and min); for integers, values of every width
// whose sums and products wrap, and zeros for the logical ops.
template <class T>
T element_of(int rank, int i) {
  if constexpr (std::is_floating_point_v<T>) {
    if (i % 7 == 6) return rank % 2 == 0 ? T(0.0) : T(-0.0);
    if (i % 7 == 5) return T(1.5);
    const T sign = (rank + i) % 2 == 0 ? T(1) : T(-1);
    return sign * (T(1) / T(3 + rank + i) + T(1000) * T(i % 3));
  } else {
    if ((rank + 2 * i) % 5 == 0) return T(0);
    const std::uint64_t raw =
        0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(rank * 131 + i + 1);
    return static_cast<T>(raw ^ (raw >> 29));
  }
}

template <class T>
std::vector<T> contribution_of(int rank, int count) {
  std::vector<T> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = element_of<T>(rank, i);
  return v;
}

// The serial right fold over ranks [0, ranks).
template <class T>
std::vector<T> right_fold(Op op, int ranks, int count) {
  std::vector<T> result(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    T value = element_of<T>(ranks - 1, i);
    for (int r = ranks - 2; r >= 0; --r) value = apply(op, element_of<T>(r, i), value);
    result[static_cast<std::size_t>(i)] = value;
  }
  return result;
}

std::string name_of(MPI_Datatype type) {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  MPI_Type_get_name(type, name, &length);
  return {name, static_cast<std::size_t>(length)};
}

// An unsigned integer of T's size, to compare bits (signed zeros included).
template <class T>
using Bits = std::conditional_t<
    sizeof(T) == 1, std::uint8_t,
    std::conditional_t<sizeof(T) == 2, std::uint16_t,
                       std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

// Elements whose bits differ.
template <class T>
int differing(const std::vector<T>& a, const std::vector<T>& b) {
  int differ = 0;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (std::bit_cast<Bits<T>>(a[k]) != std::bit_cast<Bits<T>>(b[k])) ++differ;
  }
  return differ + static_cast<int>(a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

// Calls body.template operator()<T>(type, ops) for every type the library folds itself.
template <class Body>
void for_each_type(Body&& body) {
  body.template operator()<double>(MPI_DOUBLE, std::span<const Op>(kArithmeticOps));
  body.template operator()<float>(MPI_FLOAT, std::span<const Op>(kArithmeticOps));
  body.template operator()<int>(MPI_INT, std::span<const Op>(kIntegerOps));
  body.template operator()<long>(MPI_LONG, std::span<const Op>(kIntegerOps));
  body.template operator()<long long>(MPI_LONG_LONG, std::span<const Op>(kIntegerOps));
  body.template operator()<unsigned>(MPI_UNSIGNED, std::span<const Op>(kIntegerOps));
  body.template operator()<unsigned long>(MPI_UNSIGNED_LONG, std::span<const Op>(kIntegerOps));
  body.template operator()<unsigned long long>(MPI_UNSIGNED_LONG_LONG,
                                               std::span<const Op>(kIntegerOps));
  body.template operator()<short>(MPI_SHORT, std::span<const Op>(kIntegerOps));
  body.template operator()<unsigned short>(MPI_UNSIGNED_SHORT, std::span<const Op>(kIntegerOps));
  body.template operator()<signed char>(MPI_SIGNED_CHAR, std::span<const Op>(kIntegerOps));
  body.template operator()<unsigned char>(MPI_UNSIGNED_CHAR, std::span<const Op>(kIntegerOps));
  body.template operator()<std::int8_t>(MPI_INT8_T, std::span<const Op>(kIntegerOps));
  body.template operator()<std::int16_t>(MPI_INT16_T, std::span<const Op>(kIntegerOps));
  body.template operator()<std::int32_t>(MPI_INT32_T, std::span<const Op>(kIntegerOps));
  body.template operator()<std::int64_t>(MPI_INT64_T, std::span<const Op>(kIntegerOps));
  body.template operator()<std::uint8_t>(MPI_UINT8_T, std::span<const Op>(kIntegerOps));
  body.template operator()<std::uint16_t>(MPI_UINT16_T, std::span<const Op>(kIntegerOps));
  body.template operator()<std::uint32_t>(MPI_UINT32_T, std::span<const Op>(kIntegerOps));
  body.template operator()<std::uint64_t>(MPI_UINT64_T, std::span<const Op>(kIntegerOps));
}

constexpr int kLineBytes = 112;  // the small path's limit (LocalTeam::kLineExchangeBytes)

// On a communicator within one process ranked by thread, so that rank order
// is thread order and every path folds in the same order.
TEST(PredefinedReductions, EveryPathGivesTheSerialFoldsBits) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    const int root = n / 2;
    const bool is_root = c.rank() == root;
    for_each_type([&]<class T>(MPI_Datatype type, std::span<const Op> ops) {
      const int line = kLineBytes / static_cast<int>(sizeof(T));
      for (const Op op : ops) {
        for (const int count : {1, 5, line, line + 1, 2600}) {
          const std::vector<T> expected = right_fold<T>(op, n, count);
          const std::vector<T> mine = contribution_of<T>(c.rank(), count);
          for (const bool in_place : {false, true}) {
            const std::string what = std::string(name_of(op)) + " on " + name_of(type) +
                                     ", count " + std::to_string(count) +
                                     (in_place ? ", in place" : "");
            const auto reduced = [&](MPI_Op handle, const ep::ReduceOptions& options) {
              std::vector<T> out = in_place ? mine : std::vector<T>(mine.size());
              ep::allreduce(c, in_place ? MPI_IN_PLACE : mine.data(), out.data(), count, type,
                            handle, options);
              return out;
            };
            EXPECT_EQ(differing(reduced(mpi_op(op), {}), expected), 0) << "allreduce " << what;
            EXPECT_EQ(differing(reduced(user_op<T>(op), {}), expected), 0)
                << "allreduce with a user op, " << what;
            EXPECT_EQ(differing(reduced(mpi_op(op), {.layout_independent = true}), expected), 0)
                << "layout-independent allreduce " << what;
            std::vector<T> rooted = is_root && in_place ? mine : std::vector<T>(mine.size());
            ep::reduce(c, is_root && in_place ? MPI_IN_PLACE : mine.data(),
                       is_root ? rooted.data() : nullptr, count, type, mpi_op(op), root);
            if (is_root) {
              EXPECT_EQ(differing(rooted, expected), 0) << "reduce " << what;
            }
          }
        }
      }
    });
  });
}

// The same types across processes (the library's loops fold each
// process's threads, MPI's own combine the processes), in every layout,
// exact for integers. Small non-negative values and no products: Open MPI
// 4.1's own loops saturate 8- and 16-bit sums that overflow
// (open-mpi/ompi#8045) and compare MPI_UNSIGNED_LONG as signed in max and
// min (#10276, #10525), which the processes' combine would show; within a
// process the library's loops are exact there (the test above).
TEST(PredefinedReductions, IntegerResultsInEveryLayout) {
  coll_test::for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for_each_type([&]<class T>(MPI_Datatype type, std::span<const Op> ops) {
      if constexpr (std::is_integral_v<T>) {
        const auto small = [](int rank, int i) { return static_cast<T>((rank * 7 + i * 3) % 16); };
        for (const Op op : ops) {
          if (op == Op::kProd) continue;
          for (const int count : {3, kLineBytes / static_cast<int>(sizeof(T))}) {
            std::vector<T> mine(static_cast<std::size_t>(count));
            std::vector<T> expected(mine.size());
            for (int i = 0; i < count; ++i) {
              const auto k = static_cast<std::size_t>(i);
              mine[k] = small(c.rank(), i);
              expected[k] = small(n - 1, i);
              for (int r = n - 2; r >= 0; --r) expected[k] = apply(op, small(r, i), expected[k]);
            }
            std::vector<T> out(mine.size());
            ep::allreduce(c, mine.data(), out.data(), count, type, mpi_op(op));
            EXPECT_EQ(differing(out, expected), 0)
                << name_of(op) << " on " << name_of(type) << ", count " << count;
          }
        }
      }
    });
  });
}

TEST(PredefinedReductions, WhatTheSmallPathLeavesAloneStillWorks) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    // Empty vectors, null buffers: accepted, nothing written.
    ep::allreduce(c, nullptr, nullptr, 0, MPI_DOUBLE, MPI_SUM);
    ep::allreduce(c, MPI_IN_PLACE, nullptr, 0, MPI_INT, MPI_MAX);
    ep::reduce(c, nullptr, nullptr, 0, MPI_DOUBLE, MPI_SUM, 0);
    // A predefined pair type with MPI_MAXLOC: MPI folds it.
    struct IntPair {
      int value;
      int index;
    };
    const IntPair mine{c.rank() % 2 == 0 ? 7 : c.rank(), c.rank()};
    IntPair best{-1, -1};
    ep::allreduce(c, &mine, &best, 1, MPI_2INT, MPI_MAXLOC);
    int want_value = 7;
    int want_index = 0;
    for (int r = 0; r < n; ++r) {
      const int v = r % 2 == 0 ? 7 : r;
      if (v > want_value) {
        want_value = v;
        want_index = r;
      }
    }
    EXPECT_EQ(best.value, want_value);
    EXPECT_EQ(best.index, want_index);
  });
}

TEST(PredefinedReductions, ArgumentErrorsNameTheCallRankAndValue) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    double in = 1.0;
    double out = 0.0;
    using coll_test::expect_error;
    expect_error([&] { ep::allreduce(c, &in, &out, -3, MPI_DOUBLE, MPI_SUM); },
                 ep::ErrorKind::kCount, c, "ep::allreduce", "negative count");
    expect_error([&] { ep::allreduce(c, &in, &out, -3, MPI_DOUBLE, MPI_SUM); },
                 ep::ErrorKind::kCount, c, "-3", "negative count's value");
    expect_error([&] { ep::reduce(c, &in, &out, -3, MPI_DOUBLE, MPI_SUM, 0); },
                 ep::ErrorKind::kCount, c, "ep::reduce", "negative count of reduce");
    expect_error([&] { ep::allreduce(c, &in, &out, 1, MPI_DATATYPE_NULL, MPI_SUM); },
                 ep::ErrorKind::kArgument, c, "MPI_DATATYPE_NULL", "null datatype");
    expect_error([&] { ep::allreduce(c, &in, &out, 1, MPI_DOUBLE, MPI_OP_NULL); },
                 ep::ErrorKind::kArgument, c, "MPI_OP_NULL", "null op");
    expect_error([&] { ep::reduce(c, &in, &out, 1, MPI_DOUBLE, MPI_SUM, c.size()); },
                 ep::ErrorKind::kRank, c, std::to_string(c.size()), "root out of range");
    if (c.size() > 1) {
      // Each endpoint names another as the root, so that all of them throw
      // (a root that did not would wait in the collective for the others).
      const int other = (c.rank() + 1) % c.size();
      expect_error([&] { ep::reduce(c, MPI_IN_PLACE, &out, 1, MPI_DOUBLE, MPI_SUM, other); },
                   ep::ErrorKind::kArgument, c, "MPI_IN_PLACE", "MPI_IN_PLACE off the root");
    }
  });
}

}  // namespace
