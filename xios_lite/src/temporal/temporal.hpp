// Temporal operations: what leaves a client at each output period is
// already reduced in time (XIOS's "online operations"); the servers fold
// the samples of transformed fields the same way (server/sample_folder).
//
// A Period tells which output period a step belongs to and when the period
// ends; an Accumulator folds the samples of one period into the client's
// values, point by point, skipping missing points. Thread safety: none; one
// per output variable of one client.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "records/data_layout.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::temporal {

/// The minimum and maximum of the temporal operations (and of the servers'
/// reductions): a NaN on either side gives NaN, whichever side it is on.
[[nodiscard]] inline double nan_min(double a, double b) noexcept {
  return (b < a || std::isnan(b)) ? b : a;
}
[[nodiscard]] inline double nan_max(double a, double b) noexcept {
  return (a < b || std::isnan(b)) ? b : a;
}

/// Folds the samples of one output period. A point is missing in a sample
/// when its mask entry is 0 or, with detect_missing, when its value equals
/// the fill value or is NaN; missing points are left out of the operation,
/// and a point missing in every sample of the period comes out as the fill
/// value.
///
/// NaN, one rule for every operation (as XIOS): without detect_missing a
/// NaN sample is a value like any other and propagates, so a period holding
/// one gives NaN whatever the operation (average, accumulate, minimum,
/// maximum; instant and once when it is the last sample). std::min and
/// std::max would keep or drop it depending on the order of the samples.
class Accumulator {
 public:
  Accumulator() = default;
  /// `masked`: some part will come with a mask. Without masks and without
  /// detect_missing every point is valid in every sample, and the samples
  /// are folded without per-point counts. `nan_missing` (default: as
  /// detect_missing) separates the two halves of detect_missing for the
  /// servers' folds of reduced values: there the fill value always means
  /// "no valid input", NaN only when the variable detects missing values.
  Accumulator(Operation op, std::size_t points, double fill, bool detect_missing, bool masked)
      : Accumulator(op, points, fill, detect_missing, masked, detect_missing) {}
  Accumulator(Operation op, std::size_t points, double fill, bool detect_missing, bool masked,
              bool nan_missing)
      : op_(op),
        fill_(fill),
        detect_(detect_missing),
        nan_missing_(nan_missing),
        every_point_valid_(!detect_missing && !nan_missing && !masked),
        values_(points, fill),
        counts_(every_point_valid_ ? 0 : points, 0) {}

  /// Folds part of a sample: values [offset, offset + part.size()). `mask`
  /// (empty: every point valid) repeats over the part (one entry per point
  /// of one level). Call add_part for every part, then end_sample().
  void add_part(std::size_t offset, std::span<const double> part,
                std::span<const std::uint8_t> mask);
  /// add_part from the model's array as `layout` holds it (not the block
  /// itself): the block's `nk` levels are picked out of `part` while they
  /// are folded, no copy first; points the layout does not give are
  /// missing (the mask says so too).
  void add_gathered(std::size_t offset, std::span<const double> part,
                    std::span<const std::uint8_t> mask, const records::DataLayout& layout, int nk);
  void end_sample() { ++samples_; }
  [[nodiscard]] int samples() const noexcept { return samples_; }
  /// No masks and no detect_missing: a period of one sample has that
  /// sample's values as its result, point for point.
  [[nodiscard]] bool every_point_valid() const noexcept { return every_point_valid_; }

  /// Whether point `at` had a valid sample in this period (its result is
  /// not the fill value standing for none).
  [[nodiscard]] bool valid(std::size_t at) const noexcept {
    return every_point_valid_ ? samples_ > 0 : counts_[at] > 0;
  }

  /// The period's result (averages divided out, missing points = fill),
  /// valid until reset().
  [[nodiscard]] std::span<const double> result();
  /// Starts a new period.
  void reset();

 private:
  void fold_all_valid(double* acc, std::span<const double> part) const;
  [[nodiscard]] bool is_missing(double v) const noexcept {
    return (detect_ && v == fill_) || (nan_missing_ && std::isnan(v));
  }
  // One value into point `at`: `valid` says whether it counts.
  void fold_one(std::size_t at, double v, bool valid);

