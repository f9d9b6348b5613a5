// Command-line parsing shared by the benchmarks: the argv loop
// (OptionParser), counts with binary suffixes and comma-separated name lists. Errors throw
// std::invalid_argument naming the flag, which the benchmarks print with their usage text.
//
// Thread safety: pure functions. Nothing here calls MPI.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bench {

/// "4M", "64K", "1000": a positive count with an optional binary suffix (K, M).
long long parse_count(std::string_view flag, const std::string& text);

/// "a,b,c" -> {"a", "b", "c"}, each of which must be one of `known`.
std::vector<std::string> parse_list(std::string_view flag, const std::string& text,
                                    std::span<const std::string_view> known);

/// The index of `text` in `names`; throws naming the flag and every name
/// ("--x: 'y' is not a, b or c") when it is none of them.
std::size_t parse_choice(std::string_view flag, const std::string& text,
                         std::span<const std::string_view> names);

/// Whether `name` is in `list`; an empty list selects everything.
bool selected(const std::vector<std::string>& list, std::string_view name);

/// The argv loop every benchmark shares. Each option is registered with the
/// variable it sets; parse() walks argv once. A value follows its option as
/// the next argument ("--reps 5"). --help and -h throw std::invalid_argument
/// with an empty message (bench::start prints the usage then); an unknown
/// option, a missing value or a bad value throws naming the option.
///
///   bench::OptionParser parser;
///   parser.flag("--quick", opt.quick).count("--reps", opt.repetitions)
///       .list("--modes", kModeNames, opt.modes).text("--json", opt.json);
///   parser.parse(argc, argv);
class OptionParser {
 public:
  /// Called with the option's name and its value.
  using Handler = std::function<void(std::string_view flag, const std::string& value)>;

  /// An option without a value that sets `target` to true.
  OptionParser& flag(std::string_view name, bool& target);
  /// A positive count with an optional K/M suffix (parse_count) that must fit `Int`.
  template <class Int>
  OptionParser& count(std::string_view name, Int& target) {
    return custom(name, [&target](std::string_view flag, const std::string& value) {
      const long long parsed = parse_count(flag, value);
      if (std::cmp_greater(parsed, std::numeric_limits<Int>::max())) {
        throw std::invalid_argument(std::string(flag) + ": " + value + " is too large");
      }
      target = static_cast<Int>(parsed);
    });
  }
  /// A free-form value (a path, say).
  OptionParser& text(std::string_view name, std::string& target);
  /// A comma-separated subset of `known` (parse_list).
  OptionParser& list(std::string_view name, std::span<const std::string_view> known,
                     std::vector<std::string>& target);
  /// One of `names` (parse_choice), listed in the order of `Enum`'s
  /// enumerators: sets `target` to the enumerator of the name's index.
  template <class Enum>
  OptionParser& choice(std::string_view name, std::span<const std::string_view> names,
                       Enum& target) {
    return custom(name, [names, &target](std::string_view flag, const std::string& value) {
      target = static_cast<Enum>(parse_choice(flag, value, names));
    });
  }
  /// An option with a value that `handler` interprets (and may reject by throwing).
  OptionParser& custom(std::string_view name, Handler handler);

  /// Applies argv[1..argc) in order. Throws std::invalid_argument (see above).
  void parse(int argc, char** argv) const;

 private:
  struct Option {
    std::string name;
    bool takes_value;
    Handler apply;
  };
  std::vector<Option> options_;
};

/// Iterations per repetition for a point of a size sweep: `base` while the
/// traffic of one call is at most `flat_bytes`, proportionally fewer above
/// (every point then moves about the same bytes), never fewer than `min`.
[[nodiscard]] inline long scaled_iterations(long base, std::size_t flat_bytes, std::size_t traffic,
                                            long min) {
  if (traffic <= flat_bytes) return base;
  const double scaled =
      static_cast<double>(base) * static_cast<double>(flat_bytes) / static_cast<double>(traffic);
  return std::max(min, static_cast<long>(scaled));
}

/// The timing counts of a size sweep: iterations per repetition for small
/// messages (scaled_iterations lowers them for larger ones) and timed
/// repetitions per point.
struct SweepCounts {
  long iterations = 0;
  int repetitions = 0;
};

/// A sweep benchmark's presets, and what one of its iterations is (for the
/// usage: "round trips per repetition for small messages").
struct SweepPreset {
  std::string_view iteration;
  SweepCounts full;
  SweepCounts quick;
};

/// The options of a benchmark that sweeps message sizes (ep_pingpong,
/// ep_collectives): the preset, the largest message, the timing counts, the
/// modes, where the results go and the CPU binding. A benchmark derives its
/// Options from it and adds its own.
struct SweepOptions {
  /// Results default to bench-results/<bench>.json and .csv.
  SweepOptions(std::string_view bench, std::size_t default_max_bytes);

  bool quick = false;
  std::size_t max_bytes;
  long iterations = 0;  ///< 0: the default of the chosen preset
  int repetitions = 0;  ///< likewise
  bool keep_binding = false;
  std::vector<std::string> modes;  ///< empty: all
  std::string json;
  std::string csv;

  /// Registers --quick, --keep-binding, --max-bytes, --iters, --reps,
  /// --modes (a subset of `mode_names`), --json and --csv with `parser`.
  void add_to(OptionParser& parser, std::span<const std::string_view> mode_names);
  /// The preset's counts (its quick ones with --quick), each replaced by
  /// --iters and --reps when given.
  [[nodiscard]] SweepCounts counts(const SweepPreset& preset) const;
  /// The usage lines of --iters, --reps, --modes (a subset of `mode_names`),
  /// --json, --csv and --keep-binding for benchmark `bench`, with the
  /// preset's defaults; the benchmark writes --quick and --max-bytes itself.
  [[nodiscard]] static std::string usage(std::string_view bench, const SweepPreset& preset,
                                         std::span<const std::string_view> mode_names);
  /// Powers of two from `min_bytes` to max_bytes; with --quick only those of
  /// `quick_sizes` that do not exceed max_bytes. max_bytes always ends the list.
  [[nodiscard]] std::vector<std::size_t> message_sizes(
      std::size_t min_bytes, std::initializer_list<std::size_t> quick_sizes) const;
};

}  // namespace bench
