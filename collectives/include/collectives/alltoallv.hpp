// Alltoallv with a choice of algorithm: the library's own, burst, pairwise,
// Bruck (variable blocks) and ring-k, or `auto`, which measures them once per
// communicator and size class and remembers the fastest.
//
//   collectives::AlltoallvTuner tuner;  // one per communicator, on every rank
//   collectives::alltoallv(comm, std::span<const double>(send), sendcounts, sdispls,
//                          std::span<double>(recv), recvcounts, rdispls,
//                          {.algorithm = collectives::AlltoallvAlgorithm::kAuto, .tuner = &tuner});
//
// Semantics are MPI_Alltoallv's with counts and displacements in elements of
// T: rank i sends sendcounts[j] elements from send[sdispls[j]...] to rank j,
// which receives them at recv[rdispls[i]...]. Blocks may be empty or uneven.
// Each algorithm lives in alltoallv_algorithms/<name>.hpp with a stage table.
//
// Checks (options.check, on by default): before any data moves, every rank
// learns every rank's verdict on its own arguments, and the algorithm and k
// are compared across ranks, and every sendcount is compared with its
// receiver's recvcount. Up to 16 ranks that is one allreduce that carries
// every rank's counts with its verdict; on more ranks (where the n^2 counts
// would cost more) the verdicts go first (one allreduce), then the counts
// (one library alltoall of ints), then the receivers' verdicts (one more
// allreduce). Any problem -- k < 1, a negative count, a
// block outside its buffer, a sendcount that its receiver's recvcount
// disagrees with, ranks that chose different algorithms -- throws the same
// ep::Error on every rank, naming the offending rank, argument and value.
// A caller that has checked its counts once (a transposition plan, a
// benchmark's timed loop) may turn this off: then bad arguments are undefined
// behaviour, as for MPI_Alltoallv.
//
// `auto`: the size class is the largest block in bytes over all ranks,
// rounded to a power of 4 (agreed with the checks above, or from
// options.agreed_block_bytes, or by one extra allreduce). The first call of
// a class times every candidate (library, burst, pairwise, bruck, ring-k for
// k = 2, 4, 8, ... < n-1) on the caller's own data (3 rounds of 2 calls,
// interleaved; a candidate's best round), takes each candidate's slowest
// rank (allreduce MPI_MAX) and keeps the fastest: all ranks see the
// same times, so all choose the same. The environment variable
// COLLECTIVES_ALLTOALLV=ring4 (or any algorithm name) or tuner.force()
// overrides the measurement; tuner.reset() forgets what was measured.
//
// Collective over every rank of `comm`. Thread safety: as the communicator;
// a tuner belongs to one rank (each endpoint thread has its own).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/alltoallv_algorithms/bruck.hpp"
#include "collectives/alltoallv_algorithms/burst.hpp"
#include "collectives/alltoallv_algorithms/exchange.hpp"
#include "collectives/alltoallv_algorithms/pairwise.hpp"
#include "collectives/alltoallv_algorithms/ring_k.hpp"
#include "collectives/communicator.hpp"
#include "collectives/detail/agreement.hpp"
#include "ep/error.hpp"
#include "ep/typed.hpp"

namespace collectives {

enum class AlltoallvAlgorithm { kLibrary, kBurst, kPairwise, kBruck, kRingK, kAuto };

/// An algorithm and, for ring-k, its k.
struct AlltoallvChoice {
  AlltoallvAlgorithm algorithm = AlltoallvAlgorithm::kLibrary;
  int k = 1;  ///< partners per stage (kRingK only)
  friend bool operator==(const AlltoallvChoice&, const AlltoallvChoice&) = default;
};

/// "library", "burst", "pairwise", "bruck", "ring<k>", "auto".
std::string alltoallv_name(const AlltoallvChoice& choice);
/// The inverse of alltoallv_name; throws ep::Error(kArgument) naming the text
/// for anything else (including "ring0" and "ring-1"). Local.
AlltoallvChoice parse_alltoallv_choice(std::string_view name);

/// What `auto` remembers for one communicator: the fastest algorithm per
/// size class. Belongs to one rank; every rank of the communicator must use
/// its own tuner in the same calls (force and reset on all ranks alike).
class AlltoallvTuner {
 public:
  /// Reads COLLECTIVES_ALLTOALLV (a name as parse_alltoallv_choice takes, or
  /// "auto" or unset for measuring); an unknown name throws ep::Error.
  AlltoallvTuner();

