// A period (lo, hi] ends at the step whose time equals hi; a step past hi
// (when the model skips steps) closes the periods it jumped over first, and
// those periods produce no record (they have no samples).
#include "temporal.hpp"

#include <algorithm>

namespace xios_lite::client {

void Accumulator::add_part(std::size_t offset, std::span<const double> part) {
  double* acc = values_.data() + offset;
  if (samples_ == 0 || op_ == Operation::kInstant || op_ == Operation::kOnce) {
    std::copy(part.begin(), part.end(), acc);
    return;
  }
  switch (op_) {
    case Operation::kAverage:
    case Operation::kAccumulate:
      for (std::size_t i = 0; i < part.size(); ++i) {
        acc[i] += part[i];
      }
      break;
    case Operation::kMinimum:
      for (std::size_t i = 0; i < part.size(); ++i) {
        acc[i] = std::min(acc[i], part[i]);
      }
      break;
    case Operation::kMaximum:
      for (std::size_t i = 0; i < part.size(); ++i) {
        acc[i] = std::max(acc[i], part[i]);
      }
      break;
    default:
      break;
  }
}

std::span<const double> Accumulator::result() {
  if (op_ == Operation::kAverage && samples_ > 1) {
    const double inv = 1.0 / samples_;
    for (double& v : values_) {
      v *= inv;
    }
  }
  return values_;
}

Schedule::Schedule(const Calendar& cal, const OutputVariable& var, const FileDef& file)
    : cal_(cal), output_(file.output_freq), once_(var.operation == Operation::kOnce) {
  sample_every_ = std::max<std::int64_t>(1, cal.boundary(var.freq_op, 1) / cal.timestep_seconds());
}

Schedule::Decision Schedule::at(std::int64_t step, std::int64_t t) {
  Decision d;
  if (once_) {
    if (!once_done_) {
      once_done_ = true;
      d.sample = true;
      d.period_end = true;
      d.lo = d.hi = static_cast<double>(t);
    }
    return d;
  }
  while (cal_.boundary(output_, k_) < t) {
    ++k_;  // a period skipped over without reaching its end step
    d.restart = true;
  }
  d.sample = step % sample_every_ == 0;
  d.lo = static_cast<double>(cal_.boundary(output_, k_ - 1));
  d.hi = static_cast<double>(cal_.boundary(output_, k_));
  if (cal_.boundary(output_, k_) == t) {
    d.period_end = true;
    ++k_;
  }
  return d;
}

}  // namespace xios_lite::client
