#include "run_harness.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <span>
#include <sstream>
#include <stdexcept>
#include <utility>

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

std::string write_config(const std::string& dir, const std::string& text) {
  std::string path = dir + "/iodef.xml";
  write_file(path, text);
  return path;
}

std::string config_file(const std::string& name,
                        const std::vector<std::pair<std::string, std::string>>& values) {
  const std::string path = std::string(XIOS_TEST_CONFIGS_DIR) + "/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("config_file: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  for (const auto& [key, value] : values) {
    const std::string placeholder = "@" + key + "@";
    for (auto at = xml.find(placeholder); at != std::string::npos;
         at = xml.find(placeholder, at + value.size())) {
      xml.replace(at, placeholder.size(), value);
    }
  }
  // "@KEY@" only: a lone '@' is XIOS's temporal operator in expressions,
  // and the "@_@" between NEMO's "@expname@_@freq@" is no key.
  std::smatch left;
  if (std::regex_search(xml, left, std::regex("@[A-Z][A-Z_]*@"))) {
    throw std::runtime_error("config_file: " + path + ": no value for " + left.str());
  }
  return xml;
}

int servers(int wanted) {
  const int size = ep_test::world_size();
  return size >= 2 ? std::min(wanted, size - 1) : 0;
}

xios_lite::Mode mode_for(int servers) {
  return servers > 0 ? xios_lite::Mode::kEndpoints : xios_lite::Mode::kSynchronous;
}

xios_lite::Mode mode() { return mode_for(servers()); }

std::vector<std::pair<xios_lite::Mode, std::string>> client_modes(const std::string& tag) {
  std::vector<std::pair<xios_lite::Mode, std::string>> out{{mode(), tag}};
  if (servers() > 0) out.emplace_back(xios_lite::Mode::kFunneled, tag + "_funneled");
  return out;
}

bool is_reader() { return ep_test::world_rank() == 0; }

Scratch scratch_config(const std::string& tag, const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& values) {
  Scratch out;
  out.dir = scratch_dir(tag);
  std::vector<std::pair<std::string, std::string>> in_dir;
  for (const auto& [key, suffix] : values) in_dir.emplace_back(key, out.dir + suffix);
  out.config = write_config(out.dir, config_file(name, in_dir));
  return out;
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

std::string context_config(const ContextXml& c) {
  std::string xml = R"(<xios_lite><context id=")" + c.id + R"(">
  <calendar )" + c.calendar +
                    R"(/>
  <options )" + c.options +
                    "/>\n";
  const auto element = [&xml](const char* name, const std::string& text) {
    if (!text.empty()) xml += "  <" + std::string(name) + ">" + text + "</" + name + ">\n";
  };
  element("domain_definition", c.domains);
  element("axis_definition", c.axes);
  element("grid_definition", c.grids);
  element("field_definition", c.fields);
  element("file_definition", c.files);
  return xml + "</context></xios_lite>\n";
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

void expect_no_errors(const Outcome& o) {
  for (const auto& e : o.client_errors) {
    ADD_FAILURE() << "client error: " << e;
  }
  EXPECT_EQ(o.server_error, "");
}

bool run_without_errors(const RunSpec& spec) {
  expect_no_errors(run(spec));
  return is_reader();
}

RunSpec run_spec(const std::string& config, int servers, Model model) {
  return run_spec(config, servers, mode_for(servers), std::move(model));
}

ScratchRun scratch_run(const std::string& tag, const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& values,
                       Model model) {
  const Scratch scratch = scratch_config(tag, name, values);
  return {scratch.dir, run_spec(scratch.config, servers(), std::move(model))};
}

RunSpec run_spec(const std::string& config, int servers, xios_lite::Mode mode, Model model) {
  RunSpec spec;
  spec.config = config;
  spec.servers = servers;
  spec.mode = mode;
  spec.model = std::move(model);
  return spec;
}

xios_lite::Block uneven_block(const ep::Communicator& comm, int ni, int nj) {
  return uneven_block(comm.rank(), comm.size(), ni, nj);
}

xios_lite::DomainAttributes block_attributes(const xios_lite::Block& b, int ni_glo, int nj_glo) {
  xios_lite::DomainAttributes a;
  if (ni_glo > 0) a.ni_glo = ni_glo;
  if (nj_glo > 0) a.nj_glo = nj_glo;
  a.ibegin = b.ibegin;
  a.ni = b.ni;
  a.jbegin = b.jbegin;
  a.nj = b.nj;
  return a;
}

void mask_land(xios_lite::Client& c, const std::string& domain, const xios_lite::Block& b,
               const std::function<bool(int j, int i)>& land) {
  // std::vector<bool> has no contiguous storage to hand over as a span.
  const std::size_t points = static_cast<std::size_t>(b.ni) * static_cast<std::size_t>(b.nj);
  const std::unique_ptr<bool[]> valid(new bool[points]);
  std::size_t at = 0;
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) valid[at++] = !land(j, i);
  }
  c.set_domain_mask(domain, std::span<const bool>(valid.get(), points));
}

xios_lite::DomainAttributes halo_attributes(const xios_lite::Block& b, int halo_i, int halo_j) {
  xios_lite::DomainAttributes a;
  a.data_dim = 2;
  a.data_ibegin = -halo_i;
  a.data_ni = b.ni + 2 * halo_i;
  a.data_jbegin = -halo_j;
  a.data_nj = b.nj + 2 * halo_j;
  return a;
}

xios_lite::Block define_uneven_block(xios_lite::Client& c, const ep::Communicator& comm, int ni,
                                     int nj) {
  const xios_lite::Block b = uneven_block(comm, ni, nj);
  c.set_domain_block("dom", b);
  c.close_definition();
  return b;
}

Model stepping_model(int ni, int nj, int steps, StepSender send) {
  return
      [ni, nj, steps, send = std::move(send)](xios_lite::Client& c, const ep::Communicator& comm) {
        const xios_lite::Block b = uneven_block(comm, ni, nj);
        c.set_domain_block("dom", b);
        close_and_step(c, steps, [&](int s) { send(c, b, s); });
      };
}

void close_and_step(xios_lite::Client& c, int steps, const std::function<void(int step)>& send) {
  c.close_definition();
  for (int s = 1; s <= steps; ++s) {
    c.update_calendar(s);
    send(s);
  }
  (void)c.finalise();
}

}  // namespace xios_test
