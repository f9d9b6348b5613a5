// Reading iodef-style XML with pugixml. Each element is checked against the
// attributes it may carry, references are resolved once every definition is
// known, and every error goes through XmlSource::fail so that it names the
// file, the line, the element and the attribute.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "ep/error.hpp"
#include "xios_lite/config.hpp"
#include "xml_source.hpp"

namespace xios_lite {
namespace {

using config::kCall;
using config::XmlSource;

Operation parse_operation(const XmlSource& src, const pugi::xml_node& node) {
  const std::string v = src.required(node, "operation");
  static const std::map<std::string, Operation> kOps{
      {"instant", Operation::kInstant},       {"average", Operation::kAverage},
      {"minimum", Operation::kMinimum},       {"maximum", Operation::kMaximum},
      {"accumulate", Operation::kAccumulate}, {"once", Operation::kOnce}};
  const auto it = kOps.find(v);
  if (it == kOps.end()) {
    src.fail(node, "operation",
             "unknown operation '" + v +
                 "' (expected instant, average, minimum, maximum, accumulate or once)");
  }
  return it->second;
}

// Field attributes as they flow down field groups; unset ones stay unset so a
// child sees its nearest ancestor's value.
struct InheritedField {
  std::optional<std::string> units, standard_name, long_name, grid_ref;
  std::optional<Operation> operation;
  std::optional<Frequency> freq_op;
  std::optional<double> default_value;
  std::optional<bool> detect_missing_value;
  std::optional<int> prec;
  std::optional<double> chunking_blocksize_target;
  pugi::xml_node grid_node;  // where grid_ref was set (for messages)
};

class Parser {
 public:
  explicit Parser(const XmlSource& src) : src_(src) {}

  Config run() {
    pugi::xml_document doc;
    const pugi::xml_parse_result res =
        doc.load_buffer(src_.text().data(), src_.text().size(), pugi::parse_default);
    if (!res) {
      throw ep::Error(ep::ErrorKind::kConfig, kCall, -1,
                      src_.name() + ":" + std::to_string(src_.line_of(res.offset)) +
                          ": XML syntax error: " + res.description());
    }
    const pugi::xml_node root = doc.document_element();
    if (std::string_view(root.name()) != "xios_lite") {
      src_.fail(root, "", "root element must be <xios_lite>");
    }
    src_.check_attributes(root, {});
    src_.check_children(root, {"context"});
    const pugi::xml_node context = root.child("context");
    if (!context) {
      src_.fail(root, "", "no <context> element");
    }
    if (context.next_sibling("context")) {
      src_.fail(context.next_sibling("context"), "", "only one <context> is supported");
    }
    cfg_.path = src_.name();
    parse_context(context);
    return std::move(cfg_);
  }

 private:
  void parse_context(const pugi::xml_node& ctx) {
    src_.check_attributes(ctx, {"id"});
    src_.check_children(ctx, {"calendar", "options", "domain_definition", "axis_definition",
                              "grid_definition", "field_definition", "file_definition"});
    cfg_.context = src_.required(ctx, "id");
    const pugi::xml_node cal = ctx.child("calendar");
    if (!cal) {
      src_.fail(ctx, "", "no <calendar> element");
    }
    parse_calendar(cal);
    if (const auto opt = ctx.child("options")) {
      parse_options(opt);
    }
    for (const auto& def : ctx.children("domain_definition")) {
      src_.check_attributes(def, {});
      src_.check_children(def, {"domain"});
      for (const auto& d : def.children("domain")) {
        parse_domain(d);
      }
    }
    for (const auto& def : ctx.children("axis_definition")) {
      src_.check_attributes(def, {});
      src_.check_children(def, {"axis"});
      for (const auto& a : def.children("axis")) {
        parse_axis(a);
      }
    }
    for (const auto& def : ctx.children("grid_definition")) {
      src_.check_attributes(def, {});
      src_.check_children(def, {"grid"});
      for (const auto& g : def.children("grid")) {
        parse_grid(g);
      }
    }
    for (const auto& def : ctx.children("field_definition")) {
      parse_field_group(def, InheritedField{});
    }
    for (const auto& def : ctx.children("file_definition")) {
      src_.check_attributes(def, {});
      src_.check_children(def, {"file"});
      for (const auto& f : def.children("file")) {
        parse_file(f);
      }
    }
  }

