// Helpers shared by the collective tests: the endpoint layouts every test
// runs in, data patterns, a non-commutative user op and a derived datatype
// with holes.
//
// Layouts: the shape's own (OMP_NUM_THREADS endpoints per process), one
// endpoint per process (MPI's own collectives underneath), different endpoint
// counts per process (1 + world rank), and the last two again with EP ranks
// that are not process-major (thread-major, then reversed), as a split by key
// can number them. The permuted communicators are built from the rank map
// directly (white box: any permutation, independent of split).
//
// Thread safety: the lazily created MPI types and ops are function-local
// statics (initialised once per process); everything else is per call.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"

namespace coll_test {

using Body = std::function<void(ep::Communicator&)>;

/// Runs `body` on an endpoint communicator with `threads` endpoints on this
/// process whose EP ranks are numbered thread-major and then reversed (so
/// neither processes nor threads are in order), made with ep::split.
/// Collective over MPI_COMM_WORLD.
inline void run_permuted(const Body& body, int threads) {
  ep_test::run_endpoints(
      [&](ep::Communicator& c) {
        const int processes = c.rank_map().num_processes();
        ep::Communicator permuted =
            ep::split(c, 0, -(c.local_thread() * processes + c.process_rank()));
        ep_test::set_current_endpoint(permuted.rank());
        try {
          body(permuted);
        } catch (...) {
          permuted.free();  // the others still free theirs; then report
          throw;
        }
        permuted.free();
      },
      threads);
}

/// Runs `body` in every layout (see the file comment), one after the other.
inline void for_each_layout(const Body& body) {
  const int threads = omp_get_max_threads();
  const int uneven = 1 + ep_test::world_rank();
  const auto traced = [&](const char* layout) {
    return [&body, layout](ep::Communicator& c) {
      SCOPED_TRACE(layout);
      body(c);
    };
  };
  ep_test::run_endpoints(traced("layout: OMP_NUM_THREADS endpoints per process"), threads);
  ep_test::run_endpoints(traced("layout: one endpoint per process"), 1);
  ep_test::run_endpoints(traced("layout: 1 + world rank endpoints per process"), uneven);
  run_permuted(traced("layout: permuted ranks, OMP_NUM_THREADS endpoints"), threads);
  run_permuted(traced("layout: permuted ranks, 1 + world rank endpoints"), uneven);
}

/// Element i of EP rank r's data in a test: distinct for every (r, i, salt).
inline int value(int rank, int i, int salt = 0) { return rank * 100000 + i * 7 + salt; }

/// value(0, i) + ... + value(ranks - 1, i).
inline int sum_of_values(int ranks, int i) {
  int sum = 0;
  for (int r = 0; r < ranks; ++r) sum += value(r, i);
  return sum;
}

/// value(rank, i) for i = 0 .. count - 1.
inline std::vector<int> values_of(int rank, int count) {
  std::vector<int> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = value(rank, i);
  return v;
}

inline constexpr int kHole = -777;  // never a value(); marks what must stay untouched

/// Counts that exercise empty blocks, single elements and odd sizes.
inline int varied_count(int rank, int salt = 0) {
  return (rank + salt) % 4 == 3 ? 0 : 1 + (rank + salt) % 3;
}

/// 2x2 matrices of uint32 (arithmetic mod 2^32: associative, exact, not commutative).
struct Mat {
  std::uint32_t a, b, c, d;
  friend bool operator==(const Mat&, const Mat&) = default;
};

inline Mat mul(const Mat& x, const Mat& y) {
  return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
          x.c * y.b + x.d * y.d};
}

inline std::ostream& operator<<(std::ostream& os, const Mat& m) {
  return os << "[" << m.a << " " << m.b << "; " << m.c << " " << m.d << "]";
}

/// EP rank r's contribution, element i: matrices that do not commute.
inline Mat mat_of(int rank, int i) {
  const auto r = static_cast<std::uint32_t>(rank);
  const auto k = static_cast<std::uint32_t>(i);
  return {1 + r, (3 * r + k) % 7 + 1, (r + 2 * k) % 5, 1 + k % 2};
}

/// mat_of(first, i) * ... * mat_of(last - 1, i), the identity when empty.
inline Mat mat_product(int first, int last, int i) {
  Mat m{1, 0, 0, 1};
  for (int r = first; r < last; ++r) m = mul(m, mat_of(r, i));
  return m;
}

/// `type` committed. The tests' types and ops below are created once per
/// process (function-local statics) and live until MPI_Finalize.
inline MPI_Datatype committed(MPI_Datatype type) {
  MPI_Type_commit(&type);
  return type;
}

