#include "vocabulary.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace xios_lite::config {
namespace {

// XIOS attributes xios_lite does not read: ignored (no effect on what is
// written here, `why` empty) or refused (why it is not implemented).
struct Known {
  std::string_view element;  // "*": any element
  std::string_view why;      // empty: accepted and ignored
  std::string_view names;    // the attributes, separated by spaces
};

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

constexpr std::string_view kPerClient =
    "in the configuration: each client's part is set by the model (set_domain_attr / "
    "set_axis_attr)";
constexpr std::string_view kHalo =
    "axis data layouts (data_n, data_begin, data_index): send the levels of the axis";

// XIOS 2.x attributes, by element, grouped by what they would need.
constexpr std::array kKnownAttributes{
    // every element
    Known{"*", "", "comment prec"},
    // domains
    Known{"domain", kPerClient, "ibegin ni jbegin nj"},
    Known{"domain", "indexed (unstructured) domain distributions", "i_index j_index"},
    Known{"domain", "renamed coordinates", "lon_name lat_name bounds_lon_name bounds_lat_name"},
    Known{"domain", "renamed dimensions", "dim_i_name dim_j_name"},
    Known{"domain", "areas computed from a radius (give area)", "radius"},
    Known{"domain", "", "standard_name"},
    // axes
    Known{"axis", kPerClient, "begin n index"},
    Known{"axis", kHalo, "data_n data_begin data_index"},
    Known{"axis", "axis masks", "mask"},
    Known{"axis", "labelled (string) axes", "label"},
    Known{"axis", "vertical coordinate formulas",
          "formula formula_term formula_bounds formula_term_bounds"},
    Known{"axis", "renamed coordinates", "bounds_name"},
    Known{"axis", "renamed dimensions", "dim_name"},
    Known{"axis", "", "axis_type"},
    // scalars
    Known{"scalar", "scalars with their own value", "value bounds"},
    Known{"scalar", "renamed coordinates", "bounds_name"},
    Known{"scalar", "labelled scalars", "label"},
    Known{"scalar", "", "axis_type positive"},
    // grids
    Known{"grid", "", "name description"},
    Known{"grid", "grid masks (use the domain's mask)",
          "mask_0d mask_1d mask_2d mask_3d mask_4d mask_5d mask_6d mask_7d"},
    // fields
    Known{"field", "packed output (add_offset, scale_factor)", "add_offset scale_factor"},
    Known{"field", "chains of grid transformations (grid_path)", "grid_path"},
    Known{"field", "time-series files split on their own frequency", "ts_split_freq"},
    Known{"field", "indexed (compressed) output", "indexed_output"},
    Known{"field", "", "check_if_active build_workflow_graph"},
    Known{"field", "unit conversion", "conversion"},
    // files
    Known{"file", "", "par_access read_metadata_par"},
    Known{"file", "split periods with offsets",
          "split_start_offset split_end_offset split_last_date"},
    Known{"file", "time_counter variables (the time axis is 'time')",
          "time_counter time_counter_name"},
    Known{"file", "time axes in days (written in seconds)", "time_units"},
    Known{"file", "time stamps", "time_stamp_name time_stamp_format"},
    Known{"file", "file uuids", "uuid_name uuid_format"},
    Known{"file", "record offsets", "record_offset"},
    Known{"file", "cyclic input files", "cyclic"},
    Known{"file", "file writer pools (XIOS 3 services)", "writer"},
    Known{"file", "file reader pools (XIOS 3 services)", "reader"},
    Known{"file", "file gatherer pools (XIOS 3 services)", "gatherer"},
    Known{"file", "second-level servers", "using_server2"},
    // reductions
    Known{"reduce_axis", "client-local reductions (local=\"true\")", "local"},
    Known{"reduce_domain", "client-local reductions (local=\"true\")", "local"},
    // calendars
    Known{"calendar", "user_defined calendars without months", "year_length"},
    Known{"calendar", "leap years in user_defined calendars",
          "leap_year_month leap_year_drift leap_year_drift_offset"},
    // contexts
    Known{"context", "XIOS 3 services",
          "default_pool default_pool_writer default_pool_reader default_writer default_reader "
          "default_gatherer"},
    Known{"context", "second-level servers", "default_using_server2"},
};

// The element whose table an element uses (groups share their members').
std::string_view table_of(std::string_view element) {
  if (element == "field_group" || element == "field_definition") return "field";
  if (element == "file_group" || element == "file_definition") return "file";
  if (element == "domain_group" || element == "domain_definition") return "domain";
  if (element == "axis_group" || element == "axis_definition") return "axis";
  if (element == "scalar_group" || element == "scalar_definition") return "scalar";
  if (element == "grid_group" || element == "grid_definition") return "grid";
  return element;
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

void check_attributes(const Element& e, std::initializer_list<std::string_view> supported) {
  const std::string_view table = table_of(e.name);
  for (const auto& attribute : e.attributes) {
    // A plain reference (not a structured binding): lambdas capture it in
    // every compiler the project builds with.
    const std::string& name = attribute.first;
    if (std::find(supported.begin(), supported.end(), name) != supported.end()) {
      continue;
    }
    const auto known =
        std::find_if(kKnownAttributes.begin(), kKnownAttributes.end(), [&](const Known& k) {
          return (k.element == table || k.element == "*") && lists(k.names, name);
        });
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
