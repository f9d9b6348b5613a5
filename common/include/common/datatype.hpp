// The MPI datatype of a C++ element type, for every library of the tree
// that takes spans (ep's typed layer, collectives' kernels): builtin types
// have one, a user type gets one by specialising common::datatype_traits:
//
//   template <> struct common::datatype_traits<Particle> {
//     static MPI_Datatype get() { return particle_type(); }  // committed once
//   };
//
// Header-only; datatype_of() is as thread-safe as the get() it calls.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <type_traits>

namespace common {

/// Maps an element type to its MPI datatype. Specialise get() for user
/// types; the primary template has none, so an unsupported type is a compile error.
template <class T>
struct datatype_traits;

#define COMMON_DATATYPE_BUILTIN(type, mpi_type)               \
  template <>                                                 \
  struct datatype_traits<type> {                              \
    static MPI_Datatype get() noexcept { return (mpi_type); } \
  }
COMMON_DATATYPE_BUILTIN(char, MPI_CHAR);
COMMON_DATATYPE_BUILTIN(signed char, MPI_SIGNED_CHAR);
COMMON_DATATYPE_BUILTIN(unsigned char, MPI_UNSIGNED_CHAR);
COMMON_DATATYPE_BUILTIN(short, MPI_SHORT);
COMMON_DATATYPE_BUILTIN(unsigned short, MPI_UNSIGNED_SHORT);
COMMON_DATATYPE_BUILTIN(int, MPI_INT);
COMMON_DATATYPE_BUILTIN(unsigned, MPI_UNSIGNED);
COMMON_DATATYPE_BUILTIN(long, MPI_LONG);
COMMON_DATATYPE_BUILTIN(unsigned long, MPI_UNSIGNED_LONG);
COMMON_DATATYPE_BUILTIN(long long, MPI_LONG_LONG);
COMMON_DATATYPE_BUILTIN(unsigned long long, MPI_UNSIGNED_LONG_LONG);
COMMON_DATATYPE_BUILTIN(float, MPI_FLOAT);
COMMON_DATATYPE_BUILTIN(double, MPI_DOUBLE);
COMMON_DATATYPE_BUILTIN(long double, MPI_LONG_DOUBLE);
COMMON_DATATYPE_BUILTIN(bool, MPI_CXX_BOOL);
COMMON_DATATYPE_BUILTIN(std::byte, MPI_BYTE);
COMMON_DATATYPE_BUILTIN(std::complex<float>, MPI_CXX_FLOAT_COMPLEX);
COMMON_DATATYPE_BUILTIN(std::complex<double>, MPI_CXX_DOUBLE_COMPLEX);
COMMON_DATATYPE_BUILTIN(std::complex<long double>, MPI_CXX_LONG_DOUBLE_COMPLEX);
#undef COMMON_DATATYPE_BUILTIN

/// The MPI datatype of T (cv-qualifiers ignored).
template <class T>
[[nodiscard]] MPI_Datatype datatype_of() {
  return datatype_traits<std::remove_cv_t<T>>::get();
}

/// Whether T has a datatype (a builtin or a registered user type).
template <class T>
concept HasDatatype = requires {
  datatype_traits<std::remove_cv_t<T>>::get();
};

}  // namespace common