  void parse_calendar(const pugi::xml_node& n) {
    src_.check_attributes(n, {"type", "start_date", "timestep"});
    const std::string type = src_.required(n, "type");
    CalendarType ct{};
    if (type == "gregorian" || type == "standard" || type == "proleptic_gregorian") {
      ct = CalendarType::kGregorian;
    } else if (type == "noleap" || type == "365_day") {
      ct = CalendarType::kNoLeap;
    } else if (type == "360_day") {
      ct = CalendarType::k360Day;
    } else {
      src_.fail(n, "type", "unknown calendar '" + type + "' (expected gregorian, noleap, 360_day)");
    }
    const std::string start = src_.required(n, "start_date");
    Date d;
    const int got = std::sscanf(start.c_str(), "%d-%d-%d %d:%d:%d", &d.year, &d.month, &d.day,
                                &d.hour, &d.minute, &d.second);
    if (got != 3 && got != 6) {
      src_.fail(n, "start_date", "'" + start + "' is not YYYY-MM-DD[ hh:mm:ss]");
    }
    const Frequency step = src_.frequency(n, "timestep");
    if (step.unit == Frequency::Unit::kTimestep || step.is_calendar_dependent()) {
      src_.fail(n, "timestep", "value '" + to_string(step) + "' out of range (use s, mi, h or d)");
    }
    const Calendar probe(ct, Date{}, 1);
    if (!probe.is_valid(d)) {
      src_.fail(n, "start_date", "value '" + start + "' out of range for a " + type + " calendar");
    }
    const Calendar seconds(ct, d, 1);
    cfg_.calendar = Calendar(ct, d, seconds.boundary(step, 1));
  }

  void parse_options(const pugi::xml_node& n) {
    src_.check_attributes(n, {"buffer_factor", "buffer_min_bytes", "buffer_max_bytes",
                              "finalise_timeout", "report_json", "progress_thread"});
    if (n.attribute("progress_thread")) {
      const std::string v = n.attribute("progress_thread").value();
      if (v != "true" && v != "false") {
        src_.fail(n, "progress_thread", "value '" + v + "' out of range (expected true or false)");
      }
      cfg_.progress_thread = v == "true";
    }
    if (n.attribute("buffer_factor")) {
      cfg_.buffers.factor = src_.real(n, "buffer_factor");
      if (cfg_.buffers.factor < 1.0 || cfg_.buffers.factor > 1000.0) {
        src_.fail(n, "buffer_factor", "value out of range [1, 1000]");
      }
    }
    constexpr long long kMaxBuf = 1LL << 31;  // one MPI message
    if (n.attribute("buffer_min_bytes")) {
      cfg_.buffers.min_bytes =
          static_cast<std::size_t>(src_.integer(n, "buffer_min_bytes", 1024, kMaxBuf));
    }
    if (n.attribute("buffer_max_bytes")) {
      cfg_.buffers.max_bytes =
          static_cast<std::size_t>(src_.integer(n, "buffer_max_bytes", 1024, kMaxBuf));
    }
    if (cfg_.buffers.max_bytes < cfg_.buffers.min_bytes) {
      src_.fail(n, "buffer_max_bytes", "value out of range (below buffer_min_bytes)");
    }
    if (n.attribute("finalise_timeout")) {
      cfg_.finalise_timeout_s = src_.real(n, "finalise_timeout");
      if (cfg_.finalise_timeout_s <= 0) {
        src_.fail(n, "finalise_timeout", "value out of range (must be > 0 seconds)");
      }
    }
    if (n.attribute("report_json")) {
      cfg_.report_json = n.attribute("report_json").value();
    }
  }

  void unique_id(std::set<std::string>& ids, const pugi::xml_node& n, const std::string& id) {
    if (!ids.insert(id).second) {
      src_.fail(n, "id", "duplicate id '" + id + "'");
    }
  }