  /// Use `choice` for every size class instead of measuring (not kAuto).
  void force(const AlltoallvChoice& choice);
  /// Forgets the forced choice and every measured one.
  void reset();
  [[nodiscard]] const std::optional<AlltoallvChoice>& forced() const noexcept { return forced_; }
  /// The measured choice of a size class, if any.
  [[nodiscard]] std::optional<AlltoallvChoice> chosen(int size_class) const;
  void remember(int size_class, const AlltoallvChoice& choice);
  /// How many classes were measured since construction or reset().
  [[nodiscard]] int measurements() const noexcept { return measurements_; }

  /// The algorithms `auto` times on `ranks` ranks.
  [[nodiscard]] static std::vector<AlltoallvChoice> candidates(int ranks);

 private:
  std::optional<AlltoallvChoice> forced_;
  std::map<int, AlltoallvChoice> chosen_;
  int measurements_ = 0;
};

/// The size class of a largest block of `bytes`: 0 for empty, else
/// ceil(bit_width / 2), i.e. classes grow by factors of 4.
constexpr int alltoallv_size_class(std::size_t bytes) {
  return bytes == 0 ? 0 : (static_cast<int>(std::bit_width(bytes)) + 1) / 2;
}

struct AlltoallvOptions {
  AlltoallvAlgorithm algorithm = AlltoallvAlgorithm::kLibrary;
  int k = 4;                           ///< kRingK: partners per stage, >= 1
  AlltoallvTuner* tuner = nullptr;     ///< kAuto: required
  bool check = true;                   ///< agree on the arguments first (see above)
  std::size_t agreed_block_bytes = 0;  ///< kAuto without check: the largest block over
                                       ///< all ranks when every rank knows it (0: ask)
};

namespace detail {

enum AlltoallvProblem : long long {
  kFine = 0,
  kArrayLength,  // index: which array (0..3), value: its length
  kBadK,         // value: k
  kNegative,     // index: 0 send / 1 recv * n + peer, value: count
  kOutside,      // index as kNegative, value: displacement
  kNoTuner,
  kDisagree,  // index: 0 algorithm / 1 k / 2 size class (not compared), value: this rank's
  kMismatch,  // index: peer, value: recvcount; agreed[0]: the peer's sendcount
};

std::pair<ep::ErrorKind, std::string> describe_alltoallv_problem(const LocalCheck& c, int ranks);

/// Communicators up to this size check their arguments in one allreduce.
inline constexpr int kOneRoundRanks = 16;

/// Checks (see the file comment) and returns the agreed size class; in one
/// round up to `one_round_ranks` ranks (tests pass 0 for the other way).
template <Communicator C, class T>
int check_alltoallv(const C& comm, const alltoallv_algorithms::Exchange<T>& x,
                    const AlltoallvOptions& o, int one_round_ranks = kOneRoundRanks) {
  constexpr const char* kCall = "collectives::alltoallv";
  const int n = comm.size();
  const auto un = static_cast<std::size_t>(n);
  LocalCheck mine;
  std::size_t largest = 0;
  const std::span<const int> arrays[4] = {x.sendcounts, x.sdispls, x.recvcounts, x.rdispls};
  for (int a = 0; a < 4 && mine.code == kFine; ++a) {
    if (arrays[a].size() != un) mine = {kArrayLength, a, static_cast<long long>(arrays[a].size())};
  }
  if (mine.code == kFine && o.algorithm == AlltoallvAlgorithm::kRingK && o.k < 1) {
    mine = {kBadK, 0, o.k};
  }
  if (mine.code == kFine && o.algorithm == AlltoallvAlgorithm::kAuto && o.tuner == nullptr) {
    mine = {kNoTuner, 0, 0};
  }
  for (int side = 0; side < 2 && mine.code == kFine; ++side) {
    const auto counts = side == 0 ? x.sendcounts : x.recvcounts;
    const auto displs = side == 0 ? x.sdispls : x.rdispls;
    const std::size_t extent = side == 0 ? x.send.size() : x.recv.size();
    for (int j = 0; j < n && mine.code == kFine; ++j) {
      const int c = counts[static_cast<std::size_t>(j)];
      const int d = displs[static_cast<std::size_t>(j)];
      if (c < 0) {
        mine = {kNegative, side * n + j, c};
      } else if (d < 0 || static_cast<std::size_t>(d) + static_cast<std::size_t>(c) > extent) {
        mine = {kOutside, side * n + j, d};
      } else if (side == 0) {
        largest = std::max(largest, static_cast<std::size_t>(c) * sizeof(T));
      }
    }
  }
  mine.agreed[0] = static_cast<long long>(o.algorithm);
  mine.agreed[1] = o.algorithm == AlltoallvAlgorithm::kRingK ? o.k : 0;
  mine.agreed[2] = alltoallv_size_class(largest);
  // Up to kOneRoundRanks ranks, every rank's counts travel with its verdict
  // (2n more values per rank): one allreduce checks everything. Beyond, the
  // n^2 values would cost more than two more collectives of n values.
  const bool one_round = n <= one_round_ranks;
  std::vector<long long> counts;
  if (one_round) {
    counts.assign(2 * un, 0);
    if (mine.code != kArrayLength) {
      std::copy(x.sendcounts.begin(), x.sendcounts.end(), counts.begin());
      std::copy(x.recvcounts.begin(), x.recvcounts.end(), counts.begin() + n);
    }
  }
  std::vector<long long> slots;
  std::vector<LocalCheck> all;
  std::vector<long long> all_counts;
  gather_checks(comm, mine, counts, slots, all, all_counts);
  auto describe = [n](const LocalCheck& c) { return describe_alltoallv_problem(c, n); };
  throw_if_any(comm, kCall, all, describe);
  int size_class = 0;
  for (int r = 0; r < n; ++r) {
    const LocalCheck& c = all[static_cast<std::size_t>(r)];
    for (int i = 0; i < 2; ++i) {
      if (c.agreed[i] != all[0].agreed[i]) {
        all[static_cast<std::size_t>(r)] = {kDisagree, i, c.agreed[i], {all[0].agreed[i], 0, 0}};
        throw_if_any(comm, kCall, all, describe);
      }
    }
    size_class = std::max(size_class, static_cast<int>(c.agreed[2]));
  }

  // Every sendcount against its receiver's recvcount: from the counts every
  // rank now holds, or through one alltoall of counts and one more verdict.
  if (one_round) {
    // Rank r's sendcounts at all_counts[r * 2n], its recvcounts after them.
    const auto at = [&](int rank, int side, int peer) {
      return all_counts[static_cast<std::size_t>(rank) * 2 * un +
                        static_cast<std::size_t>(side) * un + static_cast<std::size_t>(peer)];
    };
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < n; ++j) {
        if (at(r, 1, j) != at(j, 0, r)) {
          all[static_cast<std::size_t>(r)] = {kMismatch, j, at(r, 1, j), {at(j, 0, r), 0, 0}};
          throw_if_any(comm, kCall, all, describe);
        }
      }
    }
    return size_class;
  }
  std::vector<int> incoming(un, 0);
  std::vector<int> ones(un, 1);
  std::vector<int> displs(un);
  for (int j = 0; j < n; ++j) displs[static_cast<std::size_t>(j)] = j;
  comm.library_alltoallv(x.sendcounts.data(), ones, displs, incoming.data(), ones, displs, MPI_INT);
  mine = {};
  for (int j = 0; j < n && mine.code == kFine; ++j) {
    const auto uj = static_cast<std::size_t>(j);
    if (incoming[uj] != x.recvcounts[uj]) mine = {kMismatch, j, x.recvcounts[uj], {incoming[uj]}};
  }
  all = gather_checks(comm, mine);
  throw_if_any(comm, kCall, all, describe);
  return size_class;
}

