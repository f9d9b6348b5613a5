// XIOS's vocabulary: for each element, the attributes (from
// xios_attributes.def) and child elements XIOS defines, and what xios_lite
// does with each -- reads it, accepts it without effect on what is written
// (ignored), or refuses it as an unsupported XIOS feature. A name XIOS
// does not define is an unknown attribute or element (a typo), and the
// message says which.
//
// Used by the configuration parser only. Pure data: thread-safe.
#pragma once

#include <initializer_list>
#include <string_view>

#include "xml_tree.hpp"

namespace xios_lite::config {

/// Checks `e`'s attributes against XIOS's table (xios_attributes.def; a
/// group uses its members' kind, <calendar> calendar_wrapper): id, a
/// group's group_ref, an attribute the table accepts for the kind, or one
/// of `extra` (names outside XIOS that this element takes) pass; an
/// attribute the table refuses fails as "unsupported XIOS feature (why)",
/// anything else as "unknown attribute".
void check_attributes(const Element& e, std::initializer_list<std::string_view> extra = {});

/// Checks `e`'s child elements the same way (`supported` names).
void check_children(const Element& e, std::initializer_list<std::string_view> supported);

/// Fails on `e`'s attribute `attr` as an unsupported XIOS feature.
[[noreturn]] void unsupported(const Element& e, std::string_view attr, std::string_view why);

}  // namespace xios_lite::config