  Operation op_ = Operation::kInstant;
  double fill_ = 0;
  bool detect_ = false;
  bool nan_missing_ = false;
  bool every_point_valid_ = true;
  std::vector<double> values_;
  std::vector<std::uint32_t> counts_;  // valid samples per point in this period
  int samples_ = 0;
};

/// The output periods of a file: period k (k = 0, 1, ...) covers the times
/// (boundary(output_freq, k), boundary(output_freq, k + 1)], and step s
/// (time s x timestep) belongs to the period holding its time. A period
/// ends with its last step, the step s with s x timestep <= its end <
/// (s + 1) x timestep. Thread-safe (const).
class Periods {
 public:
  Periods(const Calendar& cal, const Frequency& output) : cal_(&cal), output_(output) {}

  /// The period holding step `step` (>= 1), searched from `from` (a period
  /// at or before it).
  [[nodiscard]] std::int64_t of_step(std::int64_t step, std::int64_t from = 0) const;
  /// The last step of period k.
  [[nodiscard]] std::int64_t last_step(std::int64_t k) const {
    return cal_->boundary(output_, k + 1) / cal_->timestep_seconds();
  }
  /// Start and end of period k, in seconds since the calendar start.
  [[nodiscard]] double lo(std::int64_t k) const {
    return static_cast<double>(cal_->boundary(output_, k));
  }
  [[nodiscard]] double hi(std::int64_t k) const {
    return static_cast<double>(cal_->boundary(output_, k + 1));
  }

 private:
  const Calendar* cal_;
  Frequency output_;
};

/// When a field is sampled (its freq_op and freq_offset), as XIOS's
/// temporal filter samples it: the first sampling date is the start date
/// + freq_offset + one timestep, the next ones freq_op apart, and the
/// first value sent at or after a sampling date is that date's sample.
/// With freq_op N steps and offset f, slot j holds the steps
/// [first + jN, first + (j + 1)N - 1], first = f + 1: a slot's sample is
/// the first value sent in it, and a slot that ends with nothing sent has
/// lost its sample. So N = 4 samples steps 1, 5, 9, ... of a model that
/// sends every step, and takes NEMO's surface fields, sent at steps
/// 1 + 4j, as they come; NEMO's even-step trends (freq_op 2ts) are the
/// slots [1, 2], [3, 4], ... and its odd-step ones (freq_offset -1ts) the
/// slots [0, 1], [2, 3], .... Steps before the first slot (a positive
/// offset) are sampled by none. A freq_op of months or years: the slots
/// are its periods (the first step after a boundary to the next one, the
/// offset unused). Slot 0 is the first that holds a step >= 1.
/// Thread safety: none (a search hint is kept); one per variable.
class SamplingSlots {
 public:
  /// freq_op `every` steps (>= 1), freq_offset `offset` steps (any sign).
  SamplingSlots(std::int64_t every, std::int64_t offset);
  /// A freq_op of months or years.
  SamplingSlots(const Calendar& cal, const Frequency& op);

  /// The slot holding step `step` (>= 1), -1 when it is before the first.
  [[nodiscard]] std::int64_t of_step(std::int64_t step) const;
  /// The last step of slot k (k >= 0).
  [[nodiscard]] std::int64_t last_step(std::int64_t k) const;
  /// The first step of slot k (k >= 0); slot 0's may be <= 0 (a negative
  /// offset), then step 1 is its first sent.
  [[nodiscard]] std::int64_t first_step(std::int64_t k) const {
    return k == 0 ? (calendar_ ? 1 : first_) : last_step(k - 1) + 1;
  }
  /// Steps between sampling dates, 0 for months and years.
  [[nodiscard]] std::int64_t every() const noexcept { return every_; }

 private:
  std::int64_t every_ = 1;
  std::int64_t first_ = 1;  // the first step of slot 0
  std::optional<Periods> calendar_;
  mutable std::int64_t hint_ = 0;  // a slot at or before the last one asked for
};

}  // namespace xios_lite::temporal
