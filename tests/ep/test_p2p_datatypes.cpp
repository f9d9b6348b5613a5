// Derived datatypes on either side of a message: MPI_Type_vector,
// MPI_Type_create_subarray, a resized struct, contiguous <-> strided and
// strided <-> strided with different layouts, small and above the eager
// threshold, between threads of one process (intra ring) and between
// processes (inter ring). Shapes r2t3 and r3t2 run both paths.
//
// The types are built once on the main thread and shared read-only by the
// endpoints (MPI datatypes are process-wide handles).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "datatypes.hpp"
#include "ep/ep.hpp"
#include "ep_test.hpp"
#include "p2p_helpers.hpp"

namespace {

using Type = ep_test::ScopedType;
using ep_test::subarray_2d;
using ep_test::vector_of;

double value(int src, int i, int j) { return src * 1.0e6 + i * 1000.0 + j + 0.25; }

constexpr double kUntouched = -1.5;

using ep_p2p::Ring;

/// Sends (sbuf, scount, stype) to ring.to and receives (rbuf, rcount, rtype)
/// from ring.from, nonblocking on both sides (safe above the eager threshold).
ep::Status exchange(const ep::Communicator& c, const Ring& ring, const void* sbuf, int scount,
                    MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int tag) {
  std::vector<ep::Request> reqs;
  reqs.push_back(c.irecv(rbuf, rcount, rtype, ring.from, tag));
  reqs.push_back(c.isend(sbuf, scount, stype, ring.to, tag));
  std::vector<ep::Status> sts(2);
  ep::wait_all(reqs, sts);
  return sts[0];
}

/// Matrix `rows x cols` of doubles, row-major, filled with value(src, i, j).
std::vector<double> matrix(int src, int rows, int cols) {
  std::vector<double> m(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) m[static_cast<std::size_t>(i * cols + j)] = value(src, i, j);
  }
  return m;
}

// Small (16 rows) and large (4096 rows: a 32 KiB column, above 16 KiB).
const int kRowCounts[] = {16, 4096};

// For each row count: `body(c, ring, rows, column)` on every endpoint for
// both path rings (traced with the ring and the row count), `column` a
// column of a rows x cols matrix of doubles (made once per process).
template <class Body>
void on_columns(int cols, Body&& body) {
  for (int rows : kRowCounts) {
    const Type column(vector_of(rows, 1, cols, MPI_DOUBLE));
    ep_test::run_endpoints([&](ep::Communicator& c) {
      for (const Ring& ring : ep_p2p::path_rings(c)) {
        SCOPED_TRACE(testing::Message() << ring.name << ", rows " << rows);
        body(c, ring, rows, column);
      }
    });
  }
}

// Elements of the row-major matrix `m` (`cols` wide) that differ from:
// column `col` holding value(from, i, from_col) in row i, the rest kUntouched.
int column_mismatches(const std::vector<double>& m, int cols, int col, int from, int from_col) {
  int bad = 0;
  for (std::size_t at = 0; at < m.size(); ++at) {
    const int i = static_cast<int>(at) / cols;
    const int j = static_cast<int>(at) % cols;
    bad += m[at] != (j == col ? value(from, i, from_col) : kUntouched) ? 1 : 0;
  }
  return bad;
}

// A column of a matrix (vector type) received as contiguous doubles.
TEST(P2PDatatypes, StridedToContiguous) {
  constexpr int kCols = 5;
  on_columns(kCols, [](ep::Communicator& c, const Ring& ring, int rows, const Type& column) {
    const std::vector<double> m = matrix(c.rank(), rows, kCols);
    const int col = c.rank() % kCols;
    std::vector<double> in(static_cast<std::size_t>(rows), kUntouched);
    const ep::Status st = exchange(c, ring, &m[static_cast<std::size_t>(col)], 1, column, in.data(),
                                   rows, MPI_DOUBLE, 500);
    EXPECT_EQ(st.source, ring.from);
    EXPECT_EQ(st.count(MPI_DOUBLE), rows);
    EXPECT_EQ(st.count(column), 1);
    const int from_col = ring.from % kCols;
    int bad = 0;
    for (int i = 0; i < rows; ++i) {
      bad += in[static_cast<std::size_t>(i)] != value(ring.from, i, from_col) ? 1 : 0;
    }
    EXPECT_EQ(bad, 0);
  });
}

