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

namespace {

constexpr long long kBounds[] = {
    32767,           65535,           (1LL << 19) - 1,   (1LL << 21) - 1,
    (1LL << 23) - 1, (1LL << 28) - 1, ep::kRequiredTagUb};

TEST(TagLayout, EveryFieldRoundTripsAndStaysUnderTheBound) {
  for (const long long bound : kBounds) {
    for (const int endpoints : {1, 2, 3, 5, 16, 33, 64, 256}) {
      const ep::TagLayout layout = ep::make_tag_layout(bound, endpoints);
      if (layout.channels > ep::kMaxTagChannels) continue;  // refused at creation
      std::set<std::pair<int, int>> seen;
      for (const int user : {0, 1, 12345, ep::kMaxUserTag}) {
        for (int src = 0; src < endpoints; ++src) {
          for (int dst = 0; dst < endpoints; dst += (endpoints > 40 ? 7 : 1)) {
            const ep::WireAddress wire = ep::encode(layout, {user, src, dst});
            EXPECT_GE(wire.tag, 0);
            EXPECT_LE(wire.tag, bound) << "bound " << bound << " endpoints " << endpoints;
            EXPECT_GE(wire.channel, 0);
            EXPECT_LT(wire.channel, layout.channels);
            EXPECT_EQ(ep::decode(layout, wire.channel, wire.tag), (ep::WireTag{user, src, dst}));
            EXPECT_TRUE(seen.insert({wire.channel, wire.tag}).second) << "two fields, one wire";
          }
        }
      }
    }
  }
}

TEST(TagLayout, FullLayoutWhereTheBoundAllowsIt) {
  EXPECT_EQ(ep::make_tag_layout(ep::kRequiredTagUb, 256), ep::TagLayout{});
  EXPECT_EQ(ep::make_tag_layout(ep::kRequiredTagUb, 3), ep::TagLayout{});
  // Debian MPICH (2^28-1): every endpoint count up to 64 on one channel.
  EXPECT_EQ(ep::make_tag_layout((1LL << 28) - 1, 64).channels, 1);
}

TEST(TagLayout, DocumentedEndpointLimitsOfTheNarrowLayouts) {
  // The most endpoints per process within kMaxTagChannels channels, as
  // docs/ep.md lists them.
  const auto most = [](long long bound) {
    int n = 1;
    while (n < ep::kMaxEndpointsPerProcess &&
           ep::make_tag_layout(bound, n + 1).channels <= ep::kMaxTagChannels) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(most((1LL << 19) - 1), 32);   // Intel MPI 2021
  EXPECT_EQ(most((1LL << 21) - 1), 64);   // Cray MPICH
  EXPECT_EQ(most((1LL << 23) - 1), 128);  // Open MPI + UCX
  EXPECT_EQ(most((1LL << 25) - 1), 256);
  EXPECT_EQ(most((1LL << 28) - 1), 256);  // MPICH
}

TEST(TagLayout, CreateEndpointsRefusesWhatTheBoundCannotAddress) {
  ep::EndpointOptions options;
  options.tag_ub = 32767;  // no thread bit in the tag: 16 endpoints need 256 channels
  try {
    (void)ep::create_endpoints(MPI_COMM_SELF, 16, options);
    ADD_FAILURE() << "16 endpoints under MPI_TAG_UB 32767 were accepted";
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), ep::ErrorKind::kTooManyEndpoints);
    EXPECT_NE(std::string(e.what()).find("at most 8 per process"), std::string::npos) << e.what();
  }
  options.tag_ub = 1000;
  try {
    (void)ep::create_endpoints(MPI_COMM_SELF, 1, options);
    ADD_FAILURE() << "a tag bound of 1000 was accepted";
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), ep::ErrorKind::kTag);
    EXPECT_NE(std::string(e.what()).find("1000"), std::string::npos) << e.what();
  }
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

}  // namespace
