#include "temporal.hpp"

#include <algorithm>
#include <cmath>

namespace xios_lite::client {

void Accumulator::add_part(std::size_t offset, std::span<const double> part,
                           std::span<const std::uint8_t> mask) {
  double* acc = values_.data() + offset;
  std::uint32_t* count = counts_.data() + offset;
  const bool last_only = op_ == Operation::kInstant || op_ == Operation::kOnce;
  for (std::size_t i = 0; i < part.size(); ++i) {
    const double v = part[i];
    const bool valid =
        (mask.empty() || mask[i % mask.size()] != 0) && !(detect_ && (v == fill_ || std::isnan(v)));
    if (last_only) {
      // The period's value is its last sample's, missing or not.
      acc[i] = valid ? v : fill_;
      count[i] = valid ? 1 : 0;
      continue;
    }
    if (!valid) {
      continue;
    }
    if (count[i] == 0) {
      acc[i] = v;
    } else if (op_ == Operation::kMinimum) {
      acc[i] = std::min(acc[i], v);
    } else if (op_ == Operation::kMaximum) {
      acc[i] = std::max(acc[i], v);
    } else {  // average, accumulate
      acc[i] += v;
    }
    ++count[i];
  }
}

std::span<const double> Accumulator::result() {
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (counts_[i] == 0) {
      values_[i] = fill_;
    } else if (op_ == Operation::kAverage && counts_[i] > 1) {
      // A multiplication by the reciprocal, as a reader computing the mean of
      // the instants usually writes it (the bits then agree).
      values_[i] *= 1.0 / counts_[i];
    }
  }
  return values_;
}

void Accumulator::reset() {
  samples_ = 0;
  std::fill(counts_.begin(), counts_.end(), 0U);
}

std::int64_t Periods::of_step(std::int64_t step, std::int64_t from) const {
  const std::int64_t t = step * cal_->timestep_seconds();
  std::int64_t k = std::max<std::int64_t>(from, 0);
  while (cal_->boundary(output_, k + 1) < t) {
    ++k;
  }
  return k;
}

}  // namespace xios_lite::client