/// Runs one algorithm (not kAuto). Collective.
template <Communicator C, ep::HasDatatype T>
void run_alltoallv(const C& comm, const alltoallv_algorithms::Exchange<T>& x,
                   const AlltoallvChoice& choice,
                   alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  namespace algo = alltoallv_algorithms;
  switch (choice.algorithm) {
    case AlltoallvAlgorithm::kLibrary:
      comm.library_alltoallv(x.send.data(), x.sendcounts, x.sdispls, x.recv.data(), x.recvcounts,
                             x.rdispls, ep::datatype_of<T>());
      return;
    case AlltoallvAlgorithm::kBurst:
      algo::burst(comm, x, scratch);
      return;
    case AlltoallvAlgorithm::kPairwise:
      algo::pairwise(comm, x, scratch);
      return;
    case AlltoallvAlgorithm::kBruck:
      algo::bruck(comm, x, scratch);
      return;
    case AlltoallvAlgorithm::kRingK:
      algo::ring_k(comm, x, choice.k, scratch);
      return;
    case AlltoallvAlgorithm::kAuto:
      break;
  }
  throw ep::Error(ep::ErrorKind::kArgument, "collectives::alltoallv", comm.rank(),
                  "no algorithm to run for '" + alltoallv_name(choice) + "'");
}

