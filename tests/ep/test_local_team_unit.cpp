// The team of the shared-memory stage (ep/src/team/local_team.hpp), without
// MPI: barriers, gather-release rounds (the owner's and the delegated ones)
// and one-way broadcasts, in flat teams (one arrival line) and in teams large
// enough for the arrival tree, interleaved as collectives interleave them.
// Run by the TSan tier too (label loopback), which checks that every hand-off
// orders the writes it claims to.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "team/local_team.hpp"

namespace {

using ep::detail::LocalTeam;

// Runs body(thread) on `threads` threads and joins them.
template <class Body>
void on_threads(int threads, const Body& body) {
  std::vector<std::thread> team;
  team.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) team.emplace_back([&body, t] { body(t); });
  for (std::thread& thread : team) thread.join();
}

class LocalTeamSizes : public ::testing::TestWithParam<int> {};

TEST(LocalTeam, ArrivalTreeTakesOverPastTheFlatLine) {
  EXPECT_EQ(LocalTeam(1).arrival_levels(), 1);
  EXPECT_EQ(LocalTeam(LocalTeam::kFlatArrivals).arrival_levels(), 1);
  EXPECT_EQ(LocalTeam(LocalTeam::kFlatArrivals + 1).arrival_levels(), 2);
  EXPECT_EQ(LocalTeam(17).arrival_levels(), 3);  // 17 -> 5 -> 2 -> 1 with fan-in 4
}

