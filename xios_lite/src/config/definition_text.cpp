// The definitions of a configuration as comparable text (see config.hpp):
// clients and servers compare it at connection (what the configuration
// gives) and again at close_definition (with what the model set).
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <vector>

#include "xios_lite/config.hpp"

namespace xios_lite {
namespace {

std::string hex_digest(const std::vector<double>& values) {
  if (values.empty()) {
    return "-";
  }
  const std::string_view bytes(reinterpret_cast<const char*>(values.data()),
                               values.size() * sizeof(double));
  char text[32];
  std::snprintf(text, sizeof text, "%016" PRIx64, digest_of(bytes));
  return text;
}

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

std::string attributes_text(const std::vector<Attribute>& attributes) {
  std::string out;
  for (const Attribute& a : attributes) {
    out += " " + a.name + "=" + std::to_string(static_cast<int>(a.type)) + ":'" + a.value + "'";
  }
  return out;
}

std::string window_text(const std::optional<Window>& w) {
  if (!w) {
    return "-";
  }
  return std::to_string(w->ibegin) + "+" + std::to_string(w->ni) + "," + std::to_string(w->jbegin) +
         "+" + std::to_string(w->nj);
}

}  // namespace

std::uint64_t digest_of(std::string_view text) noexcept {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string definition_text(const Config& cfg) {
  std::ostringstream out;
  out << "context " << cfg.context << "\n";
  const CalendarSpec& c = cfg.calendar_spec;
  out << "calendar " << (c.type ? std::string(to_string(*c.type)) : "-") << " start '"
      << c.start_date << "' origin '" << c.time_origin << "' timestep "
      << (c.timestep ? to_string(*c.timestep) : "-") << " day_length "
      << (c.day_length ? std::to_string(*c.day_length) : "-") << " months";
  for (const int m : c.month_lengths) out << " " << m;
  out << "\n";
  for (const DomainDef& d : cfg.domains) {
    std::vector<double> mask(d.mask.begin(), d.mask.end());
    out << "domain " << d.id << ": ni_glo " << d.ni_glo << " nj_glo " << d.nj_glo << " lon "
        << hex_digest(d.lon) << " lat " << hex_digest(d.lat) << " mask " << hex_digest(mask)
        << " bounds_lon " << hex_digest(d.bounds_lon) << " bounds_lat " << hex_digest(d.bounds_lat)
        << " type " << (d.type == DomainType::kCurvilinear ? "curvilinear" : "rectilinear")
        << " nvertex " << d.nvertex << " area " << hex_digest(d.area) << " name '" << d.name
        << "' source " << d.source << " window " << window_text(d.window) << "\n";
  }
  for (const AxisDef& a : cfg.axes) {
    out << "axis " << a.id << ": name " << a.name << " n_glo " << a.n_glo << " value "
        << hex_digest(a.value) << " bounds " << hex_digest(a.bounds) << " unit '" << a.unit
        << "' positive '" << a.positive << "' long_name '" << a.long_name << "' standard_name '"
        << a.standard_name << "' source " << a.source << " from_domain " << to_string(a.from_domain)
        << (a.along_i ? " i" : " j") << (a.from_scalar ? " duplicate_scalar" : "") << " extract "
        << a.extract_position << "\n";
  }
  for (const ScalarDef& s : cfg.scalars) {
    out << "scalar " << s.id << ": name " << s.name << " from_axis " << to_string(s.from_axis)
        << " from_domain " << to_string(s.from_domain) << (s.client_local ? " local" : "")
        << " extract " << s.extract_level << " unit '" << s.unit << "'\n";
  }
  for (const GridDef& g : cfg.grids) {
    out << "grid " << g.id << ":";
    for (const GridDef::Member& m : g.members) {
      out << " " << static_cast<int>(m.kind) << "/" << m.index;
    }
    out << "\n";
  }
  for (const FieldDef& f : cfg.fields) {
    out << "field " << f.id << ": name " << f.name << " grid " << f.grid << " operation "
        << to_string(f.operation) << " freq_op " << to_string(f.freq_op) << " freq_offset "
        << to_string(f.freq_offset) << " default_value " << number(f.default_value)
        << " detect_missing_value " << f.detect_missing_value << " prec " << f.prec
        << " chunking_blocksize_target " << number(f.chunking_blocksize_target) << " unit '"
        << f.unit << "' standard_name '" << f.standard_name << "' long_name '" << f.long_name
        << "' source " << f.source_field << " expr '" << f.expr << "'"
        << attributes_text(f.attributes) << "\n";
  }
  for (const FileDef& f : cfg.files) {
    out << "file " << f.id << ": name " << f.name << f.name_suffix << " digits " << f.min_digits
        << " output_freq " << to_string(f.output_freq) << " split_freq "
        << (f.split_freq.is_set() ? to_string(f.split_freq) : "-") << " format '"
        << f.split_freq_format << "' sync_freq "
        << (f.sync_freq.is_set() ? to_string(f.sync_freq) : "-") << " compression_level "
        << f.compression_level << " chunking_blocksize_target "
        << number(f.chunking_blocksize_target) << " type "
        << (f.type == FileType::kOneFile ? "one_file" : "multiple_file") << " description '"
        << f.description << "'" << attributes_text(f.attributes) << "\n";
    for (const OutputVariable& v : f.variables) {
      out << "file " << f.id << " variable " << v.name << ": field "
          << cfg.fields[static_cast<std::size_t>(v.field)].id << " grid " << v.grid << " operation "
          << to_string(v.operation) << " freq_op " << to_string(v.freq_op) << " freq_offset "
          << to_string(v.freq_offset) << " default_value " << number(v.default_value) << " detect "
          << v.detect_missing_value << " prec " << v.prec << " unit '" << v.unit
          << "' standard_name '" << v.standard_name << "' long_name '" << v.long_name << "'"
          << attributes_text(v.attributes) << "\n";
    }
  }
  for (const FileDef& f : cfg.inputs) {
    out << "input " << f.id << ": name " << f.name << f.name_suffix << " output_freq "
        << to_string(f.output_freq) << "\n";
    for (const OutputVariable& v : f.variables) {
      out << "input " << f.id << " variable " << v.name << ": field "
          << cfg.fields[static_cast<std::size_t>(v.field)].id << "\n";
    }
  }
  return out.str();
}

std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream in_a(a);
  std::istringstream in_b(b);
  std::string line_a;
  std::string line_b;
  for (;;) {
    const bool more_a = static_cast<bool>(std::getline(in_a, line_a));
    const bool more_b = static_cast<bool>(std::getline(in_b, line_b));
    if (!more_a && !more_b) {
      return "";
    }
    if (!more_a) line_a = "(nothing more)";
    if (!more_b) line_b = "(nothing more)";
    if (line_a != line_b) {
      return std::string("'").append(line_a).append("' vs '").append(line_b).append("'");
    }
  }
}

}  // namespace xios_lite
