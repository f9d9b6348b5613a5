// XIOS's launch line, unchanged:
//
//   mpiexec -n 2 open_contexts_model open_contexts.xml : -n 1 xios_server.exe
//
// The server executable gets no argument. The model writes ./iodef.xml
// from the template (rank 0), then as an XIOS model does: initialize,
// open "atmosphere" with the file's text, define and close it, open
// "surface", send to both at each step, finalise each, close_contexts.
// Client process 0 reads both files back and checks every value. Exit
// status 0 when all is right, 1 otherwise.
#include <mpi.h>
#include <netcdf.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "model_program.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/contexts.hpp"

namespace {

constexpr int kSteps = 4;
struct Shape {
  const char* context;
  const char* domain;
  const char* field;
  int ni, nj;
};
constexpr Shape kAtm{"atmosphere", "atm_d", "tas", 8, 6};
constexpr Shape kSrf{"surface", "srf_d", "hfls", 5, 4};

double value(const Shape& s, int step, int j, int i) {
  return (s.field[0] == 't' ? 250.0 : 100.0) + 10.0 * step + 0.1 * j + 0.001 * i;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// This endpoint's even share of the rows: block and values of a step.
xios_lite::Block block_of(const Shape& s, const ep::Communicator& comm) {
  const auto rows = xios_test::model_program::even_rows(s.nj, comm);
  return {0, s.ni, rows.j0, rows.j1 - rows.j0};
}
std::vector<double> values_of(const Shape& s, const xios_lite::Block& b, int step) {
  std::vector<double> v;
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = 0; i < s.ni; ++i) v.push_back(value(s, step, j, i));
  }
  return v;
}

std::unique_ptr<xios_lite::Client> make_client(const ep::Communicator& comm,
                                               const xios_lite::ContextLink& link,
                                               const std::string& text, const Shape& s) {
  xios_lite::ClientOptions o;
  o.connection_tag = link.connection_tag;
  o.definitions = std::make_shared<const xios_lite::Config>(
      xios_lite::parse_config_string(text, "iodef.xml", s.context));
  o.print_report = false;
  auto c = std::make_unique<xios_lite::Client>(comm, link.world, "iodef.xml", o);
  c->set_domain_block(s.domain, block_of(s, comm));
  c->close_definition();
  return c;
}

// Mismatches of `path`'s variable (instants, or 2-step averages for tas).
int check(const Shape& s, const std::string& path) {
  const bool average = s.field[0] == 't';
  const int records = average ? kSteps / 2 : kSteps;
  std::vector<double> got(static_cast<std::size_t>(records) * s.nj * s.ni);
  int nc = -1;
  int var = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR ||
      nc_inq_varid(nc, s.field, &var) != NC_NOERR ||
      nc_get_var_double(nc, var, got.data()) != NC_NOERR) {
    std::fprintf(stderr, "open_contexts_model: cannot read %s from %s\n", s.field, path.c_str());
    return 1;
  }
  nc_close(nc);
  int bad = 0;
  std::size_t x = 0;
  for (int r = 0; r < records; ++r) {
    for (int j = 0; j < s.nj; ++j) {
      for (int i = 0; i < s.ni; ++i, ++x) {
        const double want = average ? (value(s, 2 * r + 1, j, i) + value(s, 2 * r + 2, j, i)) / 2
                                    : value(s, r + 1, j, i);
        bad += std::abs(got[x] - want) > 1e-12 ? 1 : 0;
      }
    }
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  xios_test::model_program::init_mpi(&argc, &argv, 2, "open_contexts_model TEMPLATE.xml");
  xios_lite::World world = xios_lite::initialize(MPI_COMM_WORLD, xios_lite::Role::kClient);
  int rank = 0;
  MPI_Comm_rank(world.local, &rank);
  if (rank == 0) {
    std::string text = read_text(argv[1]);
    for (const auto& [key, to] : {std::pair<std::string, std::string>{"@DIR@", "."},
                                  {"@ATM_TYPE@", "multiple_file"},
                                  {"@SRF_TYPE@", "multiple_file"},
                                  {"@TIMEOUT@", "8"}}) {
      replace_all(text, key, to);
    }
    std::ofstream("iodef.xml") << text;
  }
  MPI_Barrier(world.local);
  const std::string text = read_text("iodef.xml");  // as XIOS's clients read it
  int failed = 0;
  try {
    xios_lite::ContextLink atm = xios_lite::open_context(world, world.local, kAtm.context, text);
    xios_lite::ContextLink srf;
    std::vector<ep::Communicator> atm_eps;
    std::vector<ep::Communicator> srf_eps;
#pragma omp parallel reduction(+ : failed)
    {
#pragma omp single
      atm_eps = ep::create_endpoints(atm.world.local, omp_get_num_threads());
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      std::unique_ptr<xios_lite::Client> a;
      try {
        a = make_client(atm_eps[t], atm, text, kAtm);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "open_contexts_model: %s\n", e.what());
        failed += 1;
      }
#pragma omp barrier
#pragma omp master
      {
        srf = xios_lite::open_context(world, world.local, kSrf.context, text);
        srf_eps = ep::create_endpoints(srf.world.local, omp_get_num_threads());
      }
#pragma omp barrier
      try {
        auto b = make_client(srf_eps[t], srf, text, kSrf);
        const xios_lite::Block ba = block_of(kAtm, atm_eps[t]);
        const xios_lite::Block bb = block_of(kSrf, srf_eps[t]);
        for (int s = 1; s <= kSteps && a; ++s) {
          a->update_calendar(s);
          a->send_field(kAtm.field, values_of(kAtm, ba, s));
          b->update_calendar(s);
          b->send_field(kSrf.field, values_of(kSrf, bb, s));
        }
        if (a) (void)a->finalise();
        (void)b->finalise();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "open_contexts_model: %s\n", e.what());
        failed += 1;
      }
      a.reset();
      atm_eps[t].free();
      srf_eps[t].free();
    }
    xios_lite::free_world(atm.world);
    xios_lite::free_world(srf.world);
    xios_lite::close_contexts(world);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "open_contexts_model: %s\n", e.what());
    failed += 1;
  }
  if (rank == 0 && failed == 0) {
    failed += check(kAtm, "atm.nc") + check(kSrf, "surface.nc");
    std::printf("open_contexts_model: %s\n",
                failed == 0 ? "both contexts read back exactly" : "values differ");
  }
  xios_lite::free_world(world);
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
