#include "mpi_groups.hpp"

#include <numeric>

#include "checks.hpp"

namespace ep::detail {

std::vector<int> translate_all(MPI_Group from, MPI_Group to, const char* call, int rank) {
  int size = 0;
  check_mpi(MPI_Group_size(from, &size), call, rank);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::iota(ranks.begin(), ranks.end(), 0);
  std::vector<int> translated(ranks.size());
  check_mpi(MPI_Group_translate_ranks(from, size, ranks.data(), to, translated.data()), call, rank);
  return translated;
}

}  // namespace ep::detail
