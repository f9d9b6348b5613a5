// The configuration parser's one internal interface: ContextParser reads one
// <context> of an XIOS configuration (xml_tree.hpp) into Config, with XIOS's
// inheritance -- an element's own attribute, else its groups' (nearest
// first), else the element it references (field_ref, domain_ref, axis_ref,
// scalar_ref). Checks that need values the model may still set (sizes, the
// timestep) run in complete_definitions (completion.cpp).
//
// ContextParser stays a class, its member functions defined by element kind
// (parse_context.cpp: the driver, the index and inheritance; parse_calendar,
// parse_domain, parse_axis, parse_scalar, parse_grid, parse_field,
// parse_file): every kind reads the same state (the index of definitions,
// the built Config, the failed ids) and calls the others' builders (a grid
// builds its anonymous domains, a file its own fields), so one class with
// its state private keeps those calls short and the state in one place,
// where free functions would pass a state struct to each.
//
// Used by the configuration parser's sources only. Thread safety: one
// parser per thread (it owns its state; the tree is only read).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parse_errors.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {

using config::Element;
using config::fail;

// The settings of the "xios" context (and of the legacy <options>).
struct Settings {
  BufferSettings buffers;
  double finalise_timeout_s = 60.0;
  bool progress_thread = true;
  std::string report_json;
};

enum class Kind { kDomain, kAxis, kScalar, kField, kFileField, kFile };

// An attribute's value as inherited, and how far up it was found (0: own).
struct Found {
  const std::string* value = nullptr;
  const Element* at = nullptr;
  int distance = 0;
  explicit operator bool() const { return value != nullptr; }
};

// A <variable>: a well-formed attribute (parse_calendar.cpp).
[[nodiscard]] Attribute attribute_of(const Element& v);
// A model context's <variable_definition> or <variable_group>, checked;
// its <variable>s appended to `out`, named by id.
void check_model_variables(const Element& group, std::vector<Attribute>& out);
// The settings in the xios context's variables (XIOS's server parameters).
void read_xios_context(const Element& ctx, Settings& s);
// A reduce_axis / reduce_domain operation (parse_axis.cpp).
[[nodiscard]] Reduction reduction_of(const Element& e, const std::string& v);
// An element's `unit` from its `unit` and `units` (XIOS's attribute and
// the older spelling) as inherited: the nearer wins, and both on one
// element must agree, else neither is dropped silently (parse_field.cpp).
void read_unit(const Found& unit, const Found& units, std::string& out);
// Files in read mode leave Config::files for Config::inputs (parse_file.cpp).
void separate_inputs(Config& cfg);

class ContextParser {
 public:
  // Errors are recorded in `errors` (parse_errors.hpp); the Config returned
  // is complete only when none was.
  ContextParser(const Element& ctx, const Settings& settings, const std::string& path,
                Errors& errors);

  Config run();

 private:
  // ---- inheritance and the index of definitions (parse_context.cpp) ----

  const Element* referenced(Kind kind, const Element& e) const;

  // XIOS's inheritance: own, groups (nearest first), then the referenced element.
  Found lookup(Kind kind, const Element& e, std::string_view attr, int depth = 0) const;

  template <class F>
  void walk(const char* definition, const char* group, const char* element, F&& on_element) {
    const std::function<void(const Element&)> visit = [&](const Element& e) {
      for (const auto& c : e.children) {
        if (c->name == group) {
          visit(*c);
        } else if (c->name == element) {
          on_element(*c);
        }
      }
    };
    for (const Element* def : ctx_.children_named(definition)) {
      visit(*def);
    }
  }

  void index(std::map<std::string, const Element*>& ids, std::vector<const Element*>& order,
             const Element& e, bool id_required);

  void index_definitions();

  void find_fields_files_reach();

  static std::vector<const Element*> transformation_children(const Element& e);

  // Parses the definition `what` `id` under errors_.guard; a failed one is
  // remembered, so that what refers to it is skipped, not reported again.
  template <class F>
  void guarded(const char* what, const std::string& id, F&& parse) {
    if (!errors_.guard(std::forward<F>(parse))) {
      failed_[what].insert(id);
    }
  }

  // Throws DependsOnFailed when the definition `what` `id` failed.
  void skip_if_failed(const std::string& what, const std::string& id) const;

  // ---- the calendar and the options (parse_calendar.cpp) ----

  void read_calendar();

  std::optional<Calendar> probe_calendar(const Element& e) const;

  void read_options(const Element& n);

  // ---- domains (parse_domain.cpp) ----

  static void check_domain_attributes(const Element& e);

  int build_domain(const Element& e, const std::string& id, bool member);

  // The model's array layout (XIOS's data_* attributes), the same for
  // every client; whether it fits a client's block is checked at
  // close_definition, where the blocks are known.
  void read_data_layout(const Element& e, DomainDef& d);

  // The index of a definition's element, built first when it comes later
  // in the file (a reference may point forward).
  int domain_of(const Element& e);

  int add_domain(DomainDef d, const Element& e);

  // ---- axes (parse_axis.cpp) ----

  static void check_axis_attributes(const Element& e);

