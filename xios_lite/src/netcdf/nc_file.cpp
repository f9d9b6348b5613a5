// CF-1.8 NetCDF-4 files: dimensions and coordinates per domain and axis
// (with cell bounds when given), a time axis in "seconds since <start>" with
// the calendar, time_bounds and cell_methods, _FillValue and missing_value,
// double or float variables (prec), deflate+shuffle and chunks of a target
// size (chunking.hpp).
#include "nc_file.hpp"

#include <netcdf.h>
#include <netcdf_par.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <set>

#include "chunking.hpp"
#include "common/enum_names.hpp"
#include "domain_names.hpp"
#include "ep/error.hpp"

namespace xios_lite::netcdf {

void NcFile::check(int rc, const char* call, const std::string& var) const {
  if (rc == NC_NOERR) {
    return;
  }
  std::string detail = "file '" + path_ + "'";
  if (!var.empty()) {
    detail += ", variable '" + var + "'";
  }
  detail += ": " + std::string(nc_strerror(rc));
  throw ep::Error(ep::ErrorKind::kIo, call, ep_rank_, detail);
}

namespace {

// The CF cell method of a reduction over a spatial dimension (kNone: never
// asked for, as only reduced dimensions are named).
constexpr auto kCellMethodOfReduction =
    common::enum_names<Reduction>({{Reduction::kNone, "mean"},
                                   {Reduction::kSum, "sum"},
                                   {Reduction::kAverage, "mean"},
                                   {Reduction::kMin, "minimum"},
                                   {Reduction::kMax, "maximum"}});

// The cell_methods of a variable: the temporal operation, the reductions of
// its grid, and the configuration's own text by its mode.
std::string cell_methods_of(const Config& cfg, const OutputVariable& v) {
  std::string generated;
  const auto method = [](Reduction r) {
    return common::enum_name(kCellMethodOfReduction, r, "mean");
  };
  const OutputShape& s = v.shape;
  if (s.line >= 0) {
    // extract_domain: one line of the domain, no method over it
  } else if (s.horizontal == OutputShape::Horizontal::kGlobal) {
    generated += std::string("area: ") + method(s.horizontal_op) + " ";
  } else if (s.horizontal == OutputShape::Horizontal::kAlongI) {
    generated += std::string("longitude: ") + method(s.horizontal_op) + " ";
  } else if (s.horizontal == OutputShape::Horizontal::kAlongJ) {
    generated += std::string("latitude: ") + method(s.horizontal_op) + " ";
  }
  if (s.vertical_op != Reduction::kNone) {
    const int field_axis =
        cfg.grids[static_cast<std::size_t>(cfg.fields[static_cast<std::size_t>(v.source)].grid)]
            .axis;
    generated +=
        cfg.axes[static_cast<std::size_t>(field_axis)].name + ": " + method(s.vertical_op) + " ";
  }
  generated += cell_method(v.operation);
  switch (v.cell_methods_mode) {
    case FieldDef::CellMethodsMode::kOverwrite:
      return v.cell_methods.empty() ? generated : v.cell_methods;
    case FieldDef::CellMethodsMode::kPrefix:
      return v.cell_methods.empty() ? generated : v.cell_methods + " " + generated;
    case FieldDef::CellMethodsMode::kSuffix:
      return v.cell_methods.empty() ? generated : generated + " " + v.cell_methods;
    case FieldDef::CellMethodsMode::kNone:
      return "";
  }
  return generated;
}

}  // namespace

void NcFile::put_attributes(int varid, const std::vector<Attribute>& attributes,
                            const std::string& var) {
  for (const Attribute& a : attributes) {
    const char* name = a.name.c_str();
    switch (a.type) {
      case Attribute::Type::kString:
        check(nc_put_att_text(ncid_, varid, name, a.value.size(), a.value.c_str()),
              "nc_put_att_text", var);
        break;
      case Attribute::Type::kBool: {
        std::string lower = a.value;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const signed char v = lower == "true" || lower == ".true." ? 1 : 0;
        check(nc_put_att_schar(ncid_, varid, name, NC_BYTE, 1, &v), "nc_put_att_schar", var);
        break;
      }
      case Attribute::Type::kInt32: {
        const int v = static_cast<int>(std::strtol(a.value.c_str(), nullptr, 10));
        check(nc_put_att_int(ncid_, varid, name, NC_INT, 1, &v), "nc_put_att_int", var);
        break;
      }
      case Attribute::Type::kInt64: {
        const long long v = std::strtoll(a.value.c_str(), nullptr, 10);
        check(nc_put_att_longlong(ncid_, varid, name, NC_INT64, 1, &v), "nc_put_att_longlong", var);
        break;
      }
      case Attribute::Type::kFloat: {
        const float v = std::strtof(a.value.c_str(), nullptr);
        check(nc_put_att_float(ncid_, varid, name, NC_FLOAT, 1, &v), "nc_put_att_float", var);
        break;
      }
      case Attribute::Type::kDouble: {
        const double v = std::strtod(a.value.c_str(), nullptr);
        check(nc_put_att_double(ncid_, varid, name, NC_DOUBLE, 1, &v), "nc_put_att_double", var);
        break;
      }
    }
  }
}

// Writes `values` (the variable's whole extent in this file) once, leaving
// define mode and coming back to it.
void NcFile::put_coordinate(int varid, const std::vector<std::size_t>& count, const double* values,
                            const std::string& var) {
  check(nc_enddef(ncid_), "nc_enddef", var);
  if (parallel_) {
    check(nc_var_par_access(ncid_, varid, NC_COLLECTIVE), "nc_var_par_access", var);
  }
  const std::vector<std::size_t> start(count.size(), 0);
  check(nc_put_vara_double(ncid_, varid, start.data(), count.data(), values), "nc_put_vara_double",
        var);
  check(nc_redef(ncid_), "nc_redef", var);
}

// What the definition of a file has made so far, for the steps after it.
struct NcFile::Dimensions {
  struct Domain {
    int j = -1;
    int i = -1;
    std::string coordinates;  // the data variables' coordinates attribute (curvilinear)
    std::string area_name;    // its cell area variable ("" : none)
  };
  int time = -1;
  int nbounds = -1;  // axis_nbounds, shared by time_bounds and the axes' bounds
  int nvertex = -1;  // the cell vertices of the domains' bounds
  int nvertex_size = 0;
  std::map<int, Domain> domains;     // output domain -> its dimensions
  std::map<int, int> reduced_axes;   // reduced axis -> dimension
  std::map<int, int> vertical_axes;  // vertical axis -> dimension
};

NcFile::NcFile(const std::string& path, const Config& cfg, int file, std::vector<RowRange> rows,
               MPI_Comm comm, int ep_rank)
    : path_(path),
      cfg_(&cfg),
      file_(file),
      rows_(std::move(rows)),
      parallel_(comm != MPI_COMM_NULL),
      ep_rank_(ep_rank) {
  const FileDef& fd = cfg.files.at(static_cast<std::size_t>(file));
  for (const OutputVariable& v : fd.variables) {
    layouts_.push_back(layout_of(cfg, v));
  }
  create(comm);
  try {
    put_global_attributes(fd);
    Dimensions dims;
    define_time(fd, dims);
    define_coordinates(dims);
    for (std::size_t p = 0; p < fd.variables.size(); ++p) {
      // A variable without rows here is written by the other processes.
      var_ids_.push_back(rows_[p].nj == 0 ? -1 : define_variable(fd, p, dims));
    }
    end_definitions();
  } catch (...) {
    // No destructor runs for a constructor that throws: the handle is closed here.
    nc_close(ncid_);
    ncid_ = -1;
    throw;
  }
}

namespace {

// Why the operating system would refuse to create `path`, as strerror says
// it ("" when it finds no reason): NetCDF reports every failure of HDF5's
// file creation alike ("Permission denied" for a missing directory too).
std::string creation_cause(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    return std::string(std::strerror(errno)) + " (directory '" + dir + "')";
  }
  if (!S_ISDIR(st.st_mode)) {
    return std::string(std::strerror(ENOTDIR)) + " ('" + dir + "')";
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return std::string(std::strerror(errno)) + " (directory '" + dir + "')";
  }
  if (access(path.c_str(), F_OK) == 0 && access(path.c_str(), W_OK) != 0) {
    return std::string(std::strerror(errno)) + " (the existing file)";
  }
  return "";
}

}  // namespace

