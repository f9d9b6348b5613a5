#include "facade/context_client.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <type_traits>
#include <utility>
#include <variant>

#include "config/parse_tree.hpp"
#include "config/xml_tree.hpp"
#include "ep/collectives.hpp"
#include "ep/error.hpp"

namespace xios_lite::facade {
namespace {

using config::Element;

[[noreturn]] void fail(const char* call, int rank, const std::string& what) {
  throw ep::Error(ep::ErrorKind::kArgument, call, rank, what);
}

// The XML element a child of table kind `kind` is written as.
std::string element_name(const std::string& kind) {
  if (is_group_kind(kind)) {
    return std::string(base_kind(kind)) + "_group";
  }
  if (kind == "calendar_wrapper") {
    return "calendar";
  }
  return kind;
}

// Attributes XIOS passes down from a group to its members and from a
// referenced element to the one that references it: all but the identity
// and the references themselves.
bool inheritable(const std::string& name) {
  return name != "id" && name != "src" && name != "group_ref";
}

const std::string* reference_of(const Element& e) {
  for (const char* ref : {"field_ref", "domain_ref", "axis_ref", "scalar_ref"}) {
    if (const std::string* r = e.find(ref); r != nullptr) {
      return r;
    }
  }
  return nullptr;
}

void set_text(Element& e, const std::string& name, const std::string& text) {
  for (auto& [n, v] : e.attributes) {
    if (n == name) {
      v = text;
      return;
    }
  }
  e.attributes.emplace_back(name, text);
}

void erase_attribute(Element& e, const std::string& name) {
  std::erase_if(e.attributes, [&](const auto& a) { return a.first == name; });
}

std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

bool whole(double x) { return std::isfinite(x) && std::nearbyint(x) == x; }

// A duration as the configuration writes it ("3600s", "1d12h"); "" for a
// zero duration. XIOS's durations may hold fractions (0.5 * xios_hour):
// they must come to whole seconds, days at 86400 s.
std::string duration_text(const char* call, int rank, const Duration& d) {
  if (!whole(d.year) || !whole(d.month) || !whole(d.timestep)) {
    fail(call, rank, "a duration's years, months and timesteps must be whole numbers");
  }
  Frequency f;
  f.years = static_cast<std::int64_t>(d.year);
  f.months = static_cast<std::int64_t>(d.month);
  f.timesteps = static_cast<std::int64_t>(d.timestep);
  double seconds = d.hour * 3600 + d.minute * 60 + d.second;
  if (whole(d.day)) {
    f.days = static_cast<std::int64_t>(d.day);
  } else {
    seconds += d.day * 86400;
  }
  if (!whole(seconds)) {
    fail(call, rank,
         "a duration of " + number_text(seconds) + " s is not a whole number of seconds");
  }
  f.seconds = static_cast<std::int64_t>(seconds);
  return f.is_set() ? to_string(f) : std::string();
}

Duration duration_of(const Frequency& f) {
  Duration d{};
  d.year = static_cast<double>(f.years);
  d.month = static_cast<double>(f.months);
  d.day = static_cast<double>(f.days);
  d.second = static_cast<double>(f.seconds);
  d.timestep = static_cast<double>(f.timesteps);
  return d;
}

// A duration as XIOS's xios_duration gives it: in the units it was
// written in ("2h" is 2 hours, not 7200 seconds: NEMO names its files from
// them, @freq@ -> "2h"). `f` is `text` parsed (so `text` is well formed).
Duration duration_in_units(const std::string& text, const Frequency& f) {
  Duration d{};
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t used = 0;
    double count = 0;
    try {
      count = std::stod(text.substr(at), &used);
    } catch (const std::exception&) {
      return duration_of(f);  // a form parse_frequency takes and this does not: in seconds
    }
    at += used;
    std::size_t end = at;
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end])) != 0) ++end;
    const std::string unit = text.substr(at, end - at);
    at = end;
    double* slot = unit == "y"    ? &d.year
                   : unit == "mo" ? &d.month
                   : unit == "d"  ? &d.day
                   : unit == "h"  ? &d.hour
                   : unit == "mi" ? &d.minute
                   : unit == "s"  ? &d.second
                   : unit == "ts" ? &d.timestep
                                  : nullptr;
    if (slot == nullptr) return duration_of(f);
    *slot += count;
  }
  return d;
}

