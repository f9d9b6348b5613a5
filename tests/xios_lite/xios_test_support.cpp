#include "xios_test_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>
#include <omp.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "ep/comm_management.hpp"
#include "ep_test.hpp"

namespace xios_test {

std::string scratch_dir(const std::string& tag) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[256] = {};
  if (rank == 0) {
    std::string templ = "/tmp/xios_lite_" + tag + "_XXXXXX";
    std::snprintf(path, sizeof path, "%s", templ.c_str());
    if (mkdtemp(path) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << templ;
    }
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

void write_file(const std::string& path, const std::string& text) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::ofstream(path) << text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int servers() { return ep_test::world_size() >= 2 ? 1 : 0; }

xios_lite::Mode mode() {
  return servers() > 0 ? xios_lite::Mode::kEndpoints : xios_lite::Mode::kSynchronous;
}

std::string one_field_config(const OneField& c) {
  return R"(<xios_lite><context id=")" + c.context + R"(">
  <calendar )" +
         c.calendar +
         R"(/>
  <options finalise_timeout=")" +
         std::to_string(c.timeout_s) + R"("/>
  <domain_definition><domain id="dom" ni_glo=")" +
         std::to_string(c.ni) + R"(" nj_glo=")" + std::to_string(c.nj) +
         R"("/></domain_definition>
  <grid_definition><grid id="g" domain_ref="dom"/></grid_definition>
  <field_definition><field id=")" +
         c.field + R"(" grid_ref="g" units="K"/></field_definition>
  <file_definition>
    <file id="out" name=")" +
         c.file_name + R"(" output_freq="1ts" type="one_file"><field field_ref=")" + c.field +
         R"("/></file>
  </file_definition>
</context></xios_lite>
)";
}

Outcome run(const RunSpec& spec) {
  Outcome out;
  xios_lite::World world;
  try {
    const xios_lite::Role role = xios_lite::role_of_last_ranks(MPI_COMM_WORLD, spec.servers);
    world = spec.context
                ? xios_lite::split_world(
                      MPI_COMM_WORLD, role,
                      role == xios_lite::Role::kClient ? spec.context(ep_test::world_rank()) : "")
                : xios_lite::split_world(MPI_COMM_WORLD, role);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return out;
  }
  out.is_server = world.role == xios_lite::Role::kServer;
  if (out.is_server) {
    try {
      xios_lite::ServerOptions options;
      options.threads = spec.server_threads;
      (void)xios_lite::run_server(world, spec.config, options);
    } catch (const ep::Error& e) {
      out.server_error = e.what();
      out.server_error_kind = e.kind();
    } catch (const std::exception& e) {
      out.server_error = e.what();
    }
  } else {
    int process = 0;
    MPI_Comm_rank(world.local, &process);
    const int wanted = spec.threads(process);
    const int threads = wanted > 0 ? wanted : omp_get_max_threads();
    std::vector<ep::Communicator> eps;
    std::mutex mutex;
#pragma omp parallel num_threads(threads)
    {
#pragma omp single
      eps = ep::create_endpoints(world.local, omp_get_num_threads());
      ep::Communicator& comm = eps[static_cast<std::size_t>(omp_get_thread_num())];
      ep_test::set_current_endpoint(comm.rank());
      xios_lite::ClientOptions options;
      options.mode = spec.mode;
      options.print_report = false;
      options.progress_thread = spec.progress_thread;
      try {
        xios_lite::Client client(comm, world, spec.config, options);
        spec.model(client, comm);
      } catch (const std::exception& e) {
        const std::lock_guard lock(mutex);
        out.client_errors.emplace_back(e.what());
      }
      comm.free();
      ep_test::set_current_endpoint(-1);
    }
  }
  xios_lite::free_world(world);
  MPI_Barrier(MPI_COMM_WORLD);
  return out;
}