void NcFile::create(MPI_Comm comm) {
  const int rc =
      parallel_ ? nc_create_par(path_.c_str(), NC_NETCDF4 | NC_CLOBBER, comm, MPI_INFO_NULL, &ncid_)
                : nc_create(path_.c_str(), NC_NETCDF4 | NC_CLOBBER, &ncid_);
  if (rc != NC_NOERR) {
    ncid_ = -1;
    const std::string cause = creation_cause(path_);
    throw ep::Error(ep::ErrorKind::kIo, parallel_ ? "nc_create_par" : "nc_create", ep_rank_,
                    "file '" + path_ + "': " +
                        (cause.empty() ? std::string(nc_strerror(rc))
                                       : cause + " (NetCDF: " + nc_strerror(rc) + ")"));
  }
}

void NcFile::put_text(int varid, const char* name, const std::string& value,
                      const std::string& var) {
  check(nc_put_att_text(ncid_, varid, name, value.size(), value.c_str()), "nc_put_att_text",
        var.empty() ? std::string(name) : var);
}

// CF's global attributes, then the file's own.
void NcFile::put_global_attributes(const FileDef& fd) {
  put_text(NC_GLOBAL, "Conventions", "CF-1.8", "");
  put_text(NC_GLOBAL, "title", fd.description, "");
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  put_text(NC_GLOBAL, "history", std::string(stamp) + " created by xios_lite", "");
  put_text(NC_GLOBAL, "source", "xios_lite context " + cfg_->context, "");
  put_attributes(NC_GLOBAL, fd.attributes, "");
}