std::string date_text(const DateValue& d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d", d.year, d.month, d.day, d.hour,
                d.minute, d.second);
  return buf;
}

template <typename T>
std::string list_text(const std::vector<T>& values) {
  std::string out;
  for (const T& v : values) {
    if (!out.empty()) out += ' ';
    if constexpr (std::is_floating_point_v<T>) {
      out += number_text(v);
    } else {
      out += std::to_string(v);
    }
  }
  return out;
}

// The text an attribute takes in the configuration.
std::string text_of(const char* call, int rank, const Value& v) {
  switch (v.type) {
    case AttributeType::kString:
      return v.text;
    case AttributeType::kBool:
      return v.flag ? "true" : "false";
    case AttributeType::kInt:
      return std::to_string(v.integer);
    case AttributeType::kDouble:
      return number_text(v.real);
    case AttributeType::kDuration:
      return duration_text(call, rank, v.duration);
    case AttributeType::kDate:
      return date_text(v.date);
    case AttributeType::kInt1d:
      return list_text(v.integers);
    case AttributeType::kBool1d:
    case AttributeType::kBool2d: {
      std::string out;
      for (int b : v.integers) {
        out += out.empty() ? "" : " ";
        out += b != 0 ? "true" : "false";
      }
      return out;
    }
    case AttributeType::kDouble1d:
    case AttributeType::kDouble2d:
    case AttributeType::kDouble3d:
      return list_text(v.reals);
  }
  return v.text;
}

// An attribute's text read back as `v.type`; false when it does not read as one.
bool value_of(const std::string& text, Value& v) {
  switch (v.type) {
    case AttributeType::kString:
      v.text = text;
      return true;
    case AttributeType::kBool:
      return config::parse_boolean(text, v.flag);
    case AttributeType::kInt: {
      char* end = nullptr;
      v.integer = std::strtoll(text.c_str(), &end, 10);
      return !text.empty() && *end == '\0';
    }
    case AttributeType::kDouble: {
      char* end = nullptr;
      v.real = std::strtod(text.c_str(), &end);
      return !text.empty() && *end == '\0';
    }
    case AttributeType::kDuration: {
      Frequency f;
      if (!parse_frequency(text, f)) return false;
      v.duration = duration_in_units(text, f);
      return true;
    }
    case AttributeType::kDate: {
      DateValue d{};
      const int n = std::sscanf(text.c_str(), "%d-%d-%d %d:%d:%d", &d.year, &d.month, &d.day,
                                &d.hour, &d.minute, &d.second);
      v.date = d;
      return n >= 1;
    }
    case AttributeType::kInt1d:
    case AttributeType::kBool1d:
    case AttributeType::kBool2d: {
      std::istringstream in(text);
      std::string word;
      v.integers.clear();
      while (in >> word) {
        bool b = false;
        if (config::parse_boolean(word, b)) {
          v.integers.push_back(b ? 1 : 0);
        } else {
          v.integers.push_back(std::atoi(word.c_str()));
        }
      }
      return true;
    }
    case AttributeType::kDouble1d:
    case AttributeType::kDouble2d:
    case AttributeType::kDouble3d: {
      std::string why;
      return config::parse_reals(text, v.reals, why);
    }
  }
  return false;
}

void need_type(const char* call, int rank, const std::string& name, const Value& v,
               AttributeType wanted) {
  if (v.type != wanted) {
    fail(call, rank,
         "attribute " + name + " takes " + to_string(wanted) + ", not " + to_string(v.type));
  }
}

std::vector<bool> bools_of(const Value& v) {
  std::vector<bool> out;
  out.reserve(v.integers.size());
  for (int b : v.integers) out.push_back(b != 0);
  return out;
}

}  // namespace

