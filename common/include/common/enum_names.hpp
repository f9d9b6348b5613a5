#pragma once
// Names of enumerators as one table per enum, in place of a switch per
// enum-to-text function. enum_names() checks at compile time that the table
// names every enumerator exactly once (the check a switch gets from
// -Wswitch), so an enumerator added later without a name stops the build:
//
//   constexpr auto kColourNames =
//       common::enum_names<Colour>({{Colour::kRed, "red"}, {Colour::kBlue, "blue"}});
//   const char* text = common::enum_name(kColourNames, colour, "?");
//
// Header-only and constexpr: no state, safe from any thread. Enumerators must
// have values in [0, kEnumProbeLimit), which holds for every enum of the
// project that has a table (scoped enums: an unscoped enum without a fixed
// type cannot hold the values probed).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace common {

/// One entry of a name table: an enumerator and its text.
template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};

/// Enumerator values are looked for in [0, kEnumProbeLimit).
inline constexpr int kEnumProbeLimit = 64;

namespace detail {

// The compiler spells a template argument that is an enumerator by its name
// ("... V = ns::Colour::kRed]") and a value that is no enumerator as a cast
// ("... V = (ns::Colour)7]"): what follows the last ')' is then only digits.
// GCC and Clang both write __PRETTY_FUNCTION__ this way (an anonymous
// namespace is "<unnamed>" or "(anonymous namespace)", never digits).
template <auto V>
constexpr bool is_enumerator() noexcept {
  // The signature of this very function, "... [with auto V = ...]" (GCC) or
  // "... [V = ...]" (Clang): a return type of bool adds no alias after V.
  std::string_view text = __PRETTY_FUNCTION__;
  const std::size_t end = text.find_last_of(']');
  text = text.substr(0, end);
  const std::size_t close = text.find_last_of(')');
  if (close == std::string_view::npos) return true;
  const std::string_view tail = text.substr(close + 1);
  if (tail.empty()) return true;
  for (const char c : tail) {
    if ((c < '0' || c > '9') && c != '-') return true;
  }
  return false;
}

template <typename Enum, int... I>
constexpr int count_enumerators(std::integer_sequence<int, I...> /*values*/) noexcept {
  return (0 + ... + (is_enumerator<static_cast<Enum>(I)>() ? 1 : 0));
}

}  // namespace detail

/// How many enumerators Enum has (values in [0, kEnumProbeLimit)).
template <typename Enum>
inline constexpr int kEnumeratorCount =
    detail::count_enumerators<Enum>(std::make_integer_sequence<int, kEnumProbeLimit>{});

/// True when `table` names every enumerator of Enum exactly once; for
/// static_assert next to the table.
template <typename Enum, std::size_t N>
constexpr bool names_every_enumerator(const std::array<EnumName<Enum>, N>& table) noexcept {
  if (static_cast<int>(N) != kEnumeratorCount<Enum>) return false;
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (table[i].value == table[j].value) return false;
    }
  }
  return true;
}

/// The table `entries` (one per enumerator, in any order), refused at compile
/// time unless it names every enumerator of Enum exactly once. Only for
/// initialising a constexpr table.
template <typename Enum, std::size_t N>
consteval std::array<EnumName<Enum>, N> enum_names(const EnumName<Enum> (&entries)[N]) {
  std::array<EnumName<Enum>, N> table{};
  for (std::size_t i = 0; i < N; ++i) table[i] = entries[i];
  if (!names_every_enumerator(table)) {
    throw "common::enum_names: the table does not name every enumerator exactly once";
  }
  return table;
}

/// The text of `value` in `table`; `fallback` for a value the table does not
/// hold (only an out-of-range cast can make one).
template <typename Enum, std::size_t N>
constexpr const char* enum_name(const std::array<EnumName<Enum>, N>& table, Enum value,
                                const char* fallback) noexcept {
  for (const EnumName<Enum>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

/// The enumerator whose text in `table` is `name` (compared exactly); none
/// when no entry has it.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> enum_from_name(const std::array<EnumName<Enum>, N>& table,
                                             std::string_view name) noexcept {
  for (const EnumName<Enum>& entry : table) {
    if (name == entry.name) return entry.value;
  }
  return std::nullopt;
}

/// The texts of `table` joined by ", " (for an error that lists the choices).
template <typename Enum, std::size_t N>
std::string joined_names(const std::array<EnumName<Enum>, N>& table) {
  std::string text;
  for (const EnumName<Enum>& entry : table) {
    if (!text.empty()) text += ", ";
    text += entry.name;
  }
  return text;
}

}  // namespace common
