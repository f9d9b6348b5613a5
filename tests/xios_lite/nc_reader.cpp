#include "nc_reader.hpp"

#include <gtest/gtest.h>
#include <netcdf.h>
#include <sys/stat.h>

#include <cmath>

#include "nc_var_shape.hpp"

namespace xios_test {

namespace {

// Opens `path` read-only, returns read(ncid) and closes the file; `absent`
// when it does not open.
template <typename T, typename Read>
T with_file(const std::string& path, T absent, Read&& read) {
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    return absent;
  }
  T out = read(nc);
  nc_close(nc);
  return out;
}

// Sets *id to the variable `var` of `nc` (NC_GLOBAL for ""); false when
// there is no such variable.
bool attribute_holder(int nc, const std::string& var, int* id) {
  *id = NC_GLOBAL;
  return var.empty() || nc_inq_varid(nc, var.c_str(), id) == NC_NOERR;
}

}  // namespace

std::vector<std::string> var_dims(const std::string& path, const std::string& var) {
  return with_file(path, std::vector<std::string>{}, [&](int nc) {
    std::vector<std::string> out;
    int id = -1;
    int ndims = 0;
    if (nc_inq_varid(nc, var.c_str(), &id) != NC_NOERR ||
        nc_inq_varndims(nc, id, &ndims) != NC_NOERR) {
      return out;
    }
    std::vector<int> dims(static_cast<std::size_t>(ndims));
    nc_inq_vardimid(nc, id, dims.data());
    for (const int d : dims) {
      char name[NC_MAX_NAME + 1] = {};
      nc_inq_dimname(nc, d, name);
      out.emplace_back(name);
    }
    return out;
  });
}

std::vector<double> read_var(const std::string& path, const std::string& var) {
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    ADD_FAILURE() << "cannot open " << path;
    return {};
  }
  int id = -1;
  std::vector<double> out;
  if (nc_inq_varid(nc, var.c_str(), &id) != NC_NOERR) {
    ADD_FAILURE() << path << ": no variable " << var;
  } else {
    const std::size_t n = value_count(var_shape(nc, id));
    out.resize(n);
    if (n > 0 && nc_get_var_double(nc, id, out.data()) != NC_NOERR) {
      ADD_FAILURE() << path << ": cannot read " << var;
    }
  }
  nc_close(nc);
  return out;
}

std::string text_att(const std::string& path, const std::string& var, const std::string& name) {
  return with_file(path, std::string(), [&](int nc) {
    int id = NC_GLOBAL;
    std::string out;
    std::size_t len = 0;
    if (attribute_holder(nc, var, &id) && nc_inq_attlen(nc, id, name.c_str(), &len) == NC_NOERR) {
      out.resize(len);
      nc_get_att_text(nc, id, name.c_str(), out.data());
    }
    return out;
  });
}

void expect_text_atts(const std::string& path, std::initializer_list<TextAtt> atts) {
  for (const TextAtt& a : atts) {
    EXPECT_EQ(text_att(path, a.var, a.name), a.value) << path << ": " << a.var << ":" << a.name;
  }
}

double double_att(const std::string& path, const std::string& var, const std::string& name) {
  const double absent = std::nan("");
  return with_file(path, absent, [&](int nc) {
    int id = NC_GLOBAL;
    double value = 0;
    const bool found = attribute_holder(nc, var, &id) &&
                       nc_get_att_double(nc, id, name.c_str(), &value) == NC_NOERR;
    return found ? value : absent;
  });
}

int var_type(const std::string& path, const std::string& var) {
  return with_file(path, -1, [&](int nc) {
    int id = -1;
    nc_type type = -1;
    const bool found =
        nc_inq_varid(nc, var.c_str(), &id) == NC_NOERR && nc_inq_vartype(nc, id, &type) == NC_NOERR;
    return found ? type : -1;
  });
}

std::vector<std::size_t> var_chunks(const std::string& path, const std::string& var) {
  return with_file(path, std::vector<std::size_t>(), [&](int nc) {
    int id = -1;
    int ndims = 0;
    if (nc_inq_varid(nc, var.c_str(), &id) != NC_NOERR ||
        nc_inq_varndims(nc, id, &ndims) != NC_NOERR) {
      return std::vector<std::size_t>();
    }
    std::vector<std::size_t> chunks(static_cast<std::size_t>(ndims));
    int storage = 0;
    const bool chunked =
        nc_inq_var_chunking(nc, id, &storage, chunks.data()) == NC_NOERR && storage == NC_CHUNKED;
    return chunked ? chunks : std::vector<std::size_t>();
  });
}

long dim_len(const std::string& path, const std::string& dim) {
  return with_file(path, -1L, [&](int nc) {
    int id = -1;
    std::size_t len = 0;
    const bool found =
        nc_inq_dimid(nc, dim.c_str(), &id) == NC_NOERR && nc_inq_dimlen(nc, id, &len) == NC_NOERR;
    return found ? static_cast<long>(len) : -1L;
  });
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

}  // namespace xios_test
