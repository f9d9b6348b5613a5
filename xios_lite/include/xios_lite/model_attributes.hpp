// What a model sets at run time, before close_definition, with the names
// of XIOS's xios_set_domain_attr, xios_set_axis_attr, xios_define_calendar
// and xios_set_timestep (Client::set_domain_attr, set_axis_attr,
// define_calendar, set_timestep; the C and Fortran interfaces take the same
// names).
//
// Domains: the global sizes (ni_glo, nj_glo) and the type are the same on
// every client; ibegin/ni/jbegin/nj are this client's block, and the
// coordinate, bounds, area and mask arrays this block's values, as in XIOS:
//
//   lonvalue_1d   ni values      (rectilinear)   latvalue_1d   nj values
//   lonvalue_2d   ni x nj        (curvilinear)   latvalue_2d   ni x nj
//   bounds_lon_1d 2 x ni         (vertex fastest) bounds_lat_1d 2 x nj
//   bounds_lon_2d nvertex x ni x nj               bounds_lat_2d nvertex x ni x nj
//   area          ni x nj        mask (mask_1d / mask_2d)       ni x nj
//
// (i fastest everywhere; a Fortran array a(ni, nj) as it is). At
// close_definition the clients' pieces are assembled into the global
// arrays; clients that give a global value must agree, and pieces of the
// same coordinate from two clients must match (close_definition throws
// naming the clients otherwise). A value set by the model replaces the
// configuration's.
//
// Axes and the calendar are global: every client that sets them sets the
// same values (XIOS's model calls them on every process).
//
// The members are the lines of xios_attributes.def marked read_model or
// model for kinds domain, axis and calendar_wrapper, with the same names
// and these C++ types: int -> std::optional<int>; string, date and
// duration -> std::optional<std::string> (dates "2012-03-01 15:00:00",
// durations "1800s"); double -> std::optional<double>; int_1d ->
// std::vector<int>; double_* -> std::vector<double> (the values in Fortran
// order); bool_* -> std::vector<bool>. Unset: std::nullopt or empty.
//
// Domain attributes of note: type is "rectilinear" or "curvilinear"; mask
// (the table's mask_1d and mask_2d) is ni x nj flags of the block, false:
// masked. How the model's array holds the block (XIOS's data_* attributes):
// a 2-D array of data_ni x data_nj starting at (data_ibegin, data_jbegin)
// relative to the block's first point (negative: a halo), or with data_dim
// 1 a 1-D array of data_ni values over the block's points (i fastest) from
// data_ibegin. data_i_index / data_j_index (0-based, from data_ibegin /
// data_jbegin) name the point of each value of a compressed array
// (data_n_index of them: the array holds that many values per level).
// Unset: the array is the block itself. Values outside the block are
// ignored; points no value gives are missing.
//
// Axis attributes of note: value has n_glo values, bounds 2 x n_glo (lower,
// upper per level), positive is "up" or "down". begin and n are this
// client's part of a distributed axis (global, 0-based), taken where the
// axis stands alone in a grid (set_axis_attr refuses them elsewhere); how
// the model's array holds it (data_begin relative to begin, data_n values,
// or data_index naming the level of each value) is refused. Unset: the
// client sends the whole axis.
//
// The calendar (XIOS's xios_define_calendar): type ("Gregorian", "NoLeap",
// "D360", "AllLeap", "Julian", "user_defined", or the CF names), the start
// date and the time origin ("2012-03-01 15:00:00", an offset "+ 1d"
// allowed), the timestep (a duration: "1800s", "1h"), and for user_defined
// the day length (seconds) and the month lengths (days).
//
// model_members<A>() lists A's members by their XIOS names, for the calls
// that set them by name.
//
// Pure value types and constant tables: thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace xios_lite {

