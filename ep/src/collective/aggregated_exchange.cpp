#include "collective/aggregated_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "collective/segment_exchange.hpp"
#include "p2p/request_state.hpp"

namespace ep::detail {

namespace {

const char* counts_name(const BlockArgs& a) { return a.is_send ? "sendcounts" : "recvcounts"; }
const char* displs_name(const BlockArgs& a) { return a.is_send ? "sdispls" : "rdispls"; }
const char* types_name(const BlockArgs& a) { return a.is_send ? "sendtypes" : "recvtypes"; }

void check_length(const CollectiveCall& call, std::size_t length, const char* what) {
  check_entries(length, call.size(), what, call.name, call.rank);
}

int count_of(const BlockArgs& a, int peer) {
  return a.per_peer ? a.counts[static_cast<std::size_t>(peer)] : a.count;
}

// A run of packed bytes seen as a typed buffer (the in-place copy).
TypedBuffer byte_buffer(const CollectiveCall& call, const std::byte* data, std::size_t bytes) {
  const int count = checked_int_count(bytes, "MPI_IN_PLACE block bytes", call.name, call.rank);
  return {data, count, MPI_BYTE, TypeLayout{1, 0, true}};
}

// Every block of one side, by peer EP rank.
std::vector<TypedBuffer> describe_blocks(const CollectiveCall& call, const BlockArgs& a) {
  const int n = call.size();
  std::vector<TypedBuffer> blocks(static_cast<std::size_t>(n));
  const auto* base = static_cast<const std::byte*>(a.buf);
  // Layout and extent of the current type, looked up again only when the type
  // changes (alltoallw usually repeats a few types).
  MPI_Datatype cached = MPI_DATATYPE_NULL;
  TypeLayout layout;
  MPI_Aint extent = 0;
  for (int j = 0; j < n; ++j) {
    const auto index = static_cast<std::size_t>(j);
    const int count = count_of(a, j);
    const MPI_Datatype type = a.per_peer_types ? a.types[index] : a.type;
    if (count == 0) {
      // Nothing moves: any type (even MPI_DATATYPE_NULL in alltoallw) will do.
      blocks[index] = {base, 0, type, TypeLayout{}};
      continue;
    }
    if (type != cached || cached == MPI_DATATYPE_NULL) {
      layout = layout_of(type, call.name, call.rank);
      extent = element_offset(type, 1, call.name, call.rank);
      cached = type;
    }
    MPI_Aint offset = 0;
    if (a.byte_displs) {
      offset = a.displs[index];
    } else if (a.per_peer) {
      offset = static_cast<MPI_Aint>(a.displs[index]) * extent;
    } else {
      offset = static_cast<MPI_Aint>(j) * a.count * extent;
    }
    blocks[index] = {base + offset, count, type, layout};
  }
  return blocks;
}

}  // namespace

AlltoallSides alltoall_sides(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  return {{.is_send = true, .buf = sendbuf, .count = sendcount, .type = sendtype},
          {.is_send = false, .buf = recvbuf, .count = recvcount, .type = recvtype}};
}

AlltoallSides alltoallv_sides(const void* sendbuf, std::span<const int> sendcounts,
                              std::span<const int> sdispls, MPI_Datatype sendtype, void* recvbuf,
                              std::span<const int> recvcounts, std::span<const int> rdispls,
                              MPI_Datatype recvtype) {
  return {{.is_send = true,
           .buf = sendbuf,
           .counts = sendcounts,
           .displs = sdispls,
           .per_peer = true,
           .type = sendtype},
          {.is_send = false,
           .buf = recvbuf,
           .counts = recvcounts,
           .displs = rdispls,
           .per_peer = true,
           .type = recvtype}};
}

AlltoallSides alltoallw_sides(const void* sendbuf, std::span<const int> sendcounts,
                              std::span<const int> sdispls, std::span<const MPI_Datatype> sendtypes,
                              void* recvbuf, std::span<const int> recvcounts,
                              std::span<const int> rdispls,
                              std::span<const MPI_Datatype> recvtypes) {
  AlltoallSides sides = alltoallv_sides(sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, recvbuf,
                                        recvcounts, rdispls, MPI_DATATYPE_NULL);
  for (BlockArgs* side : {&sides.send, &sides.recv}) {
    side->byte_displs = true;
    side->per_peer_types = true;
  }
  sides.send.types = sendtypes;
  sides.recv.types = recvtypes;
  return sides;
}

void check_block_args(const CollectiveCall& call, const BlockArgs& a) {
  if (a.per_peer) {
    check_length(call, a.displs.size(), displs_name(a));
    check_counts(a.counts, call.size(), counts_name(a), call.name, call.rank);
  } else if (a.count < 0) {
    throw Error(ErrorKind::kCount, call.name, call.rank,
                std::string(a.is_send ? "sendcount " : "recvcount ") + std::to_string(a.count) +
                    " is negative");
  }
  if (a.per_peer_types) {
    check_length(call, a.types.size(), types_name(a));
    for (int j = 0; j < call.size(); ++j) {
      const auto index = static_cast<std::size_t>(j);
      if (a.types[index] == MPI_DATATYPE_NULL && a.counts[index] > 0) {
        throw Error(ErrorKind::kArgument, call.name, call.rank,
                    std::string(types_name(a)) + "[" + std::to_string(j) +
                        "] is MPI_DATATYPE_NULL for a non-empty block");
      }
    }
  } else if (a.type == MPI_DATATYPE_NULL) {
    throw Error(ErrorKind::kArgument, call.name, call.rank,
                std::string(a.is_send ? "sendtype" : "recvtype") + " is MPI_DATATYPE_NULL");
  }
}

ExchangeSpec make_exchange_spec(const CollectiveCall& call, const BlockArgs& send,
                                const BlockArgs& recv, bool in_place) {
  check_block_args(call, recv);
  if (!in_place) check_block_args(call, send);
  const RankMap& map = call.comm.rank_map();
  const int n = call.size();
  ExchangeSpec spec;
  spec.recv = describe_blocks(call, recv);
  if (in_place) {
    std::size_t total = 0;
    for (const TypedBuffer& b : spec.recv) total += b.bytes();
    spec.in_place_copy =
        std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(total, 1));
    spec.send.resize(static_cast<std::size_t>(n));
    std::byte* out = spec.in_place_copy.get();
    for (int j = 0; j < n; ++j) {
      const TypedBuffer& block = spec.recv[static_cast<std::size_t>(j)];
      pack_into(block, out);
      spec.send[static_cast<std::size_t>(j)] = byte_buffer(call, out, block.bytes());
      out += block.bytes();
    }
  } else {
    spec.send = describe_blocks(call, send);
  }
  const int processes = map.num_processes();
  spec.region_bytes.assign(static_cast<std::size_t>(processes), 0);
  spec.expected_bytes.assign(static_cast<std::size_t>(processes), 0);
  for (int q = 0; q < processes; ++q) {
    spec.region_bytes[static_cast<std::size_t>(q)] = region_size(spec, map, q);
    std::size_t expected = 0;
    for (int s = 0; s < map.endpoints_of(q); ++s) {
      expected += spec.recv[static_cast<std::size_t>(map.ep_rank(q, s))].bytes();
    }
    spec.expected_bytes[static_cast<std::size_t>(q)] = expected;
  }
  return spec;
}

