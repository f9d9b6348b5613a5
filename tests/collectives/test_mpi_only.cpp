// The kernels of collectives/ on MpiComm and FunneledComm in a program that
// links collectives_mpi, common and MPI only: no endpoint runtime (the link
// of this executable is the check; see tests/collectives/CMakeLists.txt).
// Allreduce (the library's, recursive doubling, recursive-k) with exact
// integer sums, and halo exchanges checked cell by cell against the gathered
// global field. Its own main: MPI_THREAD_FUNNELED is all a funneled program
// asks of MPI, and every rank's result is agreed before the exit code.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/alltoallv.hpp"
#include "collectives/communicator.hpp"
#include "collectives/halo.hpp"
#include "collectives/self_comm.hpp"
#include "collectives/transpose.hpp"
#include "halo_reference.hpp"

namespace {

using collectives::AllreduceAlgorithm;
using collectives::AllreduceOptions;
using collectives::HaloAlgorithm;
using collectives::HaloSpec;

template <class C>
void check_allreduce(const C& comm) {
  const std::vector<AllreduceOptions> algorithms = {{AllreduceAlgorithm::kLibrary, 0},
                                                    {AllreduceAlgorithm::kRecursiveDoubling, 0},
                                                    {AllreduceAlgorithm::kRecursiveK, 2},
                                                    {AllreduceAlgorithm::kRecursiveK, 3}};
  const int n = comm.size();
  for (const AllreduceOptions& options : algorithms) {
    std::vector<long long> values(37);
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = static_cast<long long>(comm.rank() + 1) * static_cast<long long>(i + 1);
    }
    collectives::allreduce(comm, std::span<long long>(values), MPI_SUM, options);
    const long long ranks_sum = static_cast<long long>(n) * (n + 1) / 2;
    for (std::size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(values[i], ranks_sum * static_cast<long long>(i + 1))
          << comm.backend() << " " << collectives::allreduce_name(options) << " rank "
          << comm.rank() << " element " << i;
    }
  }
}

double cell_value(int gi, int gj, int k) { return 100000.0 * k + 1000.0 * gj + gi + 0.5; }

template <class C>
void check_halo(const C& comm, HaloAlgorithm algorithm) {
  constexpr int kLevels = 2;
  constexpr double kUntouched = -1.0;
  HaloSpec spec;
  spec.decomposition =
      collectives::Decomposition::even(6 * comm.size(), 5, comm.size(), 1, true, true);
  spec.width = 2;
  spec.stencil = collectives::Stencil::kNinePoint;
  spec.algorithm = algorithm;
  collectives::HaloPlan plan(comm, spec);
  const auto& d = spec.decomposition;
  const int w = spec.width;
  const int row = plan.nx() + 2 * w;
  const int plane = row * (plan.ny() + 2 * w);
  std::vector<double> u(plan.field_elements(kLevels), kUntouched);
  std::vector<double> global(static_cast<std::size_t>(d.ni) * d.nj * kLevels, 0.0);
  for (int k = 0; k < kLevels; ++k) {
    for (int j = 0; j < plan.ny(); ++j) {
      for (int i = 0; i < plan.nx(); ++i) {
        const int gi = plan.x0() + i;
        const int gj = plan.y0() + j;
        u[static_cast<std::size_t>(k * plane + (j + w) * row + i + w)] = cell_value(gi, gj, k);
        global[static_cast<std::size_t>((k * d.nj + gj) * d.ni + gi)] = cell_value(gi, gj, k);
      }
    }
  }
  comm.library_allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(global.size()), MPI_DOUBLE,
                         MPI_SUM);
  const std::vector<double> want = collectives_test::expected_field(
      spec, global, u, plan.nx(), plan.ny(), plan.x0(), plan.y0(), kLevels, 0.0);
  plan.exchange({collectives::halo_field<double>(u, kLevels)});
  int wrong = 0;
  for (std::size_t c = 0; c < u.size(); ++c) {
    if (u[c] != want[c] && ++wrong <= 3) {
      ADD_FAILURE() << comm.backend() << " " << collectives::halo_algorithm_name(algorithm)
                    << " rank " << comm.rank() << " cell " << c << ": got " << u[c] << ", want "
                    << want[c];
    }
  }
}

TEST(CollectivesWithoutEndpoints, AllreduceOnMpiAndFunneled) {
  check_allreduce(collectives::MpiComm(MPI_COMM_WORLD));
  check_allreduce(collectives::FunneledComm(MPI_COMM_WORLD, omp_get_max_threads()));
}

TEST(CollectivesWithoutEndpoints, HaloOnMpiAndFunneled) {
  for (const HaloAlgorithm algorithm :
       {HaloAlgorithm::kTwoSweep, HaloAlgorithm::kNeighbor, HaloAlgorithm::kDirect}) {
    check_halo(collectives::MpiComm(MPI_COMM_WORLD), algorithm);
    check_halo(collectives::FunneledComm(MPI_COMM_WORLD, omp_get_max_threads()), algorithm);
  }
}

