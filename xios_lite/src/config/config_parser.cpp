// Reading an XIOS configuration (xml_tree.hpp) into Config: the contexts,
// the "xios" context's server parameters, and each definition with XIOS's
// inheritance -- an element's own attribute, else its groups' (nearest
// first), else the element it references (field_ref, domain_ref, axis_ref,
// scalar_ref). Checks that need values the model may still set (sizes, the
// timestep) run in complete_definitions (completion.cpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "ep/enum_names.hpp"
#include "ep/error.hpp"
#include "parse_tree.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite {
namespace {

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

// The groups and definitions an element of `kind` inherits from.
bool is_group_of(Kind kind, const std::string& name) {
  switch (kind) {
    case Kind::kDomain:
      return name == "domain_group" || name == "domain_definition";
    case Kind::kAxis:
      return name == "axis_group" || name == "axis_definition";
    case Kind::kScalar:
      return name == "scalar_group" || name == "scalar_definition";
    case Kind::kField:
      return name == "field_group" || name == "field_definition";
    case Kind::kFileField:
      return name == "field_group";  // inside the file, up to the file
    case Kind::kFile:
      return name == "file_group" || name == "file_definition";
  }
  return false;
}

// The attribute naming the element an element of `kind` references.
constexpr auto kRefAttributes = ep::enum_names<Kind>({{Kind::kDomain, "domain_ref"},
                                                      {Kind::kAxis, "axis_ref"},
                                                      {Kind::kScalar, "scalar_ref"},
                                                      {Kind::kField, "field_ref"},
                                                      {Kind::kFileField, "field_ref"},
                                                      {Kind::kFile, ""}});

const char* ref_attribute(Kind kind) { return ep::enum_name(kRefAttributes, kind, ""); }

// Attributes that belong to the element itself, never inherited.
bool inheritable(std::string_view attr) {
  return attr != "id" && attr != "field_ref" && attr != "expr" && attr != "group_ref" &&
         attr != "src";
}

// An attribute's value as inherited, and how far up it was found (0: own).
struct Found {
  const std::string* value = nullptr;
  const Element* at = nullptr;
  int distance = 0;
  explicit operator bool() const { return value != nullptr; }
};

// The texts of Operation and Reduction (to_string, and what operation_of and
// reduction_of read), and the CF cell method of each operation.
constexpr auto kOperationNames = ep::enum_names<Operation>({{Operation::kInstant, "instant"},
                                                            {Operation::kAverage, "average"},
                                                            {Operation::kMinimum, "minimum"},
                                                            {Operation::kMaximum, "maximum"},
                                                            {Operation::kAccumulate, "accumulate"},
                                                            {Operation::kOnce, "once"}});
constexpr auto kReductionNames = ep::enum_names<Reduction>({{Reduction::kNone, "none"},
                                                            {Reduction::kSum, "sum"},
                                                            {Reduction::kAverage, "average"},
                                                            {Reduction::kMin, "min"},
                                                            {Reduction::kMax, "max"}});
constexpr auto kCellMethods = ep::enum_names<Operation>({{Operation::kInstant, "time: point"},
                                                         {Operation::kAverage, "time: mean"},
                                                         {Operation::kMinimum, "time: minimum"},
                                                         {Operation::kMaximum, "time: maximum"},
                                                         {Operation::kAccumulate, "time: sum"},
                                                         {Operation::kOnce, "time: point"}});

Operation operation_of(const Element& e, const std::string& v) {
  const auto op = ep::enum_from_name(kOperationNames, v);
  if (!op) {
    fail(e, "operation",
         "unknown operation '" + v +
             "' (expected instant, average, minimum, maximum, accumulate or once)");
  }
  return *op;
}

Reduction reduction_of(const Element& e, const std::string& v) {
  const auto r = ep::enum_from_name(kReductionNames, v);
  if (r && *r != Reduction::kNone) return *r;
  fail(e, "operation", "unknown reduction '" + v + "' (expected sum, average, min or max)");
}

// 0/1 or true/false values, one per point (`expected` of them, 0: any count).
std::vector<std::uint8_t> mask_values(const Element& e, std::string_view attr,
                                      std::size_t expected) {
  std::string text = config::required(e, attr);
  const auto open = text.find('[');
  if (!text.empty() && text[0] == '(' && open != std::string::npos) {
    text = text.substr(open + 1, text.rfind(']') - open - 1);
  }
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text);
  std::vector<std::uint8_t> out;
  std::vector<std::string> words;
  std::string word;
  while (in >> word) {
    words.push_back(word);
  }
  if (expected > 0 && words.size() != expected) {
    fail(e, attr,
         "has " + std::to_string(words.size()) + " values, expected " + std::to_string(expected));
  }
  for (const std::string& word : words) {
    bool b = false;
    if (word == "1" || word == "0") {
      out.push_back(word == "1" ? 1 : 0);
    } else if (config::parse_boolean(word, b)) {
      out.push_back(b ? 1 : 0);
    } else {
      fail(e, attr, "value " + word + " out of range (0 masked, 1 valid)");
    }
  }
  return out;
}

Attribute attribute_of(const Element& v) {
  config::check_attributes(v, {"id", "name", "type"});
  Attribute a;
  a.name = v.has("name") ? v.get("name") : config::required(v, "id");
  a.value = v.text;
  const std::string type = v.get("type", "string");
  // XIOS's type names, with the long forms its own inputs use (boolean, integer).
  static const std::map<std::string, Attribute::Type> kTypes{
      {"string", Attribute::Type::kString}, {"bool", Attribute::Type::kBool},
      {"boolean", Attribute::Type::kBool},  {"int", Attribute::Type::kInt32},
      {"integer", Attribute::Type::kInt32}, {"int32", Attribute::Type::kInt32},
      {"short", Attribute::Type::kInt32},   {"int16", Attribute::Type::kInt32},
      {"long", Attribute::Type::kInt64},    {"int64", Attribute::Type::kInt64},
      {"float", Attribute::Type::kFloat},   {"double", Attribute::Type::kDouble}};
  const auto it = kTypes.find(type);
  if (it == kTypes.end()) {
    fail(v, "type",
         "unknown type '" + type +
             "' (expected string, bool, boolean, int, integer, short, long, int16, int32, int64, "
             "float or double)");
  }
  a.type = it->second;
  bool b = false;
  char* end = nullptr;
  switch (a.type) {
    case Attribute::Type::kString:
      break;
    case Attribute::Type::kBool:
      if (!config::parse_boolean(a.value, b)) {
        fail(v, "", "value '" + a.value + "' is not a bool");
      }
      break;
    case Attribute::Type::kInt32:
    case Attribute::Type::kInt64:
      (void)std::strtoll(a.value.c_str(), &end, 10);
      if (a.value.empty() || *end != '\0') {
        fail(v, "", "value '" + a.value + "' is not an integer");
      }
      break;
    case Attribute::Type::kFloat:
    case Attribute::Type::kDouble:
      (void)std::strtod(a.value.c_str(), &end);
      if (a.value.empty() || *end != '\0') {
        fail(v, "", "value '" + a.value + "' is not a number");
      }
      break;
  }
  return a;
}

// A model context's <variable_definition> (or <variable_group>): <variable>s
// and groups of them, each a well-formed attribute.
void check_model_variables(const Element& group) {
  config::check_attributes(group, {"id"});
  config::check_children(group, {"variable", "variable_group"});
  for (const auto& c : group.children) {
    if (c->name == "variable") {
      (void)attribute_of(*c);
    } else {
      check_model_variables(*c);
    }
  }
}

