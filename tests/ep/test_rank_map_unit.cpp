// Pure unit tests (no communication): the wire tag encoding and the rank map.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "ep/error.hpp"
#include "ep/rank_map.hpp"
#include "ep/tag_encoding.hpp"

namespace {

TEST(TagEncoding, LimitsMatchTheDesign) {
  EXPECT_EQ(ep::kMaxUserTag, 32767);  // the MPI minimum guarantee for MPI_TAG_UB
  EXPECT_EQ(ep::kMaxEndpointsPerProcess, 256);
  EXPECT_EQ(ep::kRequiredTagUb, (1LL << 31) - 1);
}

TEST(TagEncoding, FieldsSitInTheDocumentedBits) {
  EXPECT_EQ(ep::encode_tag({0, 0, 0}), 0);
  EXPECT_EQ(ep::encode_tag({0, 0, 1}), 1);
  EXPECT_EQ(ep::encode_tag({0, 1, 0}), 1 << 8);
  EXPECT_EQ(ep::encode_tag({1, 0, 0}), 1 << 16);
  EXPECT_EQ(ep::encode_tag({0, 0, 255}), 0xFF);
  EXPECT_EQ(ep::encode_tag({0, 255, 0}), 0xFF00);
  EXPECT_EQ(ep::encode_tag({ep::kMaxUserTag, 0, 0}), 0x7FFF0000);
  // The largest wire tag is exactly what create_endpoints requires of MPI_TAG_UB.
  EXPECT_EQ(static_cast<long long>(ep::encode_tag({ep::kMaxUserTag, 255, 255})),
            ep::kRequiredTagUb);
}

// Every user tag with a spread of thread pairs, and every thread pair with a
// spread of user tags: decode(encode(x)) == x (which also makes the encoding
// injective), and the wire tag is a valid non-negative MPI tag.
TEST(TagEncoding, RoundTripsEveryTagAndEveryThreadPair) {
  const int some_threads[] = {0, 1, 2, 7, 127, 128, 254, 255};
  const int some_tags[] = {0, 1, 2, 255, 256, 4095, 16384, 32766, ep::kMaxUserTag};
  long long bad = 0;
  auto check = [&](ep::WireTag t) {
    const int wire = ep::encode_tag(t);
    const ep::WireTag back = ep::decode_tag(wire);
    if (back != t || wire < 0 || wire > ep::kRequiredTagUb) {
      if (bad == 0) {
        ADD_FAILURE() << "tag " << t.user_tag << " src " << t.source_thread << " dst "
                      << t.dest_thread << " -> wire " << wire << " -> tag " << back.user_tag
                      << " src " << back.source_thread << " dst " << back.dest_thread;
      }
      ++bad;
    }
  };
  for (int tag = 0; tag <= ep::kMaxUserTag; ++tag) {
    for (int s : some_threads) {
      for (int d : some_threads) check({tag, s, d});
    }
  }
  for (int tag : some_tags) {
    for (int s = 0; s < ep::kMaxEndpointsPerProcess; ++s) {
      for (int d = 0; d < ep::kMaxEndpointsPerProcess; ++d) check({tag, s, d});
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(TagEncoding, WireTagsOrderByUserTagFirst) {
  // Not needed for correctness, but documents the layout: the user tag is the
  // most significant field, so wire tags of different user tags never interleave.
  EXPECT_LT(ep::encode_tag({1, 255, 255}), ep::encode_tag({2, 0, 0}));
  EXPECT_LT(ep::encode_tag({0, 1, 255}), ep::encode_tag({0, 2, 0}));
}

void check_rank_map(const std::vector<int>& per_process) {
  const ep::RankMap map(per_process);
  const int total = std::accumulate(per_process.begin(), per_process.end(), 0);
  EXPECT_EQ(map.size(), total);
  EXPECT_EQ(map.num_processes(), static_cast<int>(per_process.size()));
  EXPECT_EQ(map.max_endpoints_per_process(),
            *std::max_element(per_process.begin(), per_process.end()));

  int expected_rank = 0;
  for (int p = 0; p < static_cast<int>(per_process.size()); ++p) {
    EXPECT_EQ(map.endpoints_of(p), per_process[static_cast<std::size_t>(p)]) << "process " << p;
    EXPECT_EQ(map.first_rank_of(p), expected_rank) << "process " << p;
    // Process-major numbering: all endpoints of process p, then p + 1.
    for (int t = 0; t < per_process[static_cast<std::size_t>(p)]; ++t) {
      EXPECT_EQ(map.ep_rank(p, t), expected_rank) << "process " << p << " thread " << t;
      const ep::Location where = map.locate(expected_rank);
      EXPECT_EQ(where.process, p) << "ep rank " << expected_rank;
      EXPECT_EQ(where.thread, t) << "ep rank " << expected_rank;
      EXPECT_EQ(map.ep_rank(where), expected_rank);
      ++expected_rank;
    }
  }
}

TEST(RankMap, UniformProcesses) { check_rank_map({4, 4, 4}); }

TEST(RankMap, UnevenProcesses) { check_rank_map({3, 1, 4, 1, 5, 9, 2, 6}); }

TEST(RankMap, SingleProcessAndSingleEndpoint) {
  check_rank_map({1});
  check_rank_map({7});
}

TEST(RankMap, MaximumEndpointsPerProcess) {
  check_rank_map({ep::kMaxEndpointsPerProcess, 1, ep::kMaxEndpointsPerProcess});
}

TEST(RankMap, DefaultConstructedIsEmpty) {
  const ep::RankMap map;
  EXPECT_EQ(map.size(), 0);
  EXPECT_EQ(map.num_processes(), 0);
  EXPECT_EQ(map.max_endpoints_per_process(), 0);
}

// An inconsistent location list is an ep::Error(kArgument) naming the class,
// like every other misuse of the endpoint layer.
TEST(RankMap, InconsistentLocationsThrowEpError) {
  const auto expect_argument_error = [](std::vector<ep::Location> locations, int processes) {
    try {
      const ep::RankMap map(locations, processes);
      ADD_FAILURE() << "no error for " << locations.size() << " locations";
    } catch (const ep::Error& e) {
      EXPECT_EQ(e.kind(), ep::ErrorKind::kArgument);
      EXPECT_EQ(e.call(), "ep::RankMap");
    }
  };
  expect_argument_error({{0, 0}, {2, 0}}, 2);  // process 2 of 2
  expect_argument_error({{0, 0}, {0, 2}}, 1);  // thread 1 missing
  expect_argument_error({{0, 0}, {0, 0}}, 1);  // one place twice
  const ep::RankMap fine(std::vector<ep::Location>{{0, 1}, {0, 0}}, 1);
  EXPECT_EQ(fine.ep_rank(0, 0), 1);
}

}  // namespace
