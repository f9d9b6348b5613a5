#include "bench_report.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <system_error>

namespace bench {

namespace {

constexpr double kMicrosPerSecond = 1e6;

// Column widths shared by print_header and print_row.
constexpr int kModeWidth = 16;
constexpr int kPairsWidth = 6;
constexpr int kBytesWidth = 10;
constexpr int kItersWidth = 11;
constexpr int kWindowWidth = 7;
constexpr int kTimeWidth = 11;
constexpr int kMbpsWidth = 11;
constexpr int kRateWidth = 14;
constexpr int kComparisonTimeWidth = 16;  // "funneled t_avg_us" fits with a space
constexpr int kRatioWidth = 13;

// Width of a comparison column titled `title`: at least `minimum`, and a space
// more than the title so that adjacent titles never run together.
int column_width(const std::string& title, int minimum) {
  return std::max(minimum, static_cast<int>(title.size()) + 1);
}

std::string time_heading(const std::string& mode) { return mode + " t_avg_us"; }

std::string ratio_heading(const std::string& a, const std::string& b) {
  std::string heading = a;
  heading += '/';
  heading += b;
  return heading;
}

// Shortest round-trippable-enough form for plots: 9 significant digits keep
// microsecond times and message rates exact to well below their noise.
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

// The strings we write are benchmark, test and mode names; escape anyway so a
// future name with a quote or backslash cannot corrupt the file.
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::ofstream open_for_writing(const std::filesystem::path& path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      throw std::runtime_error("bench: cannot create directory " + path.parent_path().string() +
                               ": " + ec.message());
    }
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error("bench: cannot open " + path.string() + " for writing");
  return out;
}

void finish(std::ofstream& out, const std::filesystem::path& path) {
  out.flush();
  if (!out) throw std::runtime_error("bench: write to " + path.string() + " failed");
}

}  // namespace

TimeStats TimeStats::from_seconds(std::span<const double> per_op_seconds) {
  if (per_op_seconds.empty()) throw std::invalid_argument("bench::TimeStats: no repetitions");
  const auto [lo, hi] = std::minmax_element(per_op_seconds.begin(), per_op_seconds.end());
  const double sum = std::accumulate(per_op_seconds.begin(), per_op_seconds.end(), 0.0);
  return {*lo * kMicrosPerSecond,
          sum / static_cast<double>(per_op_seconds.size()) * kMicrosPerSecond,
          *hi * kMicrosPerSecond};
}

std::string format_bytes(std::size_t bytes) {
  constexpr std::size_t kKi = 1024;
  if (bytes >= kKi * kKi && bytes % (kKi * kKi) == 0)
    return std::to_string(bytes / kKi / kKi) + " MiB";
  if (bytes >= kKi && bytes % kKi == 0) return std::to_string(bytes / kKi) + " KiB";
  return std::to_string(bytes) + " B";
}

void print_sweep_plan(std::span<const std::size_t> sizes, int repetitions, long iterations,
                      std::string_view per_repetition, std::size_t flat_bytes,
                      std::string_view above, long min_iterations) {
  std::printf("# sizes %s .. %s; %d repetitions; %ld %.*s up to %s%.*s above (min %ld)\n",
              format_bytes(sizes.front()).c_str(), format_bytes(sizes.back()).c_str(), repetitions,
              iterations, static_cast<int>(per_repetition.size()), per_repetition.data(),
              format_bytes(flat_bytes).c_str(), static_cast<int>(above.size()), above.data(),
              min_iterations);
}

void print_header(std::FILE* out, std::string_view title, const TableLayout& layout) {
  std::fprintf(out, "\n# %.*s\n", static_cast<int>(title.size()), title.data());
  std::fprintf(out, "%-*s", kModeWidth, "mode");
  if (layout.pairs) std::fprintf(out, "%*s", kPairsWidth, "pairs");
  std::fprintf(out, "%*s%*s", kBytesWidth, "bytes", kItersWidth, "iterations");
  if (layout.window) std::fprintf(out, "%*s", kWindowWidth, "window");
  std::fprintf(out, "%*s%*s%*s%*s", kTimeWidth, "t_min_us", kTimeWidth, "t_avg_us", kTimeWidth,
               "t_max_us", kMbpsWidth, "MB/s");
  if (layout.msg_rate) std::fprintf(out, "%*s", kRateWidth, "msgs/s");
  std::fprintf(out, "\n");
  std::fflush(out);
}

void print_row(std::FILE* out, const Record& r, const TableLayout& layout) {
  std::fprintf(out, "%-*s", kModeWidth, r.mode.c_str());
  if (layout.pairs) std::fprintf(out, "%*d", kPairsWidth, r.pairs);
  std::fprintf(out, "%*zu%*ld", kBytesWidth, r.bytes, kItersWidth, r.iterations);
  if (layout.window) std::fprintf(out, "%*d", kWindowWidth, r.window);
  std::fprintf(out, "%*.2f%*.2f%*.2f%*.1f", kTimeWidth, r.time.min_us, kTimeWidth, r.time.avg_us,
               kTimeWidth, r.time.max_us, kMbpsWidth, r.mbps);
  if (layout.msg_rate) {
    if (r.msg_rate) {
      std::fprintf(out, "%*.0f", kRateWidth, *r.msg_rate);
    } else {
      std::fprintf(out, "%*s", kRateWidth, "-");
    }
  }
  std::fprintf(out, "\n");
  std::fflush(out);
}

