// The output configuration: XIOS's iodef.xml, as XIOS users write it (see
// docs/xios_lite.md, "XIOS features", and xios_lite/examples/).
//
//   xios_lite::Config cfg = xios_lite::parse_config("iodef.xml", "atmosphere");
//
// A <simulation> root holds contexts; the context "xios" carries the
// server parameters (<variable_definition>), the others the definitions of
// one model component each (calendar, domains, axes, scalars, grids,
// fields, files). Definitions may live in included files (src=) and inherit
// as XIOS defines it: an element takes its own attributes, then its
// groups', nearest first, then those of the element it references
// (field_ref, domain_ref, axis_ref, scalar_ref); files inherit from their
// file_groups and the file_definition. The older <xios_lite> root with one
// context is read the same way.
//
// parse_config() reads and checks the whole file and throws one
// ep::Error(kArgument) listing every error it found, one per line (at most
// 50), the first as the message; each names the file, the line, the element
// and the attribute, e.g.
//   "xios_lite::parse_config: iodef.xml:14: <field id="tas"> attribute
//    grid_ref: unknown grid 'g9'"
// A definition that failed adds no error to those that refer to it.
// An XIOS feature xios_lite does not implement is refused as such:
//   "... <field id="x"> attribute scale_factor: unsupported XIOS feature (...)"
//
// Some definitions may be left to the model (domain sizes and coordinates,
// axis values, the calendar and its timestep: Client::set_domain_attr and
// friends); the definitions are then completed at close_definition
// (complete_definitions below) and the checks that need those values run
// there, with the same messages.
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

/// Where a definition was read: "iodef.xml:12: <domain id="d">" (the start
/// of every message about it).
using Origin = std::string;

/// A NetCDF attribute from an XIOS <variable> element.
struct Attribute {
  enum class Type { kString, kBool, kInt32, kInt64, kFloat, kDouble };
  std::string name;
  Type type = Type::kString;
  std::string value;  ///< as written (checked against the type when parsed)
  friend bool operator==(const Attribute&, const Attribute&) = default;
};

enum class DomainType { kRectilinear, kCurvilinear };

/// A rectangle of a domain, in global indices.
struct Window {
  int ibegin = 0;
  int ni = 0;
  int jbegin = 0;
  int nj = 0;
  friend bool operator==(const Window&, const Window&) = default;
};

/// A horizontal domain: a global ni_glo x nj_glo grid, rectilinear (1-D
/// longitudes and latitudes) or curvilinear (2-D). Sizes and coordinates
/// may come from the model (0 / empty until the definitions are complete).
struct DomainDef {
  std::string id;
  Origin where;
  std::string name;  ///< prefix of its names in files ("" : lon/lat)
  DomainType type = DomainType::kRectilinear;
  int ni_glo = 0;
  int nj_glo = 0;
  /// Rectilinear: ni_glo longitudes and nj_glo latitudes; curvilinear:
  /// ni_glo x nj_glo of each (i fastest). Empty in the configuration: a
  /// regular grid (cell centres of 0..360 and -90..90, or the legacy
  /// lon_start/lon_end/lat_start/lat_end).
  std::vector<double> lon;
  std::vector<double> lat;
  /// nj_glo x ni_glo entries (i fastest), 1 valid, 0 masked (land, say);
  /// empty: every point valid. Masked points are _FillValue in every record.
  std::vector<std::uint8_t> mask;
  /// Cell bounds (CF): rectilinear 2 values per cell of each coordinate
  /// (2 x ni_glo, 2 x nj_glo); curvilinear nvertex per point (nvertex x
  /// ni_glo x nj_glo, vertex fastest). Empty: none written.
  int nvertex = 0;
  std::vector<double> bounds_lon;
  std::vector<double> bounds_lat;
  /// Cell areas, ni_glo x nj_glo (i fastest): the weights of reduce_domain
  /// averages; written as the variable "area" (CF cell_measures). Empty: none.
  std::vector<double> area;
  std::string long_name;
  /// Derived domain: the window `window` of domain `source` (zoom_domain,
  /// extract_domain, or a plain domain_ref: the whole source).
  int source = -1;
  std::optional<Window> window;  ///< unset with a source: the whole source
  /// Legacy regular-grid ranges (xios_lite's own attributes).
  double lon_start = 0, lon_end = 360, lat_start = -90, lat_end = 90;
  /// How the model's arrays hold every client's block (XIOS's data_dim,
  /// data_ibegin, data_ni, data_jbegin, data_nj, data_i_index,
  /// data_j_index; see DomainAttributes): the configuration's apply to
  /// every client, a client's set_domain_attr overrides them for itself.
  /// Unset: the array is the block.
  std::optional<int> data_dim;
  std::optional<int> data_ibegin;
  std::optional<int> data_ni;
  std::optional<int> data_jbegin;
  std::optional<int> data_nj;
  std::vector<int> data_i_index;
  std::vector<int> data_j_index;
  /// A domain the library makes for the fields of a grid of an axis alone
  /// (`stand_in_for_axis`: that axis; its points are the axis's levels along
  /// i, nj_glo 1) or of a scalar alone (`stand_in_for_scalar`: one point).
  /// Client 0 holds it whole (the other clients' values are not used, as
  /// for XIOS's undistributed axes and scalars); files write the axis's
  /// dimension and coordinate, or no dimension, instead of lon and lat.
  int stand_in_for_axis = -1;
  bool stand_in_for_scalar = false;
  [[nodiscard]] bool stand_in() const { return stand_in_for_axis >= 0 || stand_in_for_scalar; }
};

