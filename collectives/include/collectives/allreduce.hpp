// Allreduce for Krylov solvers and global diagnostics: the library's own,
// recursive doubling, and recursive-k (k-nomial) with any radix k >= 2.
//
//   std::vector<double> dots = {r_dot_r, r_dot_z};
//   collectives::allreduce(comm, std::span<double>(dots), MPI_SUM,
//                          {.algorithm = collectives::AllreduceAlgorithm::kRecursiveK, .radix =
//                          8});
//
// Recursive-k over n ranks, m = k^p the largest power of k <= n
// (docs/collectives.md has a picture):
//   pre-stage   rank r >= m sends its vector to r mod m ("folds in");
//   p rounds    in round t (distance k^t) the k ranks that differ only in
//               base-k digit t of their rank exchange their whole vectors and
//               each combines all k of them in the same order;
//   post-stage  rank j < m sends the result to j + m, j + 2m, ... < n.
// Messages: (k-1) * p + 2 * [n > m] vector-sized rounds; latency term
// p + 2*[n > m] stages, which is what makes k > 2 pay off at scale.
//
// Combination order (doubles): every rank ends with the same bits. With
// fold(v_0, ..., v_q) = (...((v_0 op v_1) op v_2) ... op v_q):
//   a_j   = fold(x_j, x_{j+m}, x_{j+2m}, ...)          j < m (pre-stage)
//   V_0   = a,  V_{t+1}(g) = fold(V_t(g), V_t(g + k^t), ..., V_t(g + (k-1) k^t))
//   result = V_p(0)
// (for MPI_SUM and MPI_PROD the two operands of each op may be swapped, which
// IEEE arithmetic makes bit-identical; MPI_MIN/MPI_MAX may return either of
// +0 and -0 when both occur). tests/collectives/test_allreduce.cpp checks
// this order bit for bit. For integers every order gives the library's result.
//
// Collective over every rank of `comm`; in place. The radix, the algorithm
// and the vector length must be the same on every rank, as the count of
// MPI_Allreduce must (not checked: a check would cost a second allreduce per
// call, and the Krylov solvers call this twice per iteration). A radix below
// 2 throws common::Error(kArgument) naming it on every rank that passed it.
// Thread safety: as the communicator (an EpComm on its own thread; a
// FunneledComm from the master thread, whose team combines the vectors).
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/detail/copy_blocks.hpp"
#include "collectives/detail/local_reduce.hpp"
#include "collectives/detail/tags.hpp"
#include "common/datatype.hpp"
#include "common/enum_names.hpp"
#include "common/error.hpp"

