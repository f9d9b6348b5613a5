// Where the intra-process path switches protocol (p2p/intra_process.hpp):
// packed into the ring (eager: two copies, the sender free at once) or left
// in the sender's buffer for the receiver to copy once (rendezvous: one copy
// and a hand-shake). The default eager threshold is the size where the two
// cost the same on the machine, as the tuner measured it
// (scripts/tune_p2p.py, which times both protocols per size with
// ep_pingpong and writes the crossover); EP_EAGER_THRESHOLD or
// EndpointOptions::eager_threshold still override it (create_endpoints).
//
// Thread safety: the tuning is read once, on the first call, under a
// function-local static; every later call only reads it.
#pragma once

#include <cstddef>

namespace ep::detail {

/// The eager threshold a communicator gets when neither its options nor
/// EP_EAGER_THRESHOLD set one: `eager_threshold=N` from the file named by
/// EP_P2P_TUNING (written by scripts/tune_p2p.py), else
/// ep::kDefaultEagerThreshold (measured on the development machine; it
/// stays within the ring's inline capacity at up to 32 endpoints per
/// process, 8176 bytes, so the default sends no eager envelope, whose
/// allocation and second copy made 8-16 KiB slower than a 32 KiB
/// rendezvous). A file that cannot be read or holds no valid
/// value is an error of `call` naming the file and the line.
std::size_t tuned_eager_threshold(const char* call);

}  // namespace ep::detail
