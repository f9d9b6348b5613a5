// A context's calendar (its attributes and <calendar>), the legacy
// <options>, the "xios" context's server parameters and a model context's
// own <variable>s.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "context_parser.hpp"
#include "ep/error.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {

Attribute attribute_of(const Element& v) {
  config::check_attributes(v);
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
void check_model_variables(const Element& group, std::vector<Attribute>& out) {
  config::check_attributes(group);
  config::check_children(group, {"variable", "variable_group"});
  for (const auto& c : group.children) {
    if (c->name == "variable") {
      Attribute a = attribute_of(*c);
      if (c->has("id")) a.name = c->get("id");  // "$id" in expressions
      out.push_back(std::move(a));
    } else {
      check_model_variables(*c, out);
    }
  }
}

// The settings in the xios context's variables (XIOS's server parameters).
void read_xios_context(const Element& ctx, Settings& s) {
  config::check_attributes(ctx);
  config::check_children(ctx, {"variable_definition"});
  std::vector<const Element*> vars;
  const std::function<void(const Element&)> collect = [&](const Element& e) {
    for (const auto& c : e.children) {
      if (c->name == "variable") {
        vars.push_back(c.get());
      } else if (c->name == "variable_group") {
        config::check_attributes(*c);
        config::check_children(*c, {"variable", "variable_group"});
        collect(*c);
      }
    }
  };
  for (const Element* def : ctx.children_named("variable_definition")) {
    config::check_attributes(*def);
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
               name == "buffer_server_factor_size" || name == "min_buffer_size_factor" ||
               name == "services_use_window_manager") {
      // XIOS parameters with no effect on what is written here.
    } else {
      fail(*v, "", "unknown XIOS server parameter '" + name + "'");
    }
  }
  if (s.buffers.max_bytes < s.buffers.min_bytes) {
    fail(ctx, "", "max_buffer_size below min_buffer_size");
  }
}

void ContextParser::read_calendar() {
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
    config::check_attributes(c);
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

std::optional<Calendar> ContextParser::probe_calendar(const Element& e) const {
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

void ContextParser::read_options(const Element& n) {
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

}  // namespace xios_lite::parser