/// XIOS's reductions (reduce_axis, reduce_domain); kNone: no reduction.
enum class Reduction { kNone, kSum, kAverage, kMin, kMax };
[[nodiscard]] const char* to_string(Reduction r) noexcept;

/// A vertical axis.
struct AxisDef {
  std::string id;
  Origin where;
  std::string name;            ///< variable/dimension name in the file (default: id)
  int n_glo = 0;               ///< 0 until known (set by the model)
  std::vector<double> value;   ///< n_glo values (default 0, 1, ...)
  std::vector<double> bounds;  ///< 2 x n_glo (lower, upper per level) or empty
  std::string unit;
  std::string positive;  ///< "up", "down" or empty
  std::string long_name;
  std::string standard_name;
  /// Derived axis: the levels `index` of axis `source` (zoom_axis,
  /// extract_axis, or a plain axis_ref: every level).
  int source = -1;
  std::vector<int> index;  ///< selected levels of the source (empty: all)
  struct Selection {
    int begin = 0;
    int n = -1;  ///< -1: to the end
    std::vector<int> index;
  };
  std::optional<Selection> selection;  ///< as given, resolved into `index`
  /// An axis made by reduce_domain from a grid's domain: iDir reduces along
  /// i (one value per row: a zonal mean on a lat-lon grid), jDir along j.
  Reduction from_domain = Reduction::kNone;
  bool along_i = true;
  /// An axis made by duplicate_scalar: every level holds the value of the
  /// field's scalar point (a 2-D field written on each of n_glo levels).
  bool from_scalar = false;
  /// An axis made by extract_domain (XIOS's extract_domain_to_axis): the
  /// domain's line at this position, -1: none. direction="iDir" is the row
  /// j = position along i (an axis of ni_glo points, along_i false here:
  /// one value per column), "jDir" the column i = position along j.
  int extract_position = -1;
};

/// A scalar grid member: the result of a reduction (reduce_axis, reduce_domain).
struct ScalarDef {
  std::string id;
  Origin where;
  std::string name;
  std::string long_name;
  std::string standard_name;
  std::string unit;
  Reduction from_axis = Reduction::kNone;
  Reduction from_domain = Reduction::kNone;
  /// extract_axis inside a scalar (XIOS's extract_axis_to_scalar): the
  /// level `extract_level` of the field's axis; -1: none.
  int extract_level = -1;
  /// reduce_domain local="true" without a reduce_scalar after it: one value
  /// per client, which no file can hold (refused where a file uses it).
  bool client_local = false;
};