ContextClient::ContextClient(std::string id, ep::Communicator comm, MPI_Comm model_comm,
                             std::unique_ptr<config::Element> root, std::string config_path)
    : id_(std::move(id)),
      comm_(std::move(comm)),
      model_comm_(model_comm),
      root_(std::move(root)),
      path_(std::move(config_path)) {
  self_.context = this;
  self_.kind = "context";
}

ContextClient::~ContextClient() = default;

config::Element* ContextClient::context_element() const {
  for (auto& c : root_->children) {
    if (c->name == "context" && c->get("id") == id_) {
      return c.get();
    }
  }
  return nullptr;
}

// The error of a call after a failed xios_close_context_definition.
void ContextClient::check_not_refused(const char* call) const {
  if (!close_error_.empty()) {
    fail(call, rank(),
         "context '" + id_ + "': called after xios_close_context_definition failed (" +
             close_error_ + ")");
  }
}

void ContextClient::require_open(const char* call) const {
  check_not_refused(call);
  if (closed()) {
    fail(call, rank(), "the definition of context '" + id_ + "' is already closed");
  }
}

Handle* ContextClient::handle_of(config::Element* e, const std::string& kind) {
  auto& h = handles_[e];
  if (!h) {
    h = std::make_unique<Handle>();
    h->context = this;
    h->element = e;
    h->kind = kind;
  }
  return h.get();
}

Handle* ContextClient::find(const std::string& kind, const std::string& id) {
  if (kind == "context") {
    return id == id_ ? &self_ : nullptr;
  }
  Element* found = nullptr;
  const std::function<void(Element&)> visit = [&](Element& e) {
    for (auto& c : e.children) {
      if (found != nullptr) return;
      const bool named = c->get("id") == id || (c->name == id && !c->has("id"));
      if (named && kind_of_element(c->name) == kind) {
        found = c.get();
        return;
      }
      visit(*c);
    }
  };
  if (kind == "calendar_wrapper") {
    // Every XIOS context has its calendar wrapper, whatever id is asked:
    // the <calendar> of the context, made when the file has none.
    Element* ctx = context_element();
    for (auto& c : ctx->children) {
      if (c->name == "calendar") return handle_of(c.get(), kind);
    }
    auto cal = std::make_unique<Element>();
    cal->name = "calendar";
    cal->parent = ctx;
    cal->file = ctx->file;
    cal->line = ctx->line;
    Element* raw = cal.get();
    ctx->children.insert(ctx->children.begin(), std::move(cal));
    return handle_of(raw, kind);
  }
  visit(*context_element());
  return found != nullptr ? handle_of(found, kind) : nullptr;
}

Handle* ContextClient::add_child(const char* call, Handle* parent, const std::string& child_kind,
                                 const std::string* id) {
  require_open(call);
  Element* at = parent->element != nullptr ? parent->element : context_element();
  if (id != nullptr) {
    if (Handle* existing = find(child_kind, *id)) {
      // XIOS: a repeated id names the same object. Under a grid it also
      // makes that object a member of the grid (NEMO's
      // iom_set_zoom_domain_attr adds the zoom's domain to new grids).
      const std::string member = element_name(child_kind);
      const bool grid_member = member == "domain" || member == "axis" || member == "scalar";
      if (at->name == "grid" && grid_member) {
        auto ref = std::make_unique<Element>();
        ref->name = member;
        ref->parent = at;
        ref->file = "xios_add_child(" + std::to_string(++added_) + ")";
        ref->line = 0;
        ref->attributes.emplace_back(member + "_ref", *id);
        at->children.push_back(std::move(ref));
      }
      return existing;
    }
  }
  auto e = std::make_unique<Element>();
  e->name = element_name(child_kind);
  e->parent = at;
  e->file = "xios_add_child(" + std::to_string(++added_) + ")";
  e->line = 0;
  if (id != nullptr) {
    e->attributes.emplace_back("id", *id);
  } else if (at->name == e->name + "_group" || at->name == e->name + "_definition") {
    // A definition without an id: XIOS names it (a file's field needs none).
    e->attributes.emplace_back("id",
                               "__" + e->name + "_undef_id_added_" + std::to_string(added_) + "__");
  }
  Element* raw = e.get();
  at->children.push_back(std::move(e));
  return handle_of(raw, child_kind);
}

