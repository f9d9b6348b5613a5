// A user's receive with MPI_ANY_SOURCE and MPI_ANY_TAG stays posted on a
// communicator while every kernel of collectives/ runs on that communicator
// (every alltoallv algorithm, every allreduce algorithm, a halo exchange and
// a transposition), and afterwards gets exactly the user's message: source,
// tag and payload. The kernels send only on communicators of their own
// (communicator.hpp, "The kernels' own messages"), so no user tag is theirs.
//
// Also: the kernels' communicator is one duplicate per user communicator,
// found again by every later call and by every other wrapper of it, and an
// MPI communicator the user frees after a kernel ran on it takes its
// duplicate along (MPI_Comm_free runs the attribute's delete callback).
//
// Were a kernel's message matched by the user's receive, that kernel would
// wait forever for it. A deadline therefore notes the failure with the hang
// watchdog (tests/support/hang_watchdog.hpp), which ends the job with that
// text instead of leaving it to ctest's timeout.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "backends.hpp"
#include "collectives/allreduce.hpp"
#include "collectives/alltoallv.hpp"
#include "collectives/ep_comm.hpp"
#include "collectives/halo.hpp"
#include "collectives/transpose.hpp"
#include "common/error.hpp"
#include "ep/comm_management.hpp"
#include "support/hang_watchdog.hpp"

