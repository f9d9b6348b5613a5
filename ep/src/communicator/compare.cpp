// MPI_Comm_compare at the endpoint level: endpoints are matched by their
// origin (process, creation thread), which survives dup, split and merge.
// Intercommunicators compare both groups, each as an intracommunicator would.
#include <algorithm>
#include <span>
#include <vector>

#include "communicator/creation.hpp"
#include "ep/comm_management.hpp"

namespace ep {

namespace {

constexpr const char* kCall = "ep::compare";

// MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL for two groups given by their
// endpoints' origins in rank order.
int compare_groups(std::vector<Location> ours, std::vector<Location> theirs) {
  if (ours.size() != theirs.size()) return MPI_UNEQUAL;
  if (ours == theirs) return MPI_CONGRUENT;
  const auto by_origin = [](const Location& x, const Location& y) {
    return x.process != y.process ? x.process < y.process : x.thread < y.thread;
  };
  std::sort(ours.begin(), ours.end(), by_origin);
  std::sort(theirs.begin(), theirs.end(), by_origin);
  return ours == theirs ? MPI_SIMILAR : MPI_UNEQUAL;
}

// The origins of the ranks [first, first + count) of `all`.
std::vector<Location> slice(const std::vector<Location>& all, int first, int count) {
  const auto begin = all.begin() + first;
  return {begin, begin + count};
}

}  // namespace

int compare(const Communicator& a, const Communicator& b) {
  const detail::CommState& first = detail::usable_state(a, kCall);
  const detail::CommState& second = detail::usable_state(b, kCall);
  if (&first == &second) return MPI_IDENT;
  if (first.rank_map().size() != second.rank_map().size()) return MPI_UNEQUAL;
  return compare_groups(first.world_origins(kCall, a.rank()),
                        second.world_origins(kCall, a.rank()));
}

int compare(const InterCommunicator& a, const InterCommunicator& b) {
  const Communicator& first = detail::usable_bridge(a, kCall);
  const Communicator& second = detail::usable_bridge(b, kCall);
  if (first.state() == second.state()) return MPI_IDENT;
  // Each bridge holds the remote group (ranks 0..remote_size()-1), then the
  // local group, both in their own rank order.
  const std::vector<Location> ours = first.state()->world_origins(kCall, a.rank());
  const std::vector<Location> theirs = second.state()->world_origins(kCall, a.rank());
  const int remote =
      compare_groups(slice(ours, 0, a.remote_size()), slice(theirs, 0, b.remote_size()));
  const int local = compare_groups(slice(ours, a.remote_size(), a.size()),
                                   slice(theirs, b.remote_size(), b.size()));
  if (remote == MPI_UNEQUAL || local == MPI_UNEQUAL) return MPI_UNEQUAL;
  return remote == MPI_CONGRUENT && local == MPI_CONGRUENT ? MPI_CONGRUENT : MPI_SIMILAR;
}

}  // namespace ep