// Contiguous doubles received into a column of a matrix; the rest of the
// matrix is untouched.
TEST(P2PDatatypes, ContiguousToStrided) {
  constexpr int kCols = 3;
  on_columns(kCols, [](ep::Communicator& c, const Ring& ring, int rows, const Type& column) {
    const std::vector<double> out = matrix(c.rank(), rows, 1);
    std::vector<double> m(static_cast<std::size_t>(rows * kCols), kUntouched);
    const int col = 1;
    const ep::Status st = exchange(c, ring, out.data(), rows, MPI_DOUBLE,
                                   &m[static_cast<std::size_t>(col)], 1, column, 501);
    EXPECT_EQ(st.count(column), 1);
    EXPECT_EQ(column_mismatches(m, kCols, col, ring.from, 0), 0);
  });
}

// A column of a 5-wide matrix into a column of a 3-wide matrix.
TEST(P2PDatatypes, StridedToDifferentlyStrided) {
  for (int rows : kRowCounts) {
    const Type wide(vector_of(rows, 1, 5, MPI_DOUBLE));
    const Type narrow(vector_of(rows, 1, 3, MPI_DOUBLE));
    ep_test::run_endpoints([&](ep::Communicator& c) {
      const int r = c.rank();
      const std::vector<double> m = matrix(r, rows, 5);
      for (const Ring& ring : ep_p2p::path_rings(c)) {
        SCOPED_TRACE(testing::Message() << ring.name << ", rows " << rows);
        std::vector<double> n(static_cast<std::size_t>(rows * 3), kUntouched);
        exchange(c, ring, &m[4], 1, wide, &n[2], 1, narrow, 502);
        EXPECT_EQ(column_mismatches(n, 3, 2, ring.from, 4), 0);
      }
    });
  }
}

// count > 1 of a vector type whose elements are blocks with gaps:
// vector(2 blocks of 3 ints, stride 5) has extent 8 ints; 3 of them are
// 18 ints of data spread over 24.
TEST(P2PDatatypes, SeveralVectorElementsToContiguous) {
  const Type blocks(vector_of(2, 3, 5, MPI_INT));
  ep_test::run_endpoints([&](ep::Communicator& c) {
    const int r = c.rank();
    std::vector<int> src(24);
    for (int k = 0; k < 24; ++k) src[static_cast<std::size_t>(k)] = ep_p2p::pattern(r, 0, k);
    // Offsets of the data ints within src, in type-map order.
    std::vector<int> picked;
    for (int e = 0; e < 3; ++e) {
      for (int b = 0; b < 2; ++b) {
        for (int k = 0; k < 3; ++k) picked.push_back(e * 8 + b * 5 + k);
      }
    }
    for (const Ring& ring : ep_p2p::path_rings(c)) {
      SCOPED_TRACE(ring.name);
      std::vector<int> in(20, -1);
      const ep::Status st = exchange(c, ring, src.data(), 3, blocks, in.data(), 20, MPI_INT, 503);
      EXPECT_EQ(st.count(MPI_INT), 18);
      EXPECT_EQ(st.count(blocks), 3);
      for (std::size_t k = 0; k < picked.size(); ++k) {
        EXPECT_EQ(in[k], ep_p2p::pattern(ring.from, 0, picked[k])) << "int " << k;
      }
      EXPECT_EQ(in[18], -1);
    }
  });
}

/// Checks that `m` (rows x cols ints) holds `src`'s block [sr0, sr0+sub) x
/// [sc0, sc0+sub) at [dr0, ...) x [dc0, ...) and -1 everywhere else.
int subarray_mismatches(const std::vector<int>& m, int rows, int cols, int sub_rows, int sub_cols,
                        int dr0, int dc0, int src, int sr0, int sc0, int src_cols) {
  int bad = 0;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const bool inside = i >= dr0 && i < dr0 + sub_rows && j >= dc0 && j < dc0 + sub_cols;
      const int want =
          inside ? ep_p2p::pattern(src, 0, (i - dr0 + sr0) * src_cols + (j - dc0 + sc0)) : -1;
      bad += m[static_cast<std::size_t>(i * cols + j)] != want ? 1 : 0;
    }
  }
  return bad;
}

