// Reductions on endpoint communicators: reduce, allreduce, reduce_scatter,
// reduce_scatter_block, scan and exscan, in every layout of coll_helpers.hpp.
// Integer sums against closed forms; a non-commutative op (2x2 matrix
// product) against the serial product in EP rank order; a derived type with
// holes; and the layout-independent sum of doubles against a serial right
// fold c0 + (c1 + (...)), bit for bit, which is what makes it the same in
// every layout.
#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "coll_helpers.hpp"
#include "ep/ep.hpp"

namespace {

using coll_test::for_each_layout;
using coll_test::kHole;
using coll_test::Mat;
using coll_test::sum_of_values;
using coll_test::value;
using coll_test::values_of;
using coll_test::varied_count;

std::vector<Mat> mats_of(int rank, int count, int offset = 0) {
  std::vector<Mat> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = coll_test::mat_of(rank, offset + i);
  return v;
}

std::vector<double> fractions_of(int rank, int count, int offset = 0) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = coll_test::fraction(rank, offset + i);
  return v;
}

// Serial right fold of fraction(r, i) over ranks [0, ranks).
double folded_fraction(int ranks, int i) {
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) values.push_back(coll_test::fraction(r, i));
  return coll_test::right_fold(values);
}

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

constexpr ep::ReduceOptions kLayoutIndependent{.layout_independent = true};

TEST(CollectiveReductions, ReduceEveryRoot) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (int root = 0; root < n; ++root) {
      for (int count : {1, 5, 20000}) {
        for (bool in_place : {false, true}) {
          const bool is_root = c.rank() == root;
          const std::vector<int> mine = values_of(c.rank(), count);
          std::vector<int> result(static_cast<std::size_t>(count), kHole);
          if (in_place && is_root) result = mine;
          ep::reduce(c, in_place && is_root ? MPI_IN_PLACE : mine.data(), result.data(), count,
                     MPI_INT, MPI_SUM, root);
          if (!is_root) continue;
          coll_test::expect_each(
              result, [&](std::size_t k) { return sum_of_values(n, static_cast<int>(k)); },
              "reduce root " + std::to_string(root) + (in_place ? " in place" : ""));
        }
      }
    }
  });
}

TEST(CollectiveReductions, AllreduceSumMaxInPlace) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (int count : {0, 1, 9, 20000}) {
      const std::vector<int> mine = values_of(c.rank(), count);
      std::vector<int> sum(static_cast<std::size_t>(count), kHole);
      ep::allreduce(c, mine.data(), sum.data(), count, MPI_INT, MPI_SUM);
      std::vector<int> max = mine;
      ep::allreduce(c, MPI_IN_PLACE, max.data(), count, MPI_INT, MPI_MAX);
      coll_test::expect_each(
          sum, [&](std::size_t k) { return sum_of_values(n, static_cast<int>(k)); }, "sum");
      coll_test::expect_each(
          max, [&](std::size_t k) { return value(n - 1, static_cast<int>(k)); }, "max in place");
    }
  });
}

TEST(CollectiveReductions, AllreduceDerivedTypeWithUserOp) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const MPI_Datatype strided = coll_test::strided_type();
    const MPI_Op op = coll_test::strided_sum_op();
    for (int elements : {1, 4, 3000}) {
      for (bool in_place : {false, true}) {
        const int ints = 2 * coll_test::kStrided * elements;
        std::vector<int> mine(static_cast<std::size_t>(ints), kHole);
        for (int k = 0; k < ints; k += 2) mine[static_cast<std::size_t>(k)] = value(c.rank(), k);
        std::vector<int> result(static_cast<std::size_t>(ints), kHole);
        if (in_place) result = mine;
        ep::allreduce(c, in_place ? MPI_IN_PLACE : mine.data(), result.data(), elements, strided,
                      op);
        coll_test::expect_each(
            result,
            [&](std::size_t k) {
              return k % 2 == 0 ? sum_of_values(n, static_cast<int>(k)) : kHole;
            },
            "strided allreduce of " + std::to_string(elements) + (in_place ? " in place" : ""));
      }
    }
  });
}

TEST(CollectiveReductions, NonCommutativeReduceAndAllreduce) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const auto [type, op] = coll_test::mat_product();
    constexpr int kCount = 6;
    const std::vector<Mat> mine = mats_of(c.rank(), kCount);
    for (const ep::ReduceOptions options : {ep::ReduceOptions{}, kLayoutIndependent}) {
      std::vector<Mat> all(kCount);
      ep::allreduce(c, mine.data(), all.data(), kCount, type, op, options);
      for (int i = 0; i < kCount; ++i) {
        EXPECT_EQ(all[static_cast<std::size_t>(i)], coll_test::mat_product(0, n, i))
            << "allreduce " << i;
      }
      for (int root = 0; root < n; ++root) {
        std::vector<Mat> result(kCount);
        ep::reduce(c, mine.data(), result.data(), kCount, type, op, root, options);
        if (c.rank() != root) continue;
        for (int i = 0; i < kCount; ++i) {
          EXPECT_EQ(result[static_cast<std::size_t>(i)], coll_test::mat_product(0, n, i))
              << "reduce root " << root << " element " << i;
        }
      }
    }
  });
}