std::size_t region_size(const ExchangeSpec& spec, const RankMap& map, int q) {
  const int threads = map.endpoints_of(q);
  std::size_t bytes = kSizeEntryBytes * static_cast<std::size_t>(threads);
  for (int d = 0; d < threads; ++d) {
    bytes += spec.send[static_cast<std::size_t>(map.ep_rank(q, d))].bytes();
  }
  return bytes;
}

void pack_region(const ExchangeSpec& spec, const RankMap& map, int q, std::byte* out) {
  const int threads = map.endpoints_of(q);
  std::byte* data = out + kSizeEntryBytes * static_cast<std::size_t>(threads);
  for (int d = 0; d < threads; ++d) {
    const TypedBuffer& block = spec.send[static_cast<std::size_t>(map.ep_rank(q, d))];
    const std::uint64_t bytes = block.bytes();
    write_size_entry(out, static_cast<std::size_t>(d), bytes);
    pack_into(block, data);
    data += bytes;
  }
}

std::size_t expected_segment_size(const RankMap& map, int q,
                                  std::span<const ExchangeSpec* const> specs) {
  std::size_t bytes =
      kSizeEntryBytes * static_cast<std::size_t>(map.endpoints_of(q)) * specs.size();
  for (const ExchangeSpec* spec : specs) bytes += spec->expected_bytes[static_cast<std::size_t>(q)];
  return bytes;
}