namespace {

// The model's value of a member (model_attributes.hpp) from an attribute's
// value, by the member's type.
void assign(const char* call, int rank, const std::string& name, const Value& v,
            std::optional<int>& to) {
  need_type(call, rank, name, v, AttributeType::kInt);
  to = static_cast<int>(v.integer);
}
void assign(const char*, int, const std::string&, const Value& v, std::optional<double>& to) {
  to = v.real;
}
void assign(const char*, int, const std::string&, const Value& v, std::optional<bool>& to) {
  to = v.flag;
}
void assign(const char* call, int rank, const std::string&, const Value& v,
            std::optional<std::string>& to) {
  switch (v.type) {
    case AttributeType::kDate:
      to = date_text(v.date);
      break;
    case AttributeType::kDuration:
      to = duration_text(call, rank, v.duration);
      break;
    default:
      to = v.text;
  }
}
void assign(const char*, int, const std::string&, const Value& v, std::vector<int>& to) {
  to = v.integers;
}
void assign(const char*, int, const std::string&, const Value& v, std::vector<double>& to) {
  to = v.reals;
}
void assign(const char*, int, const std::string&, const Value& v, std::vector<bool>& to) {
  to = bools_of(v);
}

// And back; false when the member is unset.
bool read_back(const std::optional<int>& from, Value& v) {
  if (from) v.integer = *from;
  return from.has_value();
}
bool read_back(const std::optional<double>& from, Value& v) {
  if (from) v.real = *from;
  return from.has_value();
}
bool read_back(const std::optional<bool>& from, Value& v) {
  if (from) v.flag = *from;
  return from.has_value();
}
bool read_back(const std::optional<std::string>& from, Value& v) {
  if (from) v.text = *from;
  return from.has_value();
}
bool read_back(const std::vector<int>& from, Value& v) {
  v.integers = from;
  return !from.empty();
}
bool read_back(const std::vector<double>& from, Value& v) {
  v.reals = from;
  return !from.empty();
}
bool read_back(const std::vector<bool>& from, Value& v) {
  v.integers.assign(from.begin(), from.end());
  return !from.empty();
}

// The member of A the model sets for attribute `name` (the table's
// read_model and model lines), or nullptr. An axis's names and units
// (its text attributes) stay on the element instead: groups and references
// pass them on there, as XIOS solves them, and a derived axis takes them.
template <class A>
const ModelMember<A>* model_member(const std::string& name) {
  const ModelMember<A>* m = find_model_member<A>(name);
  if constexpr (std::is_same_v<A, AxisAttributes>) {
    if (m != nullptr && std::holds_alternative<std::optional<std::string> A::*>(m->member)) {
      return nullptr;
    }
  }
  return m;
}

template <class A>
bool set_member(const char* call, int rank, A& a, const std::string& name, const Value& v) {
  const ModelMember<A>* m = model_member<A>(name);
  if (m == nullptr) return false;
  std::visit([&](auto member) { assign(call, rank, name, v, a.*member); }, m->member);
  return true;
}

template <class A>
bool get_member(const A& a, const std::string& name, Value& v) {
  const ModelMember<A>* m = model_member<A>(name);
  if (m == nullptr) return false;
  return std::visit([&](auto member) { return read_back(a.*member, v); }, m->member);
}

}  // namespace

