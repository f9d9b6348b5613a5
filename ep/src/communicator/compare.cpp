// MPI_Comm_compare at the endpoint level: endpoints are matched by their
// origin (process, creation thread), which survives dup, split and merge.
#include <algorithm>
#include <vector>

#include "communicator/creation.hpp"
#include "ep/comm_management.hpp"

namespace ep {

int compare(const Communicator& a, const Communicator& b) {
  constexpr const char* kCall = "ep::compare";
  const detail::CommState& first = detail::usable_state(a, kCall);
  const detail::CommState& second = detail::usable_state(b, kCall);
  if (&first == &second) return MPI_IDENT;
  if (first.rank_map().size() != second.rank_map().size()) return MPI_UNEQUAL;
  std::vector<Location> ours = detail::origins_of(first, kCall, a.rank());
  std::vector<Location> theirs = detail::origins_of(second, kCall, a.rank());
  if (ours == theirs) return MPI_CONGRUENT;
  const auto by_origin = [](const Location& x, const Location& y) {
    return x.process != y.process ? x.process < y.process : x.thread < y.thread;
  };
  std::sort(ours.begin(), ours.end(), by_origin);
  std::sort(theirs.begin(), theirs.end(), by_origin);
  return ours == theirs ? MPI_SIMILAR : MPI_UNEQUAL;
}

}  // namespace ep