/// `auto`: times every candidate on this exchange, slowest rank per
/// candidate, fastest candidate. Collective; every rank returns the same.
template <Communicator C, ep::HasDatatype T>
AlltoallvChoice measure_alltoallv(const C& comm, const alltoallv_algorithms::Exchange<T>& x,
                                  alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  // Rounds over all candidates, each candidate's best round: noise from
  // other jobs hits every candidate alike and inflates no minimum for long.
  constexpr int kRounds = 3;
  constexpr int kCallsPerRound = 2;
  const std::vector<AlltoallvChoice> candidates = AlltoallvTuner::candidates(comm.size());
  std::vector<double> seconds(candidates.size(), 1e300);
  for (const AlltoallvChoice& c : candidates) run_alltoallv(comm, x, c, scratch);  // warm-up
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const double start = MPI_Wtime();
      for (int i = 0; i < kCallsPerRound; ++i) run_alltoallv(comm, x, candidates[c], scratch);
      seconds[c] = std::min(seconds[c], MPI_Wtime() - start);
    }
  }
  comm.library_allreduce(MPI_IN_PLACE, seconds.data(), static_cast<int>(seconds.size()), MPI_DOUBLE,
                         MPI_MAX);
  const auto best = std::min_element(seconds.begin(), seconds.end()) - seconds.begin();
  return candidates[static_cast<std::size_t>(best)];
}

}  // namespace detail

/// Collective alltoallv over every rank of `comm`; see the file comment.
/// `scratch` is kept by the caller between calls (nothing is allocated once
/// it has seen the sizes); the overload without it keeps one per thread.
template <Communicator C, ep::HasDatatype T>
void alltoallv(const C& comm, std::span<const T> send, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<T> recv, std::span<const int> recvcounts,
               std::span<const int> rdispls, const AlltoallvOptions& options,
               alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  const alltoallv_algorithms::Exchange<T> x{send, sendcounts, sdispls, recv, recvcounts, rdispls};
  int size_class = -1;
  if (options.check) size_class = detail::check_alltoallv(comm, x, options);
  if (options.algorithm != AlltoallvAlgorithm::kAuto) {
    detail::run_alltoallv(comm, x, {options.algorithm, options.k}, scratch);
    return;
  }
  AlltoallvTuner& tuner = *options.tuner;
  if (tuner.forced()) {
    detail::run_alltoallv(comm, x, *tuner.forced(), scratch);
    return;
  }
  if (size_class < 0 && options.agreed_block_bytes > 0) {
    size_class = alltoallv_size_class(options.agreed_block_bytes);
  }
  if (size_class < 0) {
    std::size_t largest = 0;
    for (const int c : sendcounts) largest = std::max(largest, static_cast<std::size_t>(c));
    size_class = alltoallv_size_class(largest * sizeof(T));
    comm.library_allreduce(MPI_IN_PLACE, &size_class, 1, MPI_INT, MPI_MAX);
  }
  std::optional<AlltoallvChoice> choice = tuner.chosen(size_class);
  if (!choice) {
    choice = detail::measure_alltoallv(comm, x, scratch);
    tuner.remember(size_class, *choice);
  }
  detail::run_alltoallv(comm, x, *choice, scratch);
}

template <Communicator C, ep::HasDatatype T>
void alltoallv(const C& comm, std::span<const T> send, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<T> recv, std::span<const int> recvcounts,
               std::span<const int> rdispls, const AlltoallvOptions& options = {}) {
  thread_local alltoallv_algorithms::Scratch<T, typename C::Request> scratch;
  alltoallv(comm, send, sendcounts, sdispls, recv, recvcounts, rdispls, options, scratch);
}

}  // namespace collectives