void print_comparison_header(std::FILE* out, std::string_view title, const Comparison& columns) {
  std::fprintf(out, "\n# %.*s\n", static_cast<int>(title.size()), title.data());
  std::fprintf(out, "%*s%*s", kBytesWidth, "bytes", kItersWidth, "iterations");
  for (const std::string& mode : columns.modes) {
    const std::string heading = time_heading(mode);
    std::fprintf(out, "%*s", column_width(heading, kComparisonTimeWidth), heading.c_str());
  }
  for (const auto& [a, b] : columns.ratios) {
    const std::string heading = ratio_heading(a, b);
    std::fprintf(out, "%*s", column_width(heading, kRatioWidth), heading.c_str());
  }
  std::fprintf(out, "\n");
  std::fflush(out);
}

void print_comparison_row(std::FILE* out, const Report& report, std::string_view test,
                          std::size_t bytes, const Comparison& columns) {
  long iterations = 0;
  for (const std::string& mode : columns.modes) {
    if (const Record* r = report.find(test, mode, bytes)) {
      iterations = r->iterations;
      break;
    }
  }
  std::fprintf(out, "%*zu%*ld", kBytesWidth, bytes, kItersWidth, iterations);
  for (const std::string& mode : columns.modes) {
    const int width = column_width(time_heading(mode), kComparisonTimeWidth);
    if (const Record* r = report.find(test, mode, bytes)) {
      std::fprintf(out, "%*.2f", width, r->time.avg_us);
    } else {
      std::fprintf(out, "%*s", width, "-");
    }
  }
  for (const auto& [a, b] : columns.ratios) {
    const int width = column_width(ratio_heading(a, b), kRatioWidth);
    const Record* ra = report.find(test, a, bytes);
    const Record* rb = report.find(test, b, bytes);
    if (ra != nullptr && rb != nullptr && rb->time.avg_us > 0) {
      std::fprintf(out, "%*.3f", width, ra->time.avg_us / rb->time.avg_us);
    } else {
      std::fprintf(out, "%*s", width, "-");
    }
  }
  std::fprintf(out, "\n");
  std::fflush(out);
}

void Report::add(Record record) {
  if (record.bench.empty()) record.bench = bench_;
  records_.push_back(std::move(record));
}

const Record* Report::find(std::string_view test, std::string_view mode, std::size_t bytes,
                           int pairs) const {
  const auto it = std::find_if(records_.begin(), records_.end(), [&](const Record& r) {
    return r.test == test && r.mode == mode && r.bytes == bytes && r.pairs == pairs;
  });
  return it == records_.end() ? nullptr : &*it;
}

void Report::print_table(std::FILE* out, std::string_view test, const TableLayout& layout) const {
  print_header(out, test, layout);
  for (const Record& r : records_) {
    if (r.test == test) print_row(out, r, layout);
  }
}

void Report::write_json(const std::filesystem::path& path) const {
  std::ofstream out = open_for_writing(path);
  out << "[\n";
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const Record& r = records_[i];
    out << "  {\"bench\": " << json_string(r.bench) << ", \"test\": " << json_string(r.test)
        << ", \"mode\": " << json_string(r.mode) << ", \"ranks\": " << r.ranks
        << ", \"threads\": " << r.threads << ", \"bytes\": " << r.bytes
        << ", \"iterations\": " << r.iterations << ", \"repetitions\": " << r.repetitions
        << ", \"window\": " << r.window << ", \"pairs\": " << r.pairs
        << ", \"t_min_us\": " << number(r.time.min_us)
        << ", \"t_avg_us\": " << number(r.time.avg_us)
        << ", \"t_max_us\": " << number(r.time.max_us) << ", \"MBps\": " << number(r.mbps);
    if (r.msg_rate) out << ", \"msg_rate\": " << number(*r.msg_rate);
    out << (i + 1 < records_.size() ? "},\n" : "}\n");
  }
  out << "]\n";
  finish(out, path);
}

void Report::write_csv(const std::filesystem::path& path) const {
  std::ofstream out = open_for_writing(path);
  out << "bench,test,mode,ranks,threads,bytes,iterations,repetitions,window,pairs,"
         "t_min_us,t_avg_us,t_max_us,MBps,msg_rate\n";
  for (const Record& r : records_) {
    out << csv_field(r.bench) << ',' << csv_field(r.test) << ',' << csv_field(r.mode) << ','
        << r.ranks << ',' << r.threads << ',' << r.bytes << ',' << r.iterations << ','
        << r.repetitions << ',' << r.window << ',' << r.pairs << ',' << number(r.time.min_us) << ','
        << number(r.time.avg_us) << ',' << number(r.time.max_us) << ',' << number(r.mbps) << ','
        << (r.msg_rate ? number(*r.msg_rate) : std::string()) << '\n';
  }
  finish(out, path);
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::optional<RatioStats> ratio_stats(const Report& report, std::string_view test,
                                      std::string_view a, std::string_view b) {
  RatioStats stats;
  std::vector<double> avg;
  std::vector<double> min;
  for (const Record& ra : report.records()) {
    if (ra.test != test || ra.mode != a) continue;
    const Record* rb = report.find(test, b, ra.bytes);
    if (rb == nullptr) continue;
    const double r = ra.time.avg_us / rb->time.avg_us;
    avg.push_back(r);
    min.push_back(ra.time.min_us / rb->time.min_us);
    ++stats.sizes;
    if (r <= 1.0) ++stats.at_or_below;
    if (r > stats.worst) {
      stats.worst = r;
      stats.worst_bytes = ra.bytes;
    }
  }
  if (avg.empty()) return std::nullopt;
  stats.median_avg = median(avg);
  stats.median_min = median(min);
  return stats;
}

}  // namespace bench
