#include "collective/peer_exchange.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "collective/internal_tags.hpp"
#include "team/failure_slot.hpp"

namespace ep::detail {

namespace {

// A block that arrived at another size than its receiver expects, received
// whole into a buffer of its own.
struct Mismatched {
  int from;
  std::size_t bytes;
  std::unique_ptr<std::byte[]> data;
  std::unique_ptr<ByteRuns> layout;
};

// MPI's (buffer, count, datatype) for a block; an empty block as zero bytes
// (alltoallw accepts MPI_DATATYPE_NULL for it, which MPI would reject).
struct MpiBlock {
  void* buf;
  int count;
  MPI_Datatype type;
};
MpiBlock mpi_block(const TypedBuffer& block) {
  if (block.count == 0) return {nullptr, 0, MPI_BYTE};
  return {const_cast<void*>(block.buf), block.count, block.type};
}

}  // namespace

void exchange_peer_blocks(const CollectiveCall& call, const ExchangeSpec& spec, PeerPairs pairs) {
  const int me = call.rank;
  const int processes = call.processes();
  FailureSlot failure;
  if (pairs.moves(me, me)) {
    failure.guard(call.name, call.rank,
                  [&] { copy_local_block(call, spec, me, spec, me, failure); });
  }
  if (processes > 1) {
    std::vector<MPI_Request> requests;
    requests.reserve(2 * static_cast<std::size_t>(processes));
    std::vector<int> senders;
    for (int q = 0; q < processes; ++q) {
      if (q == me) continue;
      if (pairs.moves(q, me)) senders.push_back(q);
      if (!pairs.moves(me, q)) continue;
      const MpiBlock out = mpi_block(spec.send[static_cast<std::size_t>(q)]);
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(MPI_Isend(out.buf, out.count, out.type, q, kPeerBlockTag, call.mpi(), &request),
                call.name, call.rank);
      requests.push_back(request);
    }
    std::vector<Mismatched> mismatched;
    receive_probed(
        call, kPeerBlockTag, std::move(senders), requests,
        [&](int q, std::size_t bytes, MPI_Message& message) {
          const TypedBuffer& block = spec.recv[static_cast<std::size_t>(q)];
          if (bytes != block.bytes()) {
            Mismatched& m = mismatched.emplace_back(Mismatched{
                q, bytes,
                std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(bytes, 1)),
                nullptr});
            return receive_bytes(call, m.data.get(), bytes, message, m.layout);
          }
          const MpiBlock in = mpi_block(block);
          MPI_Request request = MPI_REQUEST_NULL;
          check_mpi(MPI_Imrecv(in.buf, in.count, in.type, &message, &request), call.name,
                    call.rank);
          return request;
        });
    wait_mpi_all(requests, call);
    // As MPI receives a message longer than its buffer: the part that fits
    // lands, and the error says what did not.
    for (const Mismatched& m : mismatched) {
      const TypedBuffer& block = spec.recv[static_cast<std::size_t>(m.from)];
      record_block_mismatch(call, failure, m.from, me, m.bytes, block.bytes());
      failure.guard(call.name, call.rank,
                    [&] { unpack_from(m.data.get(), std::min(m.bytes, block.bytes()), block); });
    }
  }
  failure.rethrow(call.name, call.rank);
}

}  // namespace ep::detail