// Attributes the Client takes from the model (set_domain_attr, set_axis_attr,
// define_calendar: the table's read_model and model lines): this client's
// block and coordinates, the layout of its arrays, the axis values, the
// calendar. False: not one of them (its text goes on the element).
bool ContextClient::set_model_attribute(const char* call, Handle* h, const std::string& name,
                                        const Value& v) {
  const std::string_view kind = h->kind;
  const std::string id = h->element != nullptr ? h->element->get("id") : "";
  if (kind == "domain" && !id.empty()) {
    DomainAttributes& d = domains_[id];
    // XIOS 1's lonvalue / latvalue: their shape is known at close.
    if (name == "lonvalue" || name == "latvalue") {
      (name == "lonvalue" ? legacy_lon_ : legacy_lat_)[id] = v.reals;
      return true;
    }
    if (name == "data_n_index") {
      // Implied by data_i_index's length; kept to check it at close.
      need_type(call, rank(), name, v, AttributeType::kInt);
      data_n_index_[id] = static_cast<int>(v.integer);
      return true;
    }
    return set_member(call, rank(), d, name, v);
  }
  if (kind == "axis" && !id.empty()) {
    // XIOS 1's size is n_glo.
    return set_member(call, rank(), axes_[id], name == "size" ? "n_glo" : name, v);
  }
  if (kind == "calendar_wrapper") {
    if (name == "timestep") {
      // Shared with xios_set_timestep.
      timestep_ = duration_text(call, rank(), v.duration);
      calendar_now_.reset();
      return true;
    }
    if (find_model_member<CalendarAttributes>(name) == nullptr) return false;
    calendar_now_.reset();
    return set_member(call, rank(), calendar_ ? *calendar_ : calendar_.emplace(), name, v);
  }
  return false;
}

void ContextClient::set(const char* call, Handle* h, const std::string& name, const Value& v) {
  require_open(call);
  const AttributeInfo* info = find_attribute(h->kind, name);
  if (info == nullptr) {
    fail(call, rank(), "element kind " + h->kind + " has no attribute '" + name + "'");
  }
  if (set_model_attribute(call, h, name, v)) {
    return;
  }
  Element* e = h->element != nullptr ? h->element : context_element();
  const std::string text = text_of(call, rank(), v);
  if (text.empty() && v.type == AttributeType::kDuration) {
    erase_attribute(*e, name);  // a zero duration: XIOS's default
  } else {
    set_text(*e, name, text);
  }
  // `units` is the XML's other spelling of XIOS's `unit`: the model's value
  // replaces the file's, whichever spelling the file used (two different
  // values on one element would be refused at close).
  if (name == "unit") erase_attribute(*e, "units");
}

bool ContextClient::get_model_attribute(Handle* h, const std::string& name, Value& v) {
  const std::string id = h->element != nullptr ? h->element->get("id") : "";
  if (h->kind == "domain") {
    const auto it = domains_.find(id);
    if (it == domains_.end()) return false;
    const DomainAttributes& d = it->second;
    if (name == "lonvalue" || name == "latvalue") {
      const bool lon = name == "lonvalue";
      const auto& legacy = lon ? legacy_lon_ : legacy_lat_;
      const auto l = legacy.find(id);
      if (l != legacy.end()) return read_back(l->second, v);
      const std::vector<double>& two_d = lon ? d.lonvalue_2d : d.latvalue_2d;
      return read_back(!two_d.empty() ? two_d : (lon ? d.lonvalue_1d : d.latvalue_1d), v);
    }
    return get_member(d, name, v);
  }
  if (h->kind == "axis") {
    const auto it = axes_.find(id);
    if (it == axes_.end()) return false;
    return get_member(it->second, name == "size" ? "n_glo" : name, v);
  }
  return false;
}

