// Fields: the attributes a field shares with a file's variable (as
// inherited), its grid, source field and expression, its flags and its
// <variable>s; the operations' names.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "common/enum_names.hpp"
#include "context_parser.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {
namespace {

// The texts of Operation (to_string, and what operation_of reads), and the
// CF cell method of each operation.
constexpr auto kOperationNames =
    common::enum_names<Operation>({{Operation::kInstant, "instant"},
                                   {Operation::kAverage, "average"},
                                   {Operation::kMinimum, "minimum"},
                                   {Operation::kMaximum, "maximum"},
                                   {Operation::kAccumulate, "accumulate"},
                                   {Operation::kOnce, "once"}});
constexpr auto kCellMethods = common::enum_names<Operation>({{Operation::kInstant, "time: point"},
                                                             {Operation::kAverage, "time: mean"},
                                                             {Operation::kMinimum, "time: minimum"},
                                                             {Operation::kMaximum, "time: maximum"},
                                                             {Operation::kAccumulate, "time: sum"},
                                                             {Operation::kOnce, "time: point"}});

Operation operation_of(const Element& e, const std::string& v) {
  const auto op = common::enum_from_name(kOperationNames, v);
  if (!op) {
    fail(e, "operation",
         "unknown operation '" + v +
             "' (expected instant, average, minimum, maximum, accumulate or once)");
  }
  return *op;
}

}  // namespace

void read_unit(const Found& unit, const Found& units, std::string& out) {
  if (unit && units && unit.at == units.at && *unit.value != *units.value) {
    fail(*units.at, "units",
         "'" + *units.value + "' differs from unit '" + *unit.value +
             "' on the same element (units is another spelling of unit: give one of them)");
  }
  // On different elements the nearer one is the element's own or its
  // nearest group's, and wins as any inherited attribute does.
  if (unit && (!units || unit.distance <= units.distance)) {
    out = *unit.value;
  } else if (units) {
    out = *units.value;
  }
}

void ContextParser::check_field_attributes(const Element& e) {
  // units: xios_lite's older spelling of unit.
  config::check_attributes(e, {"units"});
}

