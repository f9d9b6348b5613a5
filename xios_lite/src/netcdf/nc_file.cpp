// CF-1.8 NetCDF-4 files: dimensions and coordinates per domain and axis
// (with cell bounds when given), a time axis in "seconds since <start>" with
// the calendar, time_bounds and cell_methods, _FillValue and missing_value,
// double or float variables (prec), deflate+shuffle and chunks of a target
// size (chunking.hpp).
#include "nc_file.hpp"

#include <netcdf.h>
#include <netcdf_par.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>

#include "chunking.hpp"
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

NcFile::NcFile(const std::string& path, const Config& cfg, int file, std::vector<RowRange> rows,
               MPI_Comm comm, int ep_rank)
    : path_(path),
      cfg_(&cfg),
      file_(file),
      rows_(std::move(rows)),
      parallel_(comm != MPI_COMM_NULL),
      ep_rank_(ep_rank) {
  const FileDef& fd = cfg.files.at(static_cast<std::size_t>(file));
  if (parallel_) {
    check(nc_create_par(path.c_str(), NC_NETCDF4 | NC_CLOBBER, comm, MPI_INFO_NULL, &ncid_),
          "nc_create_par", "");
  } else {
    check(nc_create(path.c_str(), NC_NETCDF4 | NC_CLOBBER, &ncid_), "nc_create", "");
  }

  // Global attributes.
  auto put_text = [&](int varid, const char* name, const std::string& value,
                      const std::string& var) {
    check(nc_put_att_text(ncid_, varid, name, value.size(), value.c_str()), "nc_put_att_text",
          var.empty() ? std::string(name) : var);
  };
  put_text(NC_GLOBAL, "Conventions", "CF-1.8", "");
  put_text(NC_GLOBAL, "title", fd.description, "");
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  put_text(NC_GLOBAL, "history", std::string(stamp) + " created by xios_lite", "");
  put_text(NC_GLOBAL, "source", "xios_lite context " + cfg.context, "");

  bool has_time = false;
  bool has_bounds = false;
  for (const auto& v : fd.variables) {
    has_time = has_time || v.operation != Operation::kOnce;
    has_bounds =
        has_bounds || (v.operation != Operation::kOnce && v.operation != Operation::kInstant);
  }

  int time_dim = -1;
  int nbnd_dim = -1;
  if (has_time) {
    check(nc_def_dim(ncid_, "time", NC_UNLIMITED, &time_dim), "nc_def_dim", "time");
    check(nc_def_var(ncid_, "time", NC_DOUBLE, 1, &time_dim, &time_var_), "nc_def_var", "time");
    put_text(time_var_, "standard_name", "time", "time");
    put_text(time_var_, "axis", "T", "time");
    put_text(time_var_, "units", "seconds since " + format_date(cfg.calendar.start()), "time");
    put_text(time_var_, "calendar", std::string(to_string(cfg.calendar.type())), "time");
    if (has_bounds) {
      put_text(time_var_, "bounds", "time_bounds", "time");
      check(nc_def_dim(ncid_, "axis_nbounds", 2, &nbnd_dim), "nc_def_dim", "axis_nbounds");
      const int dims[2] = {time_dim, nbnd_dim};
      check(nc_def_var(ncid_, "time_bounds", NC_DOUBLE, 2, dims, &bounds_var_), "nc_def_var",
            "time_bounds");
    }
  }

  // Dimensions and coordinates of the domains and axes this file uses.
  std::map<int, std::pair<int, int>> domain_dims;  // domain -> (lat dim, lon dim)
  std::map<int, int> axis_dims;
  int used_domains = 0;
  for (const auto& v : fd.variables) {
    const GridDef& g =
        cfg.grids[static_cast<std::size_t>(cfg.fields[static_cast<std::size_t>(v.field)].grid)];
    used_domains += domain_dims.emplace(g.domain, std::pair{-1, -1}).second ? 1 : 0;
    if (g.axis >= 0) {
      axis_dims.emplace(g.axis, -1);
    }
  }
  int nvertex_dim = -1;  // "nvertex" (2), made for the first domain with bounds
  for (auto& [d, dims] : domain_dims) {
    const DomainDef& dom = cfg.domains[static_cast<std::size_t>(d)];
    const std::string suffix = used_domains > 1 ? "_" + dom.id : "";
    const std::string lat = "lat" + suffix;
    const std::string lon = "lon" + suffix;
    const RowRange r = rows_.at(static_cast<std::size_t>(d));
    if (r.nj == 0) {
      continue;  // this process holds no row of the domain: its variables are left out
    }
    check(nc_def_dim(ncid_, lat.c_str(), static_cast<size_t>(r.nj), &dims.first), "nc_def_dim",
          lat);
    check(nc_def_dim(ncid_, lon.c_str(), static_cast<size_t>(dom.ni_glo), &dims.second),
          "nc_def_dim", lon);
    int lat_var = -1;
    int lon_var = -1;
    check(nc_def_var(ncid_, lat.c_str(), NC_DOUBLE, 1, &dims.first, &lat_var), "nc_def_var", lat);
    check(nc_def_var(ncid_, lon.c_str(), NC_DOUBLE, 1, &dims.second, &lon_var), "nc_def_var", lon);
    put_text(lat_var, "units", "degrees_north", lat);
    put_text(lat_var, "standard_name", "latitude", lat);
    put_text(lat_var, "long_name", "latitude", lat);
    put_text(lat_var, "axis", "Y", lat);
    put_text(lon_var, "units", "degrees_east", lon);
    put_text(lon_var, "standard_name", "longitude", lon);
    put_text(lon_var, "long_name", "longitude", lon);
    put_text(lon_var, "axis", "X", lon);
    const int first = r.jbegin;
    check(nc_put_att_int(ncid_, NC_GLOBAL, ("DOMAIN_" + dom.id + "_jbegin").c_str(), NC_INT, 1,
                         &first),
          "nc_put_att_int", lat);
    // CF cell bounds: bounds_lat(lat, nvertex), bounds_lon(lon, nvertex).
    int lat_bounds = -1;
    int lon_bounds = -1;
    if ((!dom.bounds_lat.empty() || !dom.bounds_lon.empty()) && nvertex_dim < 0) {
      check(nc_def_dim(ncid_, "nvertex", 2, &nvertex_dim), "nc_def_dim", "nvertex");
    }
    const auto def_bounds = [&](const std::string& coord, int coord_var, int coord_dim) {
      const std::string name = "bounds_" + coord;
      const int dims2[2] = {coord_dim, nvertex_dim};
      int id = -1;
      check(nc_def_var(ncid_, name.c_str(), NC_DOUBLE, 2, dims2, &id), "nc_def_var", name);
      put_text(coord_var, "bounds", name, coord);
      return id;
    };
    if (!dom.bounds_lat.empty()) {
      lat_bounds = def_bounds(lat, lat_var, dims.first);
    }
    if (!dom.bounds_lon.empty()) {
      lon_bounds = def_bounds(lon, lon_var, dims.second);
    }
    // Coordinate values are written by every rank of a parallel file (the
    // same values), which NetCDF allows in independent or collective mode.
    check(nc_enddef(ncid_), "nc_enddef", lat);
    if (parallel_) {
      check(nc_var_par_access(ncid_, lat_var, NC_COLLECTIVE), "nc_var_par_access", lat);
      check(nc_var_par_access(ncid_, lon_var, NC_COLLECTIVE), "nc_var_par_access", lon);
    }
    const size_t lat_start = 0;
    const size_t lat_count = static_cast<size_t>(r.nj);
    check(nc_put_vara_double(ncid_, lat_var, &lat_start, &lat_count, dom.lat.data() + r.jbegin),
          "nc_put_vara_double", lat);
    const size_t lon_count = static_cast<size_t>(dom.ni_glo);
    check(nc_put_vara_double(ncid_, lon_var, &lat_start, &lon_count, dom.lon.data()),
          "nc_put_vara_double", lon);
    const size_t bounds_start[2] = {0, 0};
    if (lat_bounds >= 0) {
      if (parallel_) {
        check(nc_var_par_access(ncid_, lat_bounds, NC_COLLECTIVE), "nc_var_par_access", lat);
      }
      const size_t count[2] = {lat_count, 2};
      check(nc_put_vara_double(ncid_, lat_bounds, bounds_start, count,
                               dom.bounds_lat.data() + 2 * static_cast<std::size_t>(r.jbegin)),
            "nc_put_vara_double", "bounds_" + lat);
    }
    if (lon_bounds >= 0) {
      if (parallel_) {
        check(nc_var_par_access(ncid_, lon_bounds, NC_COLLECTIVE), "nc_var_par_access", lon);
      }
      const size_t count[2] = {lon_count, 2};
      check(nc_put_vara_double(ncid_, lon_bounds, bounds_start, count, dom.bounds_lon.data()),
            "nc_put_vara_double", "bounds_" + lon);
    }
    check(nc_redef(ncid_), "nc_redef", lat);
  }
  for (auto& [a, dim] : axis_dims) {
    const AxisDef& ax = cfg.axes[static_cast<std::size_t>(a)];
    check(nc_def_dim(ncid_, ax.name.c_str(), static_cast<size_t>(ax.n_glo), &dim), "nc_def_dim",
          ax.name);
    int var = -1;
    check(nc_def_var(ncid_, ax.name.c_str(), NC_DOUBLE, 1, &dim, &var), "nc_def_var", ax.name);
    put_text(var, "axis", "Z", ax.name);
    if (!ax.units.empty()) {
      put_text(var, "units", ax.units, ax.name);
    }
    if (!ax.positive.empty()) {
      put_text(var, "positive", ax.positive, ax.name);
    }
    put_text(var, "long_name", ax.long_name.empty() ? ax.name : ax.long_name, ax.name);
    check(nc_enddef(ncid_), "nc_enddef", ax.name);
    if (parallel_) {
      check(nc_var_par_access(ncid_, var, NC_COLLECTIVE), "nc_var_par_access", ax.name);
    }
    check(nc_put_var_double(ncid_, var, ax.value.data()), "nc_put_var_double", ax.name);
    check(nc_redef(ncid_), "nc_redef", ax.name);
  }

  // The variables.
  for (const auto& v : fd.variables) {
    const FieldDef& f = cfg.fields[static_cast<std::size_t>(v.field)];
    const GridDef& g = cfg.grids[static_cast<std::size_t>(f.grid)];
    const DomainDef& dom = cfg.domains[static_cast<std::size_t>(g.domain)];
    const RowRange rows = rows_.at(static_cast<std::size_t>(g.domain));
    if (rows.nj == 0) {
      var_ids_.push_back(-1);  // no row of its domain here: written by the other processes
      continue;
    }
    const std::uint64_t levels =
        g.axis >= 0 ? static_cast<std::uint64_t>(cfg.axes[static_cast<std::size_t>(g.axis)].n_glo)
                    : 1;
    const double target_mib = f.chunking_blocksize_target > 0 ? f.chunking_blocksize_target
                                                              : fd.chunking_blocksize_target;
    const std::array<std::uint64_t, 3> box = chunk_extents(
        {levels, static_cast<std::uint64_t>(rows.nj), static_cast<std::uint64_t>(dom.ni_glo)},
        static_cast<std::uint64_t>(f.prec), target_mib * 1024.0 * 1024.0);
    std::vector<int> dims;
    std::vector<size_t> chunks;
    if (v.operation != Operation::kOnce) {
      dims.push_back(time_dim);
      chunks.push_back(1);
    }
    if (g.axis >= 0) {
      dims.push_back(axis_dims.at(g.axis));
      chunks.push_back(static_cast<size_t>(box[0]));
    }
    dims.push_back(domain_dims.at(g.domain).first);
    dims.push_back(domain_dims.at(g.domain).second);
    chunks.push_back(static_cast<size_t>(box[1]));
    chunks.push_back(static_cast<size_t>(box[2]));
    const nc_type type = f.prec == 4 ? NC_FLOAT : NC_DOUBLE;
    int id = -1;
    check(nc_def_var(ncid_, v.name.c_str(), type, static_cast<int>(dims.size()), dims.data(), &id),
          "nc_def_var", v.name);
    check(nc_def_var_chunking(ncid_, id, NC_CHUNKED, chunks.data()), "nc_def_var_chunking", v.name);
    if (fd.compression_level > 0) {
      check(nc_def_var_deflate(ncid_, id, 1, 1, fd.compression_level), "nc_def_var_deflate",
            v.name);
    }
    // CF: missing points hold _FillValue; missing_value says the same to
    // readers that look for it. Both in the variable's type.
    if (type == NC_FLOAT) {
      const auto fill = static_cast<float>(f.default_value);
      check(nc_def_var_fill(ncid_, id, 0, &fill), "nc_def_var_fill", v.name);
      check(nc_put_att_float(ncid_, id, "missing_value", NC_FLOAT, 1, &fill), "nc_put_att_float",
            v.name);
    } else {
      check(nc_def_var_fill(ncid_, id, 0, &f.default_value), "nc_def_var_fill", v.name);
      check(nc_put_att_double(ncid_, id, "missing_value", NC_DOUBLE, 1, &f.default_value),
            "nc_put_att_double", v.name);
    }
    if (!f.standard_name.empty()) {
      put_text(id, "standard_name", f.standard_name, v.name);
    }
    put_text(id, "long_name", f.long_name, v.name);
    if (!f.units.empty()) {
      put_text(id, "units", f.units, v.name);
    }
    if (v.operation != Operation::kOnce) {
      put_text(id, "cell_methods", cell_method(v.operation), v.name);
    }
    put_text(id, "online_operation", to_string(v.operation), v.name);
    var_ids_.push_back(id);
  }
  check(nc_enddef(ncid_), "nc_enddef", "");
  if (parallel_) {
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
      check(nc_var_par_access(ncid_, bounds_var_, NC_COLLECTIVE), "nc_var_par_access",
            "time_bounds");
    }
  }
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
  check(nc_put_vara_double(ncid_, time_var_, &start, &one, &time), "nc_put_vara_double", "time");
  if (bounds_var_ >= 0) {
    const size_t bstart[2] = {start, 0};
    const size_t bcount[2] = {1, 2};
    const double b[2] = {lo, hi};
    check(nc_put_vara_double(ncid_, bounds_var_, bstart, bcount, b), "nc_put_vara_double",
          "time_bounds");
  }
}

