#include "collective/block_table.hpp"

#include <algorithm>
#include <climits>

namespace ep::detail {

namespace {

// Fills `plan` for blocks that stay in the table's buffer; false when some
// process's blocks are not back to back in thread order there (or lie
// beyond what an int displacement reaches).
bool plan_direct(const RankMap& map, const BlockTable& table, int skip, ProcessPlan& plan) {
  for (int p = 0; p < map.num_processes(); ++p) {
    if (p == skip) continue;
    bool started = false;
    MPI_Aint start = 0;
    MPI_Aint end = 0;
    for (int t = 0; t < map.endpoints_of(p); ++t) {
      const int rank = map.ep_rank(p, t);
      const auto bytes = static_cast<MPI_Aint>(table.bytes(rank));
      if (bytes == 0) continue;  // an empty block may sit anywhere
      // Contiguous type: extent == size, so this is the block's byte offset.
      const MPI_Aint at = table.displ(rank) * table.extent();
      if (!started) {
        started = true;
        start = at;
      } else if (at != end) {
        return false;
      }
      end = at + bytes;
      plan.offset[static_cast<std::size_t>(rank)] = at;
    }
    if (!started) continue;
    if (start < 0 || !fits_int_count(static_cast<std::size_t>(start)) ||
        !fits_int_count(static_cast<std::size_t>(end - start))) {
      return false;
    }
    plan.counts[static_cast<std::size_t>(p)] = static_cast<int>(end - start);
    plan.displs[static_cast<std::size_t>(p)] = static_cast<int>(start);
    plan.moved_bytes += static_cast<std::size_t>(end - start);
  }
  plan.direct = true;
  return true;
}

}  // namespace

Block make_block(const void* buf, int count, MPI_Datatype type, const CollectiveCall& call) {
  check_count(count, call.name, call.rank);
  return {buf, count, type, layout_of(type, call.name, call.rank)};
}

BlockTable::BlockTable(const void* buf, int count, MPI_Datatype type, const CollectiveCall& call)
    : buf_(buf),
      type_(type),
      layout_(layout_of(type, call.name, call.rank)),
      extent_(element_offset(type, 1, call.name, call.rank)),
      uniform_(count) {
  check_count(count, call.name, call.rank);
}

BlockTable::BlockTable(const void* buf, std::span<const int> counts, std::span<const int> displs,
                       MPI_Datatype type, const CollectiveCall& call, const char* what)
    : buf_(buf),
      type_(type),
      layout_(layout_of(type, call.name, call.rank)),
      extent_(element_offset(type, 1, call.name, call.rank)),
      uniform_(-1),
      counts_(counts),
      displs_(displs) {
  const auto size = static_cast<std::size_t>(call.size());
  const auto too_short = [&](const char* name, std::size_t entries) {
    return Error(ErrorKind::kArgument, call.name, call.rank,
                 std::string(name) + " has " + std::to_string(entries) +
                     " entries; the communicator has " + std::to_string(size) + " endpoints");
  };
  if (counts.size() < size) throw too_short(what, counts.size());
  if (displs.size() < size) throw too_short("displs", displs.size());
  for (std::size_t r = 0; r < size; ++r) {
    if (counts[r] < 0) {
      throw Error(ErrorKind::kCount, call.name, call.rank,
                  std::string(what) + "[" + std::to_string(r) + "] = " + std::to_string(counts[r]) +
                      " is negative");
    }
  }
}

void ProcessPlan::check(const CollectiveCall& call) const {
  if (overflow) {
    throw Error(ErrorKind::kCount, call.name, call.rank,
                "the blocks of one process exceed " + std::to_string(INT_MAX) +
                    " bytes (the limit of one process-level MPI call)");
  }
}

ProcessPlan plan_processes(const CollectiveCall& call, const BlockTable& table, int skip,
                           bool allow_direct) {
  const RankMap& map = call.comm.rank_map();
  const auto processes = static_cast<std::size_t>(map.num_processes());
  ProcessPlan plan;
  plan.counts.assign(processes, 0);
  plan.displs.assign(processes, 0);
  plan.offset.assign(static_cast<std::size_t>(map.size()), 0);
  if (allow_direct && table.layout().contiguous && plan_direct(map, table, skip, plan)) {
    return plan;
  }
  // Staging buffer in slot order.
  std::fill(plan.counts.begin(), plan.counts.end(), 0);
  std::fill(plan.displs.begin(), plan.displs.end(), 0);
  plan.moved_bytes = 0;
  std::size_t next = 0;
  for (int p = 0; p < map.num_processes(); ++p) {
    if (p == skip) continue;
    const std::size_t start = next;
    for (int t = 0; t < map.endpoints_of(p); ++t) {
      const int rank = map.ep_rank(p, t);
      plan.offset[static_cast<std::size_t>(rank)] = static_cast<MPI_Aint>(next);
      next += table.bytes(rank);
    }
    if (!fits_int_count(start) || !fits_int_count(next - start)) plan.overflow = true;
    plan.counts[static_cast<std::size_t>(p)] = static_cast<int>(next - start);
    plan.displs[static_cast<std::size_t>(p)] = static_cast<int>(start);
  }
  plan.moved_bytes = next;
  // Nothing is copied when the call cannot be made (the stage raises it).
  plan.staging_bytes = plan.overflow ? 0 : next;
  return plan;
}

std::optional<Error> copy_checked(const TypedBuffer& src, const TypedBuffer& dst,
                                  const CollectiveCall& call, int block_rank) {
  const std::size_t have = src.bytes();
  const std::size_t room = dst.bytes();
  copy_typed(src, dst, std::min(have, room));
  if (have == room) return std::nullopt;
  return Error(have > room ? ErrorKind::kTruncate : ErrorKind::kCount, call.name, call.rank,
               "the block of EP rank " + std::to_string(block_rank) + " has " +
                   std::to_string(have) + " bytes where " + std::to_string(room) +
                   " are expected (send and receive type signatures must match)");
}

}  // namespace ep::detail