// The unlimited time axis with its calendar, when a variable has records,
// and time_bounds when one of them is over a period (not instant, not once).
void NcFile::define_time(const FileDef& fd, Dimensions& dims) {
  bool has_time = false;
  bool has_bounds = false;
  for (const auto& v : fd.variables) {
    has_time = has_time || v.operation != Operation::kOnce;
    has_bounds =
        has_bounds || (v.operation != Operation::kOnce && v.operation != Operation::kInstant);
  }
  if (!has_time) {
    return;
  }
  const Calendar& cal = cfg_->calendar;
  check(nc_def_dim(ncid_, "time", NC_UNLIMITED, &dims.time), "nc_def_dim", "time");
  check(nc_def_var(ncid_, "time", NC_DOUBLE, 1, &dims.time, &time_var_), "nc_def_var", "time");
  put_text(time_var_, "standard_name", "time", "time");
  put_text(time_var_, "axis", "T", "time");
  put_text(time_var_, "units", "seconds since " + format_date(cal.time_origin()), "time");
  put_text(time_var_, "calendar", std::string(to_string(cal.type())), "time");
  if (cal.type() == CalendarType::kUserDefined) {
    const std::vector<int>& months = cal.user().month_lengths;
    check(nc_put_att_int(ncid_, time_var_, "month_lengths", NC_INT, months.size(), months.data()),
          "nc_put_att_int", "time");
    const long long day = cal.day_length();
    check(nc_put_att_longlong(ncid_, time_var_, "day_length", NC_INT64, 1, &day),
          "nc_put_att_longlong", "time");
  }
  if (has_bounds) {
    put_text(time_var_, "bounds", "time_bounds", "time");
    check(nc_def_dim(ncid_, "axis_nbounds", 2, &dims.nbounds), "nc_def_dim", "axis_nbounds");
    const int bounds_dims[2] = {dims.time, dims.nbounds};
    check(nc_def_var(ncid_, "time_bounds", NC_DOUBLE, 2, bounds_dims, &bounds_var_), "nc_def_var",
          "time_bounds");
  }
  time_offset_ = static_cast<double>(cal.origin_offset());
}

