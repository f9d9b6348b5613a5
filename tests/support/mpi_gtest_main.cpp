// The one GoogleTest main of every MPI test (linked through ep_test_main).
//
// - Asks for MPI_THREAD_MULTIPLE and fails loudly, on every rank, without it:
//   endpoints call MPI from all threads at once.
// - Only rank 0 prints GoogleTest's progress; other ranks stay silent.
// - Failures are collected on every rank and every endpoint (thread), prefixed
//   "[rank r, ep e]", and gathered to rank 0 after each test, so a failure
//   seen only by EP rank 5 on process 1 still shows up in the log.
// - Every process returns its own RUN_ALL_TESTS() result, so mpiexec (and
//   ctest) fail when any rank failed.
//
// - A test that fails and then hangs (an endpoint left a collective early)
//   is ended by the watchdog (hang_watchdog.hpp) with a message naming the
//   test, the failures and the endpoints, instead of by ctest's timeout.
//
// Every rank must run the same tests in the same order (the gather after each
// test is collective over MPI_COMM_WORLD): filters come from the same command
// line, and the shuffle seed is broadcast from rank 0.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "support/ep_test.hpp"
#include "support/hang_watchdog.hpp"

namespace {

// MPI_Init_thread's thread levels by name, for the error message.
const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "unknown";
  }
}

// Records every failed assertion of this process, from whichever thread
// raised it, and gathers them to rank 0 at the end of each test.
class MpiFailureListener : public ::testing::EmptyTestEventListener {
 public:
  MpiFailureListener(int rank, int size) : rank_(rank), size_(size) {}

  // Called on the thread that failed (GoogleTest reports on the calling
  // thread), so current_endpoint() names the endpoint that saw the failure.
  // Endpoints fail concurrently, hence the mutex.
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) {
      return;
    }
    const int ep = ep_test::current_endpoint();
    std::string line = ep >= 0
                           ? "[rank " + std::to_string(rank_) + ", ep " + std::to_string(ep) + "] "
                           : "[rank " + std::to_string(rank_) + "] ";
    if (result.file_name() != nullptr) {
      line += std::string(result.file_name()) + ":" + std::to_string(result.line_number()) + ": ";
    }
    // Continuation lines are indented so that each failure reads as one block
    // under its "[rank r, ep e]" line.
    const std::string message = result.message();
    for (std::size_t i = 0; i < message.size(); ++i) {
      line += message[i];
      if (message[i] == '\n' && i + 1 < message.size()) {
        line += "    ";
      }
    }
    if (line.back() != '\n') {
      line += '\n';
    }
    ep_test::note_failure_on_this_thread(result.fatally_failed());
    ep_test::watchdog_note_failure(line);
    const std::lock_guard<std::mutex> lock(mutex_);
    failures_ += line;
  }

  void OnTestStart(const ::testing::TestInfo& info) override {
    ep_test::watchdog_test_started(std::string(info.test_suite_name()) + "." + info.name());
  }

  // Collective over MPI_COMM_WORLD: every rank ends every test here.
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    if (gather_and_report(name)) {
      failed_tests_.push_back(name);
    }
    // Only now: the gather waits for every rank, and a rank stuck in the
    // test keeps this one here.
    ep_test::watchdog_test_ended();
  }

  // Also collective. Picks up failures raised outside any test (suite or
  // environment set-up/tear-down), then names every test that failed anywhere:
  // rank 0's own summary above only counts rank 0's results.
  void OnTestProgramEnd(const ::testing::UnitTest& /*unit_test*/) override {
    if (gather_and_report("(outside any test)")) {
      failed_tests_.emplace_back("(outside any test)");
    }
    if (rank_ != 0 || failed_tests_.empty()) {
      return;
    }
    std::fprintf(stdout, "[ MPI FAIL ] %zu test(s) failed on at least one rank:\n",
                 failed_tests_.size());
    for (const std::string& name : failed_tests_) {
      std::fprintf(stdout, "[ MPI FAIL ]   %s\n", name.c_str());
    }
    std::fflush(stdout);
  }

 private:
  // Collective over MPI_COMM_WORLD. Gathers the failures recorded since the
  // last call to rank 0, which prints them under `title`. Returns (on rank 0)
  // whether any rank failed.
  bool gather_and_report(const std::string& title) {
    std::string mine;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      mine.swap(failures_);
    }
    const std::vector<std::string> all = gather_to_root(mine);
    if (rank_ != 0) {
      return false;
    }
    int failed_ranks = 0;
    std::string report;
    for (const std::string& text : all) {
      if (!text.empty()) {
        ++failed_ranks;
        report += text;
      }
    }
    if (failed_ranks == 0) {
      return false;
    }
    std::fprintf(stdout,
                 "[ MPI FAIL ] %s failed on %d of %d rank(s); failures of every rank "
                 "and endpoint:\n%s",
                 title.c_str(), failed_ranks, size_, report.c_str());
    std::fflush(stdout);
    return true;
  }

  // MPI_Gather of the lengths, then MPI_Gatherv of the text, to rank 0.
  [[nodiscard]] std::vector<std::string> gather_to_root(const std::string& text) const {
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(rank_ == 0 ? size_ : 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> displs(lengths.size());
    if (!lengths.empty()) {
      std::exclusive_scan(lengths.begin(), lengths.end(), displs.begin(), 0);
    }
    const int total = lengths.empty() ? 0 : displs.back() + lengths.back();
    std::vector<char> buffer(static_cast<std::size_t>(total) + 1);
    MPI_Gatherv(text.data(), length, MPI_CHAR, buffer.data(), lengths.data(), displs.data(),
                MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> out(lengths.size());
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      out[r].assign(buffer.data() + displs[r], static_cast<std::size_t>(lengths[r]));
    }
    return out;
  }

  const int rank_;
  const int size_;
  std::mutex mutex_;
  std::string failures_;                   // guarded by mutex_
  std::vector<std::string> failed_tests_;  // rank 0, main thread only
};

