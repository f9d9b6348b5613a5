// The attribute table of the `xios` interface (xios_lite/xios_attributes.def)
// as C++ looks it up: which attributes an element kind has and their types.
//
// Pure functions over a constant table: thread-safe, no MPI.
#pragma once

#include <string>
#include <string_view>

namespace xios_lite::facade {

enum class AttributeType {
  kString,
  kBool,
  kInt,
  kDouble,
  kDuration,
  kDate,
  kInt1d,
  kBool1d,
  kBool2d,
  kDouble1d,
  kDouble2d,
  kDouble3d
};

[[nodiscard]] const char* to_string(AttributeType type) noexcept;

struct AttributeInfo {
  std::string_view kind;  ///< the element kind of the table (field, not fieldgroup)
  std::string_view name;
  AttributeType type;
};

/// The table's entry for attribute `name` of element kind `kind` (a group
/// kind such as "fieldgroup" has its element's attributes and group_ref),
/// or nullptr.
[[nodiscard]] const AttributeInfo* find_attribute(std::string_view kind, std::string_view name);

/// The table kind of an XML element name: "field" for <field>, "fieldgroup"
/// for <field_group> and <field_definition>, "calendar_wrapper" for
/// <calendar>; "" for an element the interface does not address.
[[nodiscard]] std::string kind_of_element(std::string_view element);
/// The element kind without its group ("fieldgroup" -> "field").
[[nodiscard]] std::string_view base_kind(std::string_view kind);
/// Whether `kind` is a group kind ("fieldgroup").
[[nodiscard]] bool is_group_kind(std::string_view kind);

}  // namespace xios_lite::facade
