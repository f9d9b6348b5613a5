#include "vocabulary.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace xios_lite::config {
namespace {

// Whether `name` is one of the space-separated `names`.
bool lists(std::string_view names, std::string_view name) {
  while (!names.empty()) {
    const std::size_t space = names.find(' ');
    if (names.substr(0, space) == name) return true;
    if (space == std::string_view::npos) break;
    names.remove_prefix(space + 1);
  }
  return false;
}

// An XIOS attribute as the parser sees it (xios_attributes.def): accepted
// (read or ignored), or refused with `why`.
struct Known {
  std::string_view kind;
  std::string_view name;
  std::string_view why;  // empty: accepted
};

// NOLINTBEGIN(cppcoreguidelines-macro-usage): the table is an X-macro file
#define XIOS_ATTRIBUTE(kind, name, type, use) Known{#kind, #name, ""},
#define XIOS_REFUSED(kind, name, type, use, why) Known{#kind, #name, why},
#define XIOS_XML_ATTRIBUTE(kind, name, use) Known{#kind, #name, ""},
#define XIOS_XML_REFUSED(kind, name, why) Known{#kind, #name, why},
constexpr std::array kKnownAttributes{
#include "xios_lite/xios_attributes.def"
};
#undef XIOS_ATTRIBUTE
#undef XIOS_REFUSED
#undef XIOS_XML_ATTRIBUTE
#undef XIOS_XML_REFUSED
// NOLINTEND(cppcoreguidelines-macro-usage)

// The kind whose table an element uses: groups share their members'
// (as group kinds do in the `xios` interface), <calendar> is XIOS's
// calendar_wrapper.
std::string_view table_of(std::string_view element) {
  for (const std::string_view kind :
       {"field", "file", "domain", "axis", "scalar", "grid", "variable"}) {
    if (element.size() > kind.size() && element.substr(0, kind.size()) == kind &&
        (element.substr(kind.size()) == "_group" || element.substr(kind.size()) == "_definition")) {
      return kind;
    }
  }
  if (element == "calendar") return "calendar_wrapper";
  return element;
}

bool is_group(std::string_view element) {
  return element.size() > 6 && element.substr(element.size() - 6) == "_group";
}

// XIOS elements xios_lite does not implement, and why.
struct KnownElement {
  std::string_view element;
  std::string_view why;
};
constexpr std::array kUnsupportedElements{
    KnownElement{"interpolate_domain", "interpolation between grids (interpolate_domain)"},
    KnownElement{"interpolate_axis", "vertical interpolation (interpolate_axis)"},
    KnownElement{"inverse_axis", "axis inversion (inverse_axis)"},
    KnownElement{"generate_rectilinear_domain", "generated domains"},
    KnownElement{"compute_connectivity_domain", "domain connectivity"},
    KnownElement{"expand_domain", "domain expansion"},
    KnownElement{"reorder_domain", "domain reordering"},
    KnownElement{"extract_domain_to_axis", "extraction of a domain line"},
    KnownElement{"reduce_scalar", "reductions of scalars"},
    KnownElement{"duplicate_scalar", "scalar duplication"},
    KnownElement{"temporal_splitting", "temporal splitting"},
    KnownElement{"redistribute_domain", "redistribution"},
    KnownElement{"redistribute_axis", "redistribution"},
    KnownElement{"redistribute_scalar", "redistribution"},
    KnownElement{"reduce_axis_to_axis", "reductions of an axis onto an axis"},
    KnownElement{"pool_definition", "XIOS 3 services"},
    KnownElement{"coupler_in_definition", "coupling through XIOS"},
    KnownElement{"coupler_out_definition", "coupling through XIOS"},
};

// Every XIOS element name (for "unknown element" versus a misplaced one).
constexpr std::array<std::string_view, 34> kXiosElements{"simulation",
                                                         "context",
                                                         "calendar",
                                                         "variable_definition",
                                                         "variable_group",
                                                         "variable",
                                                         "domain_definition",
                                                         "domain_group",
                                                         "domain",
                                                         "axis_definition",
                                                         "axis_group",
                                                         "axis",
                                                         "scalar_definition",
                                                         "scalar",
                                                         "grid_definition",
                                                         "grid",
                                                         "field_definition",
                                                         "field_group",
                                                         "field",
                                                         "file_definition",
                                                         "file_group",
                                                         "file",
                                                         "zoom_domain",
                                                         "extract_domain",
                                                         "zoom_axis",
                                                         "extract_axis",
                                                         "reduce_domain",
                                                         "reduce_axis",
                                                         "interpolate_domain",
                                                         "interpolate_axis",
                                                         "inverse_axis",
                                                         "reduce_scalar",
                                                         "temporal_splitting",
                                                         "duplicate_scalar"};

}  // namespace