// All ranks must agree on the test order: with --gtest_shuffle, rank 0 picks
// the seed (GoogleTest would otherwise take one from each rank's clock).
void agree_on_shuffle_seed() {
  int seed = GTEST_FLAG_GET(random_seed);
  if (seed == 0) {
    // GoogleTest's own rule for seed 0: the clock, in 1..99999.
    seed = static_cast<int>(static_cast<unsigned>(std::time(nullptr)) % 99999U) + 1;
  }
  MPI_Bcast(&seed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  GTEST_FLAG_SET(random_seed, seed);
}

// --gtest_output=xml:report.xml on every rank would have all ranks write the
// same file; ranks other than 0 write report.rank<r>.xml instead.
void separate_output_files(int rank) {
  std::string output = GTEST_FLAG_GET(output);
  if (rank == 0 || output.empty()) {
    return;
  }
  const std::string::size_type colon = output.find(':');
  if (colon == std::string::npos) {
    return;  // "xml" alone: GoogleTest picks test_detail.xml; leave rank 0 the only writer.
  }
  std::string path = output.substr(colon + 1);
  if (path.empty() || path.back() == '/') {
    return;  // a directory: GoogleTest already names the file after the executable.
  }
  const std::string::size_type dot = path.rfind('.');
  const std::string::size_type slash = path.rfind('/');
  const std::string suffix = ".rank" + std::to_string(rank);
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) {
    path.insert(dot, suffix);
  } else {
    path += suffix;
  }
  GTEST_FLAG_SET(output, output.substr(0, colon + 1) + path);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "FATAL: MPI_Init_thread failed\n");
    return 2;
  }
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  if (provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr,
                 "\n"
                 "**********************************************************************\n"
                 "*** [rank %d] FATAL: MPI_Init_thread provided %s, but the endpoint\n"
                 "*** runtime and its tests need MPI_THREAD_MULTIPLE. Use an MPI built\n"
                 "*** with thread support (Open MPI: --enable-mpi-thread-multiple).\n"
                 "**********************************************************************\n",
                 rank, thread_level_name(provided));
    std::fflush(stderr);
    MPI_Finalize();
    return 3;
  }

  ::testing::InitGoogleTest(&argc, argv);
  agree_on_shuffle_seed();
  separate_output_files(rank);

  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
  }
  listeners.Append(new MpiFailureListener(rank, size));  // owned by GoogleTest

  ep_test::watchdog_start(rank);
  const int result = RUN_ALL_TESTS();
  ep_test::watchdog_stop();
  MPI_Finalize();
  return result;
}