// The settings in the xios context's variables (XIOS's server parameters).
void read_xios_context(const Element& ctx, Settings& s) {
  config::check_attributes(ctx, {"id"});
  config::check_children(ctx, {"variable_definition"});
  std::vector<const Element*> vars;
  const std::function<void(const Element&)> collect = [&](const Element& e) {
    for (const auto& c : e.children) {
      if (c->name == "variable") {
        vars.push_back(c.get());
      } else if (c->name == "variable_group") {
        config::check_attributes(*c, {"id"});
        config::check_children(*c, {"variable", "variable_group"});
        collect(*c);
      }
    }
  };
  for (const Element* def : ctx.children_named("variable_definition")) {
    config::check_attributes(*def, {"id"});
    config::check_children(*def, {"variable", "variable_group"});
    collect(*def);
  }
  for (const Element* v : vars) {
    const Attribute a = attribute_of(*v);
    const std::string& name = a.name;
    const auto number = [&](double lo, double hi) {
      char* end = nullptr;
      const double x = std::strtod(a.value.c_str(), &end);
      if (a.value.empty() || *end != '\0' || !std::isfinite(x) || x < lo || x > hi) {
        fail(*v, "", "value '" + a.value + "' out of range for " + name);
      }
      return x;
    };
    const auto flag = [&] {
      bool b = false;
      if (!config::parse_boolean(a.value, b)) {
        fail(*v, "", "value '" + a.value + "' out of range (expected true or false)");
      }
      return b;
    };
    if (name == "buffer_size_factor") {
      s.buffers.factor = number(1.0, 1000.0);
    } else if (name == "min_buffer_size" || name == "buffer_min_bytes") {
      s.buffers.min_bytes = static_cast<std::size_t>(number(1024, 2147483648.0));
    } else if (name == "max_buffer_size" || name == "buffer_max_bytes") {
      s.buffers.max_bytes = static_cast<std::size_t>(number(1024, 2147483648.0));
    } else if (name == "finalise_timeout") {
      s.finalise_timeout_s = number(1e-3, 1e9);
    } else if (name == "report_json") {
      s.report_json = a.value;
    } else if (name == "progress_thread") {
      s.progress_thread = flag();
    } else if (name == "using_server") {
      (void)flag();  // the ep and funneled modes use servers, the synchronous mode none
    } else if (name == "using_oasis" || name == "using_server2") {
      if (flag()) {
        config::unsupported(
            *v, "", name == "using_oasis" ? "coupling through OASIS" : "second-level servers");
      }
    } else if (name == "info_level" || name == "print_file" || name == "optimal_buffer_size" ||
               name == "recv_field_timeout" || name == "check_event_sync" ||
               name == "transport_protocol" || name == "pure_one_sided" || name == "log_type" ||
               name == "oasis_codes_id" || name == "call_oasis_enddef" ||
               name == "server2_dist_level" || name == "ratio_server2" ||
               name == "number_pools_server2" || name == "xios_stack_size" ||
               name == "check_duplicated_ids" || name == "use_xios_memory_profiling" ||
               name == "buffer_factor_size" || name == "buffer_size" ||
               name == "buffer_server_factor_size" || name == "min_buffer_size_factor") {
      // XIOS parameters with no effect on what is written here.
    } else {
      fail(*v, "", "unknown XIOS server parameter '" + name + "'");
    }
  }
  if (s.buffers.max_bytes < s.buffers.min_bytes) {
    fail(ctx, "", "max_buffer_size below min_buffer_size");
  }
}

class ContextParser {
 public:
  ContextParser(const Element& ctx, const Settings& settings, const std::string& path) : ctx_(ctx) {
    cfg_.path = path;
    cfg_.buffers = settings.buffers;
    cfg_.finalise_timeout_s = settings.finalise_timeout_s;
    cfg_.progress_thread = settings.progress_thread;
    cfg_.report_json = settings.report_json;
  }

  Config run() {
    config::check_attributes(ctx_,
                             {"id", "calendar_type", "start_date", "time_origin", "timestep"});
    config::check_children(
        ctx_, {"calendar", "options", "domain_definition", "axis_definition", "scalar_definition",
               "grid_definition", "field_definition", "file_definition", "variable_definition"});
    cfg_.context = config::required(ctx_, "id");
    read_calendar();
    for (const Element* opt : ctx_.children_named("options")) {
      read_options(*opt);
    }
    // A model context's <variable>s are the model's own parameters (XIOS's
    // xios_getvar reads them); they write nothing. Each is checked as a
    // <variable> is (id, type, a value of that type).
    for (const Element* def : ctx_.children_named("variable_definition")) {
      check_model_variables(*def);
    }
    index_definitions();
    for (const Element* e : domain_elements_) {
      (void)domain_of(*e);
    }
    for (const Element* e : axis_elements_) {
      (void)axis_of(*e);
    }
    for (const Element* e : scalar_elements_) {
      (void)scalar_of(*e);
    }
    walk("grid_definition", "grid_group", "grid", [&](const Element& g) { build_grid(g); });
    for (const Element* e : field_elements_) {
      build_field(*e);
    }
    cfg_.fields = std::move(field_slots_);
    add_stand_in_domains();
    walk("file_definition", "file_group", "file", [&](const Element& f) { build_file(f); });
    return std::move(cfg_);
  }

 private:
  // ---- inheritance ----

  const Element* referenced(Kind kind, const Element& e) const {
    const char* ref = ref_attribute(kind);
    const std::string* id = ref[0] != '\0' ? e.find(ref) : nullptr;
    if (id == nullptr) {
      return nullptr;
    }
    const std::map<std::string, const Element*>* ids = nullptr;
    switch (kind) {
      case Kind::kDomain:
        ids = &domain_ids_;
        break;
      case Kind::kAxis:
        ids = &axis_ids_;
        break;
      case Kind::kScalar:
        ids = &scalar_ids_;
        break;
      case Kind::kField:
      case Kind::kFileField:
        ids = &field_ids_;
        break;
      case Kind::kFile:
        return nullptr;
    }
    const auto it = ids->find(*id);
    if (it == ids->end()) {
      const std::string what = std::string(ref).substr(0, std::string(ref).size() - 4);
      fail(e, ref, "unknown " + what + " '" + *id + "'");
    }
    return it->second;
  }

  // XIOS's inheritance: own, groups (nearest first), then the referenced element.
  Found lookup(Kind kind, const Element& e, std::string_view attr, int depth = 0) const {
    if (depth > 32) {
      fail(e, ref_attribute(kind), "references form a cycle");
    }
    if (const std::string* v = e.find(attr)) {
      return {v, &e, depth};
    }
    if (!inheritable(attr) ||
        (attr == ref_attribute(kind) && kind != Kind::kField && kind != Kind::kFileField)) {
      return {};
    }
    int d = depth;
    for (const Element* p = e.parent; p != nullptr && is_group_of(kind, p->name); p = p->parent) {
      ++d;
      if (const std::string* v = p->find(attr)) {
        return {v, p, d};
      }
    }
    if (const Element* target = referenced(kind, e)) {
      return lookup(kind == Kind::kFileField ? Kind::kField : kind, *target, attr, d + 1);
    }
    return {};
  }

