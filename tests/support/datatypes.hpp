// MPI derived datatypes for tests: a scoped committed type and builders for
// the layouts the suites exercise (strided vectors, 2-D subarrays). Shared by
// the point-to-point and collective suites.
//
// Builders return an uncommitted type; wrap it in ScopedType, which commits
// it and frees it at the end of the scope. Errors from MPI are not expected
// here (the arguments are the tests' own constants).
#pragma once

#include <mpi.h>

namespace ep_test {

/// A committed MPI datatype freed at the end of its scope.
class ScopedType {
 public:
  explicit ScopedType(MPI_Datatype t) : t_(t) { MPI_Type_commit(&t_); }
  ScopedType(const ScopedType&) = delete;
  ScopedType& operator=(const ScopedType&) = delete;
  ~ScopedType() { MPI_Type_free(&t_); }
  operator MPI_Datatype() const { return t_; }  // NOLINT(google-explicit-constructor)

 private:
  MPI_Datatype t_;
};

/// `count` blocks of `blocklen` elements of `old`, `stride` elements apart.
inline MPI_Datatype vector_of(int count, int blocklen, int stride, MPI_Datatype old) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_vector(count, blocklen, stride, old, &t);
  return t;
}

/// The `sub_rows` x `sub_cols` block at (r0, c0) of a row-major
/// `rows` x `cols` array of `old`.
inline MPI_Datatype subarray_2d(int rows, int cols, int sub_rows, int sub_cols, int r0, int c0,
                                MPI_Datatype old) {
  const int sizes[2] = {rows, cols};
  const int subsizes[2] = {sub_rows, sub_cols};
  const int starts[2] = {r0, c0};
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, old, &t);
  return t;
}

}  // namespace ep_test