namespace collectives {

enum class AllreduceAlgorithm { kLibrary, kRecursiveDoubling, kRecursiveK };

struct AllreduceOptions {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kLibrary;
  int radix = 4;  ///< k of kRecursiveK (kRecursiveDoubling is k = 2)
};

/// "library", "recdbl", "reck<k>": the benchmark's name of an algorithm.
inline constexpr auto kAllreduceAlgorithmNames =
    common::enum_names<AllreduceAlgorithm>({{AllreduceAlgorithm::kLibrary, "library"},
                                            {AllreduceAlgorithm::kRecursiveDoubling, "recdbl"},
                                            {AllreduceAlgorithm::kRecursiveK, "reck"}});

inline std::string allreduce_name(const AllreduceOptions& options) {
  std::string name = common::enum_name(kAllreduceAlgorithmNames, options.algorithm, "?");
  if (options.algorithm == AllreduceAlgorithm::kRecursiveK) name += std::to_string(options.radix);
  return name;
}

namespace detail {

/// The largest power of k not above n (n >= 1, k >= 2) and its exponent.
struct PowerBelow {
  int m = 1;
  int p = 0;
};
inline PowerBelow largest_power_at_most(int n, int k) {
  PowerBelow r;
  while (static_cast<long long>(r.m) * k <= n) {
    r.m *= k;
    ++r.p;
  }
  return r;
}

template <Communicator C, common::HasDatatype T>
void recursive_k_allreduce(const C& user_comm, std::span<T> inout, MPI_Op op, int k) {
  const int n = user_comm.size();
  const int me = user_comm.rank();
  const int count = common::count_of(inout.size(), "collectives::allreduce", me);
  if (n == 1 || count == 0) return;  // the same on every rank (the count must be)
  // The vectors travel on the kernels' own communicator (communicator.hpp).
  const C& comm = user_comm.kernel_comm();
  const auto len = static_cast<std::size_t>(count);
  const std::span<const T> mine(inout);
  const auto [m, p] = largest_power_at_most(n, k);

  // One slot per partner of a round; reused between calls of this thread.
  thread_local std::vector<T> scratch;
  thread_local std::vector<std::size_t> chunks;
  std::vector<typename C::Request> requests;
  requests.reserve(static_cast<std::size_t>(k));
  auto slot = [&](std::size_t i) { return std::span<T>(scratch.data() + i * len, len); };

  if (me >= m) {  // extra rank: fold in, then wait for the result
    requests.push_back(isend(comm, mine, me % m, kAllreduceTag));
    comm.wait_all(requests);
    requests.clear();
    requests.push_back(irecv(comm, inout, me % m, kAllreduceTag));
    comm.wait_all(requests);
    return;
  }

  const int extras = (n - 1 - me) / m;  // ranks me + m, me + 2m, ... < n
  const int slots = std::max(extras, k - 1);
  if (scratch.size() < static_cast<std::size_t>(slots) * len) {
    scratch.resize(static_cast<std::size_t>(slots) * len);
  }

  // Pre-stage: a_me = fold(x_me, x_{me+m}, ...).
  if (extras > 0) {
    for (int e = 0; e < extras; ++e) {
      requests.push_back(
          irecv(comm, slot(static_cast<std::size_t>(e)), me + (e + 1) * m, kAllreduceTag));
    }
    comm.wait_all(requests);
    requests.clear();
    for (int e = 0; e < extras; ++e) {
      local_reduce(comm, std::span<const T>(slot(static_cast<std::size_t>(e))), inout, op);
    }
  }

  // Rounds: the k members of my group in digit order; mine is digit d.
  for (int t = 0, dist = 1; t < p; ++t, dist *= k) {
    const int d = (me / dist) % k;
    const int base = me - d * dist;
    for (int e = 0, s = 0; e < k; ++e) {
      if (e == d) continue;
      requests.push_back(
          irecv(comm, slot(static_cast<std::size_t>(s++)), base + e * dist, kAllreduceTag));
    }
    for (int e = 0; e < k; ++e) {
      if (e != d) {
        requests.push_back(isend(comm, mine, base + e * dist, kAllreduceTag));
      }
    }
    comm.wait_all(requests);
    requests.clear();
    // fold(v_0, ..., v_{k-1}); v_d is inout, the others slots in digit order.
    auto member = [&](int e) {
      return e == d ? inout : slot(static_cast<std::size_t>(e < d ? e : e - 1));
    };
    std::span<T> acc = member(0);
    for (int e = 1; e < k; ++e) {
      std::span<T> next = member(e);
      local_reduce(comm, std::span<const T>(acc), next, op);  // next = next op acc
      acc = next;
    }
    if (acc.data() != inout.data()) {
      const BlockCopy<T> copy{acc.data(), inout.data(), len};
      copy_blocks(comm, std::span<const BlockCopy<T>>(&copy, 1), chunks);
    }
  }

  // Post-stage: the result back to the ranks folded in.
  for (int e = 0; e < extras; ++e) {
    requests.push_back(isend(comm, mine, me + (e + 1) * m, kAllreduceTag));
  }
  comm.wait_all(requests);
}

}  // namespace detail

/// In-place allreduce of `inout` over every rank of `comm` with `op`; see the
/// file comment for the algorithms, the combination order and the rules.
template <Communicator C, common::HasDatatype T>
void allreduce(const C& comm, std::span<T> inout, MPI_Op op, const AllreduceOptions& options = {}) {
  constexpr const char* kCall = "collectives::allreduce";
  switch (options.algorithm) {
    case AllreduceAlgorithm::kLibrary:
      comm.library_allreduce(MPI_IN_PLACE, inout.data(),
                             common::count_of(inout.size(), kCall, comm.rank()),
                             common::datatype_of<T>(), op);
      return;
    case AllreduceAlgorithm::kRecursiveDoubling:
      detail::recursive_k_allreduce(comm, inout, op, 2);
      return;
    case AllreduceAlgorithm::kRecursiveK:
      if (options.radix < 2) {
        throw common::Error(
            common::ErrorKind::kArgument, kCall, comm.rank(),
            "radix " + std::to_string(options.radix) + " of recursive-k is below 2");
      }
      detail::recursive_k_allreduce(comm, inout, op, options.radix);
      return;
  }
  throw common::Error(common::ErrorKind::kArgument, kCall, comm.rank(), "unknown algorithm");
}

}  // namespace collectives