xios_lite::Block uneven_block(int rank, int size, int ni, int nj) {
  // Row bands with weights 1, 2, 1, 2, ... over pairs of ranks; inside a
  // pair the second rank takes the right part of the band's columns.
  const int pairs = (size + 1) / 2;
  const int pair = rank / 2;
  const bool split_i = size > 1 && (rank / 2) * 2 + 1 < size;
  int total_w = 0;
  int before_w = 0;
  for (int p = 0; p < pairs; ++p) {
    const int w = 1 + p % 2;
    if (p < pair) {
      before_w += w;
    }
    total_w += w;
  }
  const int j0 = nj * before_w / total_w;
  const int j1 = nj * (before_w + 1 + pair % 2) / total_w;
  xios_lite::Block b{0, ni, j0, j1 - j0};
  if (split_i) {
    const int cut = ni / 3 + 1;
    if (rank % 2 == 0) {
      b.ni = cut;
    } else {
      b.ibegin = cut;
      b.ni = ni - cut;
    }
  }
  return b;
}

std::vector<double> field_values(int f, long step, int nk, const xios_lite::Block& b) {
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(nk) * b.ni * b.nj);
  for (int k = 0; k < nk; ++k) {
    for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
      for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
        v.push_back(value(f, step, k, j, i));
      }
    }
  }
  return v;
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
    int ndims = 0;
    nc_inq_varndims(nc, id, &ndims);
    std::vector<int> dims(static_cast<std::size_t>(ndims));
    nc_inq_vardimid(nc, id, dims.data());
    std::size_t n = 1;
    for (int d : dims) {
      std::size_t len = 0;
      nc_inq_dimlen(nc, d, &len);
      n *= len;
    }
    out.resize(n);
    if (n > 0 && nc_get_var_double(nc, id, out.data()) != NC_NOERR) {
      ADD_FAILURE() << path << ": cannot read " << var;
    }
  }
  nc_close(nc);
  return out;
}

std::string text_att(const std::string& path, const std::string& var, const std::string& name) {
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    return "";
  }
  int id = NC_GLOBAL;
  std::string out;
  std::size_t len = 0;
  if ((var.empty() || nc_inq_varid(nc, var.c_str(), &id) == NC_NOERR) &&
      nc_inq_attlen(nc, id, name.c_str(), &len) == NC_NOERR) {
    out.resize(len);
    nc_get_att_text(nc, id, name.c_str(), out.data());
  }
  nc_close(nc);
  return out;
}

double double_att(const std::string& path, const std::string& var, const std::string& name) {
  int nc = -1;
  double out = std::nan("");
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    return out;
  }
  int id = NC_GLOBAL;
  if (var.empty() || nc_inq_varid(nc, var.c_str(), &id) == NC_NOERR) {
    double value = 0;
    if (nc_get_att_double(nc, id, name.c_str(), &value) == NC_NOERR) {
      out = value;
    }
  }
  nc_close(nc);
  return out;
}

int var_type(const std::string& path, const std::string& var) {
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    return -1;
  }
  int id = -1;
  nc_type type = -1;
  if (nc_inq_varid(nc, var.c_str(), &id) != NC_NOERR || nc_inq_vartype(nc, id, &type) != NC_NOERR) {
    type = -1;
  }
  nc_close(nc);
  return type;
}

std::vector<std::size_t> var_chunks(const std::string& path, const std::string& var) {
  int nc = -1;
  std::vector<std::size_t> out;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    return out;
  }
  int id = -1;
  int ndims = 0;
  if (nc_inq_varid(nc, var.c_str(), &id) == NC_NOERR &&
      nc_inq_varndims(nc, id, &ndims) == NC_NOERR) {
    std::vector<std::size_t> chunks(static_cast<std::size_t>(ndims));
    int storage = 0;
    if (nc_inq_var_chunking(nc, id, &storage, chunks.data()) == NC_NOERR && storage == NC_CHUNKED) {
      out = chunks;
    }
  }
  nc_close(nc);
  return out;
}

long dim_len(const std::string& path, const std::string& dim) {
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    return -1;
  }
  int id = -1;
  std::size_t len = 0;
  long out = -1;
  if (nc_inq_dimid(nc, dim.c_str(), &id) == NC_NOERR && nc_inq_dimlen(nc, id, &len) == NC_NOERR) {
    out = static_cast<long>(len);
  }
  nc_close(nc);
  return out;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

}  // namespace xios_test
