// Reading one XML document with errors that name the file, the line, the
// element and the attribute (the convention of xios_lite::parse_config).
// Used by the configuration parser only. Thread safety: const use only.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <pugixml.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ep/error.hpp"
#include "xios_lite/calendar.hpp"

namespace xios_lite::config {

inline constexpr const char* kCall = "xios_lite::parse_config";

// The document and its name, to turn node offsets into line numbers.
class XmlSource {
 public:
  XmlSource(std::string text, std::string name) : text_(std::move(text)), name_(std::move(name)) {}

  [[nodiscard]] const std::string& text() const { return text_; }
  [[nodiscard]] const std::string& name() const { return name_; }

  [[nodiscard]] int line_of(std::ptrdiff_t offset) const {
    if (offset < 0) {
      return 0;
    }
    const auto end = text_.begin() + std::min<std::ptrdiff_t>(offset, std::ssize(text_));
    return 1 + static_cast<int>(std::count(text_.begin(), end, '\n'));
  }

  /// Throws the one parse error: "<file>:<line>: <element id="x"> attribute a: what".
  [[noreturn]] void fail(const pugi::xml_node& node, const std::string& attribute,
                         const std::string& what) const {
    std::ostringstream msg;
    msg << name_ << ":" << line_of(node.offset_debug()) << ": <" << node.name();
    if (const auto id = node.attribute("id")) {
      msg << " id=\"" << id.value() << "\"";
    }
    msg << ">";
    if (!attribute.empty()) {
      msg << " attribute " << attribute;
    }
    msg << ": " << what;
    throw ep::Error(ep::ErrorKind::kConfig, kCall, -1, msg.str());
  }

  void check_attributes(const pugi::xml_node& node,
                        std::initializer_list<const char*> allowed) const {
    for (const auto& attr : node.attributes()) {
      const bool ok = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) {
        return std::string_view(a) == attr.name();
      });
      if (!ok) {
        fail(node, attr.name(), "unknown attribute");
      }
    }
  }

  void check_children(const pugi::xml_node& node,
                      std::initializer_list<const char*> allowed) const {
    for (const auto& child : node.children()) {
      if (child.type() != pugi::node_element) {
        continue;
      }
      const bool ok = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) {
        return std::string_view(a) == child.name();
      });
      if (!ok) {
        fail(child, "", std::string("unknown element inside <") + node.name() + ">");
      }
    }
  }

  [[nodiscard]] std::string required(const pugi::xml_node& node, const char* attr) const {
    const auto a = node.attribute(attr);
    if (!a || std::string_view(a.value()).empty()) {
      fail(node, attr, "missing (required)");
    }
    return a.value();
  }

  [[nodiscard]] long long integer(const pugi::xml_node& node, const char* attr, long long lo,
                                  long long hi) const {
    const std::string text = required(node, attr);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0' || errno != 0) {
      fail(node, attr, "'" + text + "' is not an integer");
    }
    if (v < lo || v > hi) {
      fail(node, attr,
           "value " + text + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) +
               "]");
    }
    return v;
  }

  [[nodiscard]] bool boolean(const pugi::xml_node& node, const char* attr) const {
    const std::string text = required(node, attr);
    if (text != "true" && text != "false") {
      fail(node, attr, "value '" + text + "' out of range (expected true or false)");
    }
    return text == "true";
  }

  [[nodiscard]] double real(const pugi::xml_node& node, const char* attr) const {
    const std::string text = required(node, attr);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) {
      fail(node, attr, "'" + text + "' is not a finite number");
    }
    return v;
  }

  [[nodiscard]] std::vector<double> reals(const pugi::xml_node& node, const char* attr,
                                          std::size_t expected) const {
    std::istringstream in(required(node, attr));
    std::vector<double> out;
    std::string word;
    while (in >> word) {
      char* end = nullptr;
      const double v = std::strtod(word.c_str(), &end);
      if (end == word.c_str() || *end != '\0' || !std::isfinite(v)) {
        fail(node, attr, "'" + word + "' is not a finite number");
      }
      out.push_back(v);
    }
    if (out.size() != expected) {
      fail(node, attr,
           "has " + std::to_string(out.size()) + " values, expected " + std::to_string(expected));
    }
    return out;
  }

  [[nodiscard]] Frequency frequency(const pugi::xml_node& node, const char* attr) const {
    const std::string text = required(node, attr);
    Frequency f;
    if (!parse_frequency(text, f)) {
      fail(node, attr,
           "bad frequency '" + text + "' (expected <count><unit>, unit ts, s, mi, h, d, mo or y)");
    }
    return f;
  }

 private:
  std::string text_;
  std::string name_;
};

}  // namespace xios_lite::config