  // ---- walking the definitions ----

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
             const Element& e, bool id_required) {
    if (!e.has("id")) {
      if (id_required) {
        fail(e, "id", "missing (required)");
      }
      return;
    }
    const std::string id = config::required(e, "id");
    if (!ids.emplace(id, &e).second) {
      fail(e, "id", "duplicate id '" + id + "'");
    }
    order.push_back(&e);
  }

  void index_definitions() {
    walk("domain_definition", "domain_group", "domain",
         [&](const Element& e) { index(domain_ids_, domain_elements_, e, true); });
    walk("axis_definition", "axis_group", "axis",
         [&](const Element& e) { index(axis_ids_, axis_elements_, e, true); });
    walk("scalar_definition", "scalar_group", "scalar",
         [&](const Element& e) { index(scalar_ids_, scalar_elements_, e, true); });
    walk("field_definition", "field_group", "field",
         [&](const Element& e) { index(field_ids_, field_elements_, e, true); });
    for (const Element* e : field_elements_) {
      (void)field_position(*e);  // fields are numbered in document order
    }
    // Field groups may be named (group_ref) and share the fields' namespace.
    const std::function<void(const Element&)> groups_of = [&](const Element& e) {
      for (const auto& c : e.children) {
        if (c->name == "field_group") {
          if (c->has("id") && !group_ids_.emplace(c->get("id"), c.get()).second) {
            fail(*c, "id", "duplicate id '" + c->get("id") + "'");
          }
          if (c->has("id") && field_ids_.count(c->get("id")) > 0) {
            fail(*c, "id", "duplicate id '" + c->get("id") + "'");
          }
          groups_of(*c);
        }
      }
    };
    for (const Element* def : ctx_.children_named("field_definition")) {
      groups_of(*def);
    }
    // Every container's own attributes and children are checked once.
    const auto check_tree = [&](const char* definition, const char* group, const char* element,
                                auto&& attrs) {
      const std::function<void(const Element&)> visit = [&](const Element& e) {
        config::check_children(e, {group, element});
        for (const auto& c : e.children) {
          if (c->name == group) {
            attrs(*c);
            visit(*c);
          }
        }
      };
      for (const Element* def : ctx_.children_named(definition)) {
        attrs(*def);
        visit(*def);
      }
    };
    check_tree("domain_definition", "domain_group", "domain",
               [](const Element& e) { check_domain_attributes(e); });
    check_tree("axis_definition", "axis_group", "axis",
               [](const Element& e) { check_axis_attributes(e); });
    check_tree("scalar_definition", "scalar_group", "scalar",
               [](const Element& e) { check_scalar_attributes(e); });
    check_tree("grid_definition", "grid_group", "grid",
               [](const Element& e) { config::check_attributes(e, {"id"}); });
    check_tree("field_definition", "field_group", "field",
               [](const Element& e) { check_field_attributes(e); });
    check_tree("file_definition", "file_group", "file",
               [](const Element& e) { check_file_attributes(e); });
  }

  // ---- attribute lists ----

  static void check_scalar_attributes(const Element& e) {
    config::check_attributes(e, {"id", "name", "scalar_ref", "long_name", "standard_name", "unit"});
  }

  static void check_domain_attributes(const Element& e) {
    config::check_attributes(
        e, {"id", "name", "domain_ref", "type", "ni_glo", "nj_glo", "lonvalue_1d", "latvalue_1d",
            "lonvalue_2d", "latvalue_2d", "bounds_lon_1d", "bounds_lat_1d", "bounds_lon_2d",
            "bounds_lat_2d", "nvertex", "area", "mask_1d", "mask_2d", "long_name", "data_dim",
            "data_ibegin", "data_ni", "data_jbegin", "data_nj", "data_i_index", "data_j_index",
            // xios_lite's own (legacy) attributes
            "lon_start", "lon_end", "lat_start", "lat_end", "lon_values", "lat_values", "mask",
            "bounds_lon", "bounds_lat"});
  }
  static void check_axis_attributes(const Element& e) {
    config::check_attributes(e, {"id", "name", "axis_ref", "n_glo", "value", "bounds", "unit",
                                 "units", "positive", "long_name", "standard_name"});
  }
  static void check_field_attributes(const Element& e) {
    config::check_attributes(e, {"id",
                                 "name",
                                 "field_ref",
                                 "grid_ref",
                                 "domain_ref",
                                 "axis_ref",
                                 "scalar_ref",
                                 "unit",
                                 "units",
                                 "standard_name",
                                 "long_name",
                                 "operation",
                                 "freq_op",
                                 "freq_offset",
                                 "level",
                                 "enabled",
                                 "default_value",
                                 "detect_missing_value",
                                 "expr",
                                 "compression_level",
                                 "ts_enabled",
                                 "cell_methods",
                                 "cell_methods_mode",
                                 "valid_min",
                                 "valid_max",
                                 "read_access",
                                 "chunking_blocksize_target",
                                 "group_ref",
                                 "prec"});
  }
  static void check_file_attributes(const Element& e) {
    config::check_attributes(
        e,
        {"id",          "name",         "description", "name_suffix", "min_digits",
         "output_freq", "output_level", "sync_freq",   "split_freq",  "split_freq_format",
         "enabled",     "type",         "format",      "mode",        "compression_level",
         "timeseries",  "ts_prefix",    "append",      "convention",  "chunking_blocksize_target"});
  }

  // ---- the calendar ----

  void read_calendar() {
    CalendarSpec& spec = cfg_.calendar_spec;
    spec.where = ctx_.where();
    const auto take = [&](const Element& e, const char* type_attr) {
      if (const std::string* t = e.find(type_attr)) {
        CalendarType type{};
        if (!parse_calendar_type(*t, type)) {
          fail(e, type_attr,
               "unknown calendar '" + *t +
                   "' (expected Gregorian, Julian, NoLeap, AllLeap, D360 or user_defined; or "
                   "gregorian, standard, proleptic_gregorian, julian, noleap, 365_day, all_leap, "
                   "366_day, 360_day)");
        }
        spec.type = type;
      }
      if (e.has("start_date")) spec.start_date = config::required(e, "start_date");
      if (e.has("time_origin")) spec.time_origin = config::required(e, "time_origin");
      if (e.has("timestep")) {
        const Frequency step = config::frequency(e, "timestep");
        if (step.timesteps != 0 || step.is_calendar_dependent()) {
          fail(e, "timestep", "value '" + to_string(step) + "' out of range (use s, mi, h or d)");
        }
        spec.timestep = step;
      }
      spec.where = e.where();
    };
    take(ctx_, "calendar_type");
    const std::vector<const Element*> cals = ctx_.children_named("calendar");
    if (cals.size() > 1) {
      fail(*cals[1], "", "a context has one <calendar>");
    }
    if (!cals.empty()) {
      const Element& c = *cals.front();
      config::check_attributes(
          c, {"type", "start_date", "time_origin", "timestep", "day_length", "month_lengths"});
      config::check_children(c, {});
      take(c, "type");
      if (c.has("day_length")) {
        spec.day_length = config::integer(c, "day_length", 1, 1LL << 40);
      }
      if (c.has("month_lengths")) {
        for (const double m : config::reals(c, "month_lengths", 0)) {
          if (m < 1 || m != std::floor(m)) {
            fail(c, "month_lengths", "month lengths must be whole numbers of days >= 1");
          }
          spec.month_lengths.push_back(static_cast<int>(m));
        }
      }
    }
    // Dates are checked now when the calendar type is known.
    if (spec.type) {
      const Element& e = cals.empty() ? ctx_ : *cals.front();
      const std::optional<Calendar> probe = probe_calendar(e);
      for (const char* attr : {"start_date", "time_origin"}) {
        const std::string& text =
            std::string(attr) == "start_date" ? spec.start_date : spec.time_origin;
        Date d;
        if (probe && !text.empty()) {
          const std::string why = parse_date(text, *probe, d);
          if (!why.empty()) {
            fail(e, attr, why);
          }
        }
      }
    }
  }

  std::optional<Calendar> probe_calendar(const Element& e) const {
    const CalendarSpec& spec = cfg_.calendar_spec;
    UserCalendar user;
    if (*spec.type == CalendarType::kUserDefined) {
      if (!spec.day_length || spec.month_lengths.empty()) {
        return std::nullopt;  // the model may give them (define_calendar)
      }
      user = {*spec.day_length, spec.month_lengths};
    }
    try {
      return Calendar(*spec.type, Date{0, 1, 1, 0, 0, 0}, 1, user);
    } catch (const ep::Error& err) {
      fail(e, "type", err.what());
    }
  }

  void read_options(const Element& n) {
    config::check_attributes(n, {"buffer_factor", "buffer_min_bytes", "buffer_max_bytes",
                                 "finalise_timeout", "report_json", "progress_thread"});
    if (n.has("progress_thread")) {
      cfg_.progress_thread = config::boolean(n, "progress_thread");
    }
    if (n.has("buffer_factor")) {
      cfg_.buffers.factor = config::real(n, "buffer_factor");
      if (cfg_.buffers.factor < 1.0 || cfg_.buffers.factor > 1000.0) {
        fail(n, "buffer_factor", "value out of range [1, 1000]");
      }
    }
    constexpr long long kMaxBuf = 1LL << 31;  // one MPI message
    if (n.has("buffer_min_bytes")) {
      cfg_.buffers.min_bytes =
          static_cast<std::size_t>(config::integer(n, "buffer_min_bytes", 1024, kMaxBuf));
    }
    if (n.has("buffer_max_bytes")) {
      cfg_.buffers.max_bytes =
          static_cast<std::size_t>(config::integer(n, "buffer_max_bytes", 1024, kMaxBuf));
    }
    if (cfg_.buffers.max_bytes < cfg_.buffers.min_bytes) {
      fail(n, "buffer_max_bytes", "value out of range (below buffer_min_bytes)");
    }
    if (n.has("finalise_timeout")) {
      cfg_.finalise_timeout_s = config::real(n, "finalise_timeout");
      if (cfg_.finalise_timeout_s <= 0) {
        fail(n, "finalise_timeout", "value out of range (must be > 0 seconds)");
      }
    }
    if (n.has("report_json")) {
      cfg_.report_json = n.get("report_json");
    }
  }

  // ---- domains, axes, scalars ----

  int build_domain(const Element& e, const std::string& id, bool member) {
    (void)member;
    check_domain_attributes(e);
    config::check_children(e, {"zoom_domain", "extract_domain"});
    DomainDef d;
    d.id = id;
    d.where = e.where();
    const Found name = lookup(Kind::kDomain, e, "name");
    d.name = name ? *name.value : "";
    if (const Found ln = lookup(Kind::kDomain, e, "long_name")) d.long_name = *ln.value;
    if (const Element* src = referenced(Kind::kDomain, e)) {
      d.source = domain_of(*src);
      for (const char* geometric : {"ni_glo", "nj_glo", "lonvalue_1d", "latvalue_1d", "lonvalue_2d",
                                    "latvalue_2d", "type", "area", "mask_1d", "mask_2d"}) {
        if (e.has(geometric)) {
          fail(e, geometric,
               "a domain with domain_ref takes its geometry from domain '" + src->get("id") + "'");
        }
      }
      const std::vector<const Element*> zooms = transformation_children(e);
      if (!zooms.empty()) {
        const Element& z = *zooms.front();
        config::check_attributes(z, {"ibegin", "ni", "jbegin", "nj", "zoom_ibegin", "zoom_ni",
                                     "zoom_jbegin", "zoom_nj"});
        config::check_children(z, {});
        const auto value = [&](const char* a, const char* old) {
          return static_cast<int>(config::integer(z, z.has(a) ? a : old, 0, 1 << 24));
        };
        Window w;
        w.ibegin = value("ibegin", "zoom_ibegin");
        w.ni = value("ni", "zoom_ni");
        w.jbegin = value("jbegin", "zoom_jbegin");
        w.nj = value("nj", "zoom_nj");
        if (w.ni < 1 || w.nj < 1) {
          fail(z, w.ni < 1 ? "ni" : "nj", "an empty window");
        }
        d.window = w;
        d.where = z.where();
      }
      return add_domain(std::move(d), e);
    }
    if (!transformation_children(e).empty()) {
      fail(*transformation_children(e).front(), "",
           "a zoom or extraction needs domain_ref on its domain (the domain it selects from)");
    }
    if (const Found t = lookup(Kind::kDomain, e, "type")) {
      if (*t.value == "curvilinear") {
        d.type = DomainType::kCurvilinear;
      } else if (*t.value != "rectilinear") {
        config::unsupported(*t.at, "type",
                            "'" + *t.value + "' domains (rectilinear and curvilinear are written)");
      }
    }
    if (const Found f = lookup(Kind::kDomain, e, "ni_glo")) {
      d.ni_glo = static_cast<int>(config::integer(*f.at, "ni_glo", 1, 1 << 24));
    }
    if (const Found f = lookup(Kind::kDomain, e, "nj_glo")) {
      d.nj_glo = static_cast<int>(config::integer(*f.at, "nj_glo", 1, 1 << 24));
    }
    const bool curvilinear = d.type == DomainType::kCurvilinear;
    // Coordinates: checked against the sizes when both are in the configuration.
    const auto coordinate = [&](std::initializer_list<const char*> names, std::size_t expected,
                                std::vector<double>& out) {
      for (const char* name : names) {
        if (const Found f = lookup(Kind::kDomain, e, name)) {
          out = config::reals(*f.at, name, expected);
          return;
        }
      }
    };
    const std::size_t ni = static_cast<std::size_t>(d.ni_glo);
    const std::size_t nj = static_cast<std::size_t>(d.nj_glo);
    if (curvilinear) {
      coordinate({"lonvalue_2d"}, ni * nj, d.lon);
      coordinate({"latvalue_2d"}, ni * nj, d.lat);
    } else {
      coordinate({"lonvalue_1d", "lon_values"}, ni, d.lon);
      coordinate({"latvalue_1d", "lat_values"}, nj, d.lat);
    }
    // Coordinates are written as given: XIOS checks no range (its own test
    // programs give latitudes of 1000 and more).
    const auto range = [&](const char* a, double& slot) {
      if (const Found f = lookup(Kind::kDomain, e, a)) slot = config::real(*f.at, a);
    };
    range("lon_start", d.lon_start);
    range("lon_end", d.lon_end);
    range("lat_start", d.lat_start);
    range("lat_end", d.lat_end);
    if (const Found f = lookup(Kind::kDomain, e, "nvertex")) {
      d.nvertex = static_cast<int>(config::integer(*f.at, "nvertex", 2, 64));
    }
    if (curvilinear) {
      coordinate({"bounds_lon_2d"}, 0, d.bounds_lon);
      coordinate({"bounds_lat_2d"}, 0, d.bounds_lat);
    } else {
      coordinate({"bounds_lon_1d", "bounds_lon"}, ni * 2, d.bounds_lon);
      coordinate({"bounds_lat_1d", "bounds_lat"}, nj * 2, d.bounds_lat);
    }
    coordinate({"area"}, ni * nj, d.area);
    for (const char* name : {"mask_2d", "mask_1d", "mask"}) {
      if (const Found f = lookup(Kind::kDomain, e, name)) {
        d.mask = mask_values(*f.at, name, ni * nj);
        break;
      }
    }
    read_data_layout(e, d);
    return add_domain(std::move(d), e);
  }

  // The model's array layout (XIOS's data_* attributes), the same for
  // every client; whether it fits a client's block is checked at
  // close_definition, where the blocks are known.
  void read_data_layout(const Element& e, DomainDef& d) {
    constexpr long long kBig = 1LL << 30;
    if (const Found f = lookup(Kind::kDomain, e, "data_dim")) {
      d.data_dim = static_cast<int>(config::integer(*f.at, "data_dim", 1, 2));
    }
    const auto whole = [&](const char* name, long long lo, std::optional<int>& slot) {
      if (const Found f = lookup(Kind::kDomain, e, name)) {
        slot = static_cast<int>(config::integer(*f.at, name, lo, kBig));
      }
    };
    whole("data_ibegin", -kBig, d.data_ibegin);
    whole("data_ni", 0, d.data_ni);
    whole("data_jbegin", -kBig, d.data_jbegin);
    whole("data_nj", 0, d.data_nj);
    const auto indices = [&](const char* name, std::vector<int>& out) {
      if (const Found f = lookup(Kind::kDomain, e, name)) {
        for (const double x : config::reals(*f.at, name, 0)) {
          if (x != static_cast<double>(static_cast<int>(x))) {
            config::fail(*f.at, name, "index " + std::to_string(x) + " is not a whole number");
          }
          out.push_back(static_cast<int>(x));
        }
      }
    };
    indices("data_i_index", d.data_i_index);
    indices("data_j_index", d.data_j_index);
  }

  // The index of a definition's element, built first when it comes later
  // in the file (a reference may point forward).
  int domain_of(const Element& e) {
    const auto it = domain_index_.find(e.get("id"));
    return it != domain_index_.end() ? it->second : build_domain(e, e.get("id"), false);
  }
  int axis_of(const Element& e) {
    const auto it = axis_index_.find(e.get("id"));
    return it != axis_index_.end() ? it->second : build_axis(e, e.get("id"), false);
  }
  int scalar_of(const Element& e) {
    const auto it = scalar_index_.find(e.get("id"));
    return it != scalar_index_.end() ? it->second : build_scalar(e, e.get("id"));
  }

  int add_domain(DomainDef d, const Element& e) {
    (void)e;
    domain_index_[d.id] = static_cast<int>(cfg_.domains.size());
    cfg_.domains.push_back(std::move(d));
    return static_cast<int>(cfg_.domains.size()) - 1;
  }

  static std::vector<const Element*> transformation_children(const Element& e) {
    std::vector<const Element*> out;
    for (const auto& c : e.children) {
      out.push_back(c.get());
    }
    if (out.size() > 1) {
      config::unsupported(*out[1], "", "several transformations in one element (grid_path)");
    }
    return out;
  }

  int build_axis(const Element& e, const std::string& id, bool member) {
    (void)member;
    check_axis_attributes(e);
    config::check_children(e, {"zoom_axis", "extract_axis", "reduce_domain"});
    AxisDef a;
    a.id = id;
    a.where = e.where();
    const auto text = [&](std::initializer_list<const char*> names, std::string& out) {
      for (const char* n : names) {
        if (const Found f = lookup(Kind::kAxis, e, n)) {
          out = *f.value;
          return;
        }
      }
    };
    text({"name"}, a.name);
    text({"unit", "units"}, a.unit);
    text({"long_name"}, a.long_name);
    text({"standard_name"}, a.standard_name);
    text({"positive"}, a.positive);
    if (!a.positive.empty() && a.positive != "up" && a.positive != "down") {
      fail(e, "positive", "value '" + a.positive + "' out of range (expected up or down)");
    }
    const std::vector<const Element*> trans = transformation_children(e);
    if (!trans.empty() && trans.front()->name == "reduce_domain") {
      const Element& r = *trans.front();
      config::check_attributes(r, {"operation", "direction", "local"});
      config::check_children(r, {});
      if (r.has("local") && config::boolean(r, "local")) {
        config::unsupported(r, "local", "client-local reductions (local=\"true\")");
      }
      a.from_domain = reduction_of(r, config::required(r, "operation"));
      const std::string dir = config::required(r, "direction");
      if (dir != "iDir" && dir != "jDir") {
        fail(r, "direction", "value '" + dir + "' out of range (expected iDir or jDir)");
      }
      a.along_i = dir == "iDir";
      a.where = r.where();
      if (a.name.empty()) a.name = id;
      return add_axis(std::move(a));
    }
    if (const Element* src = referenced(Kind::kAxis, e)) {
      a.source = axis_of(*src);
      for (const char* geometric : {"n_glo", "value", "bounds"}) {
        if (e.has(geometric)) {
          fail(e, geometric,
               "an axis with axis_ref takes its levels from axis '" + src->get("id") + "'");
        }
      }
      if (!trans.empty()) {
        const Element& z = *trans.front();
        config::check_attributes(z, {"begin", "n", "index", "zoom_begin", "zoom_size", "zoom_end"});
        config::check_children(z, {});
        AxisDef::Selection sel;
        if (z.has("index")) {
          for (const double v : config::reals(z, "index", 0)) {
            sel.index.push_back(static_cast<int>(v));
          }
        } else {
          const char* b = z.has("begin") ? "begin" : "zoom_begin";
          sel.begin = z.has(b) ? static_cast<int>(config::integer(z, b, 0, 1 << 20)) : 0;
          if (z.has("n") || z.has("zoom_size")) {
            sel.n =
                static_cast<int>(config::integer(z, z.has("n") ? "n" : "zoom_size", 1, 1 << 20));
          } else if (z.has("zoom_end")) {
            sel.n = static_cast<int>(config::integer(z, "zoom_end", sel.begin, 1 << 20)) -
                    sel.begin + 1;
          }
        }
        a.selection = sel;
        a.where = z.where();
      }
      return add_axis(std::move(a));
    }
    if (!trans.empty()) {
      fail(*trans.front(), "", "a zoom or extraction needs axis_ref on its axis");
    }
    if (a.name.empty()) a.name = id;
    if (const Found f = lookup(Kind::kAxis, e, "n_glo")) {
      a.n_glo = static_cast<int>(config::integer(*f.at, "n_glo", 1, 1 << 20));
    }
    if (const Found f = lookup(Kind::kAxis, e, "value")) {
      a.value = config::reals(*f.at, "value", static_cast<std::size_t>(a.n_glo));
    }
    if (const Found f = lookup(Kind::kAxis, e, "bounds")) {
      a.bounds = config::reals(*f.at, "bounds", 2 * static_cast<std::size_t>(a.n_glo));
    }
    return add_axis(std::move(a));
  }

  int add_axis(AxisDef a) {
    axis_index_[a.id] = static_cast<int>(cfg_.axes.size());
    cfg_.axes.push_back(std::move(a));
    return static_cast<int>(cfg_.axes.size()) - 1;
  }

  int build_scalar(const Element& e, const std::string& id) {
    check_scalar_attributes(e);
    config::check_children(e, {"reduce_axis", "reduce_domain"});
    ScalarDef s;
    s.id = id;
    s.where = e.where();
    const auto text = [&](const char* n, std::string& out) {
      if (const Found f = lookup(Kind::kScalar, e, n)) out = *f.value;
    };
    text("name", s.name);
    text("long_name", s.long_name);
    text("standard_name", s.standard_name);
    text("unit", s.unit);
    const Element* src = referenced(Kind::kScalar, e);
    const std::vector<const Element*> trans = transformation_children(e);
    if (!trans.empty()) {
      const Element& r = *trans.front();
      config::check_attributes(r, {"operation", "local", "direction"});
      config::check_children(r, {});
      if (r.has("local") && config::boolean(r, "local")) {
        config::unsupported(r, "local", "client-local reductions (local=\"true\")");
      }
      const Reduction op = reduction_of(r, config::required(r, "operation"));
      if (r.name == "reduce_axis") {
        if (r.has("direction")) fail(r, "direction", "unknown attribute");
        s.from_axis = op;
      } else {
        if (r.has("direction")) {
          config::unsupported(r, "direction", "a domain reduced to a scalar along one direction");
        }
        s.from_domain = op;
      }
      s.where = r.where();
    } else if (src != nullptr) {
      const ScalarDef& base = cfg_.scalars.at(static_cast<std::size_t>(scalar_of(*src)));
      s.from_axis = base.from_axis;
      s.from_domain = base.from_domain;
    }
    if (s.name.empty()) s.name = id;
    scalar_index_[s.id] = static_cast<int>(cfg_.scalars.size());
    cfg_.scalars.push_back(std::move(s));
    return static_cast<int>(cfg_.scalars.size()) - 1;
  }

  // ---- grids ----

  int member_index(const std::map<std::string, int>& index, const Element& e, const char* attr,
                   const char* what) const {
    const std::string id = config::required(e, attr);
    const auto it = index.find(id);
    if (it == index.end()) {
      fail(e, attr, std::string("unknown ") + what + " '" + id + "'");
    }
    return it->second;
  }

  // A grid member: a plain reference, or an anonymous derived element.
  GridDef::Member build_member(const Element& m, const std::string& grid, std::size_t pos) {
    using MemberKind = GridDef::Member::Kind;
    const std::string anon = m.has("id") ? m.get("id") : grid + "#" + std::to_string(pos);
    if (m.has("id") &&
        (domain_ids_.count(anon) + axis_ids_.count(anon) + scalar_ids_.count(anon) +
         domain_index_.count(anon) + axis_index_.count(anon) + scalar_index_.count(anon)) > 0) {
      fail(m, "id", "duplicate id '" + anon + "'");
    }
    const bool plain = m.children.empty() && m.attributes.size() == 1;
    if (m.name == "domain") {
      if (plain && m.has("domain_ref")) {
        return {MemberKind::kDomain, member_index(domain_index_, m, "domain_ref", "domain")};
      }
      return {MemberKind::kDomain, build_domain(m, anon, true)};
    }
    if (m.name == "axis") {
      if (plain && m.has("axis_ref")) {
        return {MemberKind::kAxis, member_index(axis_index_, m, "axis_ref", "axis")};
      }
      return {MemberKind::kAxis, build_axis(m, anon, true)};
    }
    if (plain && m.has("scalar_ref")) {
      return {MemberKind::kScalar, member_index(scalar_index_, m, "scalar_ref", "scalar")};
    }
    return {MemberKind::kScalar, build_scalar(m, anon)};
  }

  void build_grid(const Element& g) {
    config::check_attributes(g, {"id", "domain_ref", "axis_ref"});
    config::check_children(g, {"domain", "axis", "scalar"});
    GridDef grid;
    grid.id = config::required(g, "id");
    grid.where = g.where();
    if (grid_index_.count(grid.id) > 0) {
      fail(g, "id", "duplicate id '" + grid.id + "'");
    }
    if (g.has("domain_ref")) {  // xios_lite's own short form
      grid.members.push_back(
          {GridDef::Member::Kind::kDomain, member_index(domain_index_, g, "domain_ref", "domain")});
    } else if (g.has("axis_ref")) {
      fail(g, "domain_ref", "missing (required)");
    }
    if (g.has("axis_ref")) {
      grid.members.push_back(
          {GridDef::Member::Kind::kAxis, member_index(axis_index_, g, "axis_ref", "axis")});
    }
    if (!grid.members.empty() && !g.children.empty()) {
      fail(g, "domain_ref", "a grid gives its members either as attributes or as children");
    }
    for (const auto& m : g.children) {
      grid.members.push_back(build_member(*m, grid.id, grid.members.size()));
    }
    if (grid.members.empty()) {
      fail(g, "", "a grid needs at least one member (<domain>, <axis> or <scalar>)");
    }
    set_first_members(grid);
    grid_index_[grid.id] = static_cast<int>(cfg_.grids.size());
    cfg_.grids.push_back(std::move(grid));
  }

  // The grids of an axis alone or a scalar alone that fields the model
  // sends live on get a domain standing in for their member (see
  // DomainDef::stand_in), so that their values travel and are written as a
  // domain's; the axis is then no vertical axis of the grid.
  void add_stand_in_domains() {
    for (const FieldDef& f : cfg_.fields) {
      if (f.grid < 0 || !f.expr.empty() || f.source_field >= 0) {
        continue;
      }
      GridDef& g = cfg_.grids[static_cast<std::size_t>(f.grid)];
      if (g.domain >= 0 || g.members.size() != 1 ||
          g.members[0].kind == GridDef::Member::Kind::kDomain) {
        continue;
      }
      DomainDef d;
      d.id = "(" + g.id + ")";
      d.where = g.where;
      d.nj_glo = 1;
      if (g.members[0].kind == GridDef::Member::Kind::kAxis) {
        d.stand_in_for_axis = g.members[0].index;
        d.ni_glo = cfg_.axes[static_cast<std::size_t>(d.stand_in_for_axis)].n_glo;
      } else {
        d.stand_in_for_scalar = true;
        d.ni_glo = 1;
      }
      g.domain = static_cast<int>(cfg_.domains.size());
      g.axis = -1;
      domain_index_[d.id] = g.domain;
      cfg_.domains.push_back(std::move(d));
    }
  }

  static void set_first_members(GridDef& grid) {
    for (const auto& m : grid.members) {
      if (m.kind == GridDef::Member::Kind::kDomain && grid.domain < 0) grid.domain = m.index;
      if (m.kind == GridDef::Member::Kind::kAxis && grid.axis >= 0 && grid.axis2 < 0) {
        grid.axis2 = m.index;
      }
      if (m.kind == GridDef::Member::Kind::kAxis && grid.axis < 0) grid.axis = m.index;
    }
  }

  // The grid of a field from grid_ref, or domain_ref (+ axis_ref), whichever
  // is nearer; -1 when none.
  int grid_of(Kind kind, const Element& e) {
    const Found grid = lookup(kind, e, "grid_ref");
    const Found domain = lookup(kind, e, "domain_ref");
    if (grid && (!domain || grid.distance <= domain.distance)) {
      const auto it = grid_index_.find(*grid.value);
      if (it == grid_index_.end()) {
        fail(*grid.at, "grid_ref", "unknown grid '" + *grid.value + "'");
      }
      return it->second;
    }
    if (!domain) {
      return -1;
    }
    const auto d = domain_index_.find(*domain.value);
    if (d == domain_index_.end()) {
      fail(*domain.at, "domain_ref", "unknown domain '" + *domain.value + "'");
    }
    GridDef g;
    g.members.push_back({GridDef::Member::Kind::kDomain, d->second});
    g.id = *domain.value;
    if (const Found axis = lookup(kind, e, "axis_ref")) {
      const auto a = axis_index_.find(*axis.value);
      if (a == axis_index_.end()) {
        fail(*axis.at, "axis_ref", "unknown axis '" + *axis.value + "'");
      }
      g.members.push_back({GridDef::Member::Kind::kAxis, a->second});
      g.id += "/" + *axis.value;
    }
    g.id = "(" + g.id + ")";  // implicit grids cannot clash with named ones
    const auto same = grid_index_.find(g.id);
    if (same != grid_index_.end()) {
      return same->second;
    }
    g.where = domain.at->where();
    set_first_members(g);
    grid_index_[g.id] = static_cast<int>(cfg_.grids.size());
    cfg_.grids.push_back(std::move(g));
    return static_cast<int>(cfg_.grids.size()) - 1;
  }

  // ---- fields ----

  // The attributes a field and a file's variable share, as inherited.
  template <class Def>
  void read_field_attributes(Kind kind, const Element& e, Def& d) {
    const auto text = [&](std::initializer_list<const char*> names, std::string& out) {
      for (const char* n : names) {
        if (const Found f = lookup(kind, e, n)) {
          out = *f.value;
          return;
        }
      }
    };
    text({"unit", "units"}, d.unit);
    text({"standard_name"}, d.standard_name);
    text({"long_name"}, d.long_name);
    text({"comment"}, d.comment);
    text({"cell_methods"}, d.cell_methods);
    if (const Found f = lookup(kind, e, "operation")) {
      d.operation = operation_of(*f.at, *f.value);
    }
    if (const Found f = lookup(kind, e, "freq_op")) {
      d.freq_op = config::frequency(*f.at, "freq_op");
      check_sampling(*f.at, d.freq_op, "freq_op");
    }
    if (const Found f = lookup(kind, e, "freq_offset")) {
      Frequency off;
      if (!parse_frequency(*f.value, off)) {
        off = config::frequency(*f.at, "freq_offset");
      }
      check_sampling(*f.at, off, "freq_offset");
      d.freq_offset = off;
    }
    if (const Found f = lookup(kind, e, "default_value")) {
      d.default_value = config::real(*f.at, "default_value");
    }
    if (const Found f = lookup(kind, e, "detect_missing_value")) {
      d.detect_missing_value = config::boolean(*f.at, "detect_missing_value");
    }
    if (const Found f = lookup(kind, e, "prec")) {
      d.prec = static_cast<int>(config::integer(*f.at, "prec", 2, 8));
      if (d.prec != 4 && d.prec != 8) {
        fail(*f.at, "prec",
             "value " + std::to_string(d.prec) + " out of range (4: float, 8: double)");
      }
    }
    if (const Found f = lookup(kind, e, "chunking_blocksize_target")) {
      d.chunking_blocksize_target = chunk_target(*f.at);
    }
    if (const Found f = lookup(kind, e, "compression_level")) {
      d.compression_level = static_cast<int>(config::integer(*f.at, "compression_level", 0, 9));
    }
    if (const Found f = lookup(kind, e, "valid_min")) {
      d.valid_min = config::real(*f.at, "valid_min");
    }
    if (const Found f = lookup(kind, e, "valid_max")) {
      d.valid_max = config::real(*f.at, "valid_max");
    }
    if (const Found f = lookup(kind, e, "cell_methods_mode")) {
      static const std::map<std::string, FieldDef::CellMethodsMode> kModes{
          {"overwrite", FieldDef::CellMethodsMode::kOverwrite},
          {"prefix", FieldDef::CellMethodsMode::kPrefix},
          {"suffix", FieldDef::CellMethodsMode::kSuffix},
          {"none", FieldDef::CellMethodsMode::kNone}};
      const auto it = kModes.find(*f.value);
      if (it == kModes.end()) {
        fail(*f.at, "cell_methods_mode",
             "value '" + *f.value + "' out of range (expected overwrite, prefix, suffix or none)");
      }
      d.cell_methods_mode = it->second;
    }
  }

  // A sampling frequency: fixed length (no months); the timestep check
  // waits for the calendar (completion).
  static void check_sampling(const Element& e, const Frequency& f, const char* attr) {
    if (f.is_calendar_dependent()) {
      fail(e, attr,
           "value '" + to_string(f) + "' out of range (" + attr + " must be ts, s, mi, h or d)");
    }
  }

  static double chunk_target(const Element& n) {
    const double mib = config::real(n, "chunking_blocksize_target");
    if (mib <= 0 || mib >= 4096) {
      fail(n, "chunking_blocksize_target",
           "value out of range (0, 4096) MiB (HDF5 chunks stay below 4 GiB)");
    }
    return mib;
  }

  // <variable> children of `e` and of the elements it references.
  std::vector<Attribute> variables_of(Kind kind, const Element& e) const {
    std::vector<Attribute> out;
    for (const Element* at = &e; at != nullptr;
         at = referenced(kind == Kind::kFileField && at == &e ? Kind::kFileField : Kind::kField,
                         *at)) {
      for (const Element* v : at->children_named("variable")) {
        Attribute a = attribute_of(*v);
        if (std::none_of(out.begin(), out.end(),
                         [&](const Attribute& o) { return o.name == a.name; })) {
          out.push_back(std::move(a));
        }
      }
      if (out.size() > 4096) break;
    }
    return out;
  }

  void build_field(const Element& e) {
    check_field_attributes(e);
    config::check_children(e, {"variable"});
    FieldDef f;
    f.id = config::required(e, "id");
    f.where = e.where();
    read_field_attributes(Kind::kField, e, f);
    const Found name = lookup(Kind::kField, e, "name");
    f.name = name ? *name.value : f.id;
    if (f.long_name.empty()) f.long_name = f.name;
    f.grid = grid_of(Kind::kField, e);
    if (const Element* src = referenced(Kind::kField, e)) {
      f.source_field = field_position(*src);
    }
    f.expr = e.has("expr") ? e.get("expr") : e.text;
    if (!e.text.empty() && e.has("expr")) {
      fail(e, "expr", "an expression either in expr= or as the element's text, not both");
    }
    if (f.grid < 0 && f.expr.empty()) {
      fail(e, "grid_ref", "missing grid: neither the field nor its groups give a grid_ref");
    }
    read_flags(Kind::kField, e, f);
    f.attributes = variables_of(Kind::kField, e);
    set_field(std::move(f));
  }

  void read_flags(Kind kind, const Element& e, FieldDef& f) {
    if (const Found x = lookup(kind, e, "level")) {
      f.level = static_cast<int>(config::integer(*x.at, "level", 0, 1 << 20));
    }
    if (const Found x = lookup(kind, e, "enabled")) {
      f.enabled = config::boolean(*x.at, "enabled");
    }
    if (const Found x = lookup(kind, e, "ts_enabled")) {
      f.ts_enabled = config::boolean(*x.at, "ts_enabled");
    }
    if (const Found x = lookup(kind, e, "read_access")) {
      f.read_access = config::boolean(*x.at, "read_access");
    }
  }

  // Fields are numbered in the order of the definitions (a field_ref may
  // point forward): each element gets its slot on first use.
  int field_position(const Element& e) {
    const std::string id = e.get("id");
    const auto it = field_index_.find(id);
    if (it != field_index_.end()) {
      return it->second;
    }
    const int pos = static_cast<int>(field_slots_.size());
    field_index_[id] = pos;
    field_slots_.emplace_back();
    return pos;
  }

  void set_field(FieldDef f) {
    const int pos = field_position(*field_ids_.at(f.id));
    field_slots_[static_cast<std::size_t>(pos)] = std::move(f);
  }

  // ---- files ----

  void build_file(const Element& n) {
    check_file_attributes(n);
    config::check_children(n, {"field", "field_group", "variable"});
    FileDef f;
    f.id = config::required(n, "id");
    f.where = n.where();
    if (!file_ids_.insert(f.id).second) {
      fail(n, "id", "duplicate id '" + f.id + "'");
    }
    const auto text = [&](const char* a) -> const std::string* {
      const Found x = lookup(Kind::kFile, n, a);
      return x ? x.value : nullptr;
    };
    const auto at = [&](const char* a) -> const Element& { return *lookup(Kind::kFile, n, a).at; };
    if (text("enabled") != nullptr && !config::boolean(at("enabled"), "enabled")) {
      check_file_fields(n);
      return;
    }
    f.name = text("name") != nullptr ? *text("name") : f.id;
    if (text("name_suffix") != nullptr) f.name_suffix = *text("name_suffix");
    if (text("min_digits") != nullptr) {
      f.min_digits = static_cast<int>(config::integer(at("min_digits"), "min_digits", 0, 12));
    }
    f.description = text("description") != nullptr ? *text("description") : cfg_.context;
    if (text("output_freq") == nullptr) {
      fail(n, "output_freq", "missing (required)");
    }
    f.output_freq = config::frequency(at("output_freq"), "output_freq");
    if (text("split_freq") != nullptr)
      f.split_freq = config::frequency(at("split_freq"), "split_freq");
    if (text("sync_freq") != nullptr) f.sync_freq = config::frequency(at("sync_freq"), "sync_freq");
    if (text("split_freq_format") != nullptr) f.split_freq_format = *text("split_freq_format");
    if (text("compression_level") != nullptr) {
      f.compression_level =
          static_cast<int>(config::integer(at("compression_level"), "compression_level", 0, 9));
    }
    if (text("chunking_blocksize_target") != nullptr) {
      f.chunking_blocksize_target = chunk_target(at("chunking_blocksize_target"));
    }
    if (const std::string* t = text("type")) {
      if (*t == "one_file") {
        f.type = FileType::kOneFile;
      } else if (*t == "multiple_file") {
        f.type = FileType::kMultipleFile;
      } else {
        fail(at("type"), "type",
             "unknown file type '" + *t + "' (expected one_file or multiple_file)");
      }
    }
    if (const std::string* fmt = text("format"); fmt != nullptr && *fmt != "netcdf4") {
      if (*fmt == "netcdf4_classic") {
        config::unsupported(at("format"), "format", "netcdf4_classic files (NetCDF-4 is written)");
      }
      fail(at("format"), "format", "unknown format '" + *fmt + "' (expected netcdf4)");
    }
    if (const std::string* c = text("convention"); c != nullptr && *c != "CF") {
      config::unsupported(at("convention"), "convention",
                          "the " + *c + " convention (CF is written)");
    }
    if (const std::string* a = text("append");
        a != nullptr && config::boolean(at("append"), "append")) {
      config::unsupported(at("append"), "append", "appending to existing files");
    }
    if (const std::string* m = text("mode")) {
      if (*m == "read") {
        f.read = true;
      } else if (*m != "write") {
        fail(at("mode"), "mode", "value '" + *m + "' out of range (expected read or write)");
      }
    }
    std::optional<int> output_level;
    if (text("output_level") != nullptr) {
      output_level =
          static_cast<int>(config::integer(at("output_level"), "output_level", 0, 1 << 20));
    }
    for (const Element* v : n.children_named("variable")) {
      f.attributes.push_back(attribute_of(*v));
    }
    std::set<std::string> names;
    const std::function<void(const Element&)> visit = [&](const Element& parent) {
      for (const auto& c : parent.children) {
        if (c->name == "field_group") {
          check_field_attributes(*c);
          config::check_children(*c, {"field", "field_group"});
          if (const std::string* ref = c->find("group_ref")) {
            const auto g = group_ids_.find(*ref);
            if (g == group_ids_.end()) {
              fail(*c, "group_ref", "unknown field group '" + *ref + "'");
            }
            add_group_fields(*c, *g->second, f, names, output_level);
          }
          visit(*c);
        } else if (c->name == "field") {
          add_file_field(*c, nullptr, f, names, output_level);
        }
      }
    };
    visit(n);
    const std::string ts = text("timeseries") != nullptr ? *text("timeseries") : "none";
    if (ts != "none" && ts != "only" && ts != "both" && ts != "exclusive") {
      fail(at("timeseries"), "timeseries",
           "value '" + ts + "' out of range (expected none, only, both or exclusive)");
    }
    const std::string prefix = text("ts_prefix") != nullptr ? *text("ts_prefix") : f.name;
    add_time_series(std::move(f), ts, prefix);
  }

  // Every field of definition group `group` (recursively), as file fields
  // inside the file's field_group `in_file`.
  void add_group_fields(const Element& in_file, const Element& group, FileDef& f,
                        std::set<std::string>& names, std::optional<int> output_level) {
    for (const auto& c : group.children) {
      if (c->name == "field" && c->has("id")) {
        add_file_field(in_file, c.get(), f, names, output_level);
      } else if (c->name == "field_group") {
        add_group_fields(in_file, *c, f, names, output_level);
      }
    }
  }

  // A file's <field> (`e`), or with `group_member` a field of a group_ref'd
  // group taking the attributes of the file's field_group `e`.
  void add_file_field(const Element& e, const Element* group_member, FileDef& f,
                      std::set<std::string>& names, std::optional<int> output_level) {
    if (group_member == nullptr) {
      check_field_attributes(e);
      config::check_children(e, {"variable"});
    }
    OutputVariable v;
    v.where = e.where();
    int field = -1;
    const Element* ref = group_member != nullptr ? group_member : referenced(Kind::kFileField, e);
    const std::string expr =
        group_member != nullptr ? "" : (e.has("expr") ? e.get("expr") : e.text);
    if (ref != nullptr) {
      field = field_index_.at(ref->get("id"));
    }
    if (!expr.empty() || (group_member == nullptr && e.has("id") && ref == nullptr)) {
      field = file_field_definition(e, ref, expr, f);
    }
    if (field < 0) {
      fail(e, "field_ref", "missing: a file's field names a field (field_ref) or an expression");
    }
    const FieldDef& fd = cfg_.fields[static_cast<std::size_t>(field)];
    // Own attributes, the file's field_groups, then the field (its groups and references).
    static_cast<void>(fd);
    copy_field_attributes(fd, v);
    const Element& own = e;
    if (group_member == nullptr) {
      read_field_attributes(Kind::kFileField, own, v);
    } else {
      read_group_attributes(own, v);
    }
    v.field = field;
    const Found name = group_member == nullptr ? lookup(Kind::kFileField, own, "name") : Found{};
    v.name = name && name.distance == 0 ? *name.value : fd.name;
    if (name && name.distance > 0 && inside_file(own, *name.at)) {
      v.name = *name.value;  // a name on a file's field_group
    }
    if (v.long_name.empty()) v.long_name = v.name;
    v.grid = group_member == nullptr ? grid_of(Kind::kFileField, own) : fd.grid;
    if (v.grid < 0) v.grid = fd.grid;
    FieldDef flags = fd;
    if (group_member == nullptr) {
      read_flags(Kind::kFileField, own, flags);
    }
    if (!flags.enabled || (output_level && flags.level > *output_level)) {
      return;
    }
    v.attributes = group_member == nullptr ? variables_of(Kind::kFileField, own) : fd.attributes;
    if (!names.insert(v.name).second) {
      fail(own, "name", "duplicate variable name '" + v.name + "' in file '" + f.id + "'");
    }
    // Fields marked for time series ride along to add_time_series.
    if (flags.ts_enabled) {
      ts_variables_.insert(v.name);
    }
    f.variables.push_back(std::move(v));
  }

  // Whether `group` is one of the file's field_groups around `e`.
  static bool inside_file(const Element& e, const Element& group) {
    for (const Element* p = e.parent; p != nullptr && p->name == "field_group"; p = p->parent) {
      if (p == &group) {
        return true;
      }
    }
    return false;
  }

  // The attributes of a file's field_group on a group_ref'd field.
  void read_group_attributes(const Element& group, OutputVariable& v) {
    OutputVariable from_group = v;
    read_field_attributes(Kind::kFileField, group, from_group);
    v = from_group;
  }

  static void copy_field_attributes(const FieldDef& fd, OutputVariable& v) {
    v.unit = fd.unit;
    v.standard_name = fd.standard_name;
    v.long_name = fd.long_name;
    v.comment = fd.comment;
    v.operation = fd.operation;
    v.freq_op = fd.freq_op;
    v.freq_offset = fd.freq_offset;
    v.default_value = fd.default_value;
    v.detect_missing_value = fd.detect_missing_value;
    v.prec = fd.prec;
    v.chunking_blocksize_target = fd.chunking_blocksize_target;
    v.compression_level = fd.compression_level;
    v.valid_min = fd.valid_min;
    v.valid_max = fd.valid_max;
    v.cell_methods = fd.cell_methods;
    v.cell_methods_mode = fd.cell_methods_mode;
  }

  // A field defined inside a file (its own id and grid, or an expression):
  // a field of its own, named "<file>.<name>" unless it has an id.
  int file_field_definition(const Element& e, const Element* ref, const std::string& expr,
                            const FileDef& file) {
    FieldDef f;
    f.where = e.where();
    const Found name = lookup(Kind::kFileField, e, "name");
    f.id = e.has("id") ? e.get("id")
                       : file.id + "." +
                             (name             ? *name.value
                              : ref != nullptr ? ref->get("id")
                                               : "expr");
    if (field_index_.count(f.id) > 0 || field_ids_.count(f.id) > 0) {
      fail(e, "id", "duplicate id '" + f.id + "'");
    }
    read_field_attributes(Kind::kFileField, e, f);
    f.name =
        name ? *name.value
             : (ref != nullptr
                    ? cfg_.fields[static_cast<std::size_t>(field_index_.at(ref->get("id")))].name
                    : f.id);
    if (f.long_name.empty()) f.long_name = f.name;
    f.grid = grid_of(Kind::kFileField, e);
    f.expr = expr;
    if (ref != nullptr) {
      f.source_field = field_index_.at(ref->get("id"));
    }
    if (f.grid < 0 && f.expr.empty()) {
      fail(e, "grid_ref", "missing grid: neither the field nor its groups give a grid_ref");
    }
    read_flags(Kind::kFileField, e, f);
    const int pos = static_cast<int>(cfg_.fields.size());
    field_index_[f.id] = pos;
    cfg_.fields.push_back(std::move(f));
    return pos;
  }

  // Checks the attributes of a disabled file's fields (they are not built).
  void check_file_fields(const Element& n) {
    for (const auto& c : n.children) {
      if (c->name == "field" || c->name == "field_group") {
        check_field_attributes(*c);
        check_file_fields(*c);
      }
    }
  }

  // XIOS's timeseries: each ts_enabled variable also (or only) in a file of
  // its own, named "<ts_prefix>_<variable>".
  void add_time_series(FileDef f, const std::string& mode, const std::string& prefix) {
    std::vector<FileDef> series;
    if (mode != "none") {
      std::vector<OutputVariable> kept;
      for (OutputVariable& v : f.variables) {
        const bool ts = ts_variables_.count(v.name) > 0;
        if (ts) {
          FileDef one = f;
          one.id = f.id + "." + v.name;
          one.name = prefix + "_" + v.name;
          one.variables = {v};
          series.push_back(std::move(one));
        }
        if (!ts || mode == "both") {
          kept.push_back(std::move(v));
        }
      }
      f.variables = std::move(kept);
    }
    ts_variables_.clear();
    if (mode != "only") {
      cfg_.files.push_back(std::move(f));
    }
    for (FileDef& one : series) {
      cfg_.files.push_back(std::move(one));
    }
  }

  const Element& ctx_;
  Config cfg_;
  std::map<std::string, const Element*> domain_ids_, axis_ids_, scalar_ids_, field_ids_, group_ids_;
  std::vector<const Element*> domain_elements_, axis_elements_, scalar_elements_, field_elements_;
  std::map<std::string, int> domain_index_, axis_index_, scalar_index_, grid_index_, field_index_;
  std::vector<FieldDef> field_slots_;
  std::set<std::string> file_ids_;
  std::set<std::string> ts_variables_;
};

