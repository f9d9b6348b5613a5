#include "ep/rank_map.hpp"

#include <algorithm>

#include "ep/error.hpp"

namespace ep {

namespace {

constexpr const char* kCall = "ep::RankMap";

}  // namespace

RankMap::RankMap(std::span<const int> endpoints_per_process) {
  offsets_.assign(endpoints_per_process.size() + 1, 0);
  for (std::size_t p = 0; p < endpoints_per_process.size(); ++p) {
    offsets_[p + 1] = offsets_[p] + endpoints_per_process[p];
    max_per_process_ = std::max(max_per_process_, endpoints_per_process[p]);
  }
  locations_.reserve(static_cast<std::size_t>(offsets_.back()));
  rank_of_.reserve(static_cast<std::size_t>(offsets_.back()));
  for (std::size_t p = 0; p < endpoints_per_process.size(); ++p) {
    for (int t = 0; t < endpoints_per_process[p]; ++t) {
      rank_of_.push_back(static_cast<int>(locations_.size()));
      locations_.push_back({static_cast<int>(p), t});
    }
  }
}

RankMap::RankMap(std::span<const Location> locations, int num_processes)
    : locations_(locations.begin(), locations.end()) {
  std::vector<int> counts(static_cast<std::size_t>(num_processes), 0);
  for (const Location& where : locations) {
    if (where.process < 0 || where.process >= num_processes || where.thread < 0) {
      throw Error(ErrorKind::kArgument, kCall, -1, "location outside the process range");
    }
    auto& count = counts[static_cast<std::size_t>(where.process)];
    count = std::max(count, where.thread + 1);
  }
  offsets_.assign(static_cast<std::size_t>(num_processes) + 1, 0);
  for (int p = 0; p < num_processes; ++p) {
    offsets_[p + 1] = offsets_[p] + counts[static_cast<std::size_t>(p)];
    max_per_process_ = std::max(max_per_process_, counts[static_cast<std::size_t>(p)]);
  }
  if (offsets_.back() != static_cast<int>(locations_.size())) {
    throw Error(ErrorKind::kArgument, kCall, -1,
                "thread indices of a process have gaps or repeats");
  }
  rank_of_.assign(locations_.size(), -1);
  for (std::size_t r = 0; r < locations_.size(); ++r) {
    const Location& where = locations_[r];
    int& slot = rank_of_[static_cast<std::size_t>(offsets_[where.process]) +
                         static_cast<std::size_t>(where.thread)];
    if (slot != -1) throw Error(ErrorKind::kArgument, kCall, -1, "two ranks at one location");
    slot = static_cast<int>(r);
    process_major_ = process_major_ && slot == offsets_[where.process] + where.thread;
  }
}

}  // namespace ep