// NOLINTBEGIN(cppcoreguidelines-macro-usage,readability-identifier-naming): X-macros named by the
// table's lowercase types and uses
#define XIOS_MODEL_TYPE_int std::optional<int>
#define XIOS_MODEL_TYPE_double std::optional<double>
#define XIOS_MODEL_TYPE_bool std::optional<bool>
#define XIOS_MODEL_TYPE_string std::optional<std::string>
#define XIOS_MODEL_TYPE_date std::optional<std::string>
#define XIOS_MODEL_TYPE_duration std::optional<std::string>
#define XIOS_MODEL_TYPE_int_1d std::vector<int>
#define XIOS_MODEL_TYPE_double_1d std::vector<double>
#define XIOS_MODEL_TYPE_double_2d std::vector<double>
#define XIOS_MODEL_TYPE_double_3d std::vector<double>
#define XIOS_MODEL_TYPE_bool_1d std::vector<bool>
#define XIOS_MODEL_TYPE_bool_2d std::vector<bool>

// XIOS_MODEL_<use>(kind, name, type, X): X(kind, name, member, type) for the
// lines the model sets, nothing for the others.
#define XIOS_MODEL_read(kind, name, type, X)
#define XIOS_MODEL_ignored(kind, name, type, X)
#define XIOS_MODEL_none(kind, name, type, X)
#define XIOS_MODEL_read_model(kind, name, type, X) X(kind, name, name, type)
#define XIOS_MODEL_model(kind, name, type, X) X(kind, name, name, type)
#define XIOS_MODEL_read_mask(kind, name, type, X) XIOS_MODEL_MASK(kind, name, type, X)

// A member of the struct of `kind` (XIOS_MEMBER_OF_<kind>: the struct's
// own kind declares it, the others nothing). mask_1d and mask_2d share the
// one `mask`, declared by hand.
#define XIOS_MODEL_MEMBER(kind, name, member, type) XIOS_MEMBER_OF_##kind(member, type)
#define XIOS_DECLARE_MEMBER(member, type) XIOS_MODEL_TYPE_##type member;
#define XIOS_MODEL_MASK(kind, name, type, X)
#define XIOS_ATTRIBUTE(kind, name, type, use) XIOS_MODEL_##use(kind, name, type, XIOS_MODEL_MEMBER)
#define XIOS_REFUSED(kind, name, type, use, why) XIOS_ATTRIBUTE(kind, name, type, use)

struct DomainAttributes {
#define XIOS_MEMBER_OF_domain(member, type) XIOS_DECLARE_MEMBER(member, type)
#define XIOS_MEMBER_OF_axis(member, type)
#define XIOS_MEMBER_OF_calendar_wrapper(member, type)
#include "xios_lite/xios_attributes.def"
  std::vector<bool> mask;  ///< mask_1d / mask_2d
#undef XIOS_MEMBER_OF_domain
#undef XIOS_MEMBER_OF_axis
#undef XIOS_MEMBER_OF_calendar_wrapper
};

struct AxisAttributes {
#define XIOS_MEMBER_OF_domain(member, type)
#define XIOS_MEMBER_OF_axis(member, type) XIOS_DECLARE_MEMBER(member, type)
#define XIOS_MEMBER_OF_calendar_wrapper(member, type)
#include "xios_lite/xios_attributes.def"
#undef XIOS_MEMBER_OF_domain
#undef XIOS_MEMBER_OF_axis
#undef XIOS_MEMBER_OF_calendar_wrapper
};

struct CalendarAttributes {
#define XIOS_MEMBER_OF_domain(member, type)
#define XIOS_MEMBER_OF_axis(member, type)
#define XIOS_MEMBER_OF_calendar_wrapper(member, type) XIOS_DECLARE_MEMBER(member, type)
#include "xios_lite/xios_attributes.def"
#undef XIOS_MEMBER_OF_domain
#undef XIOS_MEMBER_OF_axis
#undef XIOS_MEMBER_OF_calendar_wrapper
};

// The members by XIOS name (mask_1d and mask_2d both name `mask`).
#undef XIOS_MODEL_MASK
#define XIOS_MODEL_MASK(kind, name, type, X) X(kind, name, mask, type)
#undef XIOS_MODEL_MEMBER
#define XIOS_MODEL_MEMBER(kind, name, member, type) XIOS_ENTRY_OF_##kind(name, member)