  void parse_domain(const pugi::xml_node& n) {
    src_.check_attributes(
        n, {"id", "ni_glo", "nj_glo", "lon_start", "lon_end", "lat_start", "lat_end", "lon_values",
            "lat_values", "mask", "bounds_lon", "bounds_lat"});
    DomainDef d;
    d.id = src_.required(n, "id");
    unique_id(domain_ids_, n, d.id);
    d.ni_glo = static_cast<int>(src_.integer(n, "ni_glo", 1, 1 << 24));
    d.nj_glo = static_cast<int>(src_.integer(n, "nj_glo", 1, 1 << 24));
    // Cell centres of a regular grid unless values are listed.
    auto centres = [&](const char* a0, const char* a1, double d0, double d1, int n_pts) {
      const double lo = n.attribute(a0) ? src_.real(n, a0) : d0;
      const double hi = n.attribute(a1) ? src_.real(n, a1) : d1;
      std::vector<double> v(static_cast<std::size_t>(n_pts));
      for (int i = 0; i < n_pts; ++i) {
        v[static_cast<std::size_t>(i)] = lo + (hi - lo) * (i + 0.5) / n_pts;
      }
      return v;
    };
    d.lon = n.attribute("lon_values")
                ? src_.reals(n, "lon_values", static_cast<std::size_t>(d.ni_glo))
                : centres("lon_start", "lon_end", 0.0, 360.0, d.ni_glo);
    d.lat = n.attribute("lat_values")
                ? src_.reals(n, "lat_values", static_cast<std::size_t>(d.nj_glo))
                : centres("lat_start", "lat_end", -90.0, 90.0, d.nj_glo);
    for (double lat : d.lat) {
      if (lat < -90.0 || lat > 90.0) {
        src_.fail(n, n.attribute("lat_values") ? "lat_values" : "lat_start",
                  "latitude " + std::to_string(lat) + " out of range [-90, 90]");
      }
    }
    if (n.attribute("bounds_lon")) {
      d.bounds_lon = src_.reals(n, "bounds_lon", 2 * static_cast<std::size_t>(d.ni_glo));
    }
    if (n.attribute("bounds_lat")) {
      d.bounds_lat = src_.reals(n, "bounds_lat", 2 * static_cast<std::size_t>(d.nj_glo));
      for (double lat : d.bounds_lat) {
        if (lat < -90.0 || lat > 90.0) {
          src_.fail(n, "bounds_lat", "latitude " + std::to_string(lat) + " out of range [-90, 90]");
        }
      }
    }
    if (n.attribute("mask")) {
      const std::size_t points = static_cast<std::size_t>(d.ni_glo) * d.nj_glo;
      for (const double v : src_.reals(n, "mask", points)) {
        if (v != 0.0 && v != 1.0) {
          char text[32];
          std::snprintf(text, sizeof text, "%g", v);
          src_.fail(n, "mask", "value " + std::string(text) + " out of range (0 masked, 1 valid)");
        }
        d.mask.push_back(v != 0.0 ? 1 : 0);
      }
    }
    cfg_.domains.push_back(std::move(d));
  }

  void parse_axis(const pugi::xml_node& n) {
    src_.check_attributes(n, {"id", "name", "n_glo", "value", "units", "positive", "long_name"});
    AxisDef a;
    a.id = src_.required(n, "id");
    unique_id(axis_ids_, n, a.id);
    a.name = n.attribute("name") ? n.attribute("name").value() : a.id;
    a.n_glo = static_cast<int>(src_.integer(n, "n_glo", 1, 1 << 20));
    a.value = src_.reals(n, "value", static_cast<std::size_t>(a.n_glo));
    a.units = n.attribute("units").value();
    a.long_name = n.attribute("long_name").value();
    a.positive = n.attribute("positive").value();
    if (!a.positive.empty() && a.positive != "up" && a.positive != "down") {
      src_.fail(n, "positive", "value '" + a.positive + "' out of range (expected up or down)");
    }
    cfg_.axes.push_back(std::move(a));
  }

  void parse_grid(const pugi::xml_node& n) {
    src_.check_attributes(n, {"id", "domain_ref", "axis_ref"});
    GridDef g;
    g.id = src_.required(n, "id");
    unique_id(grid_ids_, n, g.id);
    const std::string dref = src_.required(n, "domain_ref");
    g.domain = index_of(cfg_.domains, dref);
    if (g.domain < 0) {
      src_.fail(n, "domain_ref", "unknown domain '" + dref + "'");
    }
    if (n.attribute("axis_ref")) {
      const std::string aref = n.attribute("axis_ref").value();
      g.axis = index_of(cfg_.axes, aref);
      if (g.axis < 0) {
        src_.fail(n, "axis_ref", "unknown axis '" + aref + "'");
      }
    }
    cfg_.grids.push_back(std::move(g));
  }

  template <class T>
  static int index_of(const std::vector<T>& v, const std::string& id) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].id == id) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  void check_freq_op(const pugi::xml_node& n, const Frequency& f, const char* attr) const {
    if (f.is_calendar_dependent()) {
      src_.fail(n, attr,
                "value '" + to_string(f) + "' out of range (freq_op must be ts, s, mi, h or d)");
    }
    const std::int64_t sec = cfg_.calendar.boundary(f, 1);
    if (sec % cfg_.calendar.timestep_seconds() != 0) {
      src_.fail(n, attr,
                "value '" + to_string(f) + "' out of range (not a multiple of the timestep)");
    }
  }