// Files in read mode leave `files` for `inputs`: nothing is written to
// them and no temporal operation runs for their fields. A field read from
// a file takes the file's record as it is: no expression, no transformation
// of its grid, and a frequency in fixed units (a record per output period).
void separate_inputs(Config& cfg) {
  std::vector<FileDef> outputs;
  for (FileDef& f : cfg.files) {
    if (!f.read) {
      outputs.push_back(std::move(f));
      continue;
    }
    if (f.output_freq.is_calendar_dependent()) {
      config::fail_at(f.where, "output_freq",
                      "unsupported XIOS feature (files in read mode with records in months or "
                      "years: give the period in ts, s, mi, h or d)");
    }
    for (const OutputVariable& v : f.variables) {
      const FieldDef& field = cfg.fields[static_cast<std::size_t>(v.field)];
      if (!field.expr.empty() || field.source_field >= 0) {
        config::fail_at(v.where, "field_ref",
                        "field '" + field.id +
                            "' is read from a file in read mode: it cannot also take its values "
                            "from an expression or another field");
      }
      if (v.grid >= 0 && v.grid != field.grid) {
        config::fail_at(v.where, "grid_ref",
                        "unsupported XIOS feature (grid transformations of fields read from a "
                        "file)");
      }
    }
    cfg.inputs.push_back(std::move(f));
  }
  cfg.files = std::move(outputs);
}

