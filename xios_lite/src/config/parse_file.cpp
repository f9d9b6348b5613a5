// Files: their attributes, their fields (own, group_ref'd groups, fields
// defined inside the file), XIOS's time series files, and files in read
// mode (inputs).
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "context_parser.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {

void ContextParser::check_file_attributes(const Element& e) { config::check_attributes(e); }

void ContextParser::build_file(const Element& n) {
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
        errors_.guard([&] { add_file_field(*c, nullptr, f, names, output_level); });
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
void ContextParser::add_group_fields(const Element& in_file, const Element& group, FileDef& f,
                                     std::set<std::string>& names,
                                     std::optional<int> output_level) {
  for (const auto& c : group.children) {
    if (c->name == "field" && c->has("id")) {
      errors_.guard([&] { add_file_field(in_file, c.get(), f, names, output_level); });
    } else if (c->name == "field_group") {
      add_group_fields(in_file, *c, f, names, output_level);
    }
  }
}

// A file's <field> (`e`), or with `group_member` a field of a group_ref'd
// group taking the attributes of the file's field_group `e`.
void ContextParser::add_file_field(const Element& e, const Element* group_member, FileDef& f,
                                   std::set<std::string>& names, std::optional<int> output_level) {
  if (group_member != nullptr) {
    skip_if_failed("field", group_member->get("id"));
  }
  if (group_member == nullptr) {
    check_field_attributes(e);
    config::check_children(e, {"variable"});
  }
  OutputVariable v;
  v.where = e.where();
  int field = -1;
  const Element* ref = group_member != nullptr ? group_member : referenced(Kind::kFileField, e);
  const std::string expr = group_member != nullptr ? "" : (e.has("expr") ? e.get("expr") : e.text);
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
bool ContextParser::inside_file(const Element& e, const Element& group) {
  for (const Element* p = e.parent; p != nullptr && p->name == "field_group"; p = p->parent) {
    if (p == &group) {
      return true;
    }
  }
  return false;
}

// The attributes of a file's field_group on a group_ref'd field.
void ContextParser::read_group_attributes(const Element& group, OutputVariable& v) {
  OutputVariable from_group = v;
  read_field_attributes(Kind::kFileField, group, from_group);
  v = from_group;
}

void ContextParser::copy_field_attributes(const FieldDef& fd, OutputVariable& v) {
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
int ContextParser::file_field_definition(const Element& e, const Element* ref,
                                         const std::string& expr, const FileDef& file) {
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
  f.name = name ? *name.value
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
void ContextParser::check_file_fields(const Element& n) {
  for (const auto& c : n.children) {
    if (c->name == "field" || c->name == "field_group") {
      check_field_attributes(*c);
      check_file_fields(*c);
    }
  }
}

// XIOS's timeseries: each ts_enabled variable also (or only) in a file of
// its own, named "<ts_prefix>_<variable>".
void ContextParser::add_time_series(FileDef f, const std::string& mode, const std::string& prefix) {
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

}  // namespace xios_lite::parser