/// A grid: its members in order (a domain, axes, scalars). A field the
/// model sends lives on a grid of one domain and at most one axis; the
/// grids of a file's variables may also reduce or select, member by member
/// against the field's grid (see OutputShape).
struct GridDef {
  struct Member {
    enum class Kind { kDomain, kAxis, kScalar };
    Kind kind = Kind::kDomain;
    int index = -1;  ///< into Config::domains, axes or scalars
    friend bool operator==(const Member&, const Member&) = default;
  };
  std::string id;
  Origin where;
  std::vector<Member> members;
  int domain = -1;  ///< the first domain member (index into Config::domains), -1: none
  int axis = -1;    ///< the first axis member (index into Config::axes), -1: none
  /// The second axis member (ice categories after ice layers, say), -1:
  /// none. The levels are then axis x axis2, `axis` fastest (the model's
  /// field(ni, nj, n_axis, n_axis2)); the file variable is (time, axis2,
  /// axis, y, x), the grid's members in reverse as XIOS writes them.
  int axis2 = -1;
};

enum class Operation { kInstant, kAverage, kMinimum, kMaximum, kAccumulate, kOnce };
[[nodiscard]] const char* to_string(Operation op) noexcept;
/// CF cell_methods value: "time: mean", "time: point", ...
[[nodiscard]] const char* cell_method(Operation op) noexcept;

/// A field (after inheritance from its groups and its field_ref). Its
/// values come from the model (send_field), from the field it references
/// (field_ref without expr), or from an expression of other fields (expr).
struct FieldDef {
  std::string id;
  Origin where;
  std::string name;  ///< variable name in files (default: id)
  std::string unit;
  std::string standard_name;
  std::string long_name;
  std::string comment;
  int grid = -1;  ///< index into Config::grids
  /// Why the field cannot be evaluated (a grid missing, unknown or broken, a
  /// bad freq_offset): as XIOS, which solves only what files use, an error
  /// where a file uses the field, else a warning and the field is left out.
  std::string unusable;
  Operation operation = Operation::kInstant;
  Frequency freq_op{0, 0, 0, 0, 1};
  Frequency freq_offset;  ///< first sample at this offset from the start (default 0)
  double default_value = 9.96920996838686905e+36;  ///< also the _FillValue (NC_FILL_DOUBLE)
  /// Values equal to default_value (or NaN) are missing: temporal operations skip them.
  bool detect_missing_value = false;
  int prec = 8;  ///< bytes per value in files: 8 (double) or 4 (float)
  /// Target chunk size in MiB (XIOS's chunking_blocksize_target); 0: the file's.
  double chunking_blocksize_target = 0;
  int compression_level = -1;  ///< -1: the file's
  int level = 0;               ///< XIOS output level (files with output_level write level <= it)
  bool enabled = true;
  bool ts_enabled = false;  ///< a time-series file of its own (file timeseries=...)
  /// The field whose values this one takes (field_ref without expr), -1:
  /// none (the model sends it, or expr computes it).
  int source_field = -1;
  /// An XIOS expression of other fields ("@a * @b + 2", "this" is the
  /// field_ref'd field), evaluated on the client at each sampling step,
  /// before the temporal operation. Empty: none.
  std::string expr;
  /// The fields the expression reads, in order of first use (resolved when
  /// the definitions are complete; "this" is the field_ref'd field).
  std::vector<int> expr_operands;
  std::vector<Attribute> attributes;  ///< from <variable> children
  std::optional<double> valid_min;
  std::optional<double> valid_max;
  std::string cell_methods;  ///< extra cell_methods text (cell_methods_mode)
  enum class CellMethodsMode { kOverwrite, kPrefix, kSuffix, kNone };
  CellMethodsMode cell_methods_mode = CellMethodsMode::kOverwrite;
  /// Read mode: the field receives values from a file (recv_field).
  bool read_access = false;
};

enum class FileType { kMultipleFile, kOneFile };