TEST(CollectiveReductions, RepeatedReductionsGiveTheSameBits) {
  for_each_layout([](ep::Communicator& c) {
    constexpr int kCount = 257;
    const std::vector<double> mine = fractions_of(c.rank(), kCount);
    std::vector<double> first(kCount);
    std::vector<double> again(kCount);
    ep::allreduce(c, mine.data(), first.data(), kCount, MPI_DOUBLE, MPI_SUM);
    for (int round = 0; round < 3; ++round) {
      ep::allreduce(c, mine.data(), again.data(), kCount, MPI_DOUBLE, MPI_SUM);
      for (int k = 0; k < kCount; ++k) {
        const auto i = static_cast<std::size_t>(k);
        EXPECT_TRUE(same_bits(first[i], again[i])) << "round " << round << " element " << k;
      }
    }
  });
}

TEST(CollectiveReductions, LayoutIndependentSumsAreSerialRightFolds) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    constexpr int kCount = 33;
    const std::vector<double> mine = fractions_of(c.rank(), kCount);
    std::vector<double> all(kCount);
    ep::allreduce(c, mine.data(), all.data(), kCount, MPI_DOUBLE, MPI_SUM, kLayoutIndependent);
    std::vector<double> rooted(kCount);
    ep::reduce(c, mine.data(), rooted.data(), kCount, MPI_DOUBLE, MPI_SUM, n - 1,
               kLayoutIndependent);
    std::vector<double> scanned(kCount);
    ep::scan(c, mine.data(), scanned.data(), kCount, MPI_DOUBLE, MPI_SUM, kLayoutIndependent);
    std::vector<double> exscanned(kCount, -1.0);
    ep::exscan(c, mine.data(), exscanned.data(), kCount, MPI_DOUBLE, MPI_SUM, kLayoutIndependent);
    for (int i = 0; i < kCount; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double expected = folded_fraction(n, i);
      EXPECT_TRUE(same_bits(all[k], expected))
          << "allreduce " << i << ": " << all[k] << " vs " << expected;
      if (c.rank() == n - 1) {
        EXPECT_TRUE(same_bits(rooted[k], expected)) << "reduce " << i;
      }
      EXPECT_TRUE(same_bits(scanned[k], folded_fraction(c.rank() + 1, i))) << "scan " << i;
      const double before = c.rank() == 0 ? -1.0 : folded_fraction(c.rank(), i);
      EXPECT_TRUE(same_bits(exscanned[k], before)) << "exscan " << i;
    }
    // reduce_scatter_block: this rank's block of a vector of n * kBlock.
    constexpr int kBlock = 5;
    const std::vector<double> vector = fractions_of(c.rank(), n * kBlock);
    std::vector<double> block(kBlock);
    ep::reduce_scatter_block(c, vector.data(), block.data(), kBlock, MPI_DOUBLE, MPI_SUM,
                             kLayoutIndependent);
    for (int j = 0; j < kBlock; ++j) {
      EXPECT_TRUE(
          same_bits(block[static_cast<std::size_t>(j)], folded_fraction(n, c.rank() * kBlock + j)))
          << "reduce_scatter_block " << j;
    }
  });
}

TEST(CollectiveReductions, ReduceScatterBlockSums) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (int block : {0, 1, 4, 3000}) {
      for (bool in_place : {false, true}) {
        std::vector<int> vector = values_of(c.rank(), n * block);
        std::vector<int> result(static_cast<std::size_t>(block), kHole);
        if (in_place) {
          ep::reduce_scatter_block(c, MPI_IN_PLACE, vector.data(), block, MPI_INT, MPI_SUM);
          result.assign(vector.begin(), vector.begin() + block);
        } else {
          ep::reduce_scatter_block(c, vector.data(), result.data(), block, MPI_INT, MPI_SUM);
        }
        coll_test::expect_each(
            result,
            [&](std::size_t j) { return sum_of_values(n, c.rank() * block + static_cast<int>(j)); },
            "reduce_scatter_block " + std::to_string(block) + (in_place ? " in place" : ""));
      }
    }
  });
}