// A subarray of one 2-D array into a subarray (other position, other array
// shape) of another; then subarray -> contiguous and contiguous -> subarray.
TEST(P2PDatatypes, SubarrayToSubarrayAndContiguous) {
  struct Case {
    int rows, cols, sub_rows, sub_cols;
  };
  // 6x7 block (168 B) and 100x150 block (60000 B, above the eager threshold).
  for (const Case k : {Case{20, 30, 6, 7}, Case{200, 300, 100, 150}}) {
    const int s_r0 = 3, s_c0 = 5;  // position in the sender's rows x cols array
    const int d_rows = k.rows + 4, d_cols = k.cols + 2;
    const int d_r0 = 1, d_c0 = 2;  // position in the receiver's d_rows x d_cols array
    const Type send_block(subarray_2d(k.rows, k.cols, k.sub_rows, k.sub_cols, s_r0, s_c0, MPI_INT));
    const Type recv_block(subarray_2d(d_rows, d_cols, k.sub_rows, k.sub_cols, d_r0, d_c0, MPI_INT));
    const int block_ints = k.sub_rows * k.sub_cols;
    ep_test::run_endpoints([&](ep::Communicator& c) {
      const int r = c.rank();
      std::vector<int> a(static_cast<std::size_t>(k.rows * k.cols));
      for (int q = 0; q < k.rows * k.cols; ++q)
        a[static_cast<std::size_t>(q)] = ep_p2p::pattern(r, 0, q);
      for (const Ring& ring : ep_p2p::path_rings(c)) {
        SCOPED_TRACE(testing::Message()
                     << ring.name << ", block " << k.sub_rows << "x" << k.sub_cols);
        // subarray -> subarray
        std::vector<int> b(static_cast<std::size_t>(d_rows * d_cols), -1);
        ep::Status st = exchange(c, ring, a.data(), 1, send_block, b.data(), 1, recv_block, 504);
        EXPECT_EQ(st.count(MPI_INT), block_ints);
        EXPECT_EQ(subarray_mismatches(b, d_rows, d_cols, k.sub_rows, k.sub_cols, d_r0, d_c0,
                                      ring.from, s_r0, s_c0, k.cols),
                  0);

        // subarray -> contiguous
        std::vector<int> flat(static_cast<std::size_t>(block_ints), -1);
        exchange(c, ring, a.data(), 1, send_block, flat.data(), block_ints, MPI_INT, 505);
        int bad = 0;
        for (int i = 0; i < k.sub_rows; ++i) {
          for (int j = 0; j < k.sub_cols; ++j) {
            bad += flat[static_cast<std::size_t>(i * k.sub_cols + j)] !=
                           ep_p2p::pattern(ring.from, 0, (i + s_r0) * k.cols + (j + s_c0))
                       ? 1
                       : 0;
          }
        }
        EXPECT_EQ(bad, 0);

        // contiguous -> subarray: send the flat block back around the ring.
        std::vector<int> flat_out(static_cast<std::size_t>(block_ints));
        for (int i = 0; i < k.sub_rows; ++i) {
          for (int j = 0; j < k.sub_cols; ++j) {
            flat_out[static_cast<std::size_t>(i * k.sub_cols + j)] =
                ep_p2p::pattern(r, 0, (i + s_r0) * k.cols + (j + s_c0));
          }
        }
        std::fill(b.begin(), b.end(), -1);
        exchange(c, ring, flat_out.data(), block_ints, MPI_INT, b.data(), 1, recv_block, 506);
        EXPECT_EQ(subarray_mismatches(b, d_rows, d_cols, k.sub_rows, k.sub_cols, d_r0, d_c0,
                                      ring.from, s_r0, s_c0, k.cols),
                  0);
      }
    });
  }
}

