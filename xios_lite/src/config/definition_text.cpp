// The definitions of a configuration as comparable text (see config.hpp):
// clients and servers compare it at connection.
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <vector>

#include "xios_lite/config.hpp"

namespace xios_lite {
namespace {

std::string hex_digest(const std::vector<double>& values) {
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
  out << "calendar " << to_string(cfg.calendar.type()) << " start "
      << format_date(cfg.calendar.start()) << " timestep " << cfg.calendar.timestep_seconds()
      << " s\n";
  for (const DomainDef& d : cfg.domains) {
    out << "domain " << d.id << ": ni_glo " << d.ni_glo << " nj_glo " << d.nj_glo << " lon "
        << hex_digest(d.lon) << " lat " << hex_digest(d.lat) << " mask "
        << (d.mask.empty() ? std::string("-")
                           : hex_digest(std::vector<double>(d.mask.begin(), d.mask.end())))
        << " bounds_lon " << (d.bounds_lon.empty() ? std::string("-") : hex_digest(d.bounds_lon))
        << " bounds_lat " << (d.bounds_lat.empty() ? std::string("-") : hex_digest(d.bounds_lat))
        << "\n";
  }
  for (const AxisDef& a : cfg.axes) {
    out << "axis " << a.id << ": name " << a.name << " n_glo " << a.n_glo << " value "
        << hex_digest(a.value) << " units '" << a.units << "' positive '" << a.positive
        << "' long_name '" << a.long_name << "'\n";
  }
  for (const GridDef& g : cfg.grids) {
    out << "grid " << g.id << ": domain " << cfg.domains[static_cast<std::size_t>(g.domain)].id
        << " axis " << (g.axis < 0 ? "-" : cfg.axes[static_cast<std::size_t>(g.axis)].id) << "\n";
  }
  for (const FieldDef& f : cfg.fields) {
    out << "field " << f.id << ": name " << f.name << " grid "
        << cfg.grids[static_cast<std::size_t>(f.grid)].id << " operation " << to_string(f.operation)
        << " freq_op " << to_string(f.freq_op) << " default_value " << number(f.default_value)
        << " detect_missing_value " << f.detect_missing_value << " prec " << f.prec
        << " chunking_blocksize_target " << number(f.chunking_blocksize_target) << " units '"
        << f.units << "' standard_name '" << f.standard_name << "' long_name '" << f.long_name
        << "'\n";
  }
  for (const FileDef& f : cfg.files) {
    out << "file " << f.id << ": name " << f.name << " output_freq " << to_string(f.output_freq)
        << " split_freq " << (f.split_freq.is_set() ? to_string(f.split_freq) : "-")
        << " sync_freq " << (f.sync_freq.is_set() ? to_string(f.sync_freq) : "-")
        << " compression_level " << f.compression_level << " chunking_blocksize_target "
        << number(f.chunking_blocksize_target) << " type "
        << (f.type == FileType::kOneFile ? "one_file" : "multiple_file") << " description '"
        << f.description << "'\n";
    for (const OutputVariable& v : f.variables) {
      out << "file " << f.id << " variable " << v.name << ": field "
          << cfg.fields[static_cast<std::size_t>(v.field)].id << " operation "
          << to_string(v.operation) << " freq_op " << to_string(v.freq_op) << "\n";
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