namespace {

using collectives::AllreduceAlgorithm;
using collectives::AlltoallvAlgorithm;
using collectives_test::run_on_backends;

// The tag the kernels reserved on the caller's communicator before they had
// communicators of their own: a user may now send with it too.
constexpr int kUserTag = 32760;
constexpr int kPayload = 4711;
constexpr auto kKernelDeadline = std::chrono::seconds(20);

/// Notes a failure with the hang watchdog when it is not destroyed within
/// `limit` (see the file comment). One per endpoint; its thread only waits.
class Deadline {
 public:
  Deadline(std::string what, std::chrono::seconds limit)
      : thread_([this, what = std::move(what), limit] {
          std::unique_lock lock(mutex_);
          if (!ended_cv_.wait_for(lock, limit, [this] { return ended_; })) {
            ep_test::watchdog_note_failure(what + " still running after " +
                                           std::to_string(limit.count()) + " s");
          }
        }) {}
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
  ~Deadline() {
    {
      const std::lock_guard lock(mutex_);
      ended_ = true;
    }
    ended_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ended_cv_;
  bool ended_ = false;
  std::thread thread_;  // last: it reads the members above
};

// The user's receive, tested without blocking: whether it completed, and
// with which source and tag.
struct Arrival {
  bool done = false;
  int source = -1;
  int tag = -1;
};

Arrival test_receive(ep::Request& request) {
  ep::Status status;
  Arrival a;
  a.done = ep::test(request, &status);
  if (a.done) {
    a.source = status.source;
    a.tag = status.tag;
  }
  return a;
}

Arrival test_receive(MPI_Request& request) {
  MPI_Status status{};
  int flag = 0;
  common::check_mpi(MPI_Test(&request, &flag, &status), "test_any_tag (MPI_Test)", -1);
  Arrival a;
  a.done = flag != 0;
  if (a.done) {
    a.source = status.MPI_SOURCE;
    a.tag = status.MPI_TAG;
  }
  return a;
}

// Every alltoallv algorithm: rank r sends r * 1000 + j to rank j (j + 1 values).
template <class C>
void run_alltoallvs(const C& comm) {
  const int n = comm.size();
  const int me = comm.rank();
  std::vector<int> sendcounts(static_cast<std::size_t>(n));
  std::vector<int> recvcounts(static_cast<std::size_t>(n), me + 1);
  std::iota(sendcounts.begin(), sendcounts.end(), 1);
  std::vector<int> sdispls(static_cast<std::size_t>(n));
  std::vector<int> rdispls(static_cast<std::size_t>(n));
  std::exclusive_scan(sendcounts.begin(), sendcounts.end(), sdispls.begin(), 0);
  std::exclusive_scan(recvcounts.begin(), recvcounts.end(), rdispls.begin(), 0);
  std::vector<int> send(static_cast<std::size_t>(sdispls.back() + sendcounts.back()));
  for (int j = 0; j < n; ++j) {
    const auto uj = static_cast<std::size_t>(j);
    std::fill_n(send.begin() + sdispls[uj], sendcounts[uj], me * 1000 + j);
  }
  const std::array algorithms{AlltoallvAlgorithm::kLibrary, AlltoallvAlgorithm::kBurst,
                              AlltoallvAlgorithm::kPairwise, AlltoallvAlgorithm::kBruck,
                              AlltoallvAlgorithm::kRingK};
  for (const AlltoallvAlgorithm algorithm : algorithms) {
    std::vector<int> recv(static_cast<std::size_t>(n) * static_cast<std::size_t>(me + 1), -1);
    collectives::alltoallv(comm, std::span<const int>(send), sendcounts, sdispls,
                           std::span<int>(recv), recvcounts, rdispls,
                           {.algorithm = algorithm, .k = 2});
    for (int j = 0; j < n; ++j) {
      const auto from = recv.begin() + rdispls[static_cast<std::size_t>(j)];
      EXPECT_EQ(std::count(from, from + me + 1, j * 1000 + me), me + 1)
          << "alltoallv " << static_cast<int>(algorithm) << " rank " << me << " from " << j;
    }
  }
}

template <class C>
void run_allreduces(const C& comm) {
  const int n = comm.size();
  const std::array algorithms{AllreduceAlgorithm::kLibrary, AllreduceAlgorithm::kRecursiveDoubling,
                              AllreduceAlgorithm::kRecursiveK};
  for (const AllreduceAlgorithm algorithm : algorithms) {
    std::array<long long, 3> v{comm.rank(), 1, 2};
    collectives::allreduce(comm, std::span<long long>(v), MPI_SUM,
                           {.algorithm = algorithm, .radix = 3});
    EXPECT_EQ(v[0], static_cast<long long>(n) * (n - 1) / 2) << "allreduce on rank " << comm.rank();
    EXPECT_EQ(v[2], 2LL * n);
  }
}

template <class C>
void run_halo(const C& comm) {
  const int n = comm.size();
  collectives::HaloSpec spec;
  spec.decomposition = collectives::Decomposition::even(2 * n, 4, n, 1, true, false);
  for (const auto algorithm :
       {collectives::HaloAlgorithm::kDirect, collectives::HaloAlgorithm::kTwoSweep}) {
    spec.algorithm = algorithm;
    collectives::HaloPlan plan(comm, spec);
    std::vector<double> u(plan.field_elements(1), comm.rank());
    plan.exchange({collectives::halo_field<double>(u, 1)});
    // Periodic in x: the west halo of the first interior row mirrors the
    // western neighbour's last column, whose value is that rank's number.
    const int west = (comm.rank() + n - 1) % n;
    EXPECT_EQ(u[static_cast<std::size_t>(plan.nx() + 2)], west) << "halo on rank " << comm.rank();
  }
}

template <class C>
void run_transpose(const C& comm) {
  collectives::TransposePlan<C, double> plan(comm, {6, 6, 6, comm.size(), 1},
                                             {.algorithm = AlltoallvAlgorithm::kPairwise});
  std::vector<double> grid(plan.local_size(collectives::Space::kGrid));
  std::iota(grid.begin(), grid.end(), 100.0 * comm.rank());
  std::vector<double> spectral(plan.local_size(collectives::Space::kSpectral));
  std::vector<double> back(grid.size(), -1.0);
  plan.forward(grid, spectral);
  plan.backward(spectral, back);
  EXPECT_EQ(back, grid) << "transpose round trip on rank " << comm.rank();
}

template <class C>
void check_any_tag(const C& comm) {
  const int receiver = 0;
  const int sender = comm.size() - 1;
  const Deadline deadline(std::string(C::backend()) + " rank " + std::to_string(comm.rank()) +
                              ": the kernels (rank 0's MPI_ANY_TAG receive has presumably taken "
                              "one of their messages) are",
                          kKernelDeadline);
  std::array<int, 2> got{-1, -1};
  typename C::Request request{};
  if (comm.rank() == receiver) {
    request = comm.irecv(got.data(), 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG);
  }
  run_alltoallvs(comm);
  run_allreduces(comm);
  run_halo(comm);
  run_transpose(comm);

  Arrival arrival;
  if (comm.rank() == receiver) {
    arrival = test_receive(request);
    EXPECT_FALSE(arrival.done) << "the MPI_ANY_TAG receive completed before the user's send, with "
                               << "tag " << arrival.tag << " from rank " << arrival.source;
  }
  // The user's message goes only after the receiver has looked (a barrier).
  int ranks = 1;
  comm.library_allreduce(MPI_IN_PLACE, &ranks, 1, MPI_INT, MPI_SUM);
  EXPECT_EQ(ranks, comm.size());
  std::vector<typename C::Request> sends;
  const std::array<int, 2> message{kPayload, sender};
  if (comm.rank() == sender) {
    sends.push_back(comm.isend(message.data(), 2, MPI_INT, receiver, kUserTag));
  }
  if (comm.rank() == receiver) {
    while (!arrival.done) {
      std::this_thread::yield();
      arrival = test_receive(request);
    }
    EXPECT_EQ(arrival.tag, kUserTag);
    EXPECT_EQ(arrival.source, sender);
    EXPECT_EQ(got[0], kPayload);
    EXPECT_EQ(got[1], sender);
  }
  comm.wait_all(std::span<typename C::Request>(sends));
}

int relation(const MPI_Comm& a, const MPI_Comm& b) {
  int result = MPI_UNEQUAL;
  common::check_mpi(MPI_Comm_compare(a, b, &result), "test_any_tag (MPI_Comm_compare)", -1);
  return result;
}
int relation(const ep::Communicator& a, const ep::Communicator& b) { return ep::compare(a, b); }

template <class C>
void check_kernel_comm(const C& comm) {
  const C& kernel = comm.kernel_comm();
  EXPECT_FALSE(comm.is_private());
  EXPECT_TRUE(kernel.is_private());
  EXPECT_EQ(kernel.rank(), comm.rank());
  EXPECT_EQ(kernel.size(), comm.size());
  // A duplicate: the same ranks, matching of its own.
  EXPECT_EQ(relation(comm.get(), kernel.get()), MPI_CONGRUENT);
  // Found again: by this wrapper, by a fresh wrapper of the same handle, and
  // a private communicator is its own.
  EXPECT_EQ(relation(comm.kernel_comm().get(), kernel.get()), MPI_IDENT);
  using Base =
      collectives::BasicComm<std::conditional_t<C::backend() == std::string_view("ep"),
                                                collectives::EpBackend, collectives::MpiBackend>>;
  EXPECT_EQ(relation(Base(comm.get()).kernel_comm().get(), kernel.get()), MPI_IDENT);
  EXPECT_EQ(relation(kernel.kernel_comm().get(), kernel.get()), MPI_IDENT);
  const C part = comm.private_split(comm.rank() % 2, comm.rank());
  EXPECT_TRUE(part.is_private());
  EXPECT_EQ(relation(part.kernel_comm().get(), part.get()), MPI_IDENT);
}

TEST(CollectivesAnyTag, KernelCommIsOneCachedDuplicate) {
  run_on_backends([](const auto& comm) { check_kernel_comm(comm); });
}

TEST(CollectivesAnyTag, UserFreesAnMpiCommunicatorAfterAKernelRan) {
  const Deadline deadline("MPI_Comm_free after a kernel", kKernelDeadline);
  for (int round = 0; round < 3; ++round) {
    MPI_Comm mine = MPI_COMM_NULL;
    common::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &mine), "test_any_tag (MPI_Comm_dup)", -1);
    {
      const collectives::MpiComm comm(mine);
      std::array<int, 1> v{1};
      collectives::allreduce(comm, std::span<int>(v), MPI_SUM,
                             {.algorithm = AllreduceAlgorithm::kRecursiveDoubling});
      EXPECT_EQ(v[0], comm.size());
      EXPECT_TRUE(comm.kernel_comm().is_private());
    }
    // Runs the delete callback, which frees the kernels' duplicate.
    EXPECT_EQ(MPI_Comm_free(&mine), MPI_SUCCESS);
  }
}

TEST(CollectivesAnyTag, AnyTagReceiveGetsOnlyTheUserMessageWhileKernelsRun) {
  run_on_backends([](const auto& comm) { check_any_tag(comm); });
}

}  // namespace
