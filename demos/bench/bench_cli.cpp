#include "bench_cli.hpp"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace bench {

long long parse_count(std::string_view flag, const std::string& text) {
  constexpr long long kKiB = 1024;
  std::size_t end = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &end);
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(flag) + ": not a number: '" + text + "'");
  }
  const std::string suffix = text.substr(end);
  if (suffix == "K" || suffix == "k") {
    value *= kKiB;
  } else if (suffix == "M" || suffix == "m") {
    value *= kKiB * kKiB;
  } else if (!suffix.empty()) {
    throw std::invalid_argument(std::string(flag) + ": bad suffix in '" + text + "'");
  }
  if (value <= 0) throw std::invalid_argument(std::string(flag) + ": must be positive");
  return value;
}

std::vector<std::string> parse_list(std::string_view flag, const std::string& text,
                                    std::span<const std::string_view> known) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      throw std::invalid_argument(std::string(flag) + ": unknown name '" + item + "'");
    }
    items.push_back(item);
    begin = end + 1;
  }
  return items;
}

bool selected(const std::vector<std::string>& list, std::string_view name) {
  return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
}

OptionParser& OptionParser::flag(std::string_view name, bool& target) {
  options_.push_back({std::string(name), false,
                      [&target](std::string_view, const std::string&) { target = true; }});
  return *this;
}

OptionParser& OptionParser::text(std::string_view name, std::string& target) {
  return custom(name, [&target](std::string_view, const std::string& value) { target = value; });
}

std::size_t parse_choice(std::string_view flag, const std::string& text,
                         std::span<const std::string_view> names) {
  const auto found = std::find(names.begin(), names.end(), text);
  if (found != names.end()) return static_cast<std::size_t>(found - names.begin());
  std::string all;
  for (std::size_t i = 0; i < names.size(); ++i) {
    all += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  }
  throw std::invalid_argument(std::string(flag) + ": '" + text + "' is not " + all);
}

OptionParser& OptionParser::list(std::string_view name, std::span<const std::string_view> known,
                                 std::vector<std::string>& target) {
  return custom(name, [known, &target](std::string_view flag, const std::string& value) {
    target = parse_list(flag, value, known);
  });
}

OptionParser& OptionParser::custom(std::string_view name, Handler handler) {
  options_.push_back({std::string(name), true, std::move(handler)});
  return *this;
}

void OptionParser::parse(int argc, char** argv) const {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") throw std::invalid_argument("");
    const auto option = std::find_if(options_.begin(), options_.end(),
                                     [&](const Option& o) { return o.name == arg; });
    if (option == options_.end()) {
      throw std::invalid_argument("unknown option '" + std::string(arg) + "'");
    }
    if (!option->takes_value) {
      option->apply(arg, "");
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(std::string(arg) + ": missing value");
    option->apply(arg, argv[++i]);
  }
}

SweepOptions::SweepOptions(std::string_view bench, std::size_t default_max_bytes)
    : max_bytes(default_max_bytes),
      json("bench-results/" + std::string(bench) + ".json"),
      csv("bench-results/" + std::string(bench) + ".csv") {}

void SweepOptions::add_to(OptionParser& parser, std::span<const std::string_view> mode_names) {
  parser.flag("--quick", quick)
      .flag("--keep-binding", keep_binding)
      .count("--max-bytes", max_bytes)
      .count("--iters", iterations)
      .count("--reps", repetitions)
      .list("--modes", mode_names, modes)
      .text("--json", json)
      .text("--csv", csv);
}

SweepCounts SweepOptions::counts(const SweepPreset& preset) const {
  SweepCounts c = quick ? preset.quick : preset.full;
  if (iterations > 0) c.iterations = iterations;
  if (repetitions > 0) c.repetitions = repetitions;
  return c;
}

std::string SweepOptions::usage(std::string_view bench, const SweepPreset& preset,
                                std::span<const std::string_view> mode_names) {
  // Options in a column of 18, their text from column 21, lines within 92.
  const std::string indent(21, ' ');
  std::string modes = "  --modes LIST       comma-separated subset of ";
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < mode_names.size(); ++i) {
    const std::string name = std::string(mode_names[i]) + (i + 1 < mode_names.size() ? "," : "");
    if (modes.size() - line_start + name.size() > 92) {
      modes += "\n" + indent;
      line_start = modes.size() - indent.size();
    }
    modes += name;
  }
  const std::string results = "results (default bench-results/" + std::string(bench);
  return "  --iters N          " + std::string(preset.iteration) + " (default " +
         std::to_string(preset.full.iterations) + ", quick " +
         std::to_string(preset.quick.iterations) + ");\n" + indent +
         "larger messages get proportionally fewer\n"
         "  --reps N           timed repetitions per point (default " +
         std::to_string(preset.full.repetitions) + ", quick " +
         std::to_string(preset.quick.repetitions) + ")\n" + modes + "\n" +
         "  --json PATH        JSON " + results + ".json)\n" + "  --csv PATH         CSV " +
         results + ".csv)\n" +
         "  --keep-binding     keep the launcher's CPU binding (see docs/ep_pingpong.md)\n";
}

std::vector<std::size_t> SweepOptions::message_sizes(
    std::size_t min_bytes, std::initializer_list<std::size_t> quick_sizes) const {
  std::vector<std::size_t> sizes;
  if (quick) {
    for (const std::size_t s : quick_sizes) {
      if (s <= max_bytes) sizes.push_back(s);
    }
  } else {
    for (std::size_t s = min_bytes; s <= max_bytes; s *= 2) sizes.push_back(s);
  }
  if (sizes.empty() || sizes.back() != max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

}  // namespace bench