// The attributes a field and a file's variable share, as inherited.
template <class Def>
void ContextParser::read_field_attributes(Kind kind, const Element& e, Def& d) {
  const auto text = [&](const char* name, std::string& out) {
    if (const Found f = lookup(kind, e, name)) {
      out = *f.value;
    }
  };
  read_unit(lookup(kind, e, "unit"), lookup(kind, e, "units"), d.unit);
  text("standard_name", d.standard_name);
  text("long_name", d.long_name);
  text("comment", d.comment);
  text("cell_methods", d.cell_methods);
  if (const Found f = lookup(kind, e, "operation")) {
    d.operation = operation_of(*f.at, *f.value);
  }
  if (const Found f = lookup(kind, e, "freq_op")) {
    // Months and years too: samples at the ends of the calendar's months.
    d.freq_op = config::frequency(*f.at, "freq_op");
  }
  if (const Found f = lookup(kind, e, "freq_offset")) {
    if constexpr (std::is_same_v<Def, FieldDef>) {
      try {
        d.freq_offset = offset_of(*f.at, *f.value);
      } catch (const ep::Error& error) {
        if (files_reach_.count(d.id) > 0) throw;
        if (d.unusable.empty()) d.unusable = config::message_of(error);
      }
    } else {
      d.freq_offset = offset_of(*f.at, *f.value);
    }
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

// A freq_offset: a fixed length, negative too (NEMO's trendT_odd samples
// the odd steps with freq_op="2ts" freq_offset="-1ts", see
// temporal::SamplingSlots), or zero ("0ts", as NEMO sets trendT_even's).
Frequency ContextParser::offset_of(const Element& at, const std::string& value) {
  std::string_view text = value;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
    text.remove_prefix(1);
  }
  const bool negative = text.starts_with('-');
  Frequency off;
  if (!parse_frequency(negative ? text.substr(1) : text, off, /*zero_allowed=*/true)) {
    off = config::frequency(at, "freq_offset");
  }
  check_sampling(at, off, "freq_offset");
  if (negative) {
    for (std::int64_t Frequency::*part : {&Frequency::years, &Frequency::months, &Frequency::days,
                                          &Frequency::seconds, &Frequency::timesteps}) {
      off.*part = -(off.*part);
    }
  }
  return off;
}

// A sampling frequency: fixed length (no months); the timestep check
// waits for the calendar (completion).
void ContextParser::check_sampling(const Element& e, const Frequency& f, const char* attr) {
  if (f.is_calendar_dependent()) {
    fail(e, attr,
         "value '" + to_string(f) + "' out of range (" + attr + " must be ts, s, mi, h or d)");
  }
}

double ContextParser::chunk_target(const Element& n) {
  const double mib = config::real(n, "chunking_blocksize_target");
  if (mib <= 0 || mib >= 4096) {
    fail(n, "chunking_blocksize_target",
         "value out of range (0, 4096) MiB (HDF5 chunks stay below 4 GiB)");
  }
  return mib;
}

// <variable> children of `e` and of the elements it references.
std::vector<Attribute> ContextParser::variables_of(Kind kind, const Element& e) const {
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

void ContextParser::build_field(const Element& e) {
  check_field_attributes(e);
  config::check_children(e, {"variable"});
  FieldDef f;
  f.id = config::required(e, "id");
  f.where = e.where();
  // A grid or a freq_offset that cannot be read is remembered (unusable):
  // it is an error only where a file uses the field (completion).
  const bool read_by_files = files_reach_.count(f.id) > 0;
  const auto unusable = [&](const ep::Error& error) {
    if (read_by_files) throw error;
    if (f.unusable.empty()) f.unusable = config::message_of(error);
  };
  read_field_attributes(Kind::kField, e, f);
  const Found name = lookup(Kind::kField, e, "name");
  f.name = name ? *name.value : f.id;
  if (f.long_name.empty()) f.long_name = f.name;
  try {
    f.grid = grid_of(Kind::kField, e);
  } catch (const ep::Error& error) {
    unusable(error);
  }
  if (const Element* src = referenced(Kind::kField, e)) {
    f.source_field = field_position(*src);
  }
  f.expr = e.has("expr") ? e.get("expr") : e.text;
  if (!e.text.empty() && e.has("expr")) {
    fail(e, "expr", "an expression either in expr= or as the element's text, not both");
  }
  if (f.grid < 0 && f.expr.empty() && read_by_files) {
    fail(e, "grid_ref", "missing grid: neither the field nor its groups give a grid_ref");
  }
  if (f.grid < 0 && f.expr.empty() && f.unusable.empty()) {
    f.unusable = e.where() +
                 " attribute grid_ref: missing grid: neither the field nor its groups give a "
                 "grid_ref";
  }
  read_flags(Kind::kField, e, f);
  f.attributes = variables_of(Kind::kField, e);
  set_field(std::move(f));
}

void ContextParser::read_flags(Kind kind, const Element& e, FieldDef& f) {
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
int ContextParser::field_position(const Element& e) {
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

void ContextParser::set_field(FieldDef f) {
  const int pos = field_position(*field_ids_.at(f.id));
  field_slots_[static_cast<std::size_t>(pos)] = std::move(f);
}

template void ContextParser::read_field_attributes(Kind, const Element&, FieldDef&);
template void ContextParser::read_field_attributes(Kind, const Element&, OutputVariable&);

}  // namespace xios_lite::parser

namespace xios_lite {

const char* to_string(Operation op) noexcept {
  return common::enum_name(parser::kOperationNames, op, "instant");
}

const char* cell_method(Operation op) noexcept {
  return common::enum_name(parser::kCellMethods, op, "time: point");
}

}  // namespace xios_lite