// reduce_scatter counts in which EP rank r gets varied_count(r, salt)
// elements: the whole vector's `length`, and the caller's block, `mine`
// elements from `first`.
struct VariedScatter {
  std::vector<int> counts;
  int length;
  int first;
  int mine;
  VariedScatter(const ep::Communicator& c, int salt) : counts(static_cast<std::size_t>(c.size())) {
    for (int r = 0; r < c.size(); ++r) counts[static_cast<std::size_t>(r)] = varied_count(r, salt);
    length = std::accumulate(counts.begin(), counts.end(), 0);
    first = std::accumulate(counts.begin(), counts.begin() + c.rank(), 0);
    mine = counts[static_cast<std::size_t>(c.rank())];
  }
};

TEST(CollectiveReductions, ReduceScatterVariedCounts) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    for (int salt : {0, 1, 2}) {
      for (bool in_place : {false, true}) {
        const VariedScatter v(c, salt);
        std::vector<int> vector = values_of(c.rank(), v.length);
        std::vector<int> result(static_cast<std::size_t>(v.mine), kHole);
        if (in_place) {
          ep::reduce_scatter(c, MPI_IN_PLACE, vector.data(), v.counts, MPI_INT, MPI_SUM);
          result.assign(vector.begin(), vector.begin() + v.mine);
        } else {
          ep::reduce_scatter(c, vector.data(), result.data(), v.counts, MPI_INT, MPI_SUM);
        }
        coll_test::expect_each(
            result, [&](std::size_t j) { return sum_of_values(n, v.first + static_cast<int>(j)); },
            "reduce_scatter salt " + std::to_string(salt) + (in_place ? " in place" : ""));
      }
    }
  });
}

TEST(CollectiveReductions, NonCommutativeReduceScatter) {
  for_each_layout([](ep::Communicator& c) {
    const int n = c.size();
    const auto [type, op] = coll_test::mat_product();
    for (const ep::ReduceOptions options : {ep::ReduceOptions{}, kLayoutIndependent}) {
      // Block form.
      constexpr int kBlock = 3;
      const std::vector<Mat> vector = mats_of(c.rank(), n * kBlock);
      std::vector<Mat> block(kBlock);
      ep::reduce_scatter_block(c, vector.data(), block.data(), kBlock, type, op, options);
      for (int j = 0; j < kBlock; ++j) {
        EXPECT_EQ(block[static_cast<std::size_t>(j)],
                  coll_test::mat_product(0, n, c.rank() * kBlock + j))
            << "reduce_scatter_block element " << j;
      }
      // Varied counts.
      const VariedScatter varied(c, 1);
      const std::vector<Mat> v = mats_of(c.rank(), varied.length);
      std::vector<Mat> mine(static_cast<std::size_t>(varied.mine));
      ep::reduce_scatter(c, v.data(), mine.data(), varied.counts, type, op, options);
      for (std::size_t j = 0; j < mine.size(); ++j) {
        EXPECT_EQ(mine[j], coll_test::mat_product(0, n, varied.first + static_cast<int>(j)))
            << "reduce_scatter element " << j;
      }
    }
  });
}

TEST(CollectiveReductions, ScanAndExscanSums) {
  for_each_layout([](ep::Communicator& c) {
    for (int count : {0, 1, 7, 20000}) {
      for (bool in_place : {false, true}) {
        const std::vector<int> mine = values_of(c.rank(), count);
        std::vector<int> inclusive(static_cast<std::size_t>(count), kHole);
        std::vector<int> exclusive(static_cast<std::size_t>(count), kHole);
        if (in_place) {
          inclusive = mine;
          exclusive = mine;
          ep::scan(c, MPI_IN_PLACE, inclusive.data(), count, MPI_INT, MPI_SUM);
          ep::exscan(c, MPI_IN_PLACE, exclusive.data(), count, MPI_INT, MPI_SUM);
        } else {
          ep::scan(c, mine.data(), inclusive.data(), count, MPI_INT, MPI_SUM);
          ep::exscan(c, mine.data(), exclusive.data(), count, MPI_INT, MPI_SUM);
        }
        const std::string how = " count " + std::to_string(count) + (in_place ? " in place" : "");
        coll_test::expect_each(
            inclusive,
            [&](std::size_t k) { return sum_of_values(c.rank() + 1, static_cast<int>(k)); },
            "scan" + how);
        // Rank 0's exscan result is left untouched.
        coll_test::expect_each(
            exclusive,
            [&](std::size_t k) {
              if (c.rank() > 0) return sum_of_values(c.rank(), static_cast<int>(k));
              return in_place ? mine[k] : kHole;
            },
            "exscan" + how);
      }
    }
  });
}

