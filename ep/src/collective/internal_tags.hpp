// The point-to-point tags of a communicator's internal MPI communicator
// (CommState::internal_comm), all in one place so that no two uses collide.
//
// The internal communicator carries the collectives' process-level traffic:
// MPI's own collectives (which never match point-to-point messages) and the
// point-to-point messages below. Each tag belongs to one family of calls,
// and within a family MPI's non-overtaking rule does the matching: every
// process makes the calls of a communicator in the same order, each call
// sends exactly one message per process pair on its tag, and the receiver
// takes them in call order. A family whose calls may be in flight together
// and completed in any order (the nonblocking block exchanges) also orders
// its probes (ProbeTurns, segment_exchange.hpp).
//
// The values spell two letters each, which makes them easy to spot in an
// MPI trace; all are far below the smallest MPI_TAG_UB (32767).
#pragma once

namespace ep::detail {

/// The nonblocking block exchanges and iallgather(v): one segment per
/// process pair, matched by probe in ProbeTurns order
/// (segment_exchange.hpp).
inline constexpr int kProbedSegmentTag = 0x4153;  // "AS"

/// The blocking alltoall(v/w) between several processes: one segment per
/// process pair, matched by probe (collective/alltoall.cpp). Blocking calls
/// of one process follow each other, so no probe order is needed beyond
/// MPI's; the tag differs from kProbedSegmentTag because a blocking call may
/// run while nonblocking exchanges are still in flight.
inline constexpr int kAlltoallSegmentTag = 0x4157;  // "AW"

/// The blocking collectives that move blocks, on a communicator with one
/// endpoint per process (collective/segment_exchange.hpp, exchange_peer_blocks): at most one
/// message per ordered process pair and call, probed for by exactly the receivers that expect one.
/// Apart from kAlltoallSegmentTag only for clarity: one communicator's blocking calls all take the
/// same path.
inline constexpr int kPeerBlockTag = 0x5042;  // "PB"

/// The neighbour collectives, blocking and nonblocking alike: one tag
/// suffices because a nonblocking call posts its messages before a later
/// call of the same process can (neighbor_blocks.hpp).
inline constexpr int kNeighborTag = 0x4e42;  // "NB"

}  // namespace ep::detail
