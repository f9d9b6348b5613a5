// mini_model: a small hybrid atmospheric model that uses every layer of the
// project (see model_run.hpp for one step, model_options.hpp for the options
// and docs/model.md). The last --servers MPI ranks are xios_lite output
// servers; the other processes run the model with the chosen backend.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "bench_report.hpp"
#include "collectives/communicator.hpp"
#include "collectives/ep_comm.hpp"
#include "collectives/self_comm.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "model_options.hpp"
#include "model_run.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/server.hpp"

namespace {

[[noreturn]] void fail(const std::string& where, const std::exception& e) {
  std::fprintf(stderr, "mini_model: %s: %s\n", where.c_str(), e.what());
  std::fflush(stderr);
  // A rank that fails leaves its peers inside collectives: abort them all
  // rather than let them hang.
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

/// The grid the configuration defines: domain "atm", levels of field q1.
model::Grid grid_from_config(const std::string& path) {
  const xios_lite::Config cfg = xios_lite::parse_config(path);
  model::Grid g;
  const auto domain = std::find_if(cfg.domains.begin(), cfg.domains.end(),
                                   [](const xios_lite::DomainDef& d) { return d.id == "atm"; });
  const int q1 = cfg.find_field("q1");
  if (domain == cfg.domains.end() || q1 < 0) {
    throw ep::Error(ep::ErrorKind::kArgument, "mini_model", -1,
                    path + ": needs a domain 'atm' and a 3-D field 'q1'");
  }
  g.ni = domain->ni_glo;
  g.nj = domain->nj_glo;
  g.levels = cfg.levels(cfg.fields[static_cast<std::size_t>(q1)].grid);
  g.timestep_s = static_cast<double>(cfg.calendar.timestep_seconds());
  return g;
}

struct RunContext {
  model::ModelOptions options;
  model::Grid grid;
  bool output = true;  ///< --servers > 0: xios_lite clients and servers
  xios_lite::World world;
  MPI_Comm model_comm = MPI_COMM_NULL;  ///< the model processes (world.local with output)
  std::string config;
};

/// The phase table as model_bench records (demos/bench schema): test "step"
/// (the time loop of the slowest rank per step) and one test per phase (per
/// step: mean, min and max over the ranks as t_avg, t_min, t_max); mode =
/// the backend. Written by the model's rank 0.
void write_model_records(const RunContext& ctx, const model::PhaseSummary& summary,
                         const std::string& mode) {
  int processes = 1;
  MPI_Comm_size(ctx.model_comm, &processes);
  const int steps = ctx.options.steps;
  bench::Report report("model_bench");
  const auto add = [&](const std::string& test, double min_s, double avg_s, double max_s) {
    bench::Record record;
    record.test = test;
    record.mode = mode;
    record.ranks = processes;
    record.threads = model::threads_of_process(ctx.options, 0);
    record.iterations = steps;
    record.repetitions = 1;
    record.time = {1e6 * min_s / steps, 1e6 * avg_s / steps, 1e6 * max_s / steps};
    report.add(std::move(record));
  };
  add("step", summary.wall, summary.wall, summary.wall);
  static constexpr const char* kTests[] = {"compute", "halo", "transpose", "solver", "output"};
  for (std::size_t p = 0; p < summary.mean.size(); ++p) {
    add(kTests[p], summary.min[p], summary.mean[p], summary.max[p]);
  }
  if (!ctx.options.json.empty()) report.write_json(ctx.options.json);
  if (!ctx.options.csv.empty()) report.write_csv(ctx.options.csv);
}

/// The compute-only floor (--no-communication): this rank's subdomain of
/// the real layout, run alone on a collectives::SelfComm as a periodic 1 x 1
/// domain, so every halo exchange, transposition and global sum of the step
/// is a local copy of the same size. The real communicator `comm` only
/// lines the ranks up before the time loop and gathers the phase times
/// after it. The solve is this subdomain's own Helmholtz problem: the same
/// operator and vector sizes, its iteration count may differ from the
/// global problem's by a few (printed per rank range). Collective over `comm`.
template <collectives::Communicator C>
void run_floor_rank(const C& comm, const RunContext& ctx) {
  const std::array<int, 2> layout = model::process_grid(comm.size());
  const collectives::Decomposition d =
      collectives::Decomposition::even(ctx.grid.ni, ctx.grid.nj, layout[0], layout[1], true, true);
  const int bx = comm.rank() % layout[0];
  const int by = comm.rank() / layout[0];
  model::Grid local = ctx.grid;
  local.ni = d.x_sizes[static_cast<std::size_t>(bx)];
  local.nj = d.y_sizes[static_cast<std::size_t>(by)];
  model::ModelOptions options = ctx.options;
  model::ModelRank<collectives::SelfComm> model(collectives::SelfComm(), local, options);
  const bool lead = comm.rank() == 0;
  if (lead) {
    std::printf(
        "mini_model: compute-only floor: %d x %d x %d grid, %d model ranks (%s backend, %d x %d "
        "subdomains, rank 0's %d x %d), halo width %d; no communication in the time loop\n",
        ctx.grid.ni, ctx.grid.nj, ctx.grid.levels, comm.size(),
        model::backend_name(ctx.options.backend), layout[0], layout[1], local.ni, local.nj,
        model.halo_width());
    std::fflush(stdout);
  }
  int token = 0;  // start together: the slowest rank's loop is the step
  comm.library_allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_SUM);
  const auto t0 = std::chrono::steady_clock::now();
  const model::PhaseTimer timer = model.run(nullptr, lead && !ctx.options.quiet);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const model::PhaseSummary summary = model::summarise_phases(comm, timer, wall);
  if (!lead) return;
  model::print_phase_table(stdout, summary, ctx.options.steps);
  if (!ctx.options.json.empty() || !ctx.options.csv.empty()) {
    write_model_records(ctx, summary, "floor.compute_only");
  }
  std::fflush(stdout);
}

/// One model rank from definition to finalise. Collective over all ranks of
/// `comm` and all output clients.
/// `endpoint`: this rank's output client endpoint (nullptr without output).
template <collectives::Communicator C>
void run_rank(const C& comm, const ep::Communicator* endpoint, const RunContext& ctx) {
  if (ctx.options.no_communication) {
    run_floor_rank(comm, ctx);
    return;
  }
  const bool lead = comm.rank() == 0;
  std::optional<xios_lite::Client> out;
  if (ctx.output) {
    xios_lite::ClientOptions client_options;
    client_options.mode = ctx.options.output == model::OutputMode::kEndpoints
                              ? xios_lite::Mode::kEndpoints
                              : xios_lite::Mode::kFunneled;
    client_options.print_report = !ctx.options.quiet;
    out.emplace(*endpoint, ctx.world, ctx.config, client_options);
  }
  model::ModelRank<C> model(comm, ctx.grid, ctx.options);
  if (lead) {
    const auto layout = model.layout();
    const std::string output =
        ctx.output
            ? "xios_lite " + std::string(model::output_mode_name(ctx.options.output)) +
                  " output, " + std::to_string(ctx.world.server_processes) + " server process(es)"
            : std::string("no output (--servers 0)");
    std::printf(
        "mini_model: %d x %d x %d grid, %d tracers, %d model ranks (%s backend, %d x %d "
        "subdomains), halo width %d, %s\n",
        ctx.grid.ni, ctx.grid.nj, ctx.grid.levels, model::kTracers, comm.size(),
        model::backend_name(ctx.options.backend), layout[0], layout[1], model.halo_width(),
        output.c_str());
    std::fflush(stdout);
  }
  if (out) {
    out->set_domain_block("atm", model.block());
    out->close_definition();
  }
  const auto mass0 = model.total_mass();
  const auto t0 = std::chrono::steady_clock::now();
  const model::PhaseTimer timer = model.run(out ? &*out : nullptr, lead && !ctx.options.quiet);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto mass1 = model.total_mass();
  const model::PhaseSummary summary = model::summarise_phases(comm, timer, wall);
  if (out) (void)out->finalise();  // EP rank 0 prints the servers' report
  if (lead) {
    std::printf("\n# tracer mass (sum over all cells)\n%-6s %22s %22s %12s\n", "tracer", "initial",
                "final", "rel. change");
    for (int t = 0; t < model::kTracers; ++t) {
      const double a = mass0[static_cast<std::size_t>(t)];
      const double b = mass1[static_cast<std::size_t>(t)];
      std::printf("q%-5d %22.15e %22.15e %12.3e\n", t + 1, a, b, (b - a) / a);
    }
    model::print_phase_table(stdout, summary, ctx.options.steps);
    if (!ctx.options.json.empty() || !ctx.options.csv.empty()) {
      write_model_records(ctx, summary, model::backend_name(ctx.options.backend));
    }
    if (!ctx.output) {
      std::fflush(stdout);
      return;
    }
    std::printf("\nNetCDF output in %s:\n", std::filesystem::current_path().c_str());
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(".")) {
      if (entry.path().extension() == ".nc") files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) std::printf("  %s\n", f.c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  RunContext ctx;
  try {
    // Every rank parses the same argv, so every rank takes the same branch.
    ctx.options = model::parse_model_options(argc, argv);
  } catch (const std::exception& e) {
    if (world_rank == 0) {
      std::fprintf(stderr, "mini_model: %s\n\n%s", e.what(), model::model_usage().c_str());
    }
    MPI_Finalize();
    return 2;
  }
  if (ctx.options.help) {
    if (world_rank == 0) std::fputs(model::model_usage().c_str(), stdout);
    MPI_Finalize();
    return 0;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (world_rank == 0) std::fprintf(stderr, "mini_model: MPI_THREAD_MULTIPLE is not available\n");
    MPI_Finalize();
    return 2;
  }
  try {
    ctx.config = std::filesystem::absolute(ctx.options.config).string();
    for (std::string* path : {&ctx.options.json, &ctx.options.csv}) {
      if (!path->empty()) *path = std::filesystem::absolute(*path).string();
    }
    std::error_code ec;
    std::filesystem::create_directories(ctx.options.output_dir, ec);  // every rank: no race
    std::filesystem::current_path(ctx.options.output_dir);
    ctx.grid = grid_from_config(ctx.config);
    ctx.output = ctx.options.servers > 0;
    if (ctx.output) {
      ctx.world = xios_lite::split_world(
          MPI_COMM_WORLD, xios_lite::role_of_last_ranks(MPI_COMM_WORLD, ctx.options.servers));
      ctx.model_comm = ctx.world.local;
    } else {
      ctx.model_comm = MPI_COMM_WORLD;
    }
  } catch (const std::exception& e) {
    fail("rank " + std::to_string(world_rank) + ": setup", e);
  }

  if (ctx.output && ctx.world.role == xios_lite::Role::kServer) {
    try {
      xios_lite::ServerOptions server_options;
      server_options.threads = ctx.options.server_threads;
      (void)xios_lite::run_server(ctx.world, ctx.config, server_options);
    } catch (const std::exception& e) {
      fail("server rank " + std::to_string(world_rank), e);
    }
  } else {
    int process = 0;
    MPI_Comm_rank(ctx.model_comm, &process);
    const int threads = model::threads_of_process(ctx.options, process);
    try {
      if (ctx.options.backend == model::Backend::kEp) {
        std::vector<ep::Communicator> eps;
#pragma omp parallel num_threads(threads) default(none) shared(eps, ctx, threads, world_rank)
        {
#pragma omp single
          eps = ep::create_endpoints(ctx.model_comm, threads);
          ep::Communicator& endpoint = eps[static_cast<std::size_t>(omp_get_thread_num())];
          try {
            run_rank(collectives::EpComm(endpoint), &endpoint, ctx);
          } catch (const std::exception& e) {
            fail("ep rank " + std::to_string(endpoint.rank()), e);
          }
          endpoint.free();
        }
      } else {
        // One endpoint per process for the output: the master thread is the
        // process's only MPI caller, as in a funneled model.
        std::vector<ep::Communicator> eps;
        if (ctx.output) eps = ep::create_endpoints(ctx.model_comm, 1);
        const ep::Communicator* endpoint = eps.empty() ? nullptr : &eps[0];
        if (ctx.options.backend == model::Backend::kMpi) {
          run_rank(collectives::MpiComm(ctx.model_comm), endpoint, ctx);
        } else {
          run_rank(collectives::FunneledComm(ctx.model_comm, threads), endpoint, ctx);
        }
        if (!eps.empty()) eps[0].free();
      }
    } catch (const std::exception& e) {
      fail("process " + std::to_string(process), e);
    }
  }
  if (ctx.output) xios_lite::free_world(ctx.world);
  MPI_Finalize();
  return 0;
}