void NcFile::write_block(int var, int record, int jbegin, int nj, int ibegin, int ni, int nk,
                         const double* data) {
  const FileDef& fd = cfg_->files[static_cast<std::size_t>(file_)];
  const OutputVariable& v = fd.variables.at(static_cast<std::size_t>(var));
  if (var_ids_.at(static_cast<std::size_t>(var)) < 0) {
    return;  // not held by this process's file (no row of its domain)
  }
  const GridDef& g =
      cfg_->grids[static_cast<std::size_t>(cfg_->fields[static_cast<std::size_t>(v.field)].grid)];
  const RowRange rows = rows_.at(static_cast<std::size_t>(g.domain));
  std::vector<size_t> start;
  std::vector<size_t> count;
  const bool empty = nj == 0 || ni == 0;
  if (v.operation != Operation::kOnce) {
    start.push_back(static_cast<size_t>(record));
    count.push_back(empty ? 0 : 1);
  }
  if (g.axis >= 0) {
    start.push_back(0);
    count.push_back(empty ? 0 : static_cast<size_t>(nk));
  }
  start.push_back(empty ? 0 : static_cast<size_t>(jbegin - rows.jbegin));
  count.push_back(static_cast<size_t>(nj));
  start.push_back(empty ? 0 : static_cast<size_t>(ibegin));
  count.push_back(empty ? 0 : static_cast<size_t>(ni));
  if (empty && !parallel_) {
    return;
  }
  static const double kNothing = 0.0;
  check(nc_put_vara_double(ncid_, var_ids_.at(static_cast<std::size_t>(var)), start.data(),
                           count.data(), empty ? &kNothing : data),
        "nc_put_vara_double", v.name);
  const int prec = cfg_->fields[static_cast<std::size_t>(v.field)].prec;
  bytes_written_ += empty ? 0.0 : static_cast<double>(nk) * nj * ni * prec;
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
