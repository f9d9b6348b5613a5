// Allreduce: the library's, recursive doubling and recursive-k for k = 2..7,
// on every backend, on the whole communicator and on its first n-1 ranks (so
// rank counts that are and are not powers of k: 1..6 and 5), against
// references computed on the gathered data: integers exactly as the library,
// doubles bit for bit in the combination order documented in allreduce.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends.hpp"
#include "collectives/allreduce.hpp"
#include "common/error.hpp"
#include "reference.hpp"

namespace {

using collectives::AllreduceAlgorithm;
using collectives::AllreduceOptions;
using collectives_test::gather_all;
using collectives_test::mix;
using collectives_test::run_on_backends;

std::vector<AllreduceOptions> every_algorithm() {
  std::vector<AllreduceOptions> list = {{AllreduceAlgorithm::kLibrary, 0},
                                        {AllreduceAlgorithm::kRecursiveDoubling, 0}};
  for (int k = 2; k <= 7; ++k) list.push_back({AllreduceAlgorithm::kRecursiveK, k});
  return list;
}

/// The documented order: pre-stage folds x_j, x_{j+m}, ...; round t folds the
/// k values of a digit-t group in digit order.
std::vector<double> documented_order(const std::vector<std::vector<double>>& x, int k, MPI_Op op) {
  const int n = static_cast<int>(x.size());
  auto apply = [op](double a, double b) {
    if (op == MPI_SUM) return a + b;
    if (op == MPI_MIN) return std::min(a, b);
    return std::max(a, b);
  };
  auto fold_into = [&](std::vector<double>& acc, const std::vector<double>& v) {
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = apply(acc[i], v[i]);
  };
  int m = 1;
  while (m * k <= n) m *= k;
  std::vector<std::vector<double>> value(static_cast<std::size_t>(m));
  for (int j = 0; j < m; ++j) {
    value[static_cast<std::size_t>(j)] = x[static_cast<std::size_t>(j)];
    for (int e = j + m; e < n; e += m) {
      fold_into(value[static_cast<std::size_t>(j)], x[static_cast<std::size_t>(e)]);
    }
  }
  for (int dist = 1; dist < m; dist *= k) {
    for (int g = 0; g < m; g += dist * k) {
      for (int low = 0; low < dist; ++low) {
        std::vector<double> acc = value[static_cast<std::size_t>(g + low)];
        for (int e = 1; e < k; ++e) {
          fold_into(acc, value[static_cast<std::size_t>(g + low + e * dist)]);
        }
        for (int e = 0; e < k; ++e) value[static_cast<std::size_t>(g + low + e * dist)] = acc;
      }
    }
  }
  return value[0];
}

template <class C>
void check_ints(const C& comm, std::size_t length, MPI_Op op) {
  std::vector<int> mine(length);
  for (std::size_t i = 0; i < length; ++i) {
    mine[i] =
        static_cast<int>(mix(static_cast<unsigned long long>(comm.rank()) * 7777 + i) % 2001) -
        1000;
  }
  const auto all = gather_all(comm, std::span<const int>(mine));
  std::vector<int> expected = all[0];
  for (std::size_t r = 1; r < all.size(); ++r) {
    for (std::size_t i = 0; i < length; ++i) {
      const int v = all[r][i];
      expected[i] = op == MPI_SUM   ? expected[i] + v
                    : op == MPI_MIN ? std::min(expected[i], v)
                                    : std::max(expected[i], v);
    }
  }
  for (const AllreduceOptions& options : every_algorithm()) {
    std::vector<int> data = mine;
    collectives::allreduce(comm, std::span<int>(data), op, options);
    EXPECT_EQ(data, expected) << comm.backend() << " " << collectives::allreduce_name(options)
                              << " n=" << comm.size() << " length " << length;
  }
}

template <class C>
void check_doubles(const C& comm, std::size_t length, MPI_Op op) {
  std::vector<double> mine(length);
  for (std::size_t i = 0; i < length; ++i) {
    // Magnitudes spread over 12 decades: the grouping changes the rounding.
    const auto h = mix(static_cast<unsigned long long>(comm.rank()) * 31337 + i);
    mine[i] = static_cast<double>(h % 1000003 + 1) * std::pow(10.0, static_cast<int>(h % 13) - 6) *
              (h % 2 == 0 ? 1.0 : -1.0);
  }
  const auto all = gather_all(comm, std::span<const double>(mine));
  for (const AllreduceOptions& options : every_algorithm()) {
    if (options.algorithm == AllreduceAlgorithm::kLibrary) continue;
    const int k = options.algorithm == AllreduceAlgorithm::kRecursiveDoubling ? 2 : options.radix;
    const std::vector<double> expected = documented_order(all, k, op);
    std::vector<double> data = mine;
    collectives::allreduce(comm, std::span<double>(data), op, options);
    EXPECT_EQ(std::memcmp(data.data(), expected.data(), length * sizeof(double)), 0)
        << comm.backend() << " " << collectives::allreduce_name(options) << " n=" << comm.size()
        << ": not bit for bit the documented order (first: " << data[0] << " vs " << expected[0]
        << ")";
  }
}

template <class C>
void on_whole_and_on_all_but_one(const C& comm, const auto& body) {
  body(comm);
  if (comm.size() > 1) {
    const bool last = comm.rank() == comm.size() - 1;
    const C fewer = comm.split(last ? 1 : 0, comm.rank());
    if (!last) body(fewer);
  }
}

// `check(c, length, op)` for every op the kernels take and every length of
// `lengths`, on the whole communicator and on all but its last rank.
template <class C, class Check>
void check_every_op(const C& comm, std::initializer_list<std::size_t> lengths, Check check) {
  on_whole_and_on_all_but_one(comm, [&](const C& c) {
    for (const MPI_Op op : {MPI_SUM, MPI_MIN, MPI_MAX}) {
      for (const std::size_t length : lengths) check(c, length, op);
    }
  });
}

TEST(Allreduce, IntegersEqualTheLibraryForEveryRadix) {
  run_on_backends([](const auto& comm) {
    check_every_op(comm, {1, 1000},
                   [](const auto& c, std::size_t length, MPI_Op op) { check_ints(c, length, op); });
  });
}

TEST(Allreduce, OneMebibyteOfIntsAndOfDoubles) {
  run_on_backends([](const auto& comm) {
    check_ints(comm, 262144, MPI_SUM);
    check_doubles(comm, 131072, MPI_SUM);
  });
}

TEST(Allreduce, DoublesFollowTheDocumentedCombinationOrder) {
  run_on_backends([](const auto& comm) {
    check_every_op(comm, {1, 33}, [](const auto& c, std::size_t length, MPI_Op op) {
      check_doubles(c, length, op);
    });
    on_whole_and_on_all_but_one(comm, [](const auto& c) { check_doubles(c, 20000, MPI_SUM); });
  });
}

TEST(Allreduce, RadixBelowTwoThrowsOnEveryRank) {
  run_on_backends([](const auto& comm) {
    for (const int radix : {1, 0, -3}) {
      std::vector<double> data(3, 1.0);
      try {
        collectives::allreduce(comm, std::span<double>(data), MPI_SUM,
                               {AllreduceAlgorithm::kRecursiveK, radix});
        ADD_FAILURE() << "no error for radix " << radix;
      } catch (const common::Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("collectives::allreduce"), std::string::npos) << what;
        EXPECT_NE(what.find("radix " + std::to_string(radix)), std::string::npos) << what;
      }
    }
  });
}

}  // namespace
