// Temporal operations on the client: what leaves the client at each output
// period is already reduced in time (XIOS's "online operations").
//
// A Schedule decides, from the step's time, whether a sample is taken
// (freq_op) and whether the output period ends (output_freq); an
// Accumulator folds the samples of one period into the client's values.
// Thread safety: none; one per output variable of one client.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "xios_lite/config.hpp"

namespace xios_lite::client {

class Accumulator {
 public:
  Accumulator() = default;
  Accumulator(Operation op, std::size_t points) : op_(op), values_(points) {}

  /// Folds part of a sample: values [offset, offset + part.size()). Call
  /// add_part for every part, then end_sample().
  void add_part(std::size_t offset, std::span<const double> part);
  void end_sample() { ++samples_; }
  [[nodiscard]] int samples() const noexcept { return samples_; }

  /// The period's result (the average divided out), valid until reset().
  [[nodiscard]] std::span<const double> result();
  void reset() { samples_ = 0; }

 private:
  Operation op_ = Operation::kInstant;
  std::vector<double> values_;
  int samples_ = 0;
  bool finished_ = false;
};

/// When an output variable samples and when its periods end.
class Schedule {
 public:
  Schedule(const Calendar& cal, const OutputVariable& var, const FileDef& file);

  struct Decision {
    bool sample = false;      ///< fold this step's values in
    bool period_end = false;  ///< after folding, the period is complete
    bool restart = false;     ///< earlier samples belong to a period skipped over: drop them
    double lo = 0, hi = 0;    ///< the period, in seconds since the start
  };
  /// For a step at time `t` (seconds since the start). Steps come in increasing order.
  Decision at(std::int64_t step, std::int64_t t);
  /// The next record number (records are numbered as they are completed).
  int take_record() { return records_++; }
  [[nodiscard]] bool once() const noexcept { return once_; }

 private:
  const Calendar& cal_;
  Frequency output_;
  std::int64_t sample_every_ = 1;  // steps
  std::int64_t k_ = 1;             // the current period ends at boundary(output_, k_)
  int records_ = 0;
  bool once_ = false;
  bool once_done_ = false;
};

}  // namespace xios_lite::client