// The dimensions and coordinate variables the data variables stand on, in
// the order the variables first need them: their domain, the axis their
// grid was reduced to, their vertical axis.
void NcFile::define_coordinates(Dimensions& dims) {
  // Output domains of the file: several sets of coordinates get their
  // domain's name as a suffix, twins of one name share one set
  // (domain_names.hpp). Counted whether or not this process has rows of
  // them, so that every part of a multiple_file set names its dimensions
  // alike.
  std::set<int> domains;
  for (std::size_t p = 0; p < layouts_.size(); ++p) {
    if (layouts_[p].horizontal == VariableLayout::Horizontal::kDomain &&
        !cfg_->domains[static_cast<std::size_t>(layouts_[p].domain)].stand_in()) {
      domains.insert(layouts_[p].domain);
    }
  }
  const std::map<int, int> owners = coordinate_owners(*cfg_, domains);
  for (std::size_t p = 0; p < layouts_.size(); ++p) {
    const VariableLayout& l = layouts_[p];
    const RowRange r = rows_[p];
    if (r.nj == 0) {
      continue;
    }
    if (l.horizontal == VariableLayout::Horizontal::kDomain && dims.domains.count(l.domain) == 0) {
      const DomainDef& dom = cfg_->domains[static_cast<std::size_t>(l.domain)];
      if (dom.stand_in()) {
        // An axis alone: its own dimension and coordinate; a scalar: none.
        Dimensions::Domain& out = dims.domains[l.domain];
        const int axis = dom.stand_in_for_axis;
        if (axis >= 0 && dims.vertical_axes.count(axis) == 0) {
          dims.vertical_axes[axis] = define_vertical_axis(axis, dims);
        }
        out.i = axis >= 0 ? dims.vertical_axes.at(axis) : -1;
      } else {
        const int owner = owners.at(l.domain);
        if (dims.domains.count(owner) == 0) {
          define_domain(owner, r, coordinate_sets(owners) > 1, dims);
        }
        dims.domains[l.domain] = dims.domains.at(owner);
      }
    }
    if (l.horizontal == VariableLayout::Horizontal::kAxis &&
        dims.reduced_axes.count(l.reduced_axis) == 0) {
      dims.reduced_axes[l.reduced_axis] = define_reduced_axis(l.reduced_axis, r);
    }
    if (l.vertical_axis >= 0 && dims.vertical_axes.count(l.vertical_axis) == 0) {
      dims.vertical_axes[l.vertical_axis] = define_vertical_axis(l.vertical_axis, dims);
    }
    if (l.outer_axis >= 0 && dims.vertical_axes.count(l.outer_axis) == 0) {
      dims.vertical_axes[l.outer_axis] = define_vertical_axis(l.outer_axis, dims);
    }
  }
}

// The dimension of `n` cell vertices, made by the first domain with bounds;
// every domain of a file must have as many.
int NcFile::vertex_dim(Dimensions& dims, int n) {
  if (dims.nvertex < 0) {
    check(nc_def_dim(ncid_, "nvertex", static_cast<size_t>(n), &dims.nvertex), "nc_def_dim",
          "nvertex");
    dims.nvertex_size = n;
  } else if (n != dims.nvertex_size) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::NcFile", ep_rank_,
                    "file '" + path_ + "': domains with different numbers of cell vertices");
  }
  return dims.nvertex;
}

// The axis a domain was reduced to (rows `r` of it): its dimension and values.
int NcFile::define_reduced_axis(int axis, RowRange r) {
  const AxisDef& ax = cfg_->axes[static_cast<std::size_t>(axis)];
  int dim = -1;
  int var = -1;
  check(nc_def_dim(ncid_, ax.name.c_str(), static_cast<size_t>(r.nj), &dim), "nc_def_dim", ax.name);
  check(nc_def_var(ncid_, ax.name.c_str(), NC_DOUBLE, 1, &dim, &var), "nc_def_var", ax.name);
  if (!ax.unit.empty()) put_text(var, "units", ax.unit, ax.name);
  if (!ax.standard_name.empty()) put_text(var, "standard_name", ax.standard_name, ax.name);
  put_text(var, "long_name", ax.long_name.empty() ? ax.name : ax.long_name, ax.name);
  put_coordinate(var, {static_cast<std::size_t>(r.nj)},
                 ax.value.data() + static_cast<std::size_t>(r.jbegin), ax.name);
  return dim;
}

// A vertical axis: its dimension, values and, when given, cell bounds.
int NcFile::define_vertical_axis(int axis, Dimensions& dims) {
  const AxisDef& ax = cfg_->axes[static_cast<std::size_t>(axis)];
  int dim = -1;
  int var = -1;
  check(nc_def_dim(ncid_, ax.name.c_str(), static_cast<size_t>(ax.n_glo), &dim), "nc_def_dim",
        ax.name);
  check(nc_def_var(ncid_, ax.name.c_str(), NC_DOUBLE, 1, &dim, &var), "nc_def_var", ax.name);
  put_text(var, "axis", "Z", ax.name);
  if (!ax.unit.empty()) put_text(var, "units", ax.unit, ax.name);
  if (!ax.positive.empty()) put_text(var, "positive", ax.positive, ax.name);
  if (!ax.standard_name.empty()) put_text(var, "standard_name", ax.standard_name, ax.name);
  put_text(var, "long_name", ax.long_name.empty() ? ax.name : ax.long_name, ax.name);
  if (!ax.bounds.empty()) {
    const std::string bname = ax.name + "_bounds";
    if (dims.nbounds < 0) {
      check(nc_def_dim(ncid_, "axis_nbounds", 2, &dims.nbounds), "nc_def_dim", "axis_nbounds");
    }
    const int bounds_dims[2] = {dim, dims.nbounds};
    int bvar = -1;
    check(nc_def_var(ncid_, bname.c_str(), NC_DOUBLE, 2, bounds_dims, &bvar), "nc_def_var", bname);
    put_text(var, "bounds", bname, ax.name);
    put_coordinate(bvar, {static_cast<std::size_t>(ax.n_glo), 2}, ax.bounds.data(), bname);
  }
  put_coordinate(var, {static_cast<std::size_t>(ax.n_glo)}, ax.value.data(), ax.name);
  return dim;
}