/// A pointer to one member of an *Attributes struct, whatever its type.
template <class A>
using MemberPointer =
    std::variant<std::optional<int> A::*, std::optional<double> A::*, std::optional<bool> A::*,
                 std::optional<std::string> A::*, std::vector<int> A::*, std::vector<double> A::*,
                 std::vector<bool> A::*>;

/// One attribute the model sets: its XIOS name and its member.
template <class A>
struct ModelMember {
  std::string_view name;
  MemberPointer<A> member;
};

inline constexpr std::array kDomainMembers{
#define XIOS_ENTRY_OF_domain(name, member) \
  ModelMember<DomainAttributes>{#name, &DomainAttributes::member},
#define XIOS_ENTRY_OF_axis(name, member)
#define XIOS_ENTRY_OF_calendar_wrapper(name, member)
#include "xios_lite/xios_attributes.def"
#undef XIOS_ENTRY_OF_domain
#undef XIOS_ENTRY_OF_axis
#undef XIOS_ENTRY_OF_calendar_wrapper
};

inline constexpr std::array kAxisMembers{
#define XIOS_ENTRY_OF_domain(name, member)
#define XIOS_ENTRY_OF_axis(name, member) \
  ModelMember<AxisAttributes>{#name, &AxisAttributes::member},
#define XIOS_ENTRY_OF_calendar_wrapper(name, member)
#include "xios_lite/xios_attributes.def"
#undef XIOS_ENTRY_OF_domain
#undef XIOS_ENTRY_OF_axis
#undef XIOS_ENTRY_OF_calendar_wrapper
};

inline constexpr std::array kCalendarMembers{
#define XIOS_ENTRY_OF_domain(name, member)
#define XIOS_ENTRY_OF_axis(name, member)
#define XIOS_ENTRY_OF_calendar_wrapper(name, member) \
  ModelMember<CalendarAttributes>{#name, &CalendarAttributes::member},
#include "xios_lite/xios_attributes.def"
#undef XIOS_ENTRY_OF_domain
#undef XIOS_ENTRY_OF_axis
#undef XIOS_ENTRY_OF_calendar_wrapper
};

#undef XIOS_ATTRIBUTE
#undef XIOS_REFUSED
#undef XIOS_MODEL_MEMBER
#undef XIOS_MODEL_MASK
#undef XIOS_DECLARE_MEMBER
#undef XIOS_MODEL_read
#undef XIOS_MODEL_ignored
#undef XIOS_MODEL_none
#undef XIOS_MODEL_read_model
#undef XIOS_MODEL_model
#undef XIOS_MODEL_read_mask
#undef XIOS_MODEL_TYPE_int
#undef XIOS_MODEL_TYPE_double
#undef XIOS_MODEL_TYPE_bool
#undef XIOS_MODEL_TYPE_string
#undef XIOS_MODEL_TYPE_date
#undef XIOS_MODEL_TYPE_duration
#undef XIOS_MODEL_TYPE_int_1d
#undef XIOS_MODEL_TYPE_double_1d
#undef XIOS_MODEL_TYPE_double_2d
#undef XIOS_MODEL_TYPE_double_3d
#undef XIOS_MODEL_TYPE_bool_1d
#undef XIOS_MODEL_TYPE_bool_2d
// NOLINTEND(cppcoreguidelines-macro-usage,readability-identifier-naming)

/// The members of A (DomainAttributes, AxisAttributes or
/// CalendarAttributes) the model sets, in table order.
template <class A>
constexpr const auto& model_members() {
  if constexpr (std::is_same_v<A, DomainAttributes>) {
    return kDomainMembers;
  } else if constexpr (std::is_same_v<A, AxisAttributes>) {
    return kAxisMembers;
  } else {
    static_assert(std::is_same_v<A, CalendarAttributes>);
    return kCalendarMembers;
  }
}

/// A's member with XIOS name `name`, or nullptr when the model does not set
/// an attribute of that name.
template <class A>
const ModelMember<A>* find_model_member(std::string_view name) {
  for (const ModelMember<A>& m : model_members<A>()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace xios_lite