bool ContextClient::get(const char* call, Handle* h, const std::string& name, Value& v) {
  const AttributeInfo* info = find_attribute(h->kind, name);
  if (info == nullptr) {
    fail(call, rank(), "element kind " + h->kind + " has no attribute '" + name + "'");
  }
  if (get_model_attribute(h, name, v)) {
    return true;
  }
  if (h->kind == "calendar_wrapper") {
    const Calendar* cal = calendar();
    if (cal == nullptr) return false;
    if (name == "type") {
      v.text = calendar_type();
      return true;
    }
    if (name == "start_date") {
      v.date = date_value(cal->start());
      return true;
    }
    if (name == "time_origin") {
      v.date = date_value(cal->time_origin());
      return true;
    }
  }
  // The element's own value; after close, as XIOS solves inheritance, its
  // groups' and its reference's too. A file's groups' values are read
  // before close too: NEMO reads a file's name, name_suffix and output_freq
  // from its file_definition and file_group to replace @expname@, @freq@,
  // ... (iom_update_file_name), and XIOS gives them.
  const Element* e = h->element != nullptr ? h->element : context_element();
  const bool groups_now = h->kind == "file";
  const std::function<const std::string*(const Element&, int)> look =
      [&](const Element& el, int depth) -> const std::string* {
    if (const std::string* own = el.find(name)) return own;
    if ((!closed() && !groups_now) || !inheritable(name) || depth > 64) return nullptr;
    for (const Element* g = el.parent; g != nullptr && g->name != "context"; g = g->parent) {
      if (const std::string* up = g->find(name)) return up;
    }
    if (!closed()) return nullptr;
    if (const std::string* ref = reference_of(el)) {
      const std::string kind = kind_of_element(el.name);
      if (Handle* target = find(std::string(base_kind(kind)), *ref)) {
        return look(*target->element, depth + 1);
      }
    }
    return nullptr;
  };
  const std::string* text = look(*e, 0);
  if (text == nullptr) {
    return false;
  }
  if (!value_of(*text, v)) {
    fail(call, rank(), "attribute " + name + " = '" + *text + "' is not " + to_string(v.type));
  }
  return true;
}

bool ContextClient::defined(Handle* h, const std::string& name) {
  Value v;
  v.type = AttributeType::kString;
  if (const AttributeInfo* info = find_attribute(h->kind, name); info != nullptr) {
    v.type = info->type;
  }
  Value text_only = v;
  text_only.type = AttributeType::kString;
  return get_model_attribute(h, name, v) || get("xios_is_defined_attr", h, name, text_only);
}

void ContextClient::set_timestep(const Duration& d) {
  require_open("xios_set_timestep");
  timestep_ = duration_text("xios_set_timestep", rank(), d);
  calendar_now_.reset();
}

std::string ContextClient::calendar_type() {
  const Calendar* cal = calendar();
  if (cal == nullptr) return "";
  // XIOS's names (Gregorian, NoLeap, D360, ...), as xios_get_calendar_type returns them.
  switch (cal->type()) {
    case CalendarType::kGregorian:
      return "Gregorian";
    case CalendarType::kNoLeap:
      return "NoLeap";
    case CalendarType::k360Day:
      return "D360";
    case CalendarType::kJulian:
      return "Julian";
    case CalendarType::kAllLeap:
      return "AllLeap";
    case CalendarType::kUserDefined:
      return "user_defined";
  }
  return "";
}