Simulation parse_tree(const Element& root, const std::string& path) {
  if (root.name != "simulation" && root.name != "xios_lite") {
    fail(root, "", "root element must be <simulation> (XIOS) or <xios_lite>");
  }
  config::check_attributes(root, {});
  config::check_children(root, {"context"});
  Settings settings;
  for (const Element* ctx : root.children_named("context")) {
    if (ctx->get("id") == "xios") {
      read_xios_context(*ctx, settings);
    }
  }
  Simulation sim;
  sim.path = path;
  std::set<std::string> ids;
  for (const Element* ctx : root.children_named("context")) {
    if (ctx->get("id") == "xios") {
      continue;
    }
    if (!ids.insert(ctx->get("id")).second) {
      fail(*ctx, "id", "duplicate id '" + ctx->get("id") + "'");
    }
    Config cfg = ContextParser(*ctx, settings, path).run();
    separate_inputs(cfg);
    if (undefined_definitions(cfg).empty()) {
      complete_definitions(cfg);
    }
    sim.contexts.push_back(std::move(cfg));
  }
  if (sim.contexts.empty()) {
    fail(root, "", "no <context> element (besides the context \"xios\")");
  }
  return sim;
}

Config pick(Simulation sim, const std::string& context) {
  if (context.empty()) {
    if (sim.contexts.size() > 1) {
      std::string ids;
      for (const Config& c : sim.contexts) {
        ids += (ids.empty() ? "" : ", ") + c.context;
      }
      throw ep::Error(ep::ErrorKind::kConfig, config::kCall, -1,
                      sim.path + ": several contexts (" + ids +
                          "): name the context (ClientOptions::context, run_server's contexts)");
    }
    return std::move(sim.contexts.front());
  }
  for (Config& c : sim.contexts) {
    if (c.context == context) {
      return std::move(c);
    }
  }
  throw ep::Error(ep::ErrorKind::kArgument, config::kCall, -1,
                  sim.path + ": no context '" + context + "'");
}

}  // namespace