// Data variable `p` of the file: its dimensions, chunks and compression,
// then its attributes. Returns its id.
int NcFile::define_variable(const FileDef& fd, std::size_t p, const Dimensions& dims) {
  const OutputVariable& v = fd.variables[p];
  const VariableLayout& l = layouts_[p];
  const RowRange r = rows_[p];
  const double target_mib =
      v.chunking_blocksize_target > 0 ? v.chunking_blocksize_target : fd.chunking_blocksize_target;
  const std::array<std::uint64_t, 3> box =
      chunk_extents({static_cast<std::uint64_t>(std::max(l.levels, 1)),
                     static_cast<std::uint64_t>(r.nj), static_cast<std::uint64_t>(l.columns)},
                    static_cast<std::uint64_t>(v.prec), target_mib * 1024.0 * 1024.0);
  std::vector<int> var_dims;
  std::vector<size_t> chunks;
  if (v.operation != Operation::kOnce) {
    var_dims.push_back(dims.time);
    chunks.push_back(1);
  }
  if (l.levels > 0 && l.outer_axis >= 0) {
    // Two axes: the chunk's levels are whole inner axes when it holds
    // several of them, else part of one.
    const auto inner = static_cast<size_t>(
        std::max(1, cfg_->axes[static_cast<std::size_t>(l.vertical_axis)].n_glo));
    const auto levels = static_cast<size_t>(box[0]);
    var_dims.push_back(dims.vertical_axes.at(l.outer_axis));
    var_dims.push_back(dims.vertical_axes.at(l.vertical_axis));
    chunks.push_back(levels >= inner ? levels / inner : 1);
    chunks.push_back(levels >= inner ? inner : levels);
  } else if (l.levels > 0) {
    var_dims.push_back(dims.vertical_axes.at(l.vertical_axis));
    chunks.push_back(static_cast<size_t>(box[0]));
  }
  if (l.horizontal == VariableLayout::Horizontal::kDomain &&
      cfg_->domains[static_cast<std::size_t>(l.domain)].stand_in()) {
    if (dims.domains.at(l.domain).i >= 0) {
      var_dims.push_back(dims.domains.at(l.domain).i);
      chunks.push_back(static_cast<size_t>(box[2]));
    }
  } else if (l.horizontal == VariableLayout::Horizontal::kDomain) {
    var_dims.push_back(dims.domains.at(l.domain).j);
    var_dims.push_back(dims.domains.at(l.domain).i);
    chunks.push_back(static_cast<size_t>(box[1]));
    chunks.push_back(static_cast<size_t>(box[2]));
  } else if (l.horizontal == VariableLayout::Horizontal::kAxis) {
    var_dims.push_back(dims.reduced_axes.at(l.reduced_axis));
    chunks.push_back(static_cast<size_t>(box[1]));
  }
  const nc_type type = v.prec == 4 ? NC_FLOAT : NC_DOUBLE;
  int id = -1;
  check(nc_def_var(ncid_, v.name.c_str(), type, static_cast<int>(var_dims.size()), var_dims.data(),
                   &id),
        "nc_def_var", v.name);
  if (!var_dims.empty()) {
    check(nc_def_var_chunking(ncid_, id, NC_CHUNKED, chunks.data()), "nc_def_var_chunking", v.name);
  }
  const int level = v.compression_level >= 0 ? v.compression_level : fd.compression_level;
  if (level > 0 && !var_dims.empty()) {
    check(nc_def_var_deflate(ncid_, id, 1, 1, level), "nc_def_var_deflate", v.name);
  }
  put_variable_attributes(id, type, v, l, dims);
  return id;
}

