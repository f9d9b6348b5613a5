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
// Checks (options.check), three levels:
//
//   kArrivals (default): no collective of its own. Each rank checks its own
//     arguments (array lengths, negative counts, blocks outside their
//     buffers, k < 1, auto without a tuner, a block to itself whose
//     sendcount and recvcount differ) and each receiver checks what arrives
//     against its recvcounts:
//       - a rank whose own arguments are bad still takes part, so that nobody
//         waits for it: it sends empty blocks (Bruck: zero sizes, and it
//         still relays the other ranks' blocks; ring-k with k < 1: burst,
//         which posts everything at once and so fits any staging), receives
//         and discards what comes, then throws common::Error naming itself, the
//         argument and its value. Its peers that expected data from it throw
//         too (below); the others return.
//       - burst, pairwise, ring-k: every pair exchanges one message, empty
//         blocks included, and each receiver learns each message's size
//         (alltoallv_algorithms/exchange.hpp). A block whose size differs
//         from recvcounts throws on that receiver alone, once every request
//         of the call has completed: kTruncate when more arrived, kCount
//         when less, naming the sender and both counts. Its sender returns
//         normally, no message is left behind, the next call is unaffected.
//       - bruck carries its block sizes and checks them at its end: the same
//         errors on the receiver alone.
//       - library: on EpComm, ep::alltoallv verifies at its receivers: its
//         own error on the receiver and, in a process of several endpoints,
//         on that process's other endpoints too ("seen by ep rank r"). On
//         MPI (MpiComm, FunneledComm), MPI_Alltoallv does not verify:
//         MPICH 4.0 delivers wrong data without a word, Open MPI may abort
//         through the fatal error handler. There the call keeps the
//         agreement round of kAgreed.
//       - auto: its size class must be agreed anyway; one allreduce of two
//         ints carries it with the highest rank whose arguments are bad, so
//         a bad argument anywhere throws on every rank; a count mismatch is
//         found by the receivers as above. The call that measures a size
//         class runs the kAgreed round first (the candidates must not fail
//         halfway through the measurement).
//     What receivers cannot see: ranks that chose different algorithms or k
//     (as MPI cannot see ranks calling different collectives). Use kAgreed
//     when that is in doubt.
//   kAgreed: before any data moves, every rank learns every rank's verdict
//     on its own arguments, the algorithm and k are compared across ranks,
//     and every sendcount is compared with its receiver's recvcount. Up to
//     16 ranks that is one allreduce that carries every rank's counts with
//     its verdict; on more ranks (where the n^2 counts would cost more) the
//     verdicts go first (one allreduce), then the counts (one library
//     alltoall of ints), then the receivers' verdicts (one more allreduce).
//     Any problem throws the same common::Error on every rank, naming the
//     offending rank, argument and value.
//   kNone: nothing is checked: a caller that has checked its counts once (a
//     transposition plan, a benchmark's timed loop) and vouches for them.
//     Bad arguments are then undefined behaviour, as for MPI_Alltoallv.
// Every rank of a call must use the same level.
//
// `auto`: the size class is the largest block in bytes over all ranks,
// rounded to a power of 4 (agreed with the checks above, or under kNone from
// options.agreed_block_bytes, or by one extra allreduce). The first call of a
// class times every candidate (library, burst, pairwise, bruck, ring-k for
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
#include "common/datatype.hpp"
#include "common/error.hpp"