/// What a variable's output grid does to its field's grid, member by
/// member (see docs/xios_lite.md, "Grid transformations"). Without a
/// reduction the records travel as the field's grid and the servers write
/// the selected window and levels; with one, the clients send each sample
/// and the servers reduce it before the temporal operation.
struct OutputShape {
  enum class Horizontal { kDomain, kAlongI, kAlongJ, kGlobal };
  Horizontal horizontal = Horizontal::kDomain;
  int domain = -1;  ///< output domain (kDomain: the field's domain or a zoom of it)
  Window window;    ///< in the field domain's indices (the whole domain when not zoomed)
  Reduction horizontal_op = Reduction::kNone;
  int reduced_axis = -1;  ///< kAlongI / kAlongJ: the output axis made by reduce_domain
  /// kAlongI / kAlongJ made by extract_domain: the one column (kAlongI) or
  /// row (kAlongJ) taken, -1: the whole line is reduced.
  int line = -1;
  int axis = -1;            ///< the output vertical axis, -1: none (2-D field or reduced)
  int axis2 = -1;           ///< the field grid's second axis (outer in the file), -1: none
  std::vector<int> levels;  ///< the field axis's levels written, in order
  Reduction vertical_op = Reduction::kNone;
  [[nodiscard]] bool reduces() const noexcept {
    return horizontal_op != Reduction::kNone || vertical_op != Reduction::kNone;
  }
  /// Needs every row of the domain in one place (a global or along-j reduction).
  [[nodiscard]] bool needs_whole_domain() const noexcept {
    return horizontal == Horizontal::kGlobal || horizontal == Horizontal::kAlongJ;
  }
};

/// One variable of one file: a field, with the attributes the file field
/// gives or inherits (its own, its file field_groups', the field's).
struct OutputVariable {
  int field = -1;  ///< index into Config::fields
  /// The field whose values it takes: `field`, or the end of its field_ref
  /// chain (a field the model sends or an expression computes). Resolved
  /// when the definitions are complete.
  int source = -1;
  Origin where;
  std::string name;
  std::string unit;
  std::string standard_name;
  std::string long_name;
  std::string comment;
  Operation operation = Operation::kInstant;
  Frequency freq_op{0, 0, 0, 0, 1};
  Frequency freq_offset;
  double default_value = 9.96920996838686905e+36;
  bool detect_missing_value = false;
  int prec = 8;
  double chunking_blocksize_target = 0;
  int compression_level = -1;  ///< -1: the file's
  int grid = -1;               ///< the output grid (the field's unless the file field names one)
  OutputShape shape;           ///< resolved when the definitions are complete
  std::vector<Attribute> attributes;
  std::optional<double> valid_min;
  std::optional<double> valid_max;
  std::string cell_methods;
  FieldDef::CellMethodsMode cell_methods_mode = FieldDef::CellMethodsMode::kOverwrite;
};

struct FileDef {
  std::string id;
  Origin where;
  std::string name;         ///< path stem; name_suffix, split dates, ".nc" are appended
  std::string name_suffix;  ///< appended to the name (XIOS name_suffix)
  int min_digits = 0;       ///< zero-padding of the server index of multiple_file names
  std::string description;  ///< title attribute (default: the context id)
  Frequency output_freq;
  Frequency split_freq;           ///< unset: one file for the whole run
  Frequency sync_freq;            ///< unset: synced only when closed
  std::string split_freq_format;  ///< dates of split names (XIOS format, "": YYYYMMDD)
  int compression_level = 0;      ///< 0: no deflate; 1..9: deflate + shuffle
  /// Target chunk size in MiB for its variables (a field's own target wins).
  double chunking_blocksize_target = 20;
  FileType type = FileType::kMultipleFile;
  bool read = false;  ///< mode="read": fields are read from the file (recv_field)
  std::vector<OutputVariable> variables;
  std::vector<Attribute> attributes;  ///< global attributes from <variable> children
};

