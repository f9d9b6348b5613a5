// XIOS's launch: the clients call initialize() (xios_initialize), open the
// context "atmosphere" (define, close), then "surface" on the SAME
// processes, send to both alternately at every step and finalise each; the
// servers, started knowing nothing, serve both at once (serve_contexts).
// Both files are read back value by value. The definitions travel as text:
// the surface context the clients send has a field the file on disk does
// not have, and the servers write it. A context whose text does not parse
// on the servers is refused on every client with the parser's message, and
// the servers go on; a second context with one_file files over two server
// processes is refused (the NetCDF lock rule of serve_contexts).
//
// Shapes: r3t1 (2 client processes, 1 server process), r4t1 (2 and 2, the
// atmosphere in one_file: parallel NetCDF beside the surface's
// multiple_file), r3t2 (2 client processes x 2 threads: each thread a
// Client of each context).
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/contexts.hpp"

namespace {

using namespace xios_test;

constexpr int kAtmNi = 8;
constexpr int kAtmNj = 6;
constexpr int kSrfNi = 5;
constexpr int kSrfNj = 4;
constexpr int kSteps = 4;  // 1 h each: two 2 h averages of tas, four instants of hfls

// A client of context `link` on endpoint `comm` with the definitions
// `defs` (`path` names them in messages), printing no report: its uneven
// block of `domain` (ni x nj points) in `block`, set, and the definition
// closed. Collective over the context's clients (close_definition).
std::unique_ptr<xios_lite::Client> defined_client(const ep::Communicator& comm,
                                                  const xios_lite::ContextLink& link,
                                                  std::shared_ptr<const xios_lite::Config> defs,
                                                  const std::string& path, const char* domain,
                                                  int ni, int nj, xios_lite::Block& block) {
  xios_lite::ClientOptions o;
  o.connection_tag = link.connection_tag;
  o.definitions = std::move(defs);
  o.print_report = false;
  auto client = std::make_unique<xios_lite::Client>(comm, link.world, path, o);
  block = uneven_block(comm, ni, nj);
  client->set_domain_block(domain, block);
  client->close_definition();
  return client;
}

double hfls_at(int s, int j, int i) { return 100.0 + 10.0 * s + 0.1 * j + 0.001 * i; }
double evap_at(int s, int j, int i) { return -1.0 * s - 0.01 * j - 0.0001 * i; }

int server_count() { return ep_test::world_size() >= 4 ? 2 : 1; }

std::string config(const std::string& dir, const std::string& atm_type,
                   const std::string& srf_type) {
  return config_file(
      "open_contexts.xml",
      {{"DIR", dir}, {"ATM_TYPE", atm_type}, {"SRF_TYPE", srf_type}, {"TIMEOUT", "8"}});
}

// The surface context as the model edited it at run time (XIOS's
// xios_add_child): a field "evap" the file on disk does not have.
// Called by every thread of a parallel region: makes `eps`, one endpoint per
// thread over `local` (collective over local's processes, once), and returns
// this thread's, made the endpoint the test's messages name.
ep::Communicator& endpoint_of_this_thread(std::vector<ep::Communicator>& eps, MPI_Comm local) {
#pragma omp single
  eps = ep::create_endpoints(local, omp_get_num_threads());
  ep::Communicator& mine = eps[static_cast<std::size_t>(omp_get_thread_num())];
  ep_test::set_current_endpoint(mine.rank());
  return mine;
}

// initialize() over MPI_COMM_WORLD, the last server_count() processes
// serving. Collective over MPI_COMM_WORLD.
xios_lite::World initialize_world() {
  return xios_lite::initialize(MPI_COMM_WORLD,
                               xios_lite::role_of_last_ranks(MPI_COMM_WORLD, server_count()));
}

std::string with_evap(std::string xml) {
  const auto replace = [&xml](const std::string& from, const std::string& to) {
    const auto at = xml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    xml.replace(at, from.size(), to);
  };
  replace(R"(<field id="hfls" grid_ref="srf_g" unit="W m-2" operation="instant"/>)",
          R"(<field id="hfls" grid_ref="srf_g" unit="W m-2" operation="instant"/>)"
          R"(<field id="evap" grid_ref="srf_g" unit="kg m-2 s-1" operation="instant"/>)");
  replace(R"(<field field_ref="hfls"/>)", R"(<field field_ref="hfls"/><field field_ref="evap"/>)");
  return xml;
}

// The server processes' run; `timeout_s` bounds their wait for contexts.
std::string serve(const xios_lite::World& w, std::optional<double> timeout_s = std::nullopt) {
  return error_of([&] {
    xios_lite::ServerOptions options;
    options.threads = 1;
    options.finalise_timeout_s = timeout_s;
    (void)xios_lite::serve_contexts(w, options);
  });
}

// The global field of a file written by `servers` server processes: one
// file, or (multiple_file over two) the two parts' rows, record by record.
std::vector<double> read_global(const std::string& stem, const std::string& var, bool one_file,
                                int servers, int nj, int ni) {
  if (one_file || servers == 1) return read_var(stem + ".nc", var);
  const std::vector<double> a = read_var(stem + "_0.nc", var);
  const std::vector<double> b = read_var(stem + "_1.nc", var);
  const auto rows_a = static_cast<std::size_t>(dim_len(stem + "_0.nc", "lat"));
  const auto rows_b = static_cast<std::size_t>(dim_len(stem + "_1.nc", "lat"));
  EXPECT_EQ(rows_a + rows_b, static_cast<std::size_t>(nj));
  const auto row = static_cast<std::size_t>(ni);
  std::vector<double> out;
  const std::size_t records = a.size() / (rows_a * row);
  for (std::size_t r = 0; r < records; ++r) {
    out.insert(out.end(), a.begin() + static_cast<long>(r * rows_a * row),
               a.begin() + static_cast<long>((r + 1) * rows_a * row));
    if (r * rows_b * row < b.size()) {
      out.insert(out.end(), b.begin() + static_cast<long>(r * rows_b * row),
                 b.begin() + static_cast<long>((r + 1) * rows_b * row));
    }
  }
  return out;
}

struct Scenario {
  std::string dir;
  std::string atm_type = "multiple_file";
  std::string srf_type = "multiple_file";
  bool edited_surface = false;  // the clients' surface text adds "evap"
};

// Errors collected from every thread of a client process.
struct Errors {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(const std::string& e) {
    if (e.empty()) return;
    const std::lock_guard lock(mutex);
    list.push_back(e);
  }
};

// A launch whose contexts open at run time: its servers serve until
// close_contexts and must end without an error, its client processes run
// clients(world). Collective over MPI_COMM_WORLD.
template <class Clients>
void serve_or_run_clients(Clients&& clients) {
  xios_lite::World w = initialize_world();
  if (w.role == xios_lite::Role::kServer) {
    EXPECT_EQ(serve(w), "");
  } else {
    clients(w);
  }
  xios_lite::free_world(w);
}

// The clients: the atmosphere opened, defined and closed, then the surface
// on the same processes, then the time loop over both.
void run_clients(const xios_lite::World& w, const Scenario& sc, const std::string& text,
                 Errors& errors) {
  const std::string atm_xml = text;
  const std::string srf_xml = sc.edited_surface ? with_evap(text) : text;
  const std::string path = sc.dir + "/iodef.xml";  // names the definitions in messages only
  const auto atm_defs = std::make_shared<const xios_lite::Config>(
      xios_lite::parse_config_string(atm_xml, path, "atmosphere"));
  const auto srf_defs = std::make_shared<const xios_lite::Config>(
      xios_lite::parse_config_string(srf_xml, path, "surface"));
  xios_lite::ContextLink atm;
  errors.add(error_of([&] { atm = xios_lite::open_context(w, w.local, "atmosphere", atm_xml); }));
  if (!errors.list.empty()) return;
  xios_lite::ContextLink srf;
  std::string srf_error;
  std::vector<ep::Communicator> atm_eps;
  std::vector<ep::Communicator> srf_eps;
#pragma omp parallel
  {
    ep::Communicator& ca = endpoint_of_this_thread(atm_eps, atm.world.local);
    std::unique_ptr<xios_lite::Client> a;
    xios_lite::Block ba;
    errors.add(error_of(
        [&] { a = defined_client(ca, atm, atm_defs, path, "atm_d", kAtmNi, kAtmNj, ba); }));
    // XIOS's order: the second context opened once the first is defined.
#pragma omp barrier
#pragma omp master
    {
      srf_error = error_of([&] {
        srf = xios_lite::open_context(w, w.local, "surface", srf_xml);
        srf_eps = ep::create_endpoints(srf.world.local, omp_get_num_threads());
      });
    }
#pragma omp barrier
    std::unique_ptr<xios_lite::Client> b;
    xios_lite::Block bb;
    if (srf_error.empty()) {
      ep::Communicator& cb = srf_eps[static_cast<std::size_t>(omp_get_thread_num())];
      errors.add(error_of(
          [&] { b = defined_client(cb, srf, srf_defs, path, "srf_d", kSrfNi, kSrfNj, bb); }));
    }
    errors.add(error_of([&] {
      for (int s = 1; s <= kSteps && a && b; ++s) {
        a->update_calendar(s);
        a->send_field("tas",
                      block_values(ba, 1, [&](int, int j, int i) { return tas_at(s, j, i); }));
        b->update_calendar(s);
        b->send_field("hfls",
                      block_values(bb, 1, [&](int, int j, int i) { return hfls_at(s, j, i); }));
        if (sc.edited_surface) {
          b->send_field("evap",
                        block_values(bb, 1, [&](int, int j, int i) { return evap_at(s, j, i); }));
        }
      }
      if (a) (void)a->finalise();
      if (b) (void)b->finalise();
    }));
    a.reset();
    b.reset();
    ca.free();
    if (srf_error.empty()) srf_eps[static_cast<std::size_t>(omp_get_thread_num())].free();
  }
  errors.add(srf_error);
  xios_lite::free_world(atm.world);
  if (srf_error.empty()) xios_lite::free_world(srf.world);
}

// One run of the scenario; returns this process's errors (clients) or the
// server's error.
std::vector<std::string> run_scenario(const Scenario& sc) {
  const std::string text = config(sc.dir, sc.atm_type, sc.srf_type);
  write_file(sc.dir + "/iodef.xml", text);  // the file on disk: without "evap"
  xios_lite::World w = initialize_world();
  EXPECT_TRUE(w.open_contexts);
  Errors errors;
  if (w.role == xios_lite::Role::kServer) {
    errors.add(serve(w));
  } else {
    run_clients(w, sc, text, errors);
    errors.add(error_of([&] { xios_lite::close_contexts(w); }));
  }
  xios_lite::free_world(w);
  return errors.list;
}

void check_files(const Scenario& sc) {
  const int servers = server_count();
  const std::vector<double> tas = two_step_means(kSteps, kAtmNj, kAtmNi);
  std::vector<double> hfls;
  std::vector<double> evap;
  for (int s = 1; s <= kSteps; ++s) {
    for (int j = 0; j < kSrfNj; ++j) {
      for (int i = 0; i < kSrfNi; ++i) {
        hfls.push_back(hfls_at(s, j, i));
        evap.push_back(evap_at(s, j, i));
      }
    }
  }
  const std::vector<double> got_tas =
      read_global(sc.dir + "/atm", "tas", sc.atm_type == "one_file", servers, kAtmNj, kAtmNi);
  ASSERT_EQ(got_tas.size(), tas.size());
  for (std::size_t x = 0; x < tas.size(); ++x) EXPECT_NEAR(got_tas[x], tas[x], 1e-12) << x;
  EXPECT_EQ(
      read_global(sc.dir + "/surface", "hfls", sc.srf_type == "one_file", servers, kSrfNj, kSrfNi),
      hfls);
  if (sc.edited_surface) {
    EXPECT_EQ(read_global(sc.dir + "/surface", "evap", sc.srf_type == "one_file", servers, kSrfNj,
                          kSrfNi),
              evap);
  }
  const std::string srf_file =
      sc.srf_type == "one_file" || servers == 1 ? "/surface.nc" : "/surface_0.nc";
  const std::string atm_file = sc.atm_type == "one_file" || servers == 1 ? "/atm.nc" : "/atm_0.nc";
  EXPECT_EQ(text_att(sc.dir + srf_file, "time", "calendar"), "noleap");
  EXPECT_EQ(text_att(sc.dir + atm_file, "time", "calendar"), "gregorian");
}

// Coupled models: each client process opens its own context at the same
// time as the other (disjoint client sets), so both openings and both
// connections are in flight together; their tags come from different
// processes' counters, the same numbers (this test runs first: both
// processes open their first context), and must not cross-match. The
// surface runs the funneled mode (its masters connect).
TEST(XiosOpenContexts, DisjointClientsOpenAtTheSameTime) {
  if (ep_test::world_size() < 3) GTEST_SKIP() << "two client processes and a server";
  const std::string dir = scratch_dir("open_contexts_disjoint");
  const std::string text = config(dir, "multiple_file", "multiple_file");
  serve_or_run_clients([&](xios_lite::World& w) {
    int process = 0;
    MPI_Comm_rank(w.local, &process);
    // Process 0 runs the atmosphere, the others the surface.
    const bool atm = process == 0;
    MPI_Comm mine = MPI_COMM_NULL;
    MPI_Comm_split(w.local, atm ? 0 : 1, process, &mine);
    const std::string name = atm ? "atmosphere" : "surface";
    Errors errors;
    xios_lite::ContextLink link;
    errors.add(error_of([&] { link = xios_lite::open_context(w, mine, name, text); }));
    if (errors.list.empty()) {
      const auto defs = std::make_shared<const xios_lite::Config>(
          xios_lite::parse_config_string(text, "iodef.xml", name));
      std::vector<ep::Communicator> eps;
#pragma omp parallel
      {
        ep::Communicator& comm = endpoint_of_this_thread(eps, link.world.local);
        errors.add(error_of([&] {
          // The tag from the context's World (World::connection_tag); the
          // surface's processes funnel their threads through the master.
          xios_lite::ClientOptions o;
          o.mode = atm ? xios_lite::Mode::kEndpoints : xios_lite::Mode::kFunneled;
          o.definitions = defs;
          o.print_report = false;
          xios_lite::Client c(comm, link.world, "iodef.xml", o);
          const int ni = atm ? kAtmNi : kSrfNi;
          const int nj = atm ? kAtmNj : kSrfNj;
          const xios_lite::Block b = uneven_block(comm, ni, nj);
          c.set_domain_block(atm ? "atm_d" : "srf_d", b);
          c.close_definition();
          for (int s = 1; s <= kSteps; ++s) {
            c.update_calendar(s);
            c.send_field(atm ? "tas" : "hfls", block_values(b, 1, [&](int, int j, int i) {
                           return atm ? tas_at(s, j, i) : hfls_at(s, j, i);
                         }));
          }
          (void)c.finalise();
        }));
        comm.free();
      }
      xios_lite::free_world(link.world);
    }
    MPI_Comm_free(&mine);
    errors.add(error_of([&] { xios_lite::close_contexts(w); }));
    EXPECT_TRUE(errors.list.empty()) << errors.list.front();
  });
  MPI_Barrier(MPI_COMM_WORLD);
  if (is_reader()) {
    Scenario sc;
    sc.dir = dir;
    check_files(sc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosOpenContexts, TwoContextsOnTheSameProcessesAlternately) {
  if (ep_test::world_size() < 3) GTEST_SKIP() << "two client processes and a server";
  Scenario sc;
  sc.dir = scratch_dir("open_contexts");
  // Over two server processes the atmosphere writes one shared file
  // (parallel NetCDF) while the surface writes one file per process.
  if (server_count() > 1) sc.atm_type = "one_file";
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::string> errors = run_scenario(sc);
  EXPECT_TRUE(errors.empty()) << errors.front();
  MPI_Barrier(MPI_COMM_WORLD);
  if (is_reader()) check_files(sc);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosOpenContexts, EditedDefinitionsReachTheServers) {
  if (ep_test::world_size() < 3) GTEST_SKIP() << "two client processes and a server";
  Scenario sc;
  sc.dir = scratch_dir("open_contexts_edited");
  sc.edited_surface = true;
  const std::vector<std::string> errors = run_scenario(sc);
  EXPECT_TRUE(errors.empty()) << errors.front();
  MPI_Barrier(MPI_COMM_WORLD);
  if (is_reader()) {
    check_files(sc);
    // The file on disk never had it: the servers wrote what the clients sent.
    std::ifstream on_disk(sc.dir + "/iodef.xml");
    const std::string disk((std::istreambuf_iterator<char>(on_disk)),
                           std::istreambuf_iterator<char>());
    EXPECT_HAS(disk, "field_ref=\"hfls\"");
    EXPECT_EQ(disk.find("evap"), std::string::npos);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A context whose text the servers cannot parse is refused on every client,
// with the parser's message; the servers end cleanly at close_contexts.
TEST(XiosOpenContexts, UnparsableContextIsRefusedOnEveryClient) {
  if (ep_test::world_size() < 3) GTEST_SKIP() << "two client processes and a server";
  xios_lite::World w = initialize_world();
  const auto t0 = std::chrono::steady_clock::now();
  if (w.role == xios_lite::Role::kServer) {
    EXPECT_EQ(serve(w), "");
  } else {
    const std::string bad = R"(<simulation><context id="broken">
  <calendar type="gregorian" start_date="2000-01-01" timestep="1h"/>
  <domain_definition><domain id="d" ni_glo="4" nj_glo="2" colour="red"/></domain_definition>
</context></simulation>)";
    const std::string e =
        error_of([&] { (void)xios_lite::open_context(w, w.local, "broken", bad, 5.0); });
    EXPECT_HAS(e, "xios_lite::open_context");
    EXPECT_HAS(e, "context 'broken'");
    EXPECT_HAS(e, "the servers refuse it");
    EXPECT_HAS(e, "attribute colour: unknown attribute");
    EXPECT_HAS(e, "definitions of context 'broken' from world rank 0");
    // A good text without the context named.
    const std::string good = config("/tmp", "multiple_file", "multiple_file");
    const std::string missing =
        error_of([&] { (void)xios_lite::open_context(w, w.local, "ghost", good, 5.0); });
    EXPECT_HAS(missing, "context 'ghost'");
    EXPECT_HAS(missing, "the servers refuse it");
    EXPECT_HAS(missing, "no context 'ghost'");
    // The launch's World is not a context's: refused, never a connection
    // nobody answers.
    std::vector<ep::Communicator> eps = ep::create_endpoints(w.local, 1);
    const std::string launch = error_of([&] {
      xios_lite::ClientOptions o;
      o.definitions = std::make_shared<const xios_lite::Config>(
          xios_lite::parse_config_string(good, "iodef.xml", "surface"));
      xios_lite::Client c(eps[0], w, "iodef.xml", o);
    });
    EXPECT_HAS(launch, "the World comes from initialize(): open the context with open_context");
    eps[0].free();
    EXPECT_EQ(error_of([&] { xios_lite::close_contexts(w, 5.0); }), "");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  xios_lite::free_world(w);
  MPI_Barrier(MPI_COMM_WORLD);
}

// No wait without an end: a context whose clients never connect fails on
// its servers after its finalise timeout, naming it; servers that hear of
// no context at all end after their timeout, saying so.
TEST(XiosOpenContexts, NoWaitWithoutAnEnd) {
  if (ep_test::world_size() < 3) GTEST_SKIP() << "two client processes and a server";
  const std::string dir = scratch_dir("open_contexts_waits");
  std::string text = config(dir, "multiple_file", "multiple_file");
  text.replace(text.find(R"(finalise_timeout="8")"), 20, R"(finalise_timeout="1")");
  const auto t0 = std::chrono::steady_clock::now();
  {
    xios_lite::World w = initialize_world();
    if (w.role == xios_lite::Role::kServer) {
      const std::string e = serve(w);
      EXPECT_HAS(e, "xios_lite::serve_contexts: server process ");
      EXPECT_HAS(e, "context 'atmosphere': the clients never connected");
      EXPECT_HAS(e, "within 1 s of the opening");
    } else {
      xios_lite::ContextLink atm;
      EXPECT_EQ(error_of([&] { atm = xios_lite::open_context(w, w.local, "atmosphere", text); }),
                "");
      // ... and no Client of it.
      xios_lite::free_world(atm.world);
      EXPECT_EQ(error_of([&] { xios_lite::close_contexts(w); }), "");
    }
    xios_lite::free_world(w);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {
    xios_lite::World w = initialize_world();
    if (w.role == xios_lite::Role::kServer) {
      EXPECT_HAS(serve(w, 1.0), "no context opened and no close_contexts for 1 s since the start");
    }
    xios_lite::free_world(w);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 8.0);
}

// Two contexts with one_file files over two server processes could
// deadlock on the servers' NetCDF lock: the second is refused, naming the first.
TEST(XiosOpenContexts, SecondParallelFileContextIsRefused) {
  if (server_count() < 2) GTEST_SKIP() << "two server processes";
  const std::string dir = scratch_dir("open_contexts_one_file");
  const std::string text = config(dir, "one_file", "one_file");
  serve_or_run_clients([&](xios_lite::World& w) {
    xios_lite::ContextLink atm = xios_lite::open_context(w, w.local, "atmosphere", text);
    const std::string e =
        error_of([&] { (void)xios_lite::open_context(w, w.local, "surface", text); });
    EXPECT_HAS(e, "context 'surface'");
    EXPECT_HAS(e, "as context 'atmosphere' which is being served");
    // The atmosphere is served as usual: its clients connect and finalise.
    const auto defs = std::make_shared<const xios_lite::Config>(
        xios_lite::parse_config_string(text, "iodef.xml", "atmosphere"));
    std::vector<ep::Communicator> eps = ep::create_endpoints(atm.world.local, 1);
    EXPECT_EQ(error_of([&] {
                xios_lite::Block b;
                (void)defined_client(eps[0], atm, defs, "iodef.xml", "atm_d", kAtmNi, kAtmNj, b)
                    ->finalise();
              }),
              "");
    eps[0].free();
    xios_lite::free_world(atm.world);
    EXPECT_EQ(error_of([&] { xios_lite::close_contexts(w); }), "");
  });
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
