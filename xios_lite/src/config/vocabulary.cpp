#include "vocabulary.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace xios_lite::config {
namespace {

// An XIOS attribute xios_lite does not read: ignored (no effect on what is
// written here, `why` empty) or refused (why it is not implemented).
struct Known {
  std::string_view element;  // "*": any element
  std::string_view attribute;
  std::string_view why;  // empty: accepted and ignored
};

constexpr std::string_view kPerClient =
    "in the configuration: each client's part is set by the model (set_domain_attr / "
    "set_axis_attr)";
constexpr std::string_view kHalo =
    "model arrays with halos (data_*): send the block without its halo";

// XIOS 2.x attributes, by element.
constexpr std::array kKnownAttributes{
    // every element
    Known{"*", "comment", ""},
    Known{"*", "prec", ""},
    // domains
    Known{"domain", "ibegin", kPerClient},
    Known{"domain", "ni", kPerClient},
    Known{"domain", "jbegin", kPerClient},
    Known{"domain", "nj", kPerClient},
    Known{"domain", "i_index", "indexed (unstructured) domain distributions"},
    Known{"domain", "j_index", "indexed (unstructured) domain distributions"},
    Known{"domain", "data_dim", kHalo},
    Known{"domain", "data_ni", kHalo},
    Known{"domain", "data_nj", kHalo},
    Known{"domain", "data_ibegin", kHalo},
    Known{"domain", "data_jbegin", kHalo},
    Known{"domain", "data_i_index", kHalo},
    Known{"domain", "data_j_index", kHalo},
    Known{"domain", "lon_name", "renamed coordinates"},
    Known{"domain", "lat_name", "renamed coordinates"},
    Known{"domain", "bounds_lon_name", "renamed coordinates"},
    Known{"domain", "bounds_lat_name", "renamed coordinates"},
    Known{"domain", "dim_i_name", "renamed dimensions"},
    Known{"domain", "dim_j_name", "renamed dimensions"},
    Known{"domain", "radius", "areas computed from a radius (give area)"},
    Known{"domain", "standard_name", ""},
    // axes
    Known{"axis", "begin", kPerClient},
    Known{"axis", "n", kPerClient},
    Known{"axis", "index", kPerClient},
    Known{"axis", "data_n", kHalo},
    Known{"axis", "data_begin", kHalo},
    Known{"axis", "data_index", kHalo},
    Known{"axis", "mask", "axis masks"},
    Known{"axis", "label", "labelled (string) axes"},
    Known{"axis", "formula", "vertical coordinate formulas"},
    Known{"axis", "formula_term", "vertical coordinate formulas"},
    Known{"axis", "formula_bounds", "vertical coordinate formulas"},
    Known{"axis", "formula_term_bounds", "vertical coordinate formulas"},
    Known{"axis", "bounds_name", "renamed coordinates"},
    Known{"axis", "dim_name", "renamed dimensions"},
    Known{"axis", "axis_type", ""},
    // scalars
    Known{"scalar", "value", "scalars with their own value"},
    Known{"scalar", "bounds", "scalars with their own value"},
    Known{"scalar", "bounds_name", "renamed coordinates"},
    Known{"scalar", "label", "labelled scalars"},
    Known{"scalar", "axis_type", ""},
    Known{"scalar", "positive", ""},
    // grids
    Known{"grid", "name", ""},
    Known{"grid", "description", ""},
    Known{"grid", "mask_0d", "grid masks (use the domain's mask)"},
    Known{"grid", "mask_1d", "grid masks (use the domain's mask)"},
    Known{"grid", "mask_2d", "grid masks (use the domain's mask)"},
    Known{"grid", "mask_3d", "grid masks (use the domain's mask)"},
    Known{"grid", "mask_4d", "grid masks (use the domain's mask)"},
    Known{"grid", "mask_5d", "grid masks (use the domain's mask)"},
    Known{"grid", "mask_6d", "grid masks (use the domain's mask)"},
    Known{"grid", "mask_7d", "grid masks (use the domain's mask)"},
    // fields
    Known{"field", "add_offset", "packed output (add_offset, scale_factor)"},
    Known{"field", "scale_factor", "packed output (add_offset, scale_factor)"},
    Known{"field", "grid_path", "chains of grid transformations (grid_path)"},
    Known{"field", "ts_split_freq", "time-series files split on their own frequency"},
    Known{"field", "indexed_output", "indexed (compressed) output"},
    Known{"field", "check_if_active", ""},
    Known{"field", "build_workflow_graph", ""},
    Known{"field", "conversion", "unit conversion"},
    // files
    Known{"file", "par_access", ""},
    Known{"file", "split_start_offset", "split periods with offsets"},
    Known{"file", "split_end_offset", "split periods with offsets"},
    Known{"file", "split_last_date", "split periods with offsets"},
    Known{"file", "time_counter", "time_counter variables (the time axis is 'time')"},
    Known{"file", "time_counter_name", "time_counter variables (the time axis is 'time')"},
    Known{"file", "time_units", "time axes in days (written in seconds)"},
    Known{"file", "time_stamp_name", "time stamps"},
    Known{"file", "time_stamp_format", "time stamps"},
    Known{"file", "uuid_name", "file uuids"},
    Known{"file", "uuid_format", "file uuids"},
    Known{"file", "record_offset", "record offsets"},
    Known{"file", "cyclic", "cyclic input files"},
    Known{"file", "read_metadata_par", ""},
    Known{"file", "writer", "file writer pools (XIOS 3 services)"},
    Known{"file", "reader", "file reader pools (XIOS 3 services)"},
    Known{"file", "gatherer", "file gatherer pools (XIOS 3 services)"},
    Known{"file", "using_server2", "second-level servers"},
    // reductions
    Known{"reduce_axis", "local", "client-local reductions (local=\"true\")"},
    Known{"reduce_domain", "local", "client-local reductions (local=\"true\")"},
    // calendars
    Known{"calendar", "year_length", "user_defined calendars without months"},
    Known{"calendar", "leap_year_month", "leap years in user_defined calendars"},
    Known{"calendar", "leap_year_drift", "leap years in user_defined calendars"},
    Known{"calendar", "leap_year_drift_offset", "leap years in user_defined calendars"},
    // contexts
    Known{"context", "default_pool", "XIOS 3 services"},
    Known{"context", "default_pool_writer", "XIOS 3 services"},
    Known{"context", "default_pool_reader", "XIOS 3 services"},
    Known{"context", "default_writer", "XIOS 3 services"},
    Known{"context", "default_reader", "XIOS 3 services"},
    Known{"context", "default_gatherer", "XIOS 3 services"},
    Known{"context", "default_using_server2", "second-level servers"},
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
          return (k.element == table || k.element == "*") && k.attribute == name;
        });
    if (known == kKnownAttributes.end()) {
      fail(e, name, "unknown attribute");
    }
    if (!known->why.empty()) {
      unsupported(e, name, known->why);
    }
  }
}

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
    fail(*child, "",
         xios ? "XIOS does not allow <" + child->name + "> inside <" + e.name + ">"
              : "unknown element inside <" + e.name + ">");
  }
}

}  // namespace xios_lite::config
