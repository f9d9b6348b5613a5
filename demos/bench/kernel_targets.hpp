// Targets of the kernel benchmarks, printed as met / not met from ratios of
// t_avg measured in the same run (never redefined: a missed target is
// printed as missed, with the two times it compares).
//
// Thread safety: none; world rank 0 calls these after the measurements.
#pragma once

#include <cstdio>
#include <string>

#include "bench_report.hpp"

namespace bench::kernels {

/// Prints "target <what>: <a> <t_a> us / <b> <t_b> us = <ratio> (<= <limit>) met|NOT met"
/// for the records (test, a, bytes) and (test, b, bytes); nothing when one is
/// missing. Returns whether it was met (false when missing).
inline bool print_target(std::FILE* out, const bench::Report& report, const std::string& what,
                         const std::string& test, std::size_t bytes, const std::string& a,
                         const std::string& b, double limit) {
  const bench::Record* ra = report.find(test, a, bytes);
  const bench::Record* rb = report.find(test, b, bytes);
  if (ra == nullptr || rb == nullptr) return false;
  const double ratio = ra->time.avg_us / rb->time.avg_us;
  const bool met = ratio <= limit;
  std::fprintf(out, "target %-28s %-10s %-20s %9.2f us / %-20s %9.2f us = %5.2f (<= %.2f) %s\n",
               what.c_str(), test.c_str(), a.c_str(), ra->time.avg_us, b.c_str(), rb->time.avg_us,
               ratio, limit, met ? "met" : "NOT met");
  return met;
}

}  // namespace bench::kernels