  int build_axis(const Element& e, const std::string& id, bool member);

  int axis_of(const Element& e);

  // reduce_domain inside an axis, with the reduce_axis that may follow it.
  void read_axis_reduction(const std::vector<const Element*>& chain, AxisDef& a);

  int add_axis(AxisDef a);

  // ---- scalars (parse_scalar.cpp) ----

  static void check_scalar_attributes(const Element& e);

  int build_scalar(const Element& e, const std::string& id);

  // The transformations inside a scalar element (reduce_axis, reduce_domain
  // with or without reduce_scalar after it, extract_axis).
  void read_scalar_transformations(const Element& e, ScalarDef& s);

  int scalar_of(const Element& e);

  // ---- grids (parse_grid.cpp) ----

  int member_index(const std::map<std::string, int>& index, const Element& e, const char* attr,
                   const char* what) const;

  // A grid member: a plain reference, or an anonymous derived element.
  GridDef::Member build_member(const Element& m, const std::string& grid, std::size_t pos);

  void build_grid(const Element& g);

  // A scalar without a transformation (a value the model gives).
  [[nodiscard]] bool plain_scalar(int index) const;

  // The grids of an axis alone or a scalar alone that fields the model
  // sends live on get a domain standing in for their member (see
  // DomainDef::stand_in), so that their values travel and are written as a
  // domain's; the axis is then no vertical axis of the grid.
  void add_stand_in_domains();

  static void set_first_members(GridDef& grid);

  // The grid of a field from grid_ref, or domain_ref (+ axis_ref), whichever
  // is nearer; -1 when none.
  int grid_of(Kind kind, const Element& e);

  // ---- fields (parse_field.cpp) ----

  static void check_field_attributes(const Element& e);

  // The attributes a field and a file's variable share, as inherited.
  template <class Def>
  void read_field_attributes(Kind kind, const Element& e, Def& d);

  // A sampling frequency: fixed length (no months); the timestep check
  // waits for the calendar (completion).
  static void check_sampling(const Element& e, const Frequency& f, const char* attr);

  static Frequency offset_of(const Element& at, const std::string& value);

  static double chunk_target(const Element& n);

  // <variable> children of `e` and of the elements it references.
  std::vector<Attribute> variables_of(Kind kind, const Element& e) const;

  void build_field(const Element& e);

  void read_flags(Kind kind, const Element& e, FieldDef& f);

  // Fields are numbered in the order of the definitions (a field_ref may
  // point forward): each element gets its slot on first use.
  int field_position(const Element& e);

  void set_field(FieldDef f);

  // ---- files (parse_file.cpp) ----

  static void check_file_attributes(const Element& e);

  void build_file(const Element& n);

  // Every field of definition group `group` (recursively), as file fields
  // inside the file's field_group `in_file`.
  void add_group_fields(const Element& in_file, const Element& group, FileDef& f,
                        std::set<std::string>& names, std::optional<int> output_level);

  // A file's <field> (`e`), or with `group_member` a field of a group_ref'd
  // group taking the attributes of the file's field_group `e`.
  void add_file_field(const Element& e, const Element* group_member, FileDef& f,
                      std::set<std::string>& names, std::optional<int> output_level);

  // Whether `group` is one of the file's field_groups around `e`.
  static bool inside_file(const Element& e, const Element& group);

  // The attributes of a file's field_group on a group_ref'd field.
  void read_group_attributes(const Element& group, OutputVariable& v);

  static void copy_field_attributes(const FieldDef& fd, OutputVariable& v);

  // A field defined inside a file (its own id and grid, or an expression):
  // a field of its own, named "<file>.<name>" unless it has an id.
  int file_field_definition(const Element& e, const Element* ref, const std::string& expr,
                            const FileDef& file);

  // Checks the attributes of a disabled file's fields (they are not built).
  void check_file_fields(const Element& n);

  // XIOS's timeseries: each ts_enabled variable also (or only) in a file of
  // its own, named "<ts_prefix>_<variable>".
  void add_time_series(FileDef f, const std::string& mode, const std::string& prefix);

  const Element& ctx_;
  Errors& errors_;
  Config cfg_;
  // The ids of the definitions that failed, by kind ("domain", "grid", ...).
  std::map<std::string, std::set<std::string>> failed_;
  std::map<std::string, const Element*> domain_ids_, axis_ids_, scalar_ids_, field_ids_, group_ids_;
  std::vector<const Element*> domain_elements_, axis_elements_, scalar_elements_, field_elements_;
  std::map<std::string, int> domain_index_, axis_index_, scalar_index_, grid_index_, field_index_;
  std::vector<FieldDef> field_slots_;
  std::set<std::string> file_ids_;
  /// The fields the files may read (find_fields_files_reach): a field of
  /// these that cannot be evaluated is an error at once, another one a
  /// warning at completion (FieldDef::unusable).
  std::set<std::string> files_reach_;
  // Grids naming an element nobody defines: id -> the error a use gives.
  std::map<std::string, std::string> broken_grids_;
  std::set<std::string> ts_variables_;
};

}  // namespace xios_lite::parser