/// A user op on arrays of T: `Combine(in, inout, len)` sets inout = in op
/// inout for `len` elements (MPI's order).
template <typename T, void (*Combine)(const T*, T*, int)>
MPI_Op user_op(bool commutes) {
  MPI_Op op = MPI_OP_NULL;
  MPI_Op_create(
      [](void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
        Combine(static_cast<const T*>(in), static_cast<T*>(inout), *len);
      },
      commutes ? 1 : 0, &op);
  return op;
}

/// MPI datatype of one Mat.
inline MPI_Datatype mat_type() {
  static const MPI_Datatype kType = [] {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(4, MPI_UINT32_T, &t);
    return committed(t);
  }();
  return kType;
}

inline void multiply_into(const Mat* in, Mat* inout, int len) {
  for (int i = 0; i < len; ++i) inout[i] = mul(in[i], inout[i]);
}

/// Matrix product as an MPI op: inout = in * inout (MPI's order), not commutative.
inline MPI_Op mat_product_op() {
  static const MPI_Op kOp = user_op<Mat, multiply_into>(/*commutes=*/false);
  return kOp;
}

/// The reduction the non-commutative tests use: Mats multiplied.
struct MatProduct {
  MPI_Datatype type;
  MPI_Op op;
};
inline MatProduct mat_product() { return {mat_type(), mat_product_op()}; }

/// A derived type with holes: kStrided ints at every other int (a resized
/// MPI_Type_vector with extent 2 * kStrided ints), so element e's data are the
/// ints 2 * (kStrided * e + j) and the odd ints are holes.
inline constexpr int kStrided = 3;

inline MPI_Datatype strided_type() {
  static const MPI_Datatype kType = [] {
    MPI_Datatype vector = MPI_DATATYPE_NULL;
    MPI_Datatype resized = MPI_DATATYPE_NULL;
    MPI_Type_vector(kStrided, 1, 2, MPI_INT, &vector);
    MPI_Type_create_resized(vector, 0, static_cast<MPI_Aint>(2 * sizeof(int) * kStrided), &resized);
    const MPI_Datatype t = committed(resized);
    MPI_Type_free(&vector);
    return t;
  }();
  return kType;
}

/// `len` elements of strided_type(): their data ints added, the holes left alone.
inline void add_strided_into(const int* in, int* inout, int len) {
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t{len} * kStrided; ++i) inout[2 * i] += in[2 * i];
}

/// Sum over the data ints of strided_type() (predefined ops are not defined
/// on derived types in Open MPI; a user op is, with MPI_Reduce_local too).
inline MPI_Op strided_sum_op() {
  static const MPI_Op kOp = user_op<int, add_strided_into>(/*commutes=*/true);
  return kOp;
}

/// Serial right fold c0 + (c1 + (... + c(n-1))) of doubles, the evaluation
/// order of the layout-independent reductions.
inline double right_fold(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double sum = values.back();
  for (auto i = static_cast<std::ptrdiff_t>(values.size()) - 2; i >= 0; --i) {
    sum = values[static_cast<std::size_t>(i)] + sum;
  }
  return sum;
}

/// The layout-independent test values: not exactly representable, so that
/// the evaluation order shows in the bits.
inline double fraction(int rank, int i) { return 1.0 / (rank + 3 + i); }

/// Expects actual[k] == expected(k) for every k; reports how many differ and
/// the first few (a large vector must not flood the log).
template <typename T, typename Expected>
void expect_each(const std::vector<T>& actual, Expected&& expected, const std::string& what) {
  int mismatches = 0;
  std::ostringstream first;
  for (std::size_t k = 0; k < actual.size(); ++k) {
    const T want = expected(k);
    if (actual[k] == want) continue;
    if (mismatches < 3) first << " [" << k << "] " << actual[k] << " != " << want << ";";
    ++mismatches;
  }
  EXPECT_EQ(mismatches, 0) << what << " (" << actual.size() << " elements):" << first.str();
}

/// Calls `f`, expecting an ep::Error of `kind` whose message names the
/// caller's EP rank and contains `needle`.
template <typename F>
void expect_error(F&& f, ep::ErrorKind kind, const ep::Communicator& c, const std::string& needle,
                  const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no ep::Error";
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), kind) << what << ": " << e.what();
    EXPECT_EQ(e.ep_rank(), c.rank()) << what << ": " << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find("ep rank " + std::to_string(c.rank())), std::string::npos)
        << what << ": " << message;
    EXPECT_NE(message.find(needle), std::string::npos) << what << ": " << message;
  }
}

}  // namespace coll_test