/// How clients size their send buffers: factor x (largest step of events for
/// one server), clamped to [min_bytes, max_bytes].
struct BufferSettings {
  double factor = 2.0;
  std::size_t min_bytes = std::size_t{64} * 1024;
  std::size_t max_bytes = std::size_t{256} * 1024 * 1024;
};

/// The calendar as the configuration gives it; the model may set what is
/// missing (define_calendar, set_timestep) before close_definition.
struct CalendarSpec {
  Origin where;
  std::optional<CalendarType> type;
  std::string start_date;   ///< "" : not given
  std::string time_origin;  ///< "" : the start date
  std::optional<Frequency> timestep;
  std::optional<std::int64_t> day_length;  ///< user_defined
  std::vector<int> month_lengths;          ///< user_defined
};

struct Config {
  std::string path;  ///< the file it was read from
  std::string context;
  CalendarSpec calendar_spec;
  Calendar calendar;  ///< valid once complete
  std::vector<DomainDef> domains;
  std::vector<AxisDef> axes;
  std::vector<ScalarDef> scalars;
  std::vector<GridDef> grids;
  std::vector<FieldDef> fields;
  std::vector<FileDef> files;
  /// Files in read mode (mode="read"): what recv_field reads, one record
  /// per output period (see docs/xios_lite.md, "Read mode"). Never written.
  std::vector<FileDef> inputs;
  /// A model context's <variable>s (its <variable_definition>), by id:
  /// "$id" in an expression is the value of one.
  std::vector<Attribute> variables;
  BufferSettings buffers;
  double finalise_timeout_s = 60.0;
  bool progress_thread = true;  ///< clients: progress sends while the model computes
  std::string report_json;      ///< empty: no JSON report
  /// Every definition is known and checked (complete_definitions ran).
  bool complete = false;
  /// What XIOS tolerates and xios_lite reports without stopping (a
  /// definition no file uses that refers to something unknown), each
  /// starting with the element's origin.
  std::vector<std::string> warnings;

  /// Index of the field with this id, or -1.
  [[nodiscard]] int find_field(const std::string& id) const;
  /// Index of the domain / axis with this id, or -1.
  [[nodiscard]] int find_domain(const std::string& id) const;
  [[nodiscard]] int find_axis(const std::string& id) const;
  /// Levels of `grid`: its axis's n_glo (times its second axis's), or 1 for a 2-D grid.
  [[nodiscard]] int levels(int grid) const;
  /// The domain of a field's grid.
  [[nodiscard]] int domain_of_field(int field) const;
  /// The input variable (file by file in `inputs`, variable by variable)
  /// that field `field` is read from, or -1.
  [[nodiscard]] int find_input(int field) const;
  /// The input variable `index` (as find_input numbers them).
  [[nodiscard]] const OutputVariable& input_variable(int index) const;
  /// The file of input variable `index`.
  [[nodiscard]] const FileDef& input_file(int index) const;
};

/// Every context of a configuration file (the "xios" context's settings
/// applied to each).
struct Simulation {
  std::string path;
  std::vector<Config> contexts;
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

/// Reads and checks every context of a configuration file (included files
/// are read relative to the directory of the file that names them).
[[nodiscard]] Simulation parse_simulation(const std::string& path);
/// Reads and checks one context: `context`, or with "" the only one besides
/// "xios" (an error when there are several). Completes the definitions
/// when the configuration gives them all.
[[nodiscard]] Config parse_config(const std::string& path, const std::string& context = "");
/// The same from a string (`name` stands for the file in messages,
/// included files are read relative to the working directory).
[[nodiscard]] Config parse_config_string(const std::string& xml, const std::string& name,
                                         const std::string& context = "");

/// Completes the definitions once the model's values are in: computes the
/// calendar, default coordinates, derived domains and axes, output shapes,
/// and runs every check that needs them. Throws ep::Error naming the
/// element (its origin) and what is missing or wrong.
void complete_definitions(Config& cfg);
/// What the model still has to give before close_definition ("" when
/// nothing): "domain 'd': ni_glo, nj_glo; calendar: timestep".
[[nodiscard]] std::string undefined_definitions(const Config& cfg);

}  // namespace xios_lite
