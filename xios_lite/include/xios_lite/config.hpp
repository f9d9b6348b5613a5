// The output configuration: an XML file in the spirit of XIOS's iodef.xml
// (see xios_lite/examples/ and docs/xios_lite.md for the reference).
//
//   xios_lite::Config cfg = xios_lite::parse_config("iodef.xml");
//
// parse_config() reads and checks the whole file. Every error is an
// ep::Error(kArgument) whose message names the file, the line, the element
// and the attribute, e.g.
//   "xios_lite::parse_config: iodef.xml:14: <field id="tas"> attribute
//    grid_ref: unknown grid 'g9'"
// It covers unknown references, bad frequencies, missing grids, duplicate
// ids, unknown attributes and values out of range.
//
// Not collective, no MPI: every process (clients and servers) parses the same
// file itself, so all of them reach the same verdict. Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xios_lite/calendar.hpp"

namespace xios_lite {

/// A horizontal domain: a global ni x nj rectilinear grid.
struct DomainDef {
  std::string id;
  int ni_glo = 0;
  int nj_glo = 0;
  std::vector<double> lon;  ///< ni_glo cell-centre longitudes (given or computed)
  std::vector<double> lat;  ///< nj_glo cell-centre latitudes
  /// nj_glo x ni_glo entries (i fastest), 1 valid, 0 masked (land, say);
  /// empty: every point valid. Masked points are _FillValue in every record.
  std::vector<std::uint8_t> mask;
  /// Cell bounds (CF): lower and upper per cell, 2 x ni_glo / 2 x nj_glo
  /// values; empty: none written.
  std::vector<double> bounds_lon;
  std::vector<double> bounds_lat;
};

/// A vertical axis.
struct AxisDef {
  std::string id;
  std::string name;  ///< variable/dimension name in the file (default: id)
  int n_glo = 0;
  std::vector<double> value;
  std::string units;
  std::string positive;  ///< "up", "down" or empty
  std::string long_name;
};

struct GridDef {
  std::string id;
  int domain = -1;  ///< index into Config::domains
  int axis = -1;    ///< index into Config::axes, -1: 2-D grid
};

enum class Operation { kInstant, kAverage, kMinimum, kMaximum, kAccumulate, kOnce };
[[nodiscard]] const char* to_string(Operation op) noexcept;
/// CF cell_methods value: "time: mean", "time: point", ...
[[nodiscard]] const char* cell_method(Operation op) noexcept;

/// A field the model sends (after inheritance from its field groups).
struct FieldDef {
  std::string id;
  std::string name;  ///< variable name in files (default: id)
  std::string units;
  std::string standard_name;
  std::string long_name;
  int grid = -1;  ///< index into Config::grids
  Operation operation = Operation::kInstant;
  Frequency freq_op{1, Frequency::Unit::kTimestep};
  double default_value = 9.96920996838686905e+36;  ///< also the _FillValue (NC_FILL_DOUBLE)
  /// Values equal to default_value (or NaN) are missing: temporal operations skip them.
  bool detect_missing_value = false;
  int prec = 8;  ///< bytes per value in files: 8 (double) or 4 (float)
  /// Target chunk size in MiB (XIOS's chunking_blocksize_target); 0: the file's.
  double chunking_blocksize_target = 0;
};

enum class FileType { kMultipleFile, kOneFile };

/// One variable of one file: a field, possibly with its own name/operation.
struct OutputVariable {
  int field = -1;  ///< index into Config::fields
  std::string name;
  Operation operation = Operation::kInstant;
  Frequency freq_op{1, Frequency::Unit::kTimestep};
};

struct FileDef {
  std::string id;
  std::string name;         ///< path stem; ".nc" and suffixes are appended
  std::string description;  ///< title attribute (default: the context id)
  Frequency output_freq;
  Frequency split_freq;       ///< unset: one file for the whole run
  Frequency sync_freq;        ///< unset: synced only when closed
  int compression_level = 0;  ///< 0: no deflate; 1..9: deflate + shuffle
  /// Target chunk size in MiB for its variables (a field's own target wins).
  double chunking_blocksize_target = 20;
  FileType type = FileType::kMultipleFile;
  std::vector<OutputVariable> variables;
};

/// How clients size their send buffers: factor x (largest step of events for
/// one server), clamped to [min_bytes, max_bytes].
struct BufferSettings {
  double factor = 2.0;
  std::size_t min_bytes = std::size_t{64} * 1024;
  std::size_t max_bytes = std::size_t{256} * 1024 * 1024;
};

struct Config {
  std::string path;  ///< the file it was read from
  std::string context;
  Calendar calendar;
  std::vector<DomainDef> domains;
  std::vector<AxisDef> axes;
  std::vector<GridDef> grids;
  std::vector<FieldDef> fields;
  std::vector<FileDef> files;
  BufferSettings buffers;
  double finalise_timeout_s = 60.0;
  bool progress_thread = true;  ///< clients: progress sends while the model computes
  std::string report_json;      ///< empty: no JSON report

  /// Index of the field with this id, or -1.
  [[nodiscard]] int find_field(const std::string& id) const;
  /// Levels of `grid`: its axis's n_glo, or 1 for a 2-D grid.
  [[nodiscard]] int levels(int grid) const;
};

/// The parsed definitions as text, one line per element ("domain dom ni_glo
/// 8 ..."), arrays by a digest of their values: what clients and servers
/// must agree on (calendar, domains, axes, grids, fields, files), without
/// the options a process may set for itself (buffers, timeout, report).
[[nodiscard]] std::string definition_text(const Config& cfg);
/// FNV-1a 64-bit digest of `text`.
[[nodiscard]] std::uint64_t digest_of(std::string_view text) noexcept;
/// The first line where two definition texts differ, as "`a line`" vs
/// "`b line`" ("" when equal).
[[nodiscard]] std::string first_difference(const std::string& a, const std::string& b);

/// Reads and checks the configuration file. Throws ep::Error (see above).
[[nodiscard]] Config parse_config(const std::string& path);
/// The same from a string (`name` stands for the file in messages).
[[nodiscard]] Config parse_config_string(const std::string& xml, const std::string& name);

}  // namespace xios_lite