// The fill value and CF attributes of data variable `id` (of type `type`),
// then the configuration's own.
void NcFile::put_variable_attributes(int id, int type, const OutputVariable& v,
                                     const VariableLayout& l, const Dimensions& dims) {
  // CF: missing points hold _FillValue; missing_value says the same to
  // readers that look for it. Both in the variable's type, as are
  // valid_min and valid_max.
  const auto put_typed = [&](const char* name, double value) {
    if (type == NC_FLOAT) {
      const auto f = static_cast<float>(value);
      check(nc_put_att_float(ncid_, id, name, NC_FLOAT, 1, &f), "nc_put_att_float", v.name);
    } else {
      check(nc_put_att_double(ncid_, id, name, NC_DOUBLE, 1, &value), "nc_put_att_double", v.name);
    }
  };
  if (type == NC_FLOAT) {
    const auto fill = static_cast<float>(v.default_value);
    check(nc_def_var_fill(ncid_, id, 0, &fill), "nc_def_var_fill", v.name);
  } else {
    check(nc_def_var_fill(ncid_, id, 0, &v.default_value), "nc_def_var_fill", v.name);
  }
  put_typed("missing_value", v.default_value);
  if (v.valid_min) put_typed("valid_min", *v.valid_min);
  if (v.valid_max) put_typed("valid_max", *v.valid_max);
  if (!v.standard_name.empty()) {
    put_text(id, "standard_name", v.standard_name, v.name);
  }
  put_text(id, "long_name", v.long_name, v.name);
  if (!v.unit.empty()) {
    put_text(id, "units", v.unit, v.name);
  }
  if (!v.comment.empty()) {
    put_text(id, "comment", v.comment, v.name);
  }
  if (v.operation != Operation::kOnce) {
    const std::string methods = cell_methods_of(*cfg_, v);
    if (!methods.empty()) {
      put_text(id, "cell_methods", methods, v.name);
    }
  }
  put_text(id, "online_operation", to_string(v.operation), v.name);
  if (l.horizontal == VariableLayout::Horizontal::kDomain) {
    const Dimensions::Domain& dd = dims.domains.at(l.domain);
    if (!dd.coordinates.empty()) put_text(id, "coordinates", dd.coordinates, v.name);
    if (!dd.area_name.empty()) put_text(id, "cell_measures", "area: " + dd.area_name, v.name);
  }
  put_attributes(id, v.attributes, v.name);
}

// Leaves define mode; a parallel file's variables are then written collectively.
void NcFile::end_definitions() {
  check(nc_enddef(ncid_), "nc_enddef", "");
  if (!parallel_) {
    return;
  }
  // Records extend the unlimited dimension, which parallel HDF5 only allows collectively.
  for (int id : var_ids_) {
    if (id >= 0) {
      check(nc_var_par_access(ncid_, id, NC_COLLECTIVE), "nc_var_par_access", "");
    }
  }
  if (time_var_ >= 0) {
    check(nc_var_par_access(ncid_, time_var_, NC_COLLECTIVE), "nc_var_par_access", "time");
  }
  if (bounds_var_ >= 0) {
    check(nc_var_par_access(ncid_, bounds_var_, NC_COLLECTIVE), "nc_var_par_access", "time_bounds");
  }
}