// XIOS makes the calendar as soon as its type is known, so that dates can be
// computed before close_context_definition; here it is made from the
// definitions and what the model gave, again after every change.
const Calendar* ContextClient::calendar() {
  if (client_) {
    return &client_->config().calendar;
  }
  if (calendar_now_) {
    return &*calendar_now_;
  }
  // A definition that does not parse is the model's error, said now (the
  // same error would stop close_context_definition).
  const std::shared_ptr<const Config> cfg = parse_definitions();
  const CalendarSpec& spec = cfg->calendar_spec;
  std::optional<CalendarType> type = spec.type;
  std::string start = spec.start_date;
  std::string origin = spec.time_origin;
  std::optional<Frequency> step = spec.timestep;
  UserCalendar user;
  if (spec.day_length) user.day_length = *spec.day_length;
  user.month_lengths = spec.month_lengths;
  if (calendar_) {
    CalendarType t{};
    if (calendar_->type && parse_calendar_type(*calendar_->type, t)) type = t;
    if (calendar_->start_date) start = *calendar_->start_date;
    if (calendar_->time_origin) origin = *calendar_->time_origin;
    if (calendar_->day_length) user.day_length = *calendar_->day_length;
    if (!calendar_->month_lengths.empty()) user.month_lengths = calendar_->month_lengths;
  }
  if (timestep_) {
    Frequency f;
    if (parse_frequency(*timestep_, f)) step = f;
  }
  if (!type) {
    return nullptr;
  }
  try {
    // The timestep is only a unit of durations here; before it is known, 1 s.
    Calendar probe(*type, Date{2000, 1, 1, 0, 0, 0}, 1, user);
    Date start_date{0, 1, 1, 0, 0, 0};
    if (!start.empty() && !parse_date(start, probe, start_date).empty()) return nullptr;
    std::int64_t seconds = 1;
    if (step && !step->is_calendar_dependent() && step->timesteps == 0) {
      seconds = std::max<std::int64_t>(1, probe.fixed_seconds(*step));
    }
    Calendar cal(*type, start_date, seconds, user);
    if (!origin.empty()) {
      Date o;
      if (parse_date(origin, cal, o).empty()) cal.set_time_origin(o);
    }
    calendar_now_ = cal;
  } catch (const std::exception&) {
    return nullptr;
  }
  return &*calendar_now_;
}

void ContextClient::set_calendar_date(const char* which, const DateValue& d) {
  require_open(which);
  calendar_now_.reset();
  CalendarAttributes& c = calendar_ ? *calendar_ : calendar_.emplace();
  if (std::string(which) == "xios_set_start_date") {
    c.start_date = date_text(d);
  } else {
    c.time_origin = date_text(d);
  }
}

// XIOS 1's lonvalue / latvalue: ni (nj) values of a rectilinear block, or
// ni x nj of a curvilinear one.
void ContextClient::resolve_legacy_coordinates() {
  for (auto* legacy : {&legacy_lon_, &legacy_lat_}) {
    const bool lon = legacy == &legacy_lon_;
    for (auto& [id, values] : *legacy) {
      DomainAttributes& d = domains_[id];
      const long ni = d.ni.value_or(0);
      const long nj = d.nj.value_or(0);
      const bool two_d = static_cast<long>(values.size()) == ni * nj && ni * nj != (lon ? ni : nj);
      if (two_d) {
        (lon ? d.lonvalue_2d : d.latvalue_2d) = values;
        if (!d.type) d.type = "curvilinear";
      } else {
        (lon ? d.lonvalue_1d : d.latvalue_1d) = values;
      }
    }
  }
}

std::shared_ptr<const Config> ContextClient::parse_definitions() const {
  return std::make_shared<const Config>(parse_config_tree(*root_, path_, id_));
}

std::string ContextClient::definitions_xml() const {
  Element root;
  root.name = root_->name;
  root.attributes = root_->attributes;
  for (const auto& c : root_->children) {
    const std::string id = c->get("id");
    if (c->name == "context" && (id == id_ || id == "xios")) {
      root.children.push_back(config::clone(*c, &root));
    }
  }
  return config::to_xml(root);
}

void ContextClient::close(const Connection& link) {
  constexpr const char* kCall = "xios_close_context_definition";
  require_open(kCall);
  try {
    open_client(link);
  } catch (const std::exception& e) {
    // No second try: every later call of the context names this failure.
    const std::string what = e.what();
    close_error_ = what.substr(0, what.find('\n'));
    throw;
  }
}