// MPI requires equal type signatures on both sides of a block; we can see
// the byte counts.
void record_block_mismatch(const CollectiveCall& call, FailureSlot& failure, int from_rank,
                           int to_rank, std::size_t sent, std::size_t expected) {
  failure.record(Error(
      sent > expected ? ErrorKind::kTruncate : ErrorKind::kCount, call.name, call.rank,
      "block from ep rank " + std::to_string(from_rank) + " to ep rank " + std::to_string(to_rank) +
          " carries " + std::to_string(sent) + " bytes but the receiver expects " +
          std::to_string(expected) + " (send and receive type signatures must match)"));
}

void copy_local_block(const CollectiveCall& call, const ExchangeSpec& from, int from_rank,
                      const ExchangeSpec& to, int to_rank, FailureSlot& failure) {
  const TypedBuffer& source = from.send[static_cast<std::size_t>(to_rank)];
  const TypedBuffer& target = to.recv[static_cast<std::size_t>(from_rank)];
  if (source.bytes() != target.bytes()) {
    record_block_mismatch(call, failure, from_rank, to_rank, source.bytes(), target.bytes());
  }
  copy_typed(source, target, std::min(source.bytes(), target.bytes()));
}

namespace {

// unpack_segment, and check_segment when `copy` is false.
void read_segment(const CollectiveCall& call, const ExchangeSpec& spec, int q,
                  const std::byte* segment, std::size_t bytes, FailureSlot& failure, bool copy) {
  const RankMap& map = call.comm.rank_map();
  const auto mine = static_cast<std::size_t>(call.thread);
  const auto threads = static_cast<std::size_t>(call.local_size());
  const std::size_t row_bytes = kSizeEntryBytes * threads;
  const auto malformed = [&](const std::string& why) {
    failure.record(Error(ErrorKind::kTruncate, call.name, call.rank,
                         "message from process " + std::to_string(q) + " is malformed (" + why +
                             "): the processes disagree on the exchange's sizes"));
  };
  std::size_t position = 0;
  for (int s = 0; s < map.endpoints_of(q); ++s) {
    if (bytes - position < row_bytes) return malformed("size row beyond its end");
    const std::byte* row = segment + position;
    std::size_t data = position + row_bytes;
    std::size_t offset = data;
    std::size_t region = 0;
    std::uint64_t my_bytes = 0;
    for (std::size_t d = 0; d < threads; ++d) {
      const std::uint64_t entry = read_size_entry(row, d);
      if (entry > bytes) return malformed("block larger than the message");
      if (d < mine) offset += entry;
      if (d == mine) my_bytes = entry;
      region += entry;
    }
    if (region > bytes - data) return malformed("blocks beyond its end");
    const int source_rank = map.ep_rank(q, s);
    const TypedBuffer& target = spec.recv[static_cast<std::size_t>(source_rank)];
    if (my_bytes != target.bytes()) {
      record_block_mismatch(call, failure, source_rank, call.rank, my_bytes, target.bytes());
    }
    if (copy)
      unpack_from(segment + offset, std::min<std::size_t>(my_bytes, target.bytes()), target);
    position = data + region;
  }
}

}  // namespace

void unpack_segment(const CollectiveCall& call, const ExchangeSpec& spec, int q,
                    const std::byte* segment, std::size_t bytes, FailureSlot& failure) {
  read_segment(call, spec, q, segment, bytes, failure, true);
}

void check_segment(const CollectiveCall& call, const ExchangeSpec& spec, int q,
                   const std::byte* segment, std::size_t bytes, FailureSlot& failure) {
  read_segment(call, spec, q, segment, bytes, failure, false);
}

}  // namespace ep::detail