// The dimensions and coordinates of output domain `d`, rows `r` of it.
void NcFile::define_domain(int d, RowRange r, bool suffixed, Dimensions& dims) {
  Dimensions::Domain& out = dims.domains[d];
  int& j_dim = out.j;
  int& i_dim = out.i;
  const DomainDef& dom = cfg_->domains[static_cast<std::size_t>(d)];
  const std::string suffix = suffixed ? "_" + output_name(*cfg_, d) : "";
  const bool curvilinear = dom.type == DomainType::kCurvilinear;
  const std::string lat = "lat" + suffix;
  const std::string lon = "lon" + suffix;
  const std::string jname = curvilinear ? "y" + suffix : lat;
  const std::string iname = curvilinear ? "x" + suffix : lon;
  const auto ni = static_cast<std::size_t>(dom.ni_glo);
  const auto nj = static_cast<std::size_t>(r.nj);
  const auto j0 = static_cast<std::size_t>(r.jbegin);
  check(nc_def_dim(ncid_, jname.c_str(), nj, &j_dim), "nc_def_dim", jname);
  check(nc_def_dim(ncid_, iname.c_str(), ni, &i_dim), "nc_def_dim", iname);
  int lat_var = -1;
  int lon_var = -1;
  if (curvilinear) {
    const int dims2[2] = {j_dim, i_dim};
    check(nc_def_var(ncid_, lat.c_str(), NC_DOUBLE, 2, dims2, &lat_var), "nc_def_var", lat);
    check(nc_def_var(ncid_, lon.c_str(), NC_DOUBLE, 2, dims2, &lon_var), "nc_def_var", lon);
    out.coordinates = lat + " " + lon;
  } else {
    check(nc_def_var(ncid_, lat.c_str(), NC_DOUBLE, 1, &j_dim, &lat_var), "nc_def_var", lat);
    check(nc_def_var(ncid_, lon.c_str(), NC_DOUBLE, 1, &i_dim, &lon_var), "nc_def_var", lon);
    put_text(lat_var, "axis", "Y", lat);
    put_text(lon_var, "axis", "X", lon);
  }
  put_text(lat_var, "units", "degrees_north", lat);
  put_text(lat_var, "standard_name", "latitude", lat);
  put_text(lat_var, "long_name", "latitude", lat);
  put_text(lon_var, "units", "degrees_east", lon);
  put_text(lon_var, "standard_name", "longitude", lon);
  put_text(lon_var, "long_name", "longitude", lon);
  const int first = r.jbegin;
  check(
      nc_put_att_int(ncid_, NC_GLOBAL, ("DOMAIN_" + dom.id + "_jbegin").c_str(), NC_INT, 1, &first),
      "nc_put_att_int", lat);
  // CF cell bounds: bounds_lat(lat, nvertex) / bounds_lat(y, x, nvertex).
  if (curvilinear) {
    const std::size_t row = ni;
    put_coordinate(lat_var, {nj, ni}, dom.lat.data() + j0 * row, lat);
    put_coordinate(lon_var, {nj, ni}, dom.lon.data() + j0 * row, lon);
    const auto nv = static_cast<std::size_t>(dom.nvertex);
    if (!dom.bounds_lat.empty()) {
      const int id = define_bounds(lat, lat_var, {j_dim, i_dim, vertex_dim(dims, dom.nvertex)});
      put_coordinate(id, {nj, ni, nv}, dom.bounds_lat.data() + j0 * row * nv, "bounds_" + lat);
    }
    if (!dom.bounds_lon.empty()) {
      const int id = define_bounds(lon, lon_var, {j_dim, i_dim, vertex_dim(dims, dom.nvertex)});
      put_coordinate(id, {nj, ni, nv}, dom.bounds_lon.data() + j0 * row * nv, "bounds_" + lon);
    }
  } else {
    put_coordinate(lat_var, {nj}, dom.lat.data() + j0, lat);
    put_coordinate(lon_var, {ni}, dom.lon.data(), lon);
    if (!dom.bounds_lat.empty()) {
      const int id = define_bounds(lat, lat_var, {j_dim, vertex_dim(dims, 2)});
      put_coordinate(id, {nj, 2}, dom.bounds_lat.data() + 2 * j0, "bounds_" + lat);
    }
    if (!dom.bounds_lon.empty()) {
      const int id = define_bounds(lon, lon_var, {i_dim, vertex_dim(dims, 2)});
      put_coordinate(id, {ni, 2}, dom.bounds_lon.data(), "bounds_" + lon);
    }
  }
  if (!dom.area.empty()) {
    out.area_name = define_cell_area(dom, r, "area" + suffix, j_dim, i_dim);
  }
}

// The cell bounds variable of coordinate `coord` (variable `coord_var`).
int NcFile::define_bounds(const std::string& coord, int coord_var,
                          const std::vector<int>& bounds_dims) {
  const std::string name = "bounds_" + coord;
  int id = -1;
  check(nc_def_var(ncid_, name.c_str(), NC_DOUBLE, static_cast<int>(bounds_dims.size()),
                   bounds_dims.data(), &id),
        "nc_def_var", name);
  put_text(coord_var, "bounds", name, coord);
  return id;
}

// The cell areas of domain `dom`, rows `r`, as variable `name`; returns the name.
std::string NcFile::define_cell_area(const DomainDef& dom, RowRange r, const std::string& name,
                                     int j_dim, int i_dim) {
  const auto ni = static_cast<std::size_t>(dom.ni_glo);
  const int area_dims[2] = {j_dim, i_dim};
  int id = -1;
  check(nc_def_var(ncid_, name.c_str(), NC_DOUBLE, 2, area_dims, &id), "nc_def_var", name);
  put_text(id, "standard_name", "cell_area", name);
  put_text(id, "units", "m2", name);
  put_coordinate(id, {static_cast<std::size_t>(r.nj), ni},
                 dom.area.data() + static_cast<std::size_t>(r.jbegin) * ni, name);
  return name;
}

