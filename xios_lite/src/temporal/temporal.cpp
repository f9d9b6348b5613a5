#include "temporal.hpp"

#include <algorithm>
#include <cmath>

namespace xios_lite::temporal {

void Accumulator::add_part(std::size_t offset, std::span<const double> part,
                           std::span<const std::uint8_t> mask) {
  double* acc = values_.data() + offset;
  if (every_point_valid_) {
    fold_all_valid(acc, part);
    return;
  }
  std::uint32_t* count = counts_.data() + offset;
  const bool last_only = op_ == Operation::kInstant || op_ == Operation::kOnce;
  for (std::size_t i = 0; i < part.size(); ++i) {
    const double v = part[i];
    const bool valid = (mask.empty() || mask[i % mask.size()] != 0) && !is_missing(v);
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
      acc[i] = nan_min(acc[i], v);
    } else if (op_ == Operation::kMaximum) {
      acc[i] = nan_max(acc[i], v);
    } else {  // average, accumulate
      acc[i] += v;
    }
    ++count[i];
  }
}

// One more sample v folded into acc by a minimum, a maximum or a sum (the
// average divides at the end); the first sample of a period is not folded.
static double folded(Operation op, double acc, double v) {
  if (op == Operation::kMinimum) return nan_min(acc, v);
  if (op == Operation::kMaximum) return nan_max(acc, v);
  return acc + v;
}

void Accumulator::fold_one(std::size_t at, double v, bool valid) {
  double& acc = values_[at];
  if (every_point_valid_) {
    const bool first = samples_ == 0 || op_ == Operation::kInstant || op_ == Operation::kOnce;
    acc = first ? v : folded(op_, acc, v);
    return;
  }
  std::uint32_t& count = counts_[at];
  valid = valid && !is_missing(v);
  if (op_ == Operation::kInstant || op_ == Operation::kOnce) {
    acc = valid ? v : fill_;
    count = valid ? 1 : 0;
    return;
  }
  if (!valid) {
    return;
  }
  acc = count == 0 ? v : folded(op_, acc, v);
  ++count;
}

void Accumulator::add_gathered(std::size_t offset, std::span<const double> part,
                               std::span<const std::uint8_t> mask,
                               const records::DataLayout& layout, int nk) {
  const std::size_t points = layout.source.size();
  for (std::size_t k = 0; k < static_cast<std::size_t>(nk); ++k) {
    const double* level = part.data() + k * layout.per_level;
    const std::size_t at = offset + k * points;
    for (std::size_t p = 0; p < points; ++p) {
      const std::int32_t s = layout.source[p];
      const bool valid = s >= 0 && (mask.empty() || mask[p] != 0);
      fold_one(at + p, s >= 0 ? level[s] : fill_, valid);
    }
  }
}

// Every point valid: the sample is copied (first sample, instant, once) or
// folded in, with no per-point counts.
void Accumulator::fold_all_valid(double* acc, std::span<const double> part) const {
  if (samples_ == 0 || op_ == Operation::kInstant || op_ == Operation::kOnce) {
    std::copy(part.begin(), part.end(), acc);
    return;
  }
  switch (op_) {
    case Operation::kAverage:
    case Operation::kAccumulate:
      for (std::size_t i = 0; i < part.size(); ++i) acc[i] += part[i];
      break;
    case Operation::kMinimum:
      for (std::size_t i = 0; i < part.size(); ++i) acc[i] = nan_min(acc[i], part[i]);
      break;
    case Operation::kMaximum:
      for (std::size_t i = 0; i < part.size(); ++i) acc[i] = nan_max(acc[i], part[i]);
      break;
    default:
      break;
  }
}

std::span<const double> Accumulator::result() {
  if (every_point_valid_) {
    if (samples_ == 0) {
      std::fill(values_.begin(), values_.end(), fill_);
    } else if (op_ == Operation::kAverage && samples_ > 1) {
      const double inv = 1.0 / samples_;
      for (double& v : values_) v *= inv;
    }
    return values_;
  }
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

SamplingSlots::SamplingSlots(std::int64_t every, std::int64_t offset)
    : every_(std::max<std::int64_t>(1, every)) {
  // Slot r of the sequence is [start + r N, start + (r + 1) N - 1]; slot 0
  // here is the first whose last step is >= 1 (r = 0 unless the offset is
  // negative).
  const std::int64_t start = offset + 1;
  const std::int64_t before = 1 - start;  // steps of the sequence before step 1
  const std::int64_t r0 = before > 0 ? before / every_ : 0;
  first_ = start + r0 * every_;
}

SamplingSlots::SamplingSlots(const Calendar& cal, const Frequency& op)
    : every_(0), calendar_(std::in_place, cal, op) {}

std::int64_t SamplingSlots::of_step(std::int64_t step) const {
  if (calendar_) {
    if (step < 1) return -1;
    const bool at_or_after_hint = hint_ == 0 || step > calendar_->last_step(hint_ - 1);
    hint_ = calendar_->of_step(step, at_or_after_hint ? hint_ : 0);
    return hint_;
  }
  return step < first_ ? -1 : (step - first_) / every_;
}

std::int64_t SamplingSlots::last_step(std::int64_t k) const {
  return calendar_ ? calendar_->last_step(k) : first_ + (k + 1) * every_ - 1;
}

}  // namespace xios_lite::temporal
