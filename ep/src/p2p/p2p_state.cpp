// The point-to-point state's life: the tag layout it is built on, its MPI
// channel duplicates and mailboxes, and their release. The drain and the
// direct receive path are in p2p/inter_process.cpp.
#include "p2p/p2p_state.hpp"

#include <algorithm>
#include <string>

#include "checks.hpp"
#include "ep/error.hpp"

namespace ep::detail {

namespace {

// The tag layout for `map` under `tag_ub`, or an error that says what this
// MPI allows. Every process computes the same answer from the same map.
TagLayout checked_tag_layout(const RankMap& map, long long tag_ub, int max_channels,
                             const char* call) {
  int max_local = 1;
  for (int p = 0; p < map.num_processes(); ++p) {
    max_local = std::max(max_local, map.endpoints_of(p));
  }
  if (tag_bits(tag_ub) < kUserTagBits) {
    throw Error(ErrorKind::kTag, call, -1,
                "MPI_TAG_UB is " + std::to_string(tag_ub) + "; endpoints need at least " +
                    std::to_string(kMaxUserTag) + " (the MPI minimum) for user tags 0.." +
                    std::to_string(kMaxUserTag));
  }
  const TagLayout layout = make_tag_layout(tag_ub, max_local, max_channels);
  if (layout.channels > max_channels) {
    int allowed = 1;
    while (allowed * 2 <= kMaxEndpointsPerProcess &&
           make_tag_layout(tag_ub, allowed * 2, max_channels).channels <= max_channels) {
      allowed *= 2;
    }
    throw Error(ErrorKind::kTooManyEndpoints, call, -1,
                "a process has " + std::to_string(max_local) + " endpoints; with MPI_TAG_UB " +
                    std::to_string(tag_ub) + " the tag encoding addresses at most " +
                    std::to_string(allowed) + " per process (" + std::to_string(max_channels) +
                    " channel communicators)");
  }
  return layout;
}

}  // namespace

P2pState::P2pState(MPI_Comm process_comm, const RankMap& map, int process_rank, long long tag_ub,
                   int max_tag_channels, const char* call)
    : map_(map),
      process_rank_(process_rank),
      local_size_(map.endpoints_of(process_rank)),
      tag_ub_(tag_ub),
      tag_layout_(checked_tag_layout(map, tag_ub, max_tag_channels, call)),
      mailboxes_(new Mailbox[static_cast<std::size_t>(local_size_)]) {
  for (int t = 0; t < local_size_; ++t) mailboxes_[t].init_rings(local_size_);
  // Private duplicates, one per channel of the tag layout: user messages
  // never meet the communicator's internal traffic, whatever tags they use.
  // Errors come back as codes that check_mpi turns into ep::Error.
  p2p_comms_.assign(static_cast<std::size_t>(tag_layout_.channels), MPI_COMM_NULL);
  for (MPI_Comm& channel : p2p_comms_) {
    check_mpi(MPI_Comm_dup(process_comm, &channel), call, -1);
    check_mpi(MPI_Comm_set_errhandler(channel, MPI_ERRORS_RETURN), call, -1);
  }
  if (tag_layout_.source_in_header) {
    check_mpi(MPI_Comm_dup(process_comm, &bulk_comm_), call, -1);
    check_mpi(MPI_Comm_set_errhandler(bulk_comm_, MPI_ERRORS_RETURN), call, -1);
  }
}

void P2pState::release(const char* call, int ep_rank) {
  for (int t = 0; t < local_size_; ++t) clear_mailbox(mailboxes_[t]);
  for (MPI_Comm& channel : p2p_comms_) check_mpi(MPI_Comm_free(&channel), call, ep_rank);
  if (bulk_comm_ != MPI_COMM_NULL) check_mpi(MPI_Comm_free(&bulk_comm_), call, ep_rank);
}

}  // namespace ep::detail