NcFile::~NcFile() {
  if (ncid_ >= 0) {
    nc_close(ncid_);  // errors were reported by an explicit close(); nothing to do here
  }
}

void NcFile::write_time(int record, double time, double lo, double hi) {
  if (time_var_ < 0) {
    return;
  }
  const size_t start = static_cast<size_t>(record);
  const size_t one = 1;
  const double t = time + time_offset_;
  check(nc_put_vara_double(ncid_, time_var_, &start, &one, &t), "nc_put_vara_double", "time");
  if (bounds_var_ >= 0) {
    const size_t bstart[2] = {start, 0};
    const size_t bcount[2] = {1, 2};
    const double b[2] = {lo + time_offset_, hi + time_offset_};
    check(nc_put_vara_double(ncid_, bounds_var_, bstart, bcount, b), "nc_put_vara_double",
          "time_bounds");
  }
}

void NcFile::write_block(int var, int record, int jbegin, int nj, int ibegin, int ni, int nk,
                         const double* data) {
  const FileDef& fd = cfg_->files[static_cast<std::size_t>(file_)];
  const OutputVariable& v = fd.variables.at(static_cast<std::size_t>(var));
  if (var_ids_.at(static_cast<std::size_t>(var)) < 0) {
    return;  // not held by this process's file
  }
  const VariableLayout& l = layouts_[static_cast<std::size_t>(var)];
  const RowRange rows = rows_[static_cast<std::size_t>(var)];
  std::vector<size_t> start;
  std::vector<size_t> count;
  const bool empty = nj == 0 || ni == 0;
  if (v.operation != Operation::kOnce) {
    start.push_back(static_cast<size_t>(record));
    count.push_back(empty ? 0 : 1);
  }
  if (l.levels > 0 && l.outer_axis >= 0) {
    // Every level of both axes (the inner fastest, as the values come).
    const int inner = cfg_->axes[static_cast<std::size_t>(l.vertical_axis)].n_glo;
    start.insert(start.end(), {0, 0});
    count.push_back(empty || inner == 0 ? 0 : static_cast<size_t>(nk / inner));
    count.push_back(empty ? 0 : static_cast<size_t>(inner));
  } else if (l.levels > 0) {
    start.push_back(0);
    count.push_back(empty ? 0 : static_cast<size_t>(nk));
  }
  const DomainDef* stand_in = l.horizontal == VariableLayout::Horizontal::kDomain &&
                                      cfg_->domains[static_cast<std::size_t>(l.domain)].stand_in()
                                  ? &cfg_->domains[static_cast<std::size_t>(l.domain)]
                                  : nullptr;
  if (stand_in != nullptr) {
    // An axis alone has only its dimension (the one row is implied); a scalar none.
    if (stand_in->stand_in_for_axis >= 0) {
      start.push_back(empty ? 0 : static_cast<size_t>(ibegin));
      count.push_back(empty ? 0 : static_cast<size_t>(ni));
    }
  } else {
    if (l.horizontal != VariableLayout::Horizontal::kNone) {
      start.push_back(empty ? 0 : static_cast<size_t>(jbegin - rows.jbegin));
      count.push_back(static_cast<size_t>(nj));
    }
    if (l.horizontal == VariableLayout::Horizontal::kDomain) {
      start.push_back(empty ? 0 : static_cast<size_t>(ibegin));
      count.push_back(empty ? 0 : static_cast<size_t>(ni));
    }
  }
  if (empty && !parallel_) {
    return;
  }
  if (empty && count.empty()) {
    return;  // a scalar variable held by another process: nothing to take part in
  }
  static const double kNothing = 0.0;
  check(nc_put_vara_double(ncid_, var_ids_.at(static_cast<std::size_t>(var)), start.data(),
                           count.data(), empty ? &kNothing : data),
        "nc_put_vara_double", v.name);
  bytes_written_ += empty ? 0.0 : static_cast<double>(nk) * nj * ni * v.prec;
}

void NcFile::sync() { check(nc_sync(ncid_), "nc_sync", ""); }

void NcFile::close() {
  if (ncid_ >= 0) {
    const int id = ncid_;
    ncid_ = -1;
    check(nc_close(id), "nc_close", "");
  }
}

}  // namespace xios_lite::netcdf