  InheritedField read_inheritable(const pugi::xml_node& n, InheritedField inh) {
    auto text = [&](const char* a, std::optional<std::string>& slot) {
      if (n.attribute(a)) {
        slot = n.attribute(a).value();
      }
    };
    text("units", inh.units);
    text("standard_name", inh.standard_name);
    text("long_name", inh.long_name);
    if (n.attribute("grid_ref")) {
      inh.grid_ref = n.attribute("grid_ref").value();
      inh.grid_node = n;
      if (index_of(cfg_.grids, *inh.grid_ref) < 0) {
        src_.fail(n, "grid_ref", "unknown grid '" + *inh.grid_ref + "'");
      }
    }
    if (n.attribute("operation")) {
      inh.operation = parse_operation(src_, n);
    }
    if (n.attribute("freq_op")) {
      inh.freq_op = src_.frequency(n, "freq_op");
      check_freq_op(n, *inh.freq_op, "freq_op");
    }
    if (n.attribute("default_value")) {
      inh.default_value = src_.real(n, "default_value");
    }
    if (n.attribute("detect_missing_value")) {
      inh.detect_missing_value = src_.boolean(n, "detect_missing_value");
    }
    if (n.attribute("prec")) {
      inh.prec = static_cast<int>(src_.integer(n, "prec", 2, 8));
      if (*inh.prec != 4 && *inh.prec != 8) {
        src_.fail(n, "prec",
                  "value " + std::to_string(*inh.prec) + " out of range (4: float, 8: double)");
      }
    }
    if (n.attribute("chunking_blocksize_target")) {
      inh.chunking_blocksize_target = chunk_target(n);
    }
    return inh;
  }

  // MiB, positive and below HDF5's 4 GiB chunk limit.
  [[nodiscard]] double chunk_target(const pugi::xml_node& n) const {
    const double mib = src_.real(n, "chunking_blocksize_target");
    if (mib <= 0 || mib >= 4096) {
      src_.fail(n, "chunking_blocksize_target",
                "value out of range (0, 4096) MiB (HDF5 chunks stay below 4 GiB)");
    }
    return mib;
  }

  void parse_field_group(const pugi::xml_node& g, const InheritedField& parent) {
    src_.check_attributes(
        g, {"id", "units", "standard_name", "long_name", "grid_ref", "operation", "freq_op",
            "default_value", "detect_missing_value", "prec", "chunking_blocksize_target"});
    src_.check_children(g, {"field", "field_group"});
    if (g.attribute("id")) {
      unique_id(field_ids_, g, g.attribute("id").value());
    }
    const InheritedField inh = read_inheritable(g, parent);
    for (const auto& child : g.children()) {
      if (std::string_view(child.name()) == "field_group") {
        parse_field_group(child, inh);
      } else if (std::string_view(child.name()) == "field") {
        parse_field(child, inh);
      }
    }
  }

  void parse_field(const pugi::xml_node& n, const InheritedField& parent) {
    src_.check_attributes(
        n, {"id", "name", "units", "standard_name", "long_name", "grid_ref", "operation", "freq_op",
            "default_value", "detect_missing_value", "prec", "chunking_blocksize_target"});
    FieldDef f;
    f.id = src_.required(n, "id");
    unique_id(field_ids_, n, f.id);
    const InheritedField inh = read_inheritable(n, parent);
    f.name = n.attribute("name") ? n.attribute("name").value() : f.id;
    f.units = inh.units.value_or("");
    f.standard_name = inh.standard_name.value_or("");
    f.long_name = inh.long_name.value_or(f.name);
    if (!inh.grid_ref) {
      src_.fail(n, "grid_ref", "missing grid: neither the field nor its groups give a grid_ref");
    }
    f.grid = index_of(cfg_.grids, *inh.grid_ref);
    f.operation = inh.operation.value_or(Operation::kInstant);
    f.freq_op = inh.freq_op.value_or(Frequency{1, Frequency::Unit::kTimestep});
    if (inh.default_value) {
      f.default_value = *inh.default_value;
    }
    f.detect_missing_value = inh.detect_missing_value.value_or(false);
    f.prec = inh.prec.value_or(8);
    f.chunking_blocksize_target = inh.chunking_blocksize_target.value_or(0);
    cfg_.fields.push_back(std::move(f));
  }

