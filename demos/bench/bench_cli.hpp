// Command-line parsing shared by the benchmarks: counts with binary suffixes
// and comma-separated name lists. Errors throw std::invalid_argument naming the
// flag, which the benchmarks print with their usage text.
//
// Thread safety: pure functions. Nothing here calls MPI.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

/// "4M", "64K", "1000": a positive count with an optional binary suffix (K, M).
long long parse_count(std::string_view flag, const std::string& text);

/// "a,b,c" -> {"a", "b", "c"}, each of which must be one of `known`.
std::vector<std::string> parse_list(std::string_view flag, const std::string& text,
                                    std::span<const std::string_view> known);

/// Whether `name` is in `list`; an empty list selects everything.
bool selected(const std::vector<std::string>& list, std::string_view name);

}  // namespace bench
