// Shared machinery of the all-to-all family (alltoall, alltoallv, alltoallw
// and the nonblocking ialltoallv): one endpoint's blocks to and from every EP
// rank, the per-process staging format, and the byte exchange between
// processes.
//
// Between processes there is ONE message per process pair. The message that
// process A sends to process B is a sequence of regions, one per thread s of
// A in thread order:
//
//   region(s) = [ T_B x uint64: bytes of the block s -> (B, d) for d = 0..T_B-1 ]
//               [ packed block s -> (B, 0) ][ packed block s -> (B, 1) ] ...
//
// The size row lets the receiver find every block without a separate count
// exchange (it knows what to expect from its own receive arguments) and check
// that the sender agreed (MPI requires matching type signatures; a mismatch
// is reported, never silently misplaced). Rows are in native byte order: the
// processes of one job share the architecture.
//
// Thread safety: an ExchangeSpec is written by its endpoint before it is
// shared and only read afterwards; FailureSlot is thread-safe.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backoff.hpp"
#include "checks.hpp"
#include "datatype.hpp"
#include "ep/error.hpp"
#include "team/collective_call.hpp"
#include "team/failure_slot.hpp"

namespace ep::detail {

struct RequestState;

/// One endpoint's side of an all-to-all: what it sends to and receives from
/// every EP rank.
struct ExchangeSpec {
  std::vector<TypedBuffer> send;  // by destination EP rank
  std::vector<TypedBuffer> recv;  // by source EP rank
  // MPI_IN_PLACE: the outgoing data, packed before anything is overwritten;
  // `send` then points into it (as bytes).
  std::unique_ptr<std::byte[]> in_place_copy;
  // Per process q: bytes of this endpoint's region in the message to q, and
  // bytes of data it expects from the endpoints of q.
  std::vector<std::size_t> region_bytes;
  std::vector<std::size_t> expected_bytes;
};

/// One side (send or receive) of an all-to-all call, as the user gave it.
struct BlockArgs {
  bool is_send = true;  // names the arguments in messages: sendcounts / recvcounts...
  const void* buf = nullptr;
  int count = 0;                          // alltoall: the count of every block
  std::span<const int> counts{};          // alltoallv/w: one count per EP rank
  std::span<const int> displs{};          // alltoallv/w: one displacement per EP rank
  bool per_peer = false;                  // counts and displs are per EP rank
  bool byte_displs = false;               // alltoallw: displacements are in bytes
  MPI_Datatype type = MPI_DATATYPE_NULL;  // alltoall/alltoallv: one type
  std::span<const MPI_Datatype> types{};  // alltoallw: one type per EP rank
  bool per_peer_types = false;
};

/// Both sides of an all-to-all call, from MPI's arguments (the spans are
/// referred to, not copied).
struct AlltoallSides {
  BlockArgs send;
  BlockArgs recv;
};
AlltoallSides alltoall_sides(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype);
AlltoallSides alltoallv_sides(const void* sendbuf, std::span<const int> sendcounts,
                              std::span<const int> sdispls, MPI_Datatype sendtype, void* recvbuf,
                              std::span<const int> recvcounts, std::span<const int> rdispls,
                              MPI_Datatype recvtype);
AlltoallSides alltoallw_sides(const void* sendbuf, std::span<const int> sendcounts,
                              std::span<const int> sdispls, std::span<const MPI_Datatype> sendtypes,
                              void* recvbuf, std::span<const int> recvcounts,
                              std::span<const int> rdispls,
                              std::span<const MPI_Datatype> recvtypes);

/// Checks one side's arguments (array lengths, counts, types); throws ep::Error.
void check_block_args(const CollectiveCall& call, const BlockArgs& args);

/// Checks the arguments and describes the endpoint's blocks. `send` is
/// ignored when `in_place`: the outgoing data is then `recv`'s blocks, packed
/// into in_place_copy before anything can overwrite them. Throws ep::Error.
ExchangeSpec make_exchange_spec(const CollectiveCall& call, const BlockArgs& send,
                                const BlockArgs& recv, bool in_place);

/// Bytes of the endpoint's region (size row and blocks) in the message to process `q`.
std::size_t region_size(const ExchangeSpec& spec, const RankMap& map, int q);

/// Writes the region of `spec` for process `q` (size row, then blocks) at `out`.
void pack_region(const ExchangeSpec& spec, const RankMap& map, int q, std::byte* out);

/// Copies block `from_rank -> to_rank` between two endpoints of this process
/// (from's send block for to_rank into to's receive block for from_rank).
void copy_local_block(const CollectiveCall& call, const ExchangeSpec& from, int from_rank,
                      const ExchangeSpec& to, int to_rank, FailureSlot& failure);

/// Unpacks the blocks of `call`'s endpoint from the message received from
/// process `q` (`segment`, `bytes` long) into its receive blocks; size
/// mismatches and a malformed message are recorded in `failure`.
void unpack_segment(const CollectiveCall& call, const ExchangeSpec& spec, int q,
                    const std::byte* segment, std::size_t bytes, FailureSlot& failure);

/// unpack_segment without the copies: records what it would (size mismatches,
/// a malformed message) and writes nothing.
void check_segment(const CollectiveCall& call, const ExchangeSpec& spec, int q,
                   const std::byte* segment, std::size_t bytes, FailureSlot& failure);

/// Records in `failure` that the block from `from_rank` to `to_rank` carries
/// `sent` bytes where its receiver expects `expected` (kTruncate when more,
/// kCount when less), naming both EP ranks and both sizes.
void record_block_mismatch(const CollectiveCall& call, FailureSlot& failure, int from_rank,
                           int to_rank, std::size_t sent, std::size_t expected);

/// Bytes of the message from process `q` as the receiving process expects it,
/// from the expected_bytes of its endpoints' specs.
std::size_t expected_segment_size(const RankMap& map, int q,
                                  std::span<const ExchangeSpec* const> specs);

}  // namespace ep::detail