// A struct with padding, described by MPI_Type_create_struct and resized to
// sizeof: only the data bytes travel, the padding is never relied on.
struct Particle {
  int id;
  double x;
  char tag[3];
};

TEST(P2PDatatypes, ResizedStruct) {
  const int lengths[3] = {1, 1, 3};
  const MPI_Aint displs[3] = {offsetof(Particle, id), offsetof(Particle, x),
                              offsetof(Particle, tag)};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype raw = MPI_DATATYPE_NULL;
  MPI_Type_create_struct(3, lengths, displs, types, &raw);
  MPI_Datatype resized = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(raw, 0, sizeof(Particle), &resized);
  MPI_Type_free(&raw);
  const Type particle(resized);
  for (int count : {10, 2000}) {  // 2000 x 15 B of data: above the eager threshold
    ep_test::run_endpoints([&](ep::Communicator& c) {
      const int r = c.rank();
      std::vector<Particle> out(static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i) {
        out[static_cast<std::size_t>(i)] = {
            r * 100000 + i, value(r, i, 0), {'a', static_cast<char>('a' + i % 26), 'z'}};
      }
      for (const Ring& ring : ep_p2p::path_rings(c)) {
        SCOPED_TRACE(testing::Message() << ring.name << ", count " << count);
        std::vector<Particle> in(static_cast<std::size_t>(count),
                                 Particle{-1, kUntouched, {0, 0, 0}});
        const ep::Status st =
            exchange(c, ring, out.data(), count, particle, in.data(), count, particle, 507);
        EXPECT_EQ(st.count(particle), count);
        EXPECT_EQ(st.bytes, static_cast<std::size_t>(count) * (sizeof(int) + sizeof(double) + 3));
        int bad = 0;
        for (int i = 0; i < count; ++i) {
          const Particle& p = in[static_cast<std::size_t>(i)];
          bad += (p.id != ring.from * 100000 + i || p.x != value(ring.from, i, 0) ||
                  p.tag[0] != 'a' || p.tag[1] != static_cast<char>('a' + i % 26) || p.tag[2] != 'z')
                     ? 1
                     : 0;
        }
        EXPECT_EQ(bad, 0);
      }
    });
  }
}

// Type signatures match across different constructors: doubles sent as
// MPI_DOUBLE are received as a contiguous type of 4 doubles, and vice versa.
TEST(P2PDatatypes, ContiguousTypeOfSeveralElements) {
  MPI_Datatype four = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(4, MPI_DOUBLE, &four);
  const Type quad(four);
  ep_test::run_endpoints([&](ep::Communicator& c) {
    const int r = c.rank();
    for (int elems : {8, 8192}) {  // 64 B and 64 KiB
      std::vector<double> out(static_cast<std::size_t>(elems));
      for (int i = 0; i < elems; ++i) out[static_cast<std::size_t>(i)] = value(r, i, 1);
      for (const Ring& ring : ep_p2p::path_rings(c)) {
        SCOPED_TRACE(testing::Message() << ring.name << ", doubles " << elems);
        std::vector<double> in(static_cast<std::size_t>(elems), kUntouched);
        ep::Status st =
            exchange(c, ring, out.data(), elems, MPI_DOUBLE, in.data(), elems / 4, quad, 508);
        EXPECT_EQ(st.count(quad), elems / 4);
        EXPECT_EQ(st.count(MPI_DOUBLE), elems);
        int bad = 0;
        for (int i = 0; i < elems; ++i) {
          bad += in[static_cast<std::size_t>(i)] != value(ring.from, i, 1) ? 1 : 0;
        }
        EXPECT_EQ(bad, 0);
        std::fill(in.begin(), in.end(), kUntouched);
        st = exchange(c, ring, out.data(), elems / 4, quad, in.data(), elems, MPI_DOUBLE, 509);
        EXPECT_EQ(st.count(MPI_DOUBLE), elems);
        EXPECT_EQ(in.back(), value(ring.from, elems - 1, 1));
      }
    }
  });
}

}  // namespace
