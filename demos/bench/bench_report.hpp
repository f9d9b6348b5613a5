// Benchmark results: OSU/IMB-style tables on the terminal, JSON and CSV for plots.
//
// Every benchmark of demos/ measures "repetitions", each a timed batch of
// operations, and reports per operation the minimum, mean and maximum time
// over the repetitions. One Record is one row: a (test, mode, size) point.
//
//   bench::Report report("ep_pingpong");
//   bench::print_header(stdout, "latency", {});
//   report.add(record);
//   bench::print_row(stdout, record, {});
//   report.write_json("bench-results/ep_pingpong.json");
//
// Thread safety: none; a Report is filled and printed by one thread (rank 0's
// main thread in the MPI benchmarks). Nothing here calls MPI.
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bench {

/// Per-operation time over the repetitions of one point, in microseconds.
struct TimeStats {
  double min_us = 0.0;
  double avg_us = 0.0;
  double max_us = 0.0;

  /// From the per-operation time of each repetition, in seconds (MPI_Wtime units).
  /// Throws std::invalid_argument when `per_op_seconds` is empty.
  static TimeStats from_seconds(std::span<const double> per_op_seconds);
};

/// One measured point.
struct Record {
  std::string bench;  ///< executable, e.g. "ep_pingpong"
  std::string test;   ///< "latency", "bandwidth", "msg_rate", ...
  std::string mode;   ///< transport or variant compared, e.g. "ep_intra"
  int ranks = 1;      ///< MPI processes taking part
  int threads = 1;    ///< threads per process taking part
  std::size_t bytes = 0;
  long iterations = 0;  ///< timed operations per repetition (per pair where pairs > 0)
  int repetitions = 0;
  int window = 0;  ///< messages in flight per window (streaming tests; 0: none)
  int pairs = 0;   ///< communicating pairs at once (message-rate tests; 0: not such a test)
  TimeStats time;
  double mbps = 0.0;               ///< 10^6 bytes per second
  std::optional<double> msg_rate;  ///< messages per second, all pairs together
};

/// Which optional columns a table shows.
struct TableLayout {
  bool pairs = false;     ///< a "pairs" column after the mode
  bool window = false;    ///< a "window" column after the iterations
  bool msg_rate = false;  ///< a "msgs/s" column at the end
};

/// Prints a table title and the column header line.
void print_header(std::FILE* out, std::string_view title, const TableLayout& layout);
/// Prints one row in the columns of print_header. Flushes `out`, so rows appear
/// as they are measured.
void print_row(std::FILE* out, const Record& record, const TableLayout& layout);

/// Columns of a side-by-side table of several modes: per size, the t_avg of
/// each mode, then for each pair (a, b) the ratio t_avg(a) / t_avg(b) (below 1:
/// a is faster).
struct Comparison {
  std::vector<std::string> modes;
  std::vector<std::pair<std::string, std::string>> ratios;
};

class Report;

/// Prints a table title and the header: bytes, iterations, "<mode> t_avg_us"
/// for each mode, "<a>/<b>" for each ratio.
void print_comparison_header(std::FILE* out, std::string_view title, const Comparison& columns);
/// Prints the row of (`test`, `bytes`) from the records of `report`: the
/// iterations of the first mode measured, "-" where a mode was not measured.
/// Flushes `out`.
void print_comparison_row(std::FILE* out, const Report& report, std::string_view test,
                          std::size_t bytes, const Comparison& columns);

/// "8 B", "64 KiB", "4 MiB": exact binary units where the size allows.
std::string format_bytes(std::size_t bytes);

/// The plan line of a size sweep's report on stdout: "# sizes 8 B .. 1 MiB;
/// 20 repetitions; 400 <per_repetition> up to <flat_bytes><above> (min 8)".
void print_sweep_plan(std::span<const std::size_t> sizes, int repetitions, long iterations,
                      std::string_view per_repetition, std::size_t flat_bytes,
                      std::string_view above, long min_iterations);

/// The records of one benchmark run.
class Report {
 public:
  explicit Report(std::string bench) : bench_(std::move(bench)) {}

  [[nodiscard]] const std::string& bench() const noexcept { return bench_; }
  /// Appends `record`; an empty record.bench is set to this report's name.
  void add(Record record);
  [[nodiscard]] const std::vector<Record>& records() const noexcept { return records_; }

  /// The record of (test, mode, bytes[, pairs]), or nullptr when not measured.
  [[nodiscard]] const Record* find(std::string_view test, std::string_view mode, std::size_t bytes,
                                   int pairs = 0) const;

  /// Prints all records of `test` in the order they were added.
  void print_table(std::FILE* out, std::string_view test, const TableLayout& layout) const;

  /// Writes a JSON array with one object per record (keys as in Record, times as
  /// t_min_us/t_avg_us/t_max_us, bandwidth as MBps, msg_rate only where set).
  /// Creates missing parent directories; throws std::runtime_error on I/O failure.
  void write_json(const std::filesystem::path& path) const;
  /// Writes the same records as CSV with a header line; msg_rate is empty where unset.
  void write_csv(const std::filesystem::path& path) const;

 private:
  std::string bench_;
  std::vector<Record> records_;
};

/// t_avg(a) / t_avg(b) of one test over the sizes both modes measured: the
/// figures behind a "met / not met" line of a summary.
struct RatioStats {
  int sizes = 0;
  int at_or_below = 0;  ///< sizes where a's t_avg <= b's
  double median_avg = 0.0;
  double median_min = 0.0;  ///< the same from t_min, less sensitive to other jobs
  double worst = 0.0;
  std::size_t worst_bytes = 0;
};

/// Nothing when `test` has no size measured by both `a` and `b`.
std::optional<RatioStats> ratio_stats(const Report& report, std::string_view test,
                                      std::string_view a, std::string_view b);

}  // namespace bench