// SelfComm (the compute-only floor's communicator): on its one rank every
// kernel gives what it gives on a one-rank MPI communicator, by local copies.
TEST(SelfComm, HaloOfAPeriodicSubdomainWrapsOntoItself) {
  const collectives::SelfComm self;
  for (const HaloAlgorithm a : {HaloAlgorithm::kTwoSweep, HaloAlgorithm::kNeighbor,
                                HaloAlgorithm::kDirect, HaloAlgorithm::kSplit}) {
    for (const bool bound : {false, true}) {
      HaloSpec spec;
      spec.decomposition = collectives::Decomposition::even(10, 7, 1, 1, true, true);
      spec.width = 3;
      spec.algorithm = a;
      collectives::HaloPlan plan(self, spec);
      const int w = spec.width;
      const int row = plan.nx() + 2 * w;
      std::vector<double> u(plan.field_elements(2), -1.0);
      const auto value = [](int i, int j, int k) { return 1000.0 * k + 100.0 * j + i; };
      for (int k = 0; k < 2; ++k) {
        for (int j = 0; j < 7; ++j) {
          for (int i = 0; i < 10; ++i) {
            u[static_cast<std::size_t>((k * (7 + 2 * w) + j + w) * row + i + w)] = value(i, j, k);
          }
        }
      }
      const collectives::HaloField fields[] = {collectives::halo_field<double>(u, 2)};
      if (bound) plan.bind(fields);
      for (int call = 0; call < 2; ++call) plan.exchange(fields);
      int wrong = 0;
      for (int k = 0; k < 2; ++k) {
        for (int j = -w; j < 7 + w; ++j) {
          for (int i = -w; i < 10 + w; ++i) {
            const double got = u[static_cast<std::size_t>((k * (7 + 2 * w) + j + w) * row + i + w)];
            wrong += got == value((i + 10) % 10, (j + 7) % 7, k) ? 0 : 1;
          }
        }
      }
      EXPECT_EQ(wrong, 0) << collectives::halo_algorithm_name(a) << (bound ? " bound" : "");
    }
  }
}

TEST(SelfComm, TranspositionRoundTripAndAllreduceAreCopies) {
  const collectives::SelfComm self;
  collectives::TransposePlan<collectives::SelfComm, double> plan(self, {5, 4, 3, 1, 1});
  std::vector<double> grid(plan.local_size(collectives::Space::kGrid));
  std::iota(grid.begin(), grid.end(), 1.0);
  const std::vector<double> original = grid;
  std::vector<double> spectral(plan.local_size(collectives::Space::kSpectral));
  plan.forward(grid, spectral);
  std::vector<double> back(grid.size());
  plan.backward(spectral, back);
  EXPECT_EQ(back, original);
  plan.bind(grid, spectral);
  EXPECT_TRUE(plan.fused());
  plan.forward(grid, spectral);
  std::fill(grid.begin(), grid.end(), 0.0);
  plan.backward(spectral, grid);
  EXPECT_EQ(grid, original);
  std::vector<long long> values{3, 5, 7};
  for (const AllreduceOptions options :
       {AllreduceOptions{AllreduceAlgorithm::kLibrary, 0},
        AllreduceOptions{AllreduceAlgorithm::kRecursiveDoubling, 0},
        AllreduceOptions{AllreduceAlgorithm::kRecursiveK, 3}}) {
    collectives::allreduce(self, std::span<long long>(values), MPI_SUM, options);
  }
  EXPECT_EQ(values, (std::vector<long long>{3, 5, 7}));
  const std::vector<int> send{1, 2, 3, 4};
  std::vector<int> recv(4, 0);
  const std::vector<int> counts{4}, displs{0};
  for (const collectives::AlltoallvAlgorithm a :
       {collectives::AlltoallvAlgorithm::kLibrary, collectives::AlltoallvAlgorithm::kBurst,
        collectives::AlltoallvAlgorithm::kPairwise, collectives::AlltoallvAlgorithm::kBruck}) {
    std::fill(recv.begin(), recv.end(), 0);
    collectives::AlltoallvOptions options;
    options.algorithm = a;  // checked at the receivers (sized receives)
    collectives::alltoallv(self, std::span<const int>(send), counts, displs, std::span<int>(recv),
                           counts, displs, options);
    EXPECT_EQ(recv, send) << static_cast<int>(a);
  }
}

TEST(SelfComm, MessagesToItselfMatchByTagAndAnUnmatchedOneThrows) {
  const collectives::SelfComm self;
  const double out[2] = {1.5, 2.5};
  double in[2] = {0.0, 0.0};
  std::vector<collectives::SelfComm::Request> requests{
      self.isend(out, 2, MPI_DOUBLE, 0, 7), self.irecv(in + 1, 1, MPI_DOUBLE, 0, 8),
      self.irecv(in, 2, MPI_DOUBLE, 0, 7), self.isend(out + 1, 1, MPI_DOUBLE, 0, 8)};
  self.wait_all(requests);
  EXPECT_EQ(in[0], 1.5);
  EXPECT_EQ(in[1], 2.5);
  std::vector<collectives::SelfComm::Request> lonely{self.irecv(in, 1, MPI_DOUBLE, 0, 9)};
  EXPECT_THROW(self.wait_all(lonely), common::Error);
  EXPECT_THROW((void)self.isend(out, 1, MPI_DOUBLE, 1, 0), common::Error);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // One report is enough when every rank passes; a failing rank prints its own.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() == 0 ? 0 : 1;
  if (failed != 0) std::fprintf(stderr, "test_mpi_only: rank %d failed\n", rank);
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
