#include "collective/segment_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collective/nonblocking_registry.hpp"
#include "team/failure_slot.hpp"

namespace ep::detail {

// ---- sending --------------------------------------------------------------

void send_segment(const CollectiveCall& call, MPI_Comm mpi, int tag, int q,
                  const SegmentBuffer& segment, std::vector<MPI_Request>& requests) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(segment.buf, segment.count, segment.type, q, tag, mpi, &request), call.name,
            call.rank);
  requests.push_back(request);
}

// ---- receiving at the size expected -------------------------------------------

void post_segment(const CollectiveCall& call, MPI_Comm mpi, int tag, int q, std::byte* at,
                  std::size_t bytes, std::vector<MPI_Request>& requests) {
  const int count = checked_int_count(bytes, "bytes of an aggregated message between two processes",
                                      call.name, call.rank);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(at, count, MPI_BYTE, q, tag, mpi, &request), call.name, call.rank);
  requests.push_back(request);
}

std::string received_size_problem(const MPI_Status& status, int q, std::size_t expected,
                                  ErrorKind& kind) {
  MPI_Count received = 0;
  if (const int rc = MPI_Get_elements_x(&status, MPI_BYTE, &received); rc != MPI_SUCCESS) {
    kind = ErrorKind::kMpi;
    return "MPI_Get_elements_x of the message from process " + std::to_string(q) + " failed (" +
           std::to_string(rc) + ")";
  }
  if (static_cast<std::size_t>(received) == expected) return {};
  kind = ErrorKind::kCount;
  return "process " + std::to_string(q) + " sent " + std::to_string(received) +
         " bytes where this process's receive blocks hold " + std::to_string(expected) +
         " (mismatched counts or types)";
}

// ---- ByteRuns -------------------------------------------------------------

ByteRuns::ByteRuns(int peers, const std::byte* base)
    : base_(base),
      runs_(static_cast<std::size_t>(peers)),
      counts_(static_cast<std::size_t>(peers), 0),
      displs_(static_cast<std::size_t>(peers), 0),
      types_(static_cast<std::size_t>(peers), MPI_BYTE) {}

ByteRuns::~ByteRuns() {
  for (MPI_Datatype& type : owned_) MPI_Type_free(&type);
}

void ByteRuns::add(int peer, const std::byte* start, std::size_t bytes) {
  if (bytes > 0) runs_[static_cast<std::size_t>(peer)].push_back({start, bytes});
}

const void* ByteRuns::buffer() const {
  return base_ != nullptr ? static_cast<const void*>(base_) : MPI_BOTTOM;
}

void ByteRuns::build(const char* call, int rank) {
  // hindexed block lengths are ints: longer runs are cut into pieces of 1 GiB.
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  MPI_Aint base_address = 0;
  if (base_ != nullptr) check_mpi(MPI_Get_address(base_, &base_address), call, rank);
  for (std::size_t peer = 0; peer < runs_.size(); ++peer) {
    const std::vector<Run>& runs = runs_[peer];
    if (runs.empty()) continue;  // count 0 of MPI_BYTE
    std::vector<int> lengths;
    std::vector<MPI_Aint> offsets;
    for (const Run& run : runs) {
      MPI_Aint address = 0;
      check_mpi(MPI_Get_address(run.start, &address), call, rank);
      const MPI_Aint offset = MPI_Aint_diff(address, base_address);
      for (std::size_t done = 0; done < run.bytes; done += kPiece) {
        lengths.push_back(static_cast<int>(std::min(kPiece, run.bytes - done)));
        offsets.push_back(offset + static_cast<MPI_Aint>(done));
      }
    }
    if (base_ != nullptr && lengths.size() == 1 && offsets[0] >= 0 && offsets[0] <= INT_MAX) {
      counts_[peer] = lengths[0];
      displs_[peer] = static_cast<int>(offsets[0]);
      continue;
    }
    MPI_Datatype type = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(),
                                       offsets.data(), MPI_BYTE, &type),
              call, rank);
    owned_.push_back(type);
    check_mpi(MPI_Type_commit(&owned_.back()), call, rank);
    types_[peer] = owned_.back();
    counts_[peer] = 1;
  }
}