// Nobody leaves a barrier before everybody has written its part of the
// round, and everybody sees every part after it.
TEST_P(LocalTeamSizes, BarrierOrdersEveryThreadsWrites) {
  const int threads = GetParam();
  constexpr int kRounds = 300;
  LocalTeam team(threads);
  std::vector<int> written(static_cast<std::size_t>(threads), -1);
  std::atomic<int> wrong{0};
  on_threads(threads, [&](int t) {
    for (int round = 0; round < kRounds; ++round) {
      written[static_cast<std::size_t>(t)] = round;
      team.barrier();
      for (int other = 0; other < threads; ++other) {
        if (written[static_cast<std::size_t>(other)] != round) wrong.fetch_add(1);
      }
      team.barrier();  // the parts are read until here
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

// A delegated round runs the owner's work once, after every arrival, on
// whichever thread arrives last; its writes reach every thread.
TEST_P(LocalTeamSizes, DelegatedRoundRunsTheOwnersWorkOnceAfterAllArrive) {
  const int threads = GetParam();
  const int owner = threads - 1;
  constexpr int kRounds = 300;
  LocalTeam team(threads);
  std::vector<std::int64_t> results(static_cast<std::size_t>(threads), 0);
  std::atomic<int> runs{0};
  std::atomic<int> wrong{0};
  on_threads(threads, [&](int t) {
    for (int round = 1; round <= kRounds; ++round) {
      team.set_value(t, round * 100 + t);
      LocalTeam::RoundWork work;
      // The work: sums what every thread set and hands each its result.
      auto sum = [&] {
        runs.fetch_add(1, std::memory_order_relaxed);
        std::int64_t total = 0;
        for (int other = 0; other < threads; ++other) total += team.value(other);
        for (std::int64_t& result : results) result = total;
      };
      if (t == owner) {
        work.context = &sum;
        work.run = [](void* context, LocalTeam& /*team*/, int /*thread*/) {
          (*static_cast<decltype(sum)*>(context))();
        };
      }
      const LocalTeam::Release outcome = team.delegated_round(t, t == owner ? &work : nullptr);
      const std::int64_t expected =
          static_cast<std::int64_t>(round) * 100 * threads + threads * (threads - 1) / 2;
      if (outcome.failed || results[static_cast<std::size_t>(t)] != expected) wrong.fetch_add(1);
      team.barrier();  // results and values are read until here
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(runs.load(), kRounds);
}

// A delegated round whose work throws: the owner finds the error, every
// thread sees the round failed, and the team goes on working.
TEST_P(LocalTeamSizes, DelegatedRoundFailureReachesEveryThread) {
  const int threads = GetParam();
  LocalTeam team(threads);
  std::atomic<int> failed_seen{0};
  std::string owners_error;
  on_threads(threads, [&](int t) {
    LocalTeam::RoundWork work;
    if (t == 0) {
      work.run = [](void* /*context*/, LocalTeam& /*team*/, int /*thread*/) {
        throw std::runtime_error("the work failed");
      };
    }
    if (team.delegated_round(t, t == 0 ? &work : nullptr).failed) failed_seen.fetch_add(1);
    if (t == 0) {
      try {
        if (work.error) std::rethrow_exception(work.error);
      } catch (const std::runtime_error& error) {
        owners_error = error.what();
      }
    }
    team.barrier();
  });
  EXPECT_EQ(failed_seen.load(), threads);
  EXPECT_EQ(owners_error, "the work failed");
}

// The owner's rounds (arrive / open_round / await_arrivals / release /
// wait_release), interleaved with barriers and delegated rounds: the
// payload reaches every thread and the round numbers stay in step.
TEST_P(LocalTeamSizes, OwnerRoundsInterleaveWithBarriersAndDelegatedRounds) {
  const int threads = GetParam();
  constexpr int kRounds = 200;
  LocalTeam team(threads);
  std::atomic<int> wrong{0};
  on_threads(threads, [&](int t) {
    for (int round = 0; round < kRounds; ++round) {
      const int owner = round % threads;
      team.set_value(t, round);
      static const int kPayloads[2] = {11, 22};
      if (t == owner) {
        team.open_round(t);
        team.await_arrivals(t);
        for (int other = 0; other < threads; ++other) {
          if (team.value(other) != round) wrong.fetch_add(1);
        }
        team.release(t, false, &kPayloads[round % 2]);
      } else {
        team.arrive(t);
        const LocalTeam::Release release = team.wait_release(t);
        if (release.failed || release.payload != &kPayloads[round % 2]) wrong.fetch_add(1);
      }
      LocalTeam::RoundWork nothing;
      nothing.run = [](void* /*context*/, LocalTeam& /*team*/, int /*thread*/) {};
      if (team.delegated_round(t, t == owner ? &nothing : nullptr).failed) wrong.fetch_add(1);
      team.barrier();
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

// One-way broadcasts of sizes within the first line, past it, and not staged:
// every reader gets the root's bytes.
TEST_P(LocalTeamSizes, BroadcastsReachEveryReader) {
  const int threads = GetParam();
  if (threads == 1) GTEST_SKIP() << "a team of one has no readers";
  constexpr int kRounds = 100;
  const std::size_t sizes[] = {8, LocalTeam::kBroadcastLineBytes, 200, 5000};
  LocalTeam team(threads);
  std::atomic<int> wrong{0};
  on_threads(threads, [&](int t) {
    std::vector<unsigned char> mine(LocalTeam::kStagedBroadcastBytes * 2);
    for (int round = 0; round < kRounds; ++round) {
      const int root = round % threads;
      const std::size_t bytes = sizes[static_cast<std::size_t>(round) % 4];
      const bool staged = round % 3 != 0;
      const auto value = static_cast<unsigned char>(round);
      if (t == root) {
        std::memset(mine.data(), value, bytes);
        if (staged) {
          std::byte* staging = team.broadcast_staging(t);
          std::memcpy(staging, mine.data(), bytes);
          team.broadcast_publish(t, {staging, bytes, true, false});
        } else {
          team.broadcast_publish(t, {mine.data(), bytes, false, false});
          team.broadcast_await_readers(t);
        }
        continue;
      }
      const LocalTeam::Broadcast from = team.broadcast_wait(t);
      std::memset(mine.data(), 0, bytes);
      if (from.bytes == bytes) std::memcpy(mine.data(), from.source, bytes);
      team.broadcast_done(t);
      if (from.bytes != bytes || from.staged != staged) wrong.fetch_add(1);
      for (std::size_t i = 0; i < bytes; ++i) {
        if (mine[i] != value) {
          wrong.fetch_add(1);
          break;
        }
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

// 1 and 2 threads, the largest flat team, the first tree, a three-level tree.
INSTANTIATE_TEST_SUITE_P(Sizes, LocalTeamSizes,
                         ::testing::Values(1, 2, LocalTeam::kFlatArrivals,
                                           LocalTeam::kFlatArrivals + 1, 17));

}  // namespace