void unsupported(const Element& e, std::string_view attr, std::string_view why) {
  fail(e, attr, "unsupported XIOS feature (" + std::string(why) + ")");
}

void check_attributes(const Element& e, std::initializer_list<std::string_view> extra) {
  const std::string_view table = table_of(e.name);
  for (const auto& attribute : e.attributes) {
    // A plain reference (not a structured binding): lambdas capture it in
    // every compiler the project builds with.
    const std::string& name = attribute.first;
    // Every XIOS object may be named; groups may name the group they copy.
    if (name == "id" || (name == "group_ref" && is_group(e.name))) continue;
    if (std::find(extra.begin(), extra.end(), name) != extra.end()) continue;
    const auto known =
        std::find_if(kKnownAttributes.begin(), kKnownAttributes.end(),
                     [&](const Known& k) { return k.kind == table && k.name == name; });
    if (known == kKnownAttributes.end()) {
      fail(e, name, "unknown attribute");
    }
    if (!known->why.empty()) {
      unsupported(e, name, known->why);
    }
  }
}

namespace {

// The transformations XIOS takes inside each element (its CAxis, CScalar
// and CDomain transformation lists), so that "XIOS does not allow" is said
// only of what XIOS refuses too.
struct Allowed {
  std::string_view parent;
  std::string_view children;
};
constexpr std::array kXiosTransformations{
    Allowed{"domain",
            "zoom_domain extract_domain interpolate_domain generate_rectilinear_domain "
            "compute_connectivity_domain expand_domain reorder_domain redistribute_domain"},
    Allowed{"axis",
            "zoom_axis extract_axis interpolate_axis inverse_axis reduce_axis reduce_domain "
            "extract_domain temporal_splitting duplicate_scalar redistribute_axis"},
    Allowed{"scalar", "reduce_axis extract_axis reduce_domain reduce_scalar redistribute_scalar"},
};

bool xios_allows(std::string_view parent, std::string_view child) {
  for (const Allowed& a : kXiosTransformations) {
    if (a.parent == parent && lists(a.children, child)) return true;
  }
  return false;
}

}  // namespace

void check_children(const Element& e, std::initializer_list<std::string_view> supported) {
  for (const auto& child : e.children) {
    if (std::find(supported.begin(), supported.end(), child->name) != supported.end()) {
      continue;
    }
    const auto known =
        std::find_if(kUnsupportedElements.begin(), kUnsupportedElements.end(),
                     [&](const KnownElement& k) { return k.element == child->name; });
    if (known != kUnsupportedElements.end()) {
      fail(*child, "", "unsupported XIOS feature (" + std::string(known->why) + ")");
    }
    const bool xios =
        std::find(kXiosElements.begin(), kXiosElements.end(), child->name) != kXiosElements.end();
    if (xios && xios_allows(e.name, child->name)) {
      fail(*child, "", "unsupported XIOS feature (<" + child->name + "> inside <" + e.name + ">)");
    }
    fail(*child, "",
         xios ? "XIOS does not allow <" + child->name + "> inside <" + e.name + ">"
              : "unknown element inside <" + e.name + ">");
  }
}

}  // namespace xios_lite::config
