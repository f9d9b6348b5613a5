// Communication tracing (ep/trace.hpp): every endpoint sends a known pattern
// of messages to every endpoint (itself included) with sizes on both sides of
// each size-class boundary; the recorded counts, bytes, classes and matrix
// must equal what was sent, and the JSON file of each process must hold them.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "ep/ep.hpp"
#include "ep/trace.hpp"
#include "ep_test.hpp"

namespace {

// Boundaries of seed 003's classes: < 100, 100-999, 1000-10000, > 10000 bytes.
constexpr std::array<int, 8> kSizes = {0, 99, 100, 999, 1000, 10000, 10001, 20000};
constexpr std::array<int, 8> kClassOfSize = {0, 0, 1, 1, 2, 2, 3, 3};

// Whether `from` sends message j (of size kSizes[j], tag j) to `to`: a
// pattern that differs per pair, so a transposed or shifted matrix shows.
bool sends(int from, int to, std::size_t j) {
  return (static_cast<int>(j) + 2 * from + to) % 3 != 0;
}

ep::trace::ClassCounts expected_to(int from, int to) {
  ep::trace::ClassCounts counts;
  for (std::size_t j = 0; j < kSizes.size(); ++j) {
    if (!sends(from, to, j)) continue;
    const auto c = static_cast<std::size_t>(kClassOfSize[j]);
    ++counts.count[c];
    counts.bytes[c] += static_cast<std::uint64_t>(kSizes[j]);
  }
  return counts;
}

std::string array_text(const std::array<std::uint64_t, 4>& values) {
  std::ostringstream out;
  out << '[' << values[0] << ", " << values[1] << ", " << values[2] << ", " << values[3] << ']';
  return out.str();
}

std::string counts_text(const ep::trace::ClassCounts& counts) {
  return "\"count\": " + array_text(counts.count) + ", \"bytes\": " + array_text(counts.bytes);
}

// A directory every process agrees on (rank 0's pid names it).
std::string shared_directory(const char* name) {
  int pid = static_cast<int>(getpid());
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return (std::filesystem::temp_directory_path() / (std::string(name) + "." + std::to_string(pid)))
      .string();
}

// What each local endpoint expects to find in its process's JSON file.
struct Expected {
  std::mutex mutex;
  std::vector<std::string> fragments;
};

void send_pattern(ep::Communicator& c) {
  const int n = c.size();
  const int me = c.rank();
  std::vector<std::vector<char>> in;
  std::vector<ep::Request> requests;
  std::vector<char> out(static_cast<std::size_t>(kSizes.back()), 'x');
  for (int from = 0; from < n; ++from) {
    for (std::size_t j = 0; j < kSizes.size(); ++j) {
      if (!sends(from, me, j)) continue;
      in.emplace_back(static_cast<std::size_t>(kSizes[j]));
      requests.push_back(c.irecv(in.back().data(), kSizes[j], MPI_BYTE, from, static_cast<int>(j)));
    }
  }
  for (int to = 0; to < n; ++to) {
    for (std::size_t j = 0; j < kSizes.size(); ++j) {
      if (!sends(me, to, j)) continue;
      requests.push_back(c.isend(out.data(), kSizes[j], MPI_BYTE, to, static_cast<int>(j)));
    }
  }
  ep::wait_all(requests);
}

TEST(Trace, CountsAndMatrixEqualWhatWasSent) {
  const std::string directory = shared_directory("ep_trace_test");
  ep::trace::enable(directory);
  EXPECT_TRUE(ep::trace::enabled());
  Expected expected;
  ep_test::run_endpoints([&](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    send_pattern(c);
    ep::barrier(c);

    const ep::trace::EndpointCounters got = ep::trace::counters(c);
    ep::trace::ClassCounts total;
    std::string fragment;
    for (int to = 0; to < n; ++to) {
      const ep::trace::ClassCounts want = expected_to(me, to);
      for (std::size_t k = 0; k < 4; ++k) {
        total.count[k] += want.count[k];
        total.bytes[k] += want.bytes[k];
      }
      const auto found = got.by_peer.find(to);
      if (found == got.by_peer.end()) {
        ADD_FAILURE() << "no matrix entry for peer " << to;
        continue;
      }
      EXPECT_EQ(found->second, want) << "peer " << to << ": got " << counts_text(found->second)
                                     << ", sent " << counts_text(want);
      const ep::Location where = c.rank_map().locate(to);
      fragment += std::string(to == 0 ? "" : ", ") +
                  "{\"process\": " + std::to_string(where.process) +
                  ", \"thread\": " + std::to_string(where.thread) + ", " + counts_text(want) + "}";
    }
    EXPECT_EQ(got.by_peer.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(got.sends, total) << "got " << counts_text(got.sends) << ", sent "
                                << counts_text(total);
    // At least the isends, irecvs' wait_all and the barrier were timed.
    EXPECT_GE(got.p2p_calls, 2U);
    EXPECT_GE(got.collective_calls, 1U);
    EXPECT_GE(got.p2p_seconds, 0.0);
    EXPECT_GE(got.collective_seconds, 0.0);
    EXPECT_GE(got.outside_seconds, 0.0);

    const std::lock_guard lock(expected.mutex);
    expected.fragments.push_back("\"sends\": {" + counts_text(total) + "}");
    expected.fragments.push_back(fragment);
  });
  ep::trace::disable();
  EXPECT_FALSE(ep::trace::enabled());

  const std::string path = ep::trace::write();
  EXPECT_EQ(path, (std::filesystem::path(directory) /
                   ("trace." + std::to_string(ep_test::world_rank()) + ".json"))
                      .string());
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << "cannot read " << path;
  std::stringstream content;
  content << file.rdbuf();
  // Layout-free comparison: whitespace removed on both sides.
  const auto squeezed = [](const std::string& in) {
    std::string out;
    for (const char ch : in) {
      if (ch != ' ' && ch != '\n') out += ch;
    }
    return out;
  };
  const std::string compact = squeezed(content.str());
  EXPECT_NE(compact.find(squeezed("\"format\": \"ep-trace/1\"")), std::string::npos) << compact;
  EXPECT_NE(compact.find(squeezed("\"process\": " + std::to_string(ep_test::world_rank()) +
                                  ", \"processes\": " + std::to_string(ep_test::world_size()))),
            std::string::npos);
  EXPECT_NE(compact.find(squeezed("\"recording\": false")), std::string::npos);
  for (const std::string& fragment : expected.fragments) {
    EXPECT_NE(compact.find(squeezed(fragment)), std::string::npos)
        << "missing in " << path << ": " << fragment;
  }
  // Balanced brackets and braces: a cheap check that the file parses
  // (scripts/plot_trace.py reads it with Python's json in the demo test).
  int depth = 0;
  bool balanced = true;
  for (const char ch : compact) {
    if (ch == '{' || ch == '[') ++depth;
    if (ch == '}' || ch == ']') --depth;
    balanced = balanced && depth >= 0;
  }
  EXPECT_TRUE(balanced && depth == 0) << compact;

  MPI_Barrier(MPI_COMM_WORLD);
  if (ep_test::world_rank() == 0) std::filesystem::remove_all(directory);
}

TEST(Trace, OffRecordsNothing) {
  const std::string directory = shared_directory("ep_trace_off_test");
  ep::trace::enable(directory);  // clears the previous test's records
  ep::trace::disable();
  ep_test::run_endpoints([](ep::Communicator& c) {
    send_pattern(c);
    ep::barrier(c);
    const ep::trace::EndpointCounters got = ep::trace::counters(c);
    EXPECT_EQ(got.sends, ep::trace::ClassCounts{});
    EXPECT_TRUE(got.by_peer.empty());
    EXPECT_EQ(got.p2p_calls, 0U);
    EXPECT_EQ(got.collective_calls, 0U);
  });
  MPI_Barrier(MPI_COMM_WORLD);
  if (ep_test::world_rank() == 0) std::filesystem::remove_all(directory);
}

TEST(Trace, BadArgumentsAreNamed) {
  try {
    ep::trace::enable("");
    ADD_FAILURE() << "empty directory accepted";
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), ep::ErrorKind::kArgument);
    EXPECT_NE(std::string(e.what()).find("ep::trace::enable"), std::string::npos) << e.what();
  }
}

}  // namespace
