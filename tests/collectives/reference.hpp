// Serial references for the kernel tests: every rank's data gathered to every
// rank through the library allreduce (each rank fills its own slot of a
// zero-padded array, MPI_SUM), so the expected result is computed from the
// global data by plain loops, independently of the kernel under test.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

#include "collectives/communicator.hpp"
#include "common/datatype.hpp"

namespace collectives_test {

/// Every rank's `mine` (lengths may differ), in rank order. Collective.
template <collectives::Communicator C, class T>
std::vector<std::vector<T>> gather_all(const C& comm, std::span<const T> mine) {
  const int n = comm.size();
  std::vector<long long> lengths(static_cast<std::size_t>(n), 0);
  lengths[static_cast<std::size_t>(comm.rank())] = static_cast<long long>(mine.size());
  comm.library_allreduce(MPI_IN_PLACE, lengths.data(), n, MPI_LONG_LONG, MPI_SUM);
  std::size_t total = 0;
  std::vector<std::size_t> offset(static_cast<std::size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r) {
    total += static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
    offset[static_cast<std::size_t>(r) + 1] = total;
  }
  std::vector<T> flat(total, T{});
  for (std::size_t i = 0; i < mine.size(); ++i) {
    flat[offset[static_cast<std::size_t>(comm.rank())] + i] = mine[i];
  }
  if (total > 0) {
    comm.library_allreduce(MPI_IN_PLACE, flat.data(), static_cast<int>(total),
                           common::datatype_of<T>(), MPI_SUM);
  }
  std::vector<std::vector<T>> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    all[static_cast<std::size_t>(r)].assign(
        flat.begin() + static_cast<std::ptrdiff_t>(offset[static_cast<std::size_t>(r)]),
        flat.begin() + static_cast<std::ptrdiff_t>(offset[static_cast<std::size_t>(r) + 1]));
  }
  return all;
}

/// A deterministic pseudo-random value (splitmix64) for test data.
inline unsigned long long mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace collectives_test
