// Wire-tag layouts for every MPI_TAG_UB an MPI may report (tag_encoding.hpp):
// exhaustive round trips of the narrow layouts, their limits, and the errors
// create_endpoints gives when a bound cannot address the endpoints.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <set>
#include <utility>
#include <vector>

#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"
#include "p2p_helpers.hpp"

namespace {

constexpr long long kBounds[] = {
    32767,           65535,           (1LL << 19) - 1,   (1LL << 21) - 1,
    (1LL << 23) - 1, (1LL << 28) - 1, ep::kRequiredTagUb};

TEST(TagLayout, EveryFieldRoundTripsAndStaysUnderTheBound) {
  // Every layout a communicator can get: the channel budgets 64 (default), 4
  // and 1 force the source-header layout at ever smaller endpoint counts.
  for (const int max_channels : {ep::kMaxTagChannels, 4, 1}) {
    for (const long long bound : kBounds) {
      for (const int endpoints : {1, 2, 3, 5, 16, 33, 64, 256}) {
        const ep::TagLayout layout = ep::make_tag_layout(bound, endpoints, max_channels);
        if (layout.channels > max_channels) continue;  // refused at creation
        std::set<std::pair<int, int>> seen;
        for (const int user : {0, 1, 12345, ep::kMaxUserTag}) {
          for (int src = 0; src < endpoints; ++src) {
            for (int dst = 0; dst < endpoints; dst += (endpoints > 40 ? 7 : 1)) {
              const ep::WireAddress wire = ep::encode(layout, {user, src, dst});
              EXPECT_GE(wire.tag, 0);
              EXPECT_LE(wire.tag, bound) << "bound " << bound << " endpoints " << endpoints;
              EXPECT_GE(wire.channel, 0);
              EXPECT_LT(wire.channel, layout.channels);
              // The source-header layout leaves the source out of the wire:
              // every source of one (user tag, destination) shares its address.
              const int wire_src = layout.source_in_header ? ep::kSourceInHeader : src;
              EXPECT_EQ(ep::decode(layout, wire.channel, wire.tag),
                        (ep::WireTag{user, wire_src, dst}));
              if (wire_src == src || src == 0) {
                EXPECT_TRUE(seen.insert({wire.channel, wire.tag}).second) << "two fields, one wire";
              }
            }
          }
        }
      }
    }
  }
}

TEST(TagLayout, SourceHeaderOnlyPastTheChannelBudget) {
  // Intel MPI's 2^19-1: 32 endpoints still fit 64 channels as pairs; 33 and
  // up, to 256, carry the source in a header over 16 channels at most.
  EXPECT_FALSE(ep::make_tag_layout((1LL << 19) - 1, 32).source_in_header);
  EXPECT_EQ(ep::make_tag_layout((1LL << 19) - 1, 33), (ep::TagLayout{6, 4, 4, true}));
  EXPECT_EQ(ep::make_tag_layout((1LL << 19) - 1, 256), (ep::TagLayout{8, 4, 16, true}));
  // A budget of one channel: the pair while it fits the tag, else the header.
  EXPECT_EQ(ep::make_tag_layout((1LL << 19) - 1, 4, 1), (ep::TagLayout{2, 4, 1, false}));
  EXPECT_EQ(ep::make_tag_layout((1LL << 19) - 1, 16, 1), (ep::TagLayout{4, 4, 1, true}));
}

TEST(TagLayout, FullLayoutWhereTheBoundAllowsIt) {
  EXPECT_EQ(ep::make_tag_layout(ep::kRequiredTagUb, 256), ep::TagLayout{});
  EXPECT_EQ(ep::make_tag_layout(ep::kRequiredTagUb, 3), ep::TagLayout{});
  // Debian MPICH (2^28-1): every endpoint count up to 64 on one channel.
  EXPECT_EQ(ep::make_tag_layout((1LL << 28) - 1, 64).channels, 1);
}

TEST(TagLayout, DocumentedEndpointLimitsOfTheNarrowLayouts) {
  // The most endpoints per process within kMaxTagChannels channels, in the
  // channel layout and in all, as docs/ep.md lists them.
  const auto most = [](long long bound, bool pairs_only) {
    int n = 1;
    while (n < ep::kMaxEndpointsPerProcess) {
      const ep::TagLayout next = ep::make_tag_layout(bound, n + 1);
      if (next.channels > ep::kMaxTagChannels || (pairs_only && next.source_in_header)) break;
      ++n;
    }
    return n;
  };
  EXPECT_EQ(most((1LL << 19) - 1, true), 32);   // Intel MPI 2021
  EXPECT_EQ(most((1LL << 21) - 1, true), 64);   // Cray MPICH
  EXPECT_EQ(most((1LL << 23) - 1, true), 128);  // Open MPI + UCX
  EXPECT_EQ(most((1LL << 25) - 1, true), 256);
  EXPECT_EQ(most((1LL << 28) - 1, true), 256);  // MPICH
  for (const long long bound : {(1LL << 17) - 1, (1LL << 19) - 1, (1LL << 21) - 1}) {
    EXPECT_EQ(most(bound, false), 256) << "bound " << bound;
  }
  EXPECT_EQ(most(65535, false), 128);
  EXPECT_EQ(most(32767, false), 64);  // the MPI minimum
}

TEST(TagLayout, CreateEndpointsRefusesWhatTheBoundCannotAddress) {
  ep::EndpointOptions options;
  options.tag_ub = 32767;  // no thread bit in the tag: 128 destinations need 128 channels
  ep_p2p::expect_ep_error([&] { (void)ep::create_endpoints(MPI_COMM_SELF, 128, options); },
                          ep::ErrorKind::kTooManyEndpoints, {"at most 64 per process"},
                          "128 endpoints under MPI_TAG_UB 32767");
  options.max_tag_channels = 4;  // a smaller channel budget lowers the limit
  ep_p2p::expect_ep_error([&] { (void)ep::create_endpoints(MPI_COMM_SELF, 16, options); },
                          ep::ErrorKind::kTooManyEndpoints, {"at most 4 per process"},
                          "16 endpoints in 4 channels under MPI_TAG_UB 32767");
  options.max_tag_channels = 0;
  ep_p2p::expect_ep_error([&] { (void)ep::create_endpoints(MPI_COMM_SELF, 1, options); },
                          ep::ErrorKind::kArgument, {"max_tag_channels is 0"},
                          "a channel budget of 0");
  options.max_tag_channels.reset();
  options.tag_ub = 1000;
  ep_p2p::expect_ep_error([&] { (void)ep::create_endpoints(MPI_COMM_SELF, 1, options); },
                          ep::ErrorKind::kTag, {"1000"}, "a tag bound of 1000");
}

TEST(TagLayout, EightChannelsCarryARingInOrder) {
  // 2^16-1 leaves one pair bit: 3 endpoints per process use 8 channels.
  ep::EndpointOptions options;
  options.tag_ub = 65535;
  auto eps = ep::create_endpoints(MPI_COMM_WORLD, 3, options);
  std::vector<int> failures(3, 0);
  MPI_Datatype int_type = MPI_INT;  // not const: GCC would fold in the global it names
#pragma omp parallel num_threads(3) default(none) shared(eps, failures, int_type)
  {
    ep::Communicator& comm = eps[static_cast<std::size_t>(omp_get_thread_num())];
    const int n = comm.size();
    for (int round = 0; round < 50; ++round) {
      for (int peer = 0; peer < n; ++peer) {
        const int out = comm.rank() * 1000 + round;
        int in = -1;
        comm.sendrecv(&out, 1, int_type, peer, round % 7, &in, 1, int_type, peer, round % 7);
        if (in != peer * 1000 + round) ++failures[static_cast<std::size_t>(omp_get_thread_num())];
      }
    }
    comm.free();
  }
  for (const int f : failures) EXPECT_EQ(f, 0);
}

// One endpoint's part of a ring over the processes under the source-header
// layout: to the same thread one process on, from the same thread one
// process back (itself with one process), as a small message (header and
// data in one MPI message), a large one (data apart from its header) and a
// synchronous one, received with wildcards so that only the header can say
// who sent them. Returns the number of wrong results.
int header_ring(ep::Communicator& comm, int local, MPI_Datatype int_type) {
  const int n = comm.size();
  const int to = (comm.rank() + local) % n;
  const int from = (comm.rank() - local + n) % n;
  constexpr int kLarge = 16 * 1024;  // 64 KiB: well past the inline size
  const int small_out = comm.rank();
  std::vector<int> large_out(kLarge, comm.rank());
  const int sync_out = -comm.rank();
  std::vector<ep::Request> sends;
  sends.push_back(comm.isend(&small_out, 1, int_type, to, 1));
  sends.push_back(comm.isend(large_out.data(), kLarge, int_type, to, 2));
  sends.push_back(comm.issend(&sync_out, 1, int_type, to, 3));
  int failures = 0;
  std::vector<int> in(kLarge, -1);
  for (int expected_tag = 1; expected_tag <= 3; ++expected_tag) {
    // One sender, so MPI's order holds even for wildcard receives.
    const ep::Status st = comm.recv(in.data(), kLarge, int_type, ep::kAnySource, ep::kAnyTag);
    if (st.source != from || st.tag != expected_tag) ++failures;
    const int want = expected_tag == 3 ? -from : from;
    const std::size_t ints = expected_tag == 2 ? kLarge : 1;
    if (st.bytes != ints * sizeof(int)) ++failures;
    for (std::size_t i = 0; i < ints; ++i) failures += in[i] != want ? 1 : 0;
  }
  ep::wait_all(sends);
  return failures;
}

TEST(TagLayout, TwoHundredFiftySixEndpointsUnderTheIntelMpiBound) {
  // 256 endpoints per process under 2^19-1: 4096 channels as pairs, so the
  // source rides in the header (16 channels).
  constexpr int kLocal = ep::kMaxEndpointsPerProcess;
  ep::EndpointOptions options;
  options.tag_ub = (1LL << 19) - 1;
  auto eps = ep::create_endpoints(MPI_COMM_WORLD, kLocal, options);
  std::vector<int> failures(kLocal, 0);
  MPI_Datatype int_type = MPI_INT;
#pragma omp parallel num_threads(kLocal) default(none) shared(eps, failures, int_type)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    failures[t] = header_ring(eps[t], kLocal, int_type);  // an ep::Error ends the job: no hang
    eps[t].free();
  }
  int wrong = 0;
  for (const int f : failures) wrong += f;
  EXPECT_EQ(wrong, 0);
}

TEST(TagLayout, ATwoChannelBudgetCarriesTheSourceInTheHeader) {
  // Two channels at most under 2^16-1: three endpoints per process take the
  // source-header layout on two channels, and the ring still holds.
  ep::EndpointOptions options;
  options.tag_ub = 65535;
  options.max_tag_channels = 2;
  constexpr int kLocal = 3;
  auto eps = ep::create_endpoints(MPI_COMM_WORLD, kLocal, options);
  std::vector<int> failures(kLocal, 0);
  MPI_Datatype int_type = MPI_INT;
#pragma omp parallel num_threads(kLocal) default(none) shared(eps, failures, int_type)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    for (int round = 0; round < 20; ++round) failures[t] += header_ring(eps[t], kLocal, int_type);
    eps[t].free();
  }
  for (const int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
