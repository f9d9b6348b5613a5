// The XML of a configuration as a tree of elements that remember their file
// and line, with XIOS's includes spliced in: an element with src="file"
// takes the attributes and children of that file's root element (which must
// have the same name), its own attributes winning. Every error goes through
// fail(), so that it names the file, the line, the element and the attribute
// (the convention of xios_lite::parse_config):
//
//   "iodef.xml:14: <field id="tas"> attribute grid_ref: unknown grid 'g9'"
//
// Used by the configuration parser only. Thread safety: const use only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ep/error.hpp"
#include "xios_lite/calendar.hpp"

namespace xios_lite::config {

inline constexpr const char* kCall = "xios_lite::parse_config";

struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  ///< in document order
  std::string text;  ///< the element's own text, trimmed (a <variable>'s value, a field's expr)
  std::vector<std::unique_ptr<Element>> children;
  Element* parent = nullptr;
  std::string file;  ///< the file it was read from (as named in messages)
  int line = 0;

  /// The attribute's value, or nullptr.
  [[nodiscard]] const std::string* find(std::string_view attribute) const;
  [[nodiscard]] bool has(std::string_view attribute) const { return find(attribute) != nullptr; }
  /// The attribute's value or `fallback`.
  [[nodiscard]] std::string get(std::string_view attribute, const std::string& fallback = "") const;
  /// "iodef.xml:12: <domain id="d">": the start of every message about it.
  [[nodiscard]] std::string where() const;
  /// Child elements named `name`.
  [[nodiscard]] std::vector<const Element*> children_named(std::string_view name) const;
};

/// Throws a parse error: "<where> attribute a: what" (no attribute: "<where>: what");
/// the parser collects those of independent definitions (parse_errors.hpp).
[[noreturn]] void fail(const Element& e, std::string_view attribute, const std::string& what);

/// An error's message without the parser's call prefix (kCall).
[[nodiscard]] std::string message_of(const ep::Error& error);
/// The same for a definition known only by its origin (checks at completion).
[[noreturn]] void fail_at(const std::string& where, std::string_view attribute,
                          const std::string& what);

/// Reads `text` (named `name` in messages) into a tree, including src=
/// files relative to `directory`. Throws for XML syntax errors (with the
/// line), unreadable or cyclic includes.
[[nodiscard]] std::unique_ptr<Element> load_tree(const std::string& text, const std::string& name,
                                                 const std::string& directory);
/// The same from a file.
[[nodiscard]] std::unique_ptr<Element> load_tree_file(const std::string& path);

/// A deep copy of `e` (its origins kept), its parent set to `parent`.
[[nodiscard]] std::unique_ptr<Element> clone(const Element& e, Element* parent = nullptr);
/// `e` and its children as an XML document (includes already spliced in):
/// what load_tree reads back into the same elements and attributes (the
/// origins become lines of this text).
[[nodiscard]] std::string to_xml(const Element& e);

// ---- attribute values, as XIOS writes them ----

/// A required attribute's text (error when absent or empty).
[[nodiscard]] std::string required(const Element& e, std::string_view attr);
/// A whole number in [lo, hi].
[[nodiscard]] long long integer(const Element& e, std::string_view attr, long long lo,
                                long long hi);
/// A finite number.
[[nodiscard]] double real(const Element& e, std::string_view attr);
/// true / false, also written .TRUE. / .FALSE. (any case).
[[nodiscard]] bool boolean(const Element& e, std::string_view attr);
[[nodiscard]] bool parse_boolean(std::string_view text, bool& out);
/// A list of numbers: "1 2 3", "1,2,3", or XIOS's array form
/// "(0,2)[1 2 3]" and "(0,1)x(0,2)[...]". `expected` values (0: any count).
[[nodiscard]] std::vector<double> reals(const Element& e, std::string_view attr,
                                        std::size_t expected);
/// A duration ("6h", "1d12h", "1ts").
[[nodiscard]] Frequency frequency(const Element& e, std::string_view attr);
/// A list of numbers from text (see reals); false with `why` set on a bad one.
[[nodiscard]] bool parse_reals(std::string_view text, std::vector<double>& out, std::string& why);

}  // namespace xios_lite::config
