#include "facade/attribute_table.hpp"

#include <array>
#include <string>

namespace xios_lite::facade {
namespace {

#define XIOS_TYPE_string AttributeType::kString
#define XIOS_TYPE_bool AttributeType::kBool
#define XIOS_TYPE_int AttributeType::kInt
#define XIOS_TYPE_double AttributeType::kDouble
#define XIOS_TYPE_duration AttributeType::kDuration
#define XIOS_TYPE_date AttributeType::kDate
#define XIOS_TYPE_int_1d AttributeType::kInt1d
#define XIOS_TYPE_bool_1d AttributeType::kBool1d
#define XIOS_TYPE_bool_2d AttributeType::kBool2d
#define XIOS_TYPE_double_1d AttributeType::kDouble1d
#define XIOS_TYPE_double_2d AttributeType::kDouble2d
#define XIOS_TYPE_double_3d AttributeType::kDouble3d

// NOLINTBEGIN(cppcoreguidelines-macro-usage): the table is an X-macro file
#define XIOS_ATTRIBUTE(kind, name, type, use) AttributeInfo{#kind, #name, XIOS_TYPE_##type},
constexpr std::array kTable{
#include "xios_lite/xios_attributes.def"
};
#undef XIOS_ATTRIBUTE
// NOLINTEND(cppcoreguidelines-macro-usage)

constexpr AttributeInfo kGroupRef{"group", "group_ref", AttributeType::kString};

// Element kinds that have groups (XIOS's *_group and *_definition elements).
constexpr std::array<std::string_view, 7> kGrouped{"domain", "axis", "scalar",  "grid",
                                                   "field",  "file", "variable"};

}  // namespace

const char* to_string(AttributeType type) noexcept {
  switch (type) {
    case AttributeType::kString:
      return "a string";
    case AttributeType::kBool:
      return "a logical";
    case AttributeType::kInt:
      return "an integer";
    case AttributeType::kDouble:
      return "a real";
    case AttributeType::kDuration:
      return "an xios_duration";
    case AttributeType::kDate:
      return "an xios_date";
    case AttributeType::kInt1d:
      return "an integer array of rank 1";
    case AttributeType::kBool1d:
      return "a logical array of rank 1";
    case AttributeType::kBool2d:
      return "a logical array of rank 2";
    case AttributeType::kDouble1d:
      return "a real array of rank 1";
    case AttributeType::kDouble2d:
      return "a real array of rank 2";
    case AttributeType::kDouble3d:
      return "a real array of rank 3";
  }
  return "a value";
}

bool is_group_kind(std::string_view kind) {
  for (std::string_view k : kGrouped) {
    if (kind.size() == k.size() + 5 && kind.substr(0, k.size()) == k &&
        kind.substr(k.size()) == "group") {
      return true;
    }
  }
  return false;
}

std::string_view base_kind(std::string_view kind) {
  return is_group_kind(kind) ? kind.substr(0, kind.size() - 5) : kind;
}

const AttributeInfo* find_attribute(std::string_view kind, std::string_view name) {
  if (is_group_kind(kind) && name == kGroupRef.name) {
    return &kGroupRef;
  }
  const std::string_view base = base_kind(kind);
  for (const AttributeInfo& a : kTable) {
    if (a.kind == base && a.name == name) {
      return &a;
    }
  }
  return nullptr;
}

std::string kind_of_element(std::string_view element) {
  if (element == "calendar") {
    return "calendar_wrapper";
  }
  for (std::string_view k : kGrouped) {
    if (element == k) {
      return std::string(k);
    }
    const std::string group = std::string(k) + "_group";
    const std::string definition = std::string(k) + "_definition";
    if (element == group || element == definition) {
      return std::string(k) + "group";
    }
  }
  for (std::string_view k :
       {"context", "zoom_domain", "zoom_axis", "extract_domain", "extract_axis"}) {
    if (element == k) {
      return std::string(k);
    }
  }
  return "";
}

}  // namespace xios_lite::facade
