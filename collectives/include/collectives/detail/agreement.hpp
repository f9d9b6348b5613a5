// Argument checks agreed by every rank before any message moves.
//
// A bad argument seen by one rank alone (a negative count, a radix below 1, a
// count its peer disagrees with) must not let that rank throw while the others
// wait for it forever. So each rank describes what it found in a fixed-size
// slot, one library allreduce (MPI_SUM over slots that only their owner fills)
// gives every rank every slot, and every rank throws the same common::Error naming
// the first offending rank, the argument and its value:
//
//   collectives::alltoallv: ep rank 0: rank 2 passed sendcounts[1] = -3 (negative)
//
// Cost: one allreduce of (kSlotValues + extra values) * size() long longs.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "common/error.hpp"

namespace collectives::detail {

/// What one rank found wrong with its own arguments (code 0: nothing).
struct LocalCheck {
  long long code = 0;
  long long index = 0;
  long long value = 0;
  /// Extra values every rank must agree on (algorithm, radix, size class):
  /// any difference between ranks is itself an error.
  long long agreed[3] = {0, 0, 0};
};

inline constexpr int kSlotValues = 6;

/// Every rank's check, in rank order, into `all`, with `extra` values of this
/// rank (the same number on every rank; the alltoallv counts, say) carried
/// along into `all_extra` (every rank's, in rank order). `slots` is scratch
/// (all three keep their capacity between calls). Collective over `comm`;
/// one allreduce.
template <Communicator C>
void gather_checks(const C& comm, const LocalCheck& mine, std::span<const long long> extra,
                   std::vector<long long>& slots, std::vector<LocalCheck>& all,
                   std::vector<long long>& all_extra) {
  const int n = comm.size();
  const std::size_t per_rank = kSlotValues + extra.size();
  slots.assign(static_cast<std::size_t>(n) * per_rank, 0);
  long long* own = slots.data() + static_cast<std::size_t>(comm.rank()) * per_rank;
  own[0] = mine.code;
  own[1] = mine.index;
  own[2] = mine.value;
  for (int i = 0; i < 3; ++i) own[3 + i] = mine.agreed[i];
  std::copy(extra.begin(), extra.end(), own + kSlotValues);
  comm.library_allreduce(MPI_IN_PLACE, slots.data(), static_cast<int>(slots.size()), MPI_LONG_LONG,
                         MPI_SUM);
  all.resize(static_cast<std::size_t>(n));
  all_extra.clear();
  for (int r = 0; r < n; ++r) {
    const long long* s = slots.data() + static_cast<std::size_t>(r) * per_rank;
    all[static_cast<std::size_t>(r)] = {s[0], s[1], s[2], {s[3], s[4], s[5]}};
    all_extra.insert(all_extra.end(), s + kSlotValues, s + per_rank);
  }
}

template <Communicator C>
void gather_checks(const C& comm, const LocalCheck& mine, std::vector<long long>& slots,
                   std::vector<LocalCheck>& all) {
  std::vector<long long> none;
  gather_checks(comm, mine, {}, slots, all, none);
}

template <Communicator C>
std::vector<LocalCheck> gather_checks(const C& comm, const LocalCheck& mine) {
  std::vector<long long> slots;
  std::vector<LocalCheck> all;
  gather_checks(comm, mine, slots, all);
  return all;
}

/// Throws on every rank when any rank reported a problem. `describe(check)`
/// returns {ErrorKind, "sendcounts[1] = -3 (negative)"} for a non-zero code.
template <Communicator C, class Describe>
void throw_if_any(const C& comm, const char* call, std::span<const LocalCheck> all,
                  Describe&& describe) {
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].code == 0) continue;
    const auto [kind, text] = describe(all[r]);
    throw common::Error(kind, call, comm.rank(), "rank " + std::to_string(r) + " passed " + text);
  }
}

}  // namespace collectives::detail