std::optional<std::size_t> probe_segment(const CollectiveCall& call, MPI_Comm mpi, int tag, int q,
                                         MPI_Message& message) {
  int found = 0;
  MPI_Status status;
  check_mpi(MPI_Improbe(q, tag, mpi, &found, &message, &status), call.name, call.rank);
  if (found == 0) return std::nullopt;
  MPI_Count bytes = 0;
  check_mpi(MPI_Get_elements_x(&status, MPI_BYTE, &bytes), call.name, call.rank);
  return static_cast<std::size_t>(bytes);
}

// ---- SegmentLanding -------------------------------------------------------

std::size_t SegmentLanding::expect(std::span<const std::size_t> expected, int me) {
  offset_.assign(expected.size(), 0);
  bytes_.assign(expected.size(), 0);
  at_.assign(expected.size(), nullptr);
  std::size_t total = 0;
  for (std::size_t q = 0; q < expected.size(); ++q) {
    if (static_cast<int>(q) == me) continue;
    offset_[q] = total;
    bytes_[q] = expected[q];
    total += expected[q];
  }
  return total;
}

void SegmentLanding::land_in(std::byte* buffer) {
  for (std::size_t q = 0; q < at_.size(); ++q) at_[q] = buffer + offset_[q];
}

MPI_Request SegmentLanding::receive(const CollectiveCall& call, int q, std::size_t bytes,
                                    MPI_Message& message) {
  const auto qi = static_cast<std::size_t>(q);
  if (qi >= at_.size()) {  // never laid out (the exchange's planning failed)
    offset_.resize(qi + 1, 0);
    bytes_.resize(qi + 1, 0);
    at_.resize(qi + 1, nullptr);
  }
  if (bytes != bytes_[qi] || at_[qi] == nullptr) {
    mismatched_.push_back(
        std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(bytes, 1)));
    at_[qi] = mismatched_.back().get();
    bytes_[qi] = bytes;
  }
  layouts_.emplace_back();
  return receive_bytes(call, at_[qi], bytes, message, layouts_.back());
}

MPI_Request receive_bytes(const CollectiveCall& call, std::byte* at, std::size_t bytes,
                          MPI_Message& message, std::unique_ptr<ByteRuns>& layout) {
  // One run of bytes: MPI_BYTE when the count fits an int, else a type of
  // 1 GiB pieces, kept until the receive has completed.
  layout = std::make_unique<ByteRuns>(1, at);
  layout->add(0, at, bytes);
  layout->build(call.name, call.rank);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Imrecv(layout->mutable_buffer(), layout->counts()[0], layout->types()[0], &message,
                       &request),
            call.name, call.rank);
  return request;
}

// ---- ProbeTurns -----------------------------------------------------------

ProbeTurns::ProbeTurns(int processes)
    : matched_(
          std::make_unique<std::atomic<std::uint64_t>[]>(static_cast<std::size_t>(processes))) {}

std::uint64_t ProbeTurns::issue(std::weak_ptr<NbcInstance> exchange) {
  std::lock_guard lock(mutex_);
  const std::uint64_t ticket = issued_++;
  unmatched_.emplace(ticket, std::move(exchange));
  return ticket;
}

void ProbeTurns::done(std::uint64_t ticket) {
  std::lock_guard lock(mutex_);
  unmatched_.erase(ticket);
}

void ProbeTurns::help_older(std::uint64_t ticket, int rank) {
  std::vector<std::shared_ptr<NbcInstance>> older;
  {
    std::lock_guard lock(mutex_);
    for (auto it = unmatched_.begin(); it != unmatched_.end() && it->first < ticket; ++it) {
      if (auto exchange = it->second.lock()) older.push_back(std::move(exchange));
    }
  }
  // Outside the lock: their post_more() calls done().
  for (const auto& exchange : older) exchange->try_post_more(rank);
}

// ---- one block per process pair ---------------------------------------------

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
      send_segment(call, call.mpi(), kPeerBlockTag, q, {out.buf, out.count, out.type}, requests);
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
