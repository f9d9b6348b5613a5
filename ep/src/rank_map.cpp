#include "ep/rank_map.hpp"

#include <algorithm>

namespace ep {

RankMap::RankMap(std::span<const int> endpoints_per_process) {
  offsets_.assign(endpoints_per_process.size() + 1, 0);
  for (std::size_t p = 0; p < endpoints_per_process.size(); ++p) {
    offsets_[p + 1] = offsets_[p] + endpoints_per_process[p];
    max_per_process_ = std::max(max_per_process_, endpoints_per_process[p]);
  }
  process_of_.resize(static_cast<std::size_t>(offsets_.back()));
  for (std::size_t p = 0; p < endpoints_per_process.size(); ++p) {
    std::fill(process_of_.begin() + offsets_[p], process_of_.begin() + offsets_[p + 1],
              static_cast<int>(p));
  }
}

}  // namespace ep