namespace collectives {

enum class AlltoallvAlgorithm { kLibrary, kBurst, kPairwise, kBruck, kRingK, kAuto };

/// How much of the arguments is checked, and by whom (see the file comment).
enum class AlltoallvCheck {
  kNone,      ///< nothing: bad arguments are undefined behaviour
  kArrivals,  ///< each rank its own arguments, each receiver what arrives
  kAgreed,    ///< one agreement round first; every rank throws the same error
};

/// An algorithm and, for ring-k, its k.
struct AlltoallvChoice {
  AlltoallvAlgorithm algorithm = AlltoallvAlgorithm::kLibrary;
  int k = 1;  ///< partners per stage (kRingK only)
  friend bool operator==(const AlltoallvChoice&, const AlltoallvChoice&) = default;
};

/// "library", "burst", "pairwise", "bruck", "ring<k>", "auto".
std::string alltoallv_name(const AlltoallvChoice& choice);
/// The inverse of alltoallv_name; throws common::Error(kArgument) naming the text
/// for anything else (including "ring0" and "ring-1"). Local.
AlltoallvChoice parse_alltoallv_choice(std::string_view name);

/// What `auto` remembers for one communicator: the fastest algorithm per
/// size class. Belongs to one rank; every rank of the communicator must use
/// its own tuner in the same calls (force and reset on all ranks alike).
class AlltoallvTuner {
 public:
  /// Reads COLLECTIVES_ALLTOALLV (a name as parse_alltoallv_choice takes, or
  /// "auto" or unset for measuring); an unknown name throws common::Error.
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
  int k = 4;                        ///< kRingK: partners per stage, >= 1
  AlltoallvTuner* tuner = nullptr;  ///< kAuto: required
  AlltoallvCheck check = AlltoallvCheck::kArrivals;
  std::size_t agreed_block_bytes = 0;  ///< kAuto under kNone: the largest block over
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
  kDisagree,      // index: 0 algorithm / 1 k / 2 size class (not compared), value: this rank's
  kMismatch,      // index: peer, value: recvcount; agreed[0]: the peer's sendcount
  kSelfMismatch,  // index: this rank, value: its recvcount for itself (checked locally)
};

std::pair<common::ErrorKind, std::string> describe_alltoallv_problem(const LocalCheck& c,
                                                                     int ranks);

/// Communicators up to this size check their arguments in one allreduce.
inline constexpr int kOneRoundRanks = 16;

/// This rank's (`me`) own arguments (no communication): the first problem, with
/// the algorithm, k and this rank's size class in `agreed`. `own_block`: also
/// its block to itself (kAgreed compares it with the other counts).
template <class T>
LocalCheck check_alltoallv_locally(int n, int me, const alltoallv_algorithms::Exchange<T>& x,
                                   const AlltoallvOptions& o, bool own_block) {
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
  // The own block never travels: no receiver could see a mismatch there.
  if (own_block && mine.code == kFine && x.send_count(me) != x.recv_count(me)) {
    mine = {kSelfMismatch, me, x.recv_count(me)};
  }
  mine.agreed[0] = static_cast<long long>(o.algorithm);
  mine.agreed[1] = o.algorithm == AlltoallvAlgorithm::kRingK ? o.k : 0;
  mine.agreed[2] = alltoallv_size_class(largest);
  return mine;
}

/// kAgreed's round (see the file comment) and returns the agreed size class;
/// in one round up to `one_round_ranks` ranks (tests pass 0 for the other way).
template <Communicator C, class T>
int check_alltoallv(const C& comm, const alltoallv_algorithms::Exchange<T>& x,
                    const AlltoallvOptions& o, int one_round_ranks = kOneRoundRanks) {
  constexpr const char* kCall = "collectives::alltoallv";
  const int n = comm.size();
  const auto un = static_cast<std::size_t>(n);
  LocalCheck mine = check_alltoallv_locally(n, comm.rank(), x, o, false);
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
template <Communicator C, common::HasDatatype T>
void run_alltoallv(const C& comm, const alltoallv_algorithms::Exchange<T>& x,
                   const AlltoallvChoice& choice,
                   alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  namespace algo = alltoallv_algorithms;
  switch (choice.algorithm) {
    case AlltoallvAlgorithm::kLibrary:
      comm.library_alltoallv(x.send.data(), x.sendcounts, x.sdispls, x.recv.data(), x.recvcounts,
                             x.rdispls, common::datatype_of<T>());
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
  throw common::Error(common::ErrorKind::kArgument, "collectives::alltoallv", comm.rank(),
                      "no algorithm to run for '" + alltoallv_name(choice) + "'");
}

/// `auto`: times every candidate on this exchange, slowest rank per
/// candidate, fastest candidate. Collective; every rank returns the same.
template <Communicator C, common::HasDatatype T>
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

/// Whether the library algorithm verifies at its receivers on this backend
/// (ep::alltoallv does; MPI_Alltoallv does not, see the file comment).
template <Communicator C>
inline constexpr bool kLibraryVerifies = C::backend() == std::string_view("ep");

/// Runs `choice` with the receivers verifying what arrives, and throws the
/// first mismatch on the receiver that saw it. The library algorithm on MPI
/// runs kAgreed's round first instead. Collective.
template <Communicator C, common::HasDatatype T>
void run_verified(const C& comm, alltoallv_algorithms::Exchange<T> x, const AlltoallvChoice& choice,
                  const AlltoallvOptions& o,
                  alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  x.verify = true;
  if (choice.algorithm == AlltoallvAlgorithm::kLibrary && !kLibraryVerifies<C>) {
    (void)check_alltoallv(comm, x, o);
    x.verify = false;
  }
  scratch.mismatch.reset();
  run_alltoallv(comm, x, choice, scratch);
  alltoallv_algorithms::throw_if_arrivals_differ(comm.rank(), scratch);
}

/// Throws this rank's (`rank` of `ranks`) own problem `mine` (kArrivals). Local.
[[noreturn]] inline void throw_own_problem(int rank, int ranks, const LocalCheck& mine) {
  const auto [kind, text] = describe_alltoallv_problem(mine, ranks);
  throw common::Error(kind, "collectives::alltoallv", rank,
                      "rank " + std::to_string(rank) + " passed " + text);
}

/// kArrivals on a rank whose own arguments are bad (`mine`): takes part in
/// the exchange with empty blocks, discards what arrives, then throws its
/// own error. Collective (the other ranks run `options` normally).
template <Communicator C, common::HasDatatype T>
[[noreturn]] void take_part_and_throw(
    const C& comm, const LocalCheck& mine, const AlltoallvOptions& options,
    alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  const std::vector<int> zeros(static_cast<std::size_t>(comm.size()), 0);
  const alltoallv_algorithms::Exchange<T> empty{{}, zeros, zeros, {}, zeros, zeros, true};
  AlltoallvChoice choice{options.algorithm, options.k};
  // Burst posts every message at once: it fits whatever staging the other
  // ranks' k gives.
  if (choice.algorithm == AlltoallvAlgorithm::kRingK && choice.k < 1) {
    choice = {AlltoallvAlgorithm::kBurst, 1};
  }
  try {
    scratch.mismatch.reset();
    run_alltoallv(comm, empty, choice, scratch);
  } catch (const common::Error&) {
    // The blocks the other ranks sent it: its own error says more.
  }
  throw_own_problem(comm.rank(), comm.size(), mine);
}

/// The call once the arguments are agreed (kAgreed, with the size class it
/// found) or trusted (kNone, size_class -1): no verification. Collective.
template <Communicator C, common::HasDatatype T>
void run_trusted(const C& comm, const alltoallv_algorithms::Exchange<T>& x,
                 const AlltoallvOptions& options, int size_class,
                 alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  if (options.algorithm != AlltoallvAlgorithm::kAuto) {
    run_alltoallv(comm, x, {options.algorithm, options.k}, scratch);
    return;
  }
  AlltoallvTuner& tuner = *options.tuner;
  if (tuner.forced()) {
    run_alltoallv(comm, x, *tuner.forced(), scratch);
    return;
  }
  if (size_class < 0 && options.agreed_block_bytes > 0) {
    size_class = alltoallv_size_class(options.agreed_block_bytes);
  }
  if (size_class < 0) {
    std::size_t largest = 0;
    for (const int c : x.sendcounts) largest = std::max(largest, static_cast<std::size_t>(c));
    size_class = alltoallv_size_class(largest * sizeof(T));
    comm.library_allreduce(MPI_IN_PLACE, &size_class, 1, MPI_INT, MPI_MAX);
  }
  std::optional<AlltoallvChoice> choice = tuner.chosen(size_class);
  if (!choice) {
    choice = measure_alltoallv(comm, x, scratch);
    tuner.remember(size_class, *choice);
  }
  run_alltoallv(comm, x, *choice, scratch);
}

/// `auto` under kArrivals: one allreduce agrees on the size class and on
/// whether any rank's arguments are bad; a measuring call agrees on every
/// argument first (kAgreed), the others verify at the receivers. Collective.
template <Communicator C, common::HasDatatype T>
void run_auto_verified(const C& comm, const alltoallv_algorithms::Exchange<T>& x,
                       const AlltoallvOptions& options, const LocalCheck& mine,
                       alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  int agreed[2] = {static_cast<int>(mine.agreed[2]), mine.code == kFine ? 0 : comm.rank() + 1};
  comm.library_allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT, MPI_MAX);
  if (mine.code != kFine) throw_own_problem(comm.rank(), comm.size(), mine);
  if (agreed[1] != 0) {
    throw common::Error(common::ErrorKind::kArgument, "collectives::alltoallv", comm.rank(),
                        "rank " + std::to_string(agreed[1] - 1) +
                            " passed bad arguments (its own error names them)");
  }
  AlltoallvTuner& tuner = *options.tuner;
  std::optional<AlltoallvChoice> choice = tuner.forced();
  if (!choice) choice = tuner.chosen(agreed[0]);
  if (choice) {
    run_verified(comm, x, *choice, options, scratch);
    return;
  }
  run_trusted(comm, x, options, check_alltoallv(comm, x, options), scratch);
}

}  // namespace detail

/// Collective alltoallv over every rank of `comm`; see the file comment.
/// `scratch` is kept by the caller between calls (nothing is allocated once
/// it has seen the sizes); the overload without it keeps one per thread.
template <Communicator C, common::HasDatatype T>
void alltoallv(const C& user_comm, std::span<const T> send, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<T> recv, std::span<const int> recvcounts,
               std::span<const int> rdispls, const AlltoallvOptions& options,
               alltoallv_algorithms::Scratch<T, typename C::Request>& scratch) {
  // Every message, check and algorithm below goes over the kernels' own
  // communicator: the caller's tags stay the caller's.
  const C& comm = user_comm.kernel_comm();
  const alltoallv_algorithms::Exchange<T> x{send,       sendcounts, sdispls, recv,
                                            recvcounts, rdispls,    false};
  switch (options.check) {
    case AlltoallvCheck::kNone:
      detail::run_trusted(comm, x, options, -1, scratch);
      return;
    case AlltoallvCheck::kAgreed:
      detail::run_trusted(comm, x, options, detail::check_alltoallv(comm, x, options), scratch);
      return;
    case AlltoallvCheck::kArrivals:
      break;
  }
  const detail::LocalCheck mine =
      detail::check_alltoallv_locally(comm.size(), comm.rank(), x, options, true);
  if (options.algorithm == AlltoallvAlgorithm::kAuto) {
    detail::run_auto_verified(comm, x, options, mine, scratch);
    return;
  }
  if (options.algorithm == AlltoallvAlgorithm::kLibrary && !detail::kLibraryVerifies<C>) {
    // MPI_Alltoallv: the agreement round (the file comment says why).
    detail::run_trusted(comm, x, options, detail::check_alltoallv(comm, x, options), scratch);
    return;
  }
  if (mine.code != detail::kFine) detail::take_part_and_throw(comm, mine, options, scratch);
  detail::run_verified(comm, x, {options.algorithm, options.k}, options, scratch);
}

template <Communicator C, common::HasDatatype T>
void alltoallv(const C& comm, std::span<const T> send, std::span<const int> sendcounts,
               std::span<const int> sdispls, std::span<T> recv, std::span<const int> recvcounts,
               std::span<const int> rdispls, const AlltoallvOptions& options = {}) {
  thread_local alltoallv_algorithms::Scratch<T, typename C::Request> scratch;
  alltoallv(comm, send, sendcounts, sdispls, recv, recvcounts, rdispls, options, scratch);
}

}  // namespace collectives
