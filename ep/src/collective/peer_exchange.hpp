// The blocking collectives that move blocks (alltoall(v/w), gather(v),
// scatter(v), allgather(v)) on a communicator with one endpoint per process,
// EP ranks in process order: one thread per process, so no team and no
// staging. Each block between two processes travels as one point-to-point
// message on the internal communicator, straight from the sender's buffer,
// and is received through a matched probe at the size it was sent: into the
// receive block when the two sides agree, else whole into a buffer of its
// own, of which the part that fits is then unpacked into the receive block
// and the block is reported (kTruncate when more was sent than the receiver
// expects, kCount when less) on the receiving endpoint. Every other endpoint
// completes with its data, as in the layouts with several endpoints per
// process (aggregated_exchange.hpp).
//
// MPI's own collective with the user's arguments would cost about the same
// (its linear algorithms post the same messages), but a call whose two sides
// disagree is erroneous there: Open MPI's nonblocking collectives report the
// truncation through MPI_COMM_WORLD's error handler, which aborts the job,
// and MPICH 4.0's MPI_Ialltoallv delivers wrong data without a word. Open
// MPI 4.1.4's MPI_Ialltoallv in place also delivers wrong data at 4
// processes with blocks of thousands of ints, which an exchange of messages
// from a packed copy avoids.
//
// Tag: kPeerBlockTag (internal_tags.hpp). A call sends at most one message
// per ordered process pair, and the receiver probes exactly the processes
// that send to it (PeerPairs, which every process derives from the same
// arguments), so MPI's order per (process, tag) keeps consecutive calls apart.
#pragma once

#include "collective/aggregated_exchange.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

/// Which process pairs exchange a message in one call (EP rank = process
/// rank: one endpoint per process).
struct PeerPairs {
  enum class Shape {
    kAll,       ///< every process to every process (alltoall, allgather)
    kToRoot,    ///< every process to the root (gather)
    kFromRoot,  ///< the root to every process (scatter)
  };
  Shape shape = Shape::kAll;
  int root = 0;
  /// Whether the own block moves from the send to the receive side (false:
  /// MPI_IN_PLACE left it where it belongs already).
  bool self = true;

  [[nodiscard]] bool moves(int from, int to) const noexcept {
    if (from == to && !self) return false;
    switch (shape) {
      case Shape::kAll:
        return true;
      case Shape::kToRoot:
        return to == root;
      case Shape::kFromRoot:
        return from == root;
    }
    return false;
  }
};

/// Moves the blocks of `spec` (this endpoint's send and receive blocks, by
/// EP rank) between the pairs of `pairs` and returns once every block has
/// arrived and every send has completed. Throws ep::Error for a block whose
/// two sides disagree (after receiving the part that fits) or an MPI
/// failure. Collective over the communicator's processes; called by their
/// one endpoint each, with one_endpoint_per_process() true.
void exchange_peer_blocks(const CollectiveCall& call, const ExchangeSpec& spec, PeerPairs pairs);

}  // namespace ep::detail
