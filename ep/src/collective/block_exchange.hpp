// The one mechanism behind the nonblocking collectives that move blocks
// between endpoints without combining them: ialltoall(v/w), igather(v) and
// iscatter(v) (iallgather(v), whose blocks go to everyone, packs each once
// into shared slots instead: iallgather.cpp). Each describes, per endpoint, one send block
// per destination EP rank and one receive block per source EP rank (count 0
// where nothing moves), in the all-to-all form of aggregated_exchange.hpp;
// the exchange then runs as ialltoallv always did:
//   - in its call, each endpoint packs its blocks for other processes into a
//     private staging buffer and copies the blocks between itself and the
//     local endpoints that called before it (each pair once, by the later);
//   - the last local caller sends one message to every other process whose
//     datatype gathers the threads' staged regions (no copy into a common
//     buffer);
//   - polls receive each process's message through a matched probe, at the
//     size it was sent, so sizes that disagree never reach MPI (they are
//     found in the size rows and fail every local request);
//   - each endpoint unpacks its own blocks when it polls its request.
// The same in every layout: with one endpoint per process too, a block whose
// two sides disagree is reported instead of reaching MPI.
#pragma once

#include <mpi.h>

#include "collective/aggregated_exchange.hpp"
#include "ep/communicator.hpp"
#include "ep/request.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

/// Starts the calling endpoint's part of the exchange described by `send`
/// and `recv` (per_peer blocks, see BlockArgs). With `in_place` the outgoing
/// data is `recv`'s blocks (all-to-all's MPI_IN_PLACE) and `send` is ignored.
/// Argument errors throw from here, before the endpoint joins the instance.
Request start_block_exchange(const Communicator& comm, const CollectiveCall& call,
                             const BlockArgs& send, const BlockArgs& recv, bool in_place);

}  // namespace ep::detail