  void parse_file(const pugi::xml_node& n) {
    src_.check_attributes(n, {"id", "name", "description", "output_freq", "split_freq", "sync_freq",
                              "compression_level", "type", "enabled", "chunking_blocksize_target"});
    src_.check_children(n, {"field"});
    if (n.attribute("enabled") && !n.attribute("enabled").as_bool(true)) {
      return;
    }
    FileDef f;
    f.id = src_.required(n, "id");
    unique_id(file_ids_, n, f.id);
    f.name = n.attribute("name") ? n.attribute("name").value() : f.id;
    f.description = n.attribute("description") ? n.attribute("description").value() : cfg_.context;
    f.output_freq = src_.frequency(n, "output_freq");
    const std::int64_t out_s = cfg_.calendar.boundary(f.output_freq, 1);
    if (!f.output_freq.is_calendar_dependent() && out_s % cfg_.calendar.timestep_seconds() != 0) {
      src_.fail(
          n, "output_freq",
          "value '" + to_string(f.output_freq) + "' out of range (not a multiple of the timestep)");
    }
    auto multiple_of_output = [&](const char* attr, Frequency& slot) {
      if (!n.attribute(attr)) {
        return;
      }
      slot = src_.frequency(n, attr);
      const bool both_fixed =
          !slot.is_calendar_dependent() && !f.output_freq.is_calendar_dependent();
      if (both_fixed && cfg_.calendar.boundary(slot, 1) % out_s != 0) {
        src_.fail(n, attr,
                  "value '" + to_string(slot) + "' out of range (not a multiple of output_freq " +
                      to_string(f.output_freq) + ")");
      }
    };
    multiple_of_output("split_freq", f.split_freq);
    multiple_of_output("sync_freq", f.sync_freq);
    if (n.attribute("compression_level")) {
      f.compression_level = static_cast<int>(src_.integer(n, "compression_level", 0, 9));
    }
    if (n.attribute("chunking_blocksize_target")) {
      f.chunking_blocksize_target = chunk_target(n);
    }
    if (n.attribute("type")) {
      const std::string t = n.attribute("type").value();
      if (t == "one_file") {
        f.type = FileType::kOneFile;
      } else if (t == "multiple_file") {
        f.type = FileType::kMultipleFile;
      } else {
        src_.fail(n, "type", "unknown file type '" + t + "' (expected one_file or multiple_file)");
      }
    }
    std::set<std::string> names;
    for (const auto& fn : n.children("field")) {
      src_.check_attributes(fn, {"field_ref", "name", "operation", "freq_op"});
      const std::string ref = src_.required(fn, "field_ref");
      OutputVariable v;
      v.field = cfg_.find_field(ref);
      if (v.field < 0) {
        src_.fail(fn, "field_ref", "unknown field '" + ref + "'");
      }
      const FieldDef& fd = cfg_.fields[static_cast<std::size_t>(v.field)];
      v.name = fn.attribute("name") ? fn.attribute("name").value() : fd.name;
      v.operation = fn.attribute("operation") ? parse_operation(src_, fn) : fd.operation;
      v.freq_op = fd.freq_op;
      if (fn.attribute("freq_op")) {
        v.freq_op = src_.frequency(fn, "freq_op");
        check_freq_op(fn, v.freq_op, "freq_op");
      }
      if (!names.insert(v.name).second) {
        src_.fail(fn, "name", "duplicate variable name '" + v.name + "' in file '" + f.id + "'");
      }
      f.variables.push_back(std::move(v));
    }
    cfg_.files.push_back(std::move(f));
  }

  const XmlSource& src_;
  Config cfg_;
  std::set<std::string> domain_ids_, axis_ids_, grid_ids_, field_ids_, file_ids_;
};

}  // namespace

const char* to_string(Operation op) noexcept {
  switch (op) {
    case Operation::kInstant:
      return "instant";
    case Operation::kAverage:
      return "average";
    case Operation::kMinimum:
      return "minimum";
    case Operation::kMaximum:
      return "maximum";
    case Operation::kAccumulate:
      return "accumulate";
    case Operation::kOnce:
      return "once";
  }
  return "instant";
}

const char* cell_method(Operation op) noexcept {
  switch (op) {
    case Operation::kAverage:
      return "time: mean";
    case Operation::kMinimum:
      return "time: minimum";
    case Operation::kMaximum:
      return "time: maximum";
    case Operation::kAccumulate:
      return "time: sum";
    case Operation::kInstant:
    case Operation::kOnce:
      return "time: point";
  }
  return "time: point";
}

int Config::find_field(const std::string& id) const {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Config::levels(int grid) const {
  const GridDef& g = grids.at(static_cast<std::size_t>(grid));
  return g.axis < 0 ? 1 : axes.at(static_cast<std::size_t>(g.axis)).n_glo;
}

Config parse_config_string(const std::string& xml, const std::string& name) {
  const XmlSource src(xml, name);
  return Parser(src).run();
}

Config parse_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ep::Error(ep::ErrorKind::kIo, kCall, -1, path + ": cannot open the file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config_string(text.str(), path);
}

}  // namespace xios_lite