TEST(CollectiveReductions, NonCommutativeScanAndExscan) {
  for_each_layout([](ep::Communicator& c) {
    const auto [type, op] = coll_test::mat_product();
    for (const ep::ReduceOptions options : {ep::ReduceOptions{}, kLayoutIndependent}) {
      for (int count : {1, 4, 2000}) {
        const std::vector<Mat> mine = mats_of(c.rank(), count);
        std::vector<Mat> inclusive(static_cast<std::size_t>(count));
        const Mat untouched{7, 7, 7, 7};
        std::vector<Mat> exclusive(static_cast<std::size_t>(count), untouched);
        ep::scan(c, mine.data(), inclusive.data(), count, type, op, options);
        ep::exscan(c, mine.data(), exclusive.data(), count, type, op, options);
        coll_test::expect_each(
            inclusive,
            [&](std::size_t k) {
              return coll_test::mat_product(0, c.rank() + 1, static_cast<int>(k));
            },
            "scan of " + std::to_string(count));
        coll_test::expect_each(
            exclusive,
            [&](std::size_t k) {
              return c.rank() == 0 ? untouched
                                   : coll_test::mat_product(0, c.rank(), static_cast<int>(k));
            },
            "exscan of " + std::to_string(count));
      }
    }
  });
}

TEST(CollectiveReductions, ScanInPlaceNonCommutative) {
  for_each_layout([](ep::Communicator& c) {
    const auto [type, op] = coll_test::mat_product();
    constexpr int kCount = 3;
    std::vector<Mat> inclusive = mats_of(c.rank(), kCount);
    std::vector<Mat> exclusive = inclusive;
    ep::scan(c, MPI_IN_PLACE, inclusive.data(), kCount, type, op);
    ep::exscan(c, MPI_IN_PLACE, exclusive.data(), kCount, type, op);
    for (int i = 0; i < kCount; ++i) {
      const auto k = static_cast<std::size_t>(i);
      EXPECT_EQ(inclusive[k], coll_test::mat_product(0, c.rank() + 1, i));
      EXPECT_EQ(exclusive[k],
                c.rank() == 0 ? coll_test::mat_of(0, i) : coll_test::mat_product(0, c.rank(), i));
    }
  });
}

}  // namespace

namespace {

// Reductions on a communicator within one process (small ones: the
// leader folds; large ones: each thread folds a slice of every contribution
// and writes it into every receive buffer): a non-commutative op keeps rank order, sums keep the
// bits of the serial right fold over the ranks (the thread order of every hierarchical fold), in
// place and not, with counts that do not split evenly among the threads and a reduce whose
// non-roots pass no receive buffer.
TEST(CollectiveReductions, ReductionsWithinAProcess) {
  ep_test::run_within_each_process([](ep::Communicator& c) {
    const int n = c.size();
    const auto [type, op] = coll_test::mat_product();
    for (const int count : {1, 5, 1031, 6007}) {  // above 16 KiB: not a multiple of the threads
      for (const bool in_place : {false, true}) {
        const std::vector<Mat> mine = mats_of(c.rank(), count, 3);
        std::vector<Mat> all = in_place ? mine : std::vector<Mat>(static_cast<std::size_t>(count));
        ep::allreduce(c, in_place ? MPI_IN_PLACE : mine.data(), all.data(), count, type, op);
        int wrong = 0;
        for (int i = 0; i < count; ++i) {
          if (all[static_cast<std::size_t>(i)] != coll_test::mat_product(0, n, 3 + i)) ++wrong;
        }
        EXPECT_EQ(wrong, 0) << "allreduce of " << count << (in_place ? " in place" : "");
        const std::vector<double> fractions = fractions_of(c.rank(), count);
        std::vector<double> sum =
            in_place ? fractions : std::vector<double>(static_cast<std::size_t>(count), -1.0);
        ep::allreduce(c, in_place ? MPI_IN_PLACE : fractions.data(), sum.data(), count, MPI_DOUBLE,
                      MPI_SUM);
        wrong = 0;
        for (int i = 0; i < count; ++i) {
          if (!same_bits(sum[static_cast<std::size_t>(i)], folded_fraction(n, i))) ++wrong;
        }
        EXPECT_EQ(wrong, 0) << "sum of " << count << (in_place ? " in place" : "");
        const int root = n / 2;
        const bool is_root = c.rank() == root;
        std::vector<Mat> rooted = is_root && in_place ? mine : std::vector<Mat>();
        if (is_root && !in_place) rooted.resize(static_cast<std::size_t>(count));
        ep::reduce(c, is_root && in_place ? MPI_IN_PLACE : mine.data(),
                   is_root ? rooted.data() : nullptr, count, type, op, root);
        if (is_root) {
          wrong = 0;
          for (int i = 0; i < count; ++i) {
            if (rooted[static_cast<std::size_t>(i)] != coll_test::mat_product(0, n, 3 + i)) ++wrong;
          }
          EXPECT_EQ(wrong, 0) << "reduce of " << count << (in_place ? " in place" : "");
        }
      }
    }
  });
}

}  // namespace