// xios_close_context_definition once it is allowed: the Client, told what
// the model set, closes its definition.
void ContextClient::open_client(const Connection& link) {
  constexpr const char* kCall = "xios_close_context_definition";
  resolve_legacy_coordinates();
  for (const auto& [id, n] : data_n_index_) {
    const std::size_t given = domains_[id].data_i_index.size();
    if (given != static_cast<std::size_t>(n)) {
      fail(kCall, rank(),
           "domain '" + id + "': data_n_index is " + std::to_string(n) + " but data_i_index has " +
               std::to_string(given) + " values");
    }
  }
  ClientOptions options;
  options.mode = link.mode;
  options.context = id_;
  options.progress_thread = link.progress_thread;
  options.definitions = parse_definitions();
  options.connection_tag = link.tag;
  if (link.opened) {
    opened_world_ = link.world;
  }
  client_ = std::make_unique<Client>(comm_, link.world, path_, options);
  for (const auto& [id, attributes] : domains_) {
    client_->set_domain_attr(id, attributes);
  }
  for (const auto& [id, attributes] : axes_) {
    client_->set_axis_attr(id, attributes);
  }
  if (calendar_) {
    client_->define_calendar(*calendar_);
  }
  if (timestep_) {
    client_->set_timestep(*timestep_);
  }
  client_->close_definition();
  if (rank() == 0) {
    // What XIOS tolerates is said once, by the first client.
    std::set<std::string> said;
    for (const std::string& w : client_->config().warnings) {
      if (said.insert(w).second) std::fprintf(stderr, "xios_lite: warning: %s\n", w.c_str());
    }
  }

  // The fields some file needs: those the files name, and what they read
  // through references and expressions.
  const Config& cfg = client_->config();
  const std::function<void(int)> need = [&](int f) {
    if (f < 0 || !active_.insert(f).second) return;
    const FieldDef& field = cfg.fields[static_cast<std::size_t>(f)];
    need(field.source_field);
    for (int operand : field.expr_operands) need(operand);
  };
  for (const FileDef& file : cfg.files) {
    for (const OutputVariable& v : file.variables) {
      need(v.field);
      need(v.source);
    }
  }
}

Client& ContextClient::client(const char* call) {
  check_not_refused(call);
  if (!client_) {
    fail(call, rank(),
         "context '" + id_ + "' is not closed yet (call xios_close_context_definition first)");
  }
  if (finalised_) {
    fail(call, rank(), "context '" + id_ + "' is already finalised");
  }
  return *client_;
}

bool ContextClient::field_is_active(const char* call, const std::string& id) {
  const Config& cfg = client(call).config();
  const int f = cfg.find_field(id);
  if (f < 0) {
    fail(call, rank(), "unknown field '" + id + "' in context '" + id_ + "'");
  }
  return active_.contains(f);
}

bool ContextClient::variable(const std::string& name, Value& v) {
  const Element* found = nullptr;
  const std::function<void(const Element&)> visit = [&](const Element& e) {
    for (const auto& c : e.children) {
      if (found != nullptr) return;
      if (c->name == "variable" && (c->get("id") == name || c->get("name") == name)) {
        found = c.get();
        return;
      }
      visit(*c);
    }
  };
  visit(*context_element());
  for (const auto& c : root_->children) {
    if (found == nullptr && c->name == "context" && c->get("id") == "xios") visit(*c);
  }
  if (found == nullptr) {
    return false;
  }
  if (!value_of(found->text, v)) {
    fail("xios_getvar", rank(),
         "variable '" + name + "' = '" + found->text + "' is not " + to_string(v.type));
  }
  return true;
}

void ContextClient::finalise() {
  constexpr const char* kCall = "xios_context_finalize";
  if (!close_error_.empty() && !finalised_) {
    // The failed close told the other clients and the servers: nothing is
    // left to finish but to say it again.
    finalised_ = true;
    fail(kCall, rank(),
         "context '" + id_ + "': xios_close_context_definition failed (" + close_error_ + ")");
  }
  try {
    client(kCall).finalise();
  } catch (...) {
    // Its error (data lost, a server's failure) is the context's last
    // word: xios_finalize must not finalise it a second time.
    finalised_ = true;
    throw;
  }
  finalised_ = true;
  if (opened_world_) {
    // The context's World is freed by one thread per process, once every
    // endpoint of the process is past its Client's finalise.
    ep::barrier(comm_);
    if (comm_.local_thread() == 0) {
      free_world(*opened_world_);
    }
    opened_world_.reset();
  }
}

}  // namespace xios_lite::facade