const char* to_string(Operation op) noexcept {
  return ep::enum_name(kOperationNames, op, "instant");
}

const char* to_string(Reduction r) noexcept { return ep::enum_name(kReductionNames, r, "none"); }

const char* cell_method(Operation op) noexcept {
  return ep::enum_name(kCellMethods, op, "time: point");
}

int Config::find_field(const std::string& id) const {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Config::find_domain(const std::string& id) const {
  for (std::size_t i = 0; i < domains.size(); ++i) {
    if (domains[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Config::find_axis(const std::string& id) const {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Config::levels(int grid) const {
  const GridDef& g = grids.at(static_cast<std::size_t>(grid));
  const int inner = g.axis < 0 ? 1 : axes.at(static_cast<std::size_t>(g.axis)).n_glo;
  return g.axis2 < 0 ? inner : inner * axes.at(static_cast<std::size_t>(g.axis2)).n_glo;
}

int Config::domain_of_field(int field) const {
  return grids.at(static_cast<std::size_t>(fields.at(static_cast<std::size_t>(field)).grid)).domain;
}

int Config::find_input(int field) const {
  int index = 0;
  for (const FileDef& f : inputs) {
    for (const OutputVariable& v : f.variables) {
      if (v.field == field) return index;
      ++index;
    }
  }
  return -1;
}

const FileDef& Config::input_file(int index) const {
  for (const FileDef& f : inputs) {
    if (index < static_cast<int>(f.variables.size())) return f;
    index -= static_cast<int>(f.variables.size());
  }
  throw ep::Error(ep::ErrorKind::kArgument, config::kCall, -1,
                  "no input variable " + std::to_string(index));
}

const OutputVariable& Config::input_variable(int index) const {
  const FileDef& f = input_file(index);
  for (const FileDef& g : inputs) {
    if (&g == &f) break;
    index -= static_cast<int>(g.variables.size());
  }
  return f.variables.at(static_cast<std::size_t>(index));
}

Simulation parse_simulation(const std::string& path) {
  const std::unique_ptr<config::Element> root = config::load_tree_file(path);
  return parse_tree(*root, path);
}

Config parse_config(const std::string& path, const std::string& context) {
  return pick(parse_simulation(path), context);
}

Config parse_config_tree(const config::Element& root, const std::string& path,
                         const std::string& context) {
  return pick(parse_tree(root, path), context);
}

Config parse_config_string(const std::string& xml, const std::string& name,
                           const std::string& context) {
  const std::unique_ptr<config::Element> root = config::load_tree(xml, name, ".");
  return pick(parse_tree(*root, name), context);
}

}  // namespace xios_lite
