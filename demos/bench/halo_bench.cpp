// halo_bench: the halo exchange of collectives/halo.hpp with each algorithm
// (two_sweep, neighbor, direct, split) on each backend (ep, mpi, funneled),
// side by side, beside the hand-written two-stage exchange on plain MPI
// (mode ref.two_sweep, reference/ref_halo.hpp) and the same exchange
// through an MPI-3 shared-memory window (mode ref.shm). Modes are named
// <backend>.<algorithm>.
//
// Launch layout: kernel_bench.hpp (threaded: --backends ep,funneled; flat:
// --backends mpi,ref; mixed: all). ep, mpi and ref have the grid's ranks on a
// px x py grid of --block x --block subdomains (one level of doubles,
// 9-point halo, periodic in both directions); funneled has one rank per
// process, each owning T of those subdomains' worth of the same global
// domain, its T threads sharing the pack loops. The reference reaches direct
// neighbours only, so it sits out the wide point when w exceeds the block.
// Points: w = 1 and w = 3 on --block (default 128, the 128 x 128),
// and a wide halo, w = --wide (default 20) on --wide-block (default 16)
// subdomains, where neighbours of neighbours take part.
// A fourth point, halo_w3_step, times an exchange plus a 9-point smoothing
// step of the subdomain: the cells that need no halo are computed between
// start() and finish(), the rest after, so kSplit and kDirect can overlap.
// Each point: every mode in turn (interleaved), a checked exchange, warm-up,
// then --reps timed batches of --iters exchanges after a barrier; the time of
// a batch is its slowest rank's. `bytes` is the halo of one subdomain of the
// grid's ranks, ((b + 2w)^2 - b^2) doubles: the same key for every mode and
// launch of a point (what a plan sends depends on its backend: a peer in the
// same process or the rank itself is a copy). The library's plans are bound
// to the field (HaloPlan::bind): ep reads the halo of peers in the same
// process straight out of their arrays.
//
//   mpiexec -n 1 halo_bench --threads 2 --backends ep,funneled [--quick]
//   mpiexec -n 2 halo_bench --threads 2 --backends mpi,ref [--quick]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bench_cli.hpp"
#include "bench_mpi.hpp"
#include "bench_report.hpp"
#include "collectives/halo.hpp"
#include "halo_modes.hpp"
#include "kernel_bench.hpp"
#include "reference/ref_halo.hpp"

namespace {

using bench::kernels::Backend;
using bench::kernels::kBackends;
using bench::kernels::RefComm;
using bench::reference::RefHaloPlan;
using collectives::HaloAlgorithm;

constexpr const char* kBenchName = "halo_bench";
// halo_bench's own options (bench::kernels::start adds the shared ones).
constexpr const char* kOwnUsage =
    "  --block B          subdomain side of the w = 1 and w = 3 points (default 128)\n"
    "  --wide W           halo width of the wide point (default 20)\n"
    "  --wide-block B     subdomain side of the wide point (default 16)\n"
    "  halo_bench: --algorithms of two_sweep, neighbor, direct, split\n";

struct Options : bench::kernels::Options {
  int block = 128;
  int wide = 20;
  int wide_block = 16;
};

bench::kernels::OwnOptions own_options(Options& o) {
  return {.usage = kOwnUsage,
          .add =
              [&o](bench::OptionParser& parser) {
                parser.count("--block", o.block)
                    .count("--wide", o.wide)
                    .count("--wide-block", o.wide_block);
              },
          .repetitions = 10,
          .quick_repetitions = 3,
          .finish = {},
          .iterations = {"exchanges per timed batch", 200, 20}};
}

struct Point {
  std::string test;
  int block;
  int width;
  bool with_step = false;  // exchange + a 9-point smoothing step, overlapped where possible
};

using bench::kernels::halo_mode;
using bench::kernels::kHaloAlgorithms;
using bench::kernels::print_ep_targets;

double cell_value(int gi, int gj) { return gj * 65536.0 + gi; }

/// The plan of a backend: the library's, or the hand-written reference.
/// `shared` (ref.shm) picks the reference's shared-window transport.
template <class C>
struct PlanOf {
  using type = collectives::HaloPlan<C>;
  static type make(const C& comm, const collectives::HaloSpec& spec, bool /*shared*/) {
    return type(comm, spec);
  }
};
template <>
struct PlanOf<RefComm> {
  using type = RefHaloPlan;
  static type make(const RefComm& comm, const collectives::HaloSpec& spec, bool shared) {
    return {comm, spec,
            shared ? RefHaloPlan::Transport::kSharedWindow : RefHaloPlan::Transport::kMessages};
  }
};

/// One mode at one point on this participant: checked exchange, warm-up,
/// timed batches. Returns seconds per exchange of each batch; `bytes` gets
/// this rank's bytes per exchange.
template <class C>
std::vector<double> time_halo(const C& comm, const collectives::HaloSpec& spec, const Options& opt,
                              bool point_step, bool shared, std::size_t& bytes) {
  typename PlanOf<C>::type plan = PlanOf<C>::make(comm, spec, shared);
  const int w = spec.width;
  const int row = plan.nx() + 2 * w;
  std::vector<double> u(plan.field_elements(1), -1.0);
  comm.parallel_for(plan.ny(), [&](int j) {
    for (int i = 0; i < plan.nx(); ++i) {
      u[static_cast<std::size_t>((j + w) * row + i + w)] = cell_value(plan.x0() + i, plan.y0() + j);
    }
  });
  const collectives::HaloField fields[] = {collectives::halo_field<double>(u, 1)};
  // The library's plans are used as persistent ones: bound once, so peers in
  // the same process are read in place (HaloPlan::bind).
  if constexpr (!std::is_same_v<C, RefComm>) plan.bind(fields);
  plan.exchange(fields);
  // Periodic 9-point: every halo cell mirrors a wrapped global cell.
  const auto& d = spec.decomposition;
  for (int j = -w; j < plan.ny() + w; ++j) {
    for (int i = -w; i < plan.nx() + w; ++i) {
      const int gi = ((plan.x0() + i) % d.ni + d.ni) % d.ni;
      const int gj = ((plan.y0() + j) % d.nj + d.nj) % d.nj;
      if (u[static_cast<std::size_t>((j + w) * row + i + w)] != cell_value(gi, gj)) {
        throw std::runtime_error("halo cell (" + std::to_string(i) + ", " + std::to_string(j) +
                                 ") wrong on rank " + std::to_string(comm.rank()));
      }
    }
  }
  bytes = plan.bytes_sent();
  // The step of the with_step points: v = 9-point mean of u. Cells at least
  // w from the subdomain's edge need no halo and run between start() and
  // finish(); the band next to the edge after finish(). Only kSplit and
  // kDirect have messages in flight during the first part.
  std::vector<double> v(u.size(), 0.0);
  auto smooth_rows = [&](int j_lo, int j_hi, int i_lo, int i_hi) {
    comm.parallel_for(j_hi - j_lo, [&](int jj) {
      const int j = j_lo + jj;
      for (int i = i_lo; i < i_hi; ++i) {
        const auto c = static_cast<std::ptrdiff_t>((j + w) * row + i + w);
        double sum = 0.0;
        for (std::ptrdiff_t dj = -1; dj <= 1; ++dj) {
          for (std::ptrdiff_t di = -1; di <= 1; ++di)
            sum += u[static_cast<std::size_t>(c + dj * row + di)];
        }
        v[static_cast<std::size_t>(c)] = sum / 9.0;
      }
    });
  };
  auto one_op = [&] {
    if (!point_step) {
      plan.exchange(fields);
      return;
    }
    plan.start(fields);
    const int lo = std::min(w, plan.ny());
    const int hi = std::max(lo, plan.ny() - w);
    const int ilo = std::min(w, plan.nx());
    const int ihi = std::max(ilo, plan.nx() - w);
    smooth_rows(lo, hi, ilo, ihi);
    plan.finish();
    smooth_rows(0, lo, 0, plan.nx());
    smooth_rows(hi, plan.ny(), 0, plan.nx());
    smooth_rows(lo, hi, 0, ilo);
    smooth_rows(lo, hi, ihi, plan.nx());
  };
  for (long i = 0; i < std::max(2L, opt.iterations / 10); ++i) one_op();
  std::vector<double> per_exchange;
  for (int r = 0; r < opt.repetitions; ++r) {
    int token = 0;  // barrier: the communicator interface has allreduce
    comm.library_allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_SUM);
    const double start = MPI_Wtime();
    for (long i = 0; i < opt.iterations; ++i) one_op();
    per_exchange.push_back((MPI_Wtime() - start) / static_cast<double>(opt.iterations));
  }
  return per_exchange;
}

void run(const Options& opt) {
  bench::kernels::KernelModes modes(MPI_COMM_WORLD, opt.threads, kBenchName, opt.backends);
  const int n = modes.grid_ranks();
  // Plain names, not a structured binding: the lambdas below capture them,
  // which C++20 allows but clang 14 refuses.
  const std::pair<int, int> global_grid = bench::kernels::grid_of(n);
  const int gpx = global_grid.first;
  const int gpy = global_grid.second;
  const std::vector<Point> points{{"halo_w1", opt.block, 1},
                                  {"halo_w3", opt.block, 3},
                                  {"halo_w" + std::to_string(opt.wide), opt.wide_block, opt.wide},
                                  {"halo_w3_step", opt.block, 3, true}};
  bench::Report report(kBenchName);
  const bool root = modes.world_rank() == 0;
  const std::string line = "halo_bench: ep, mpi and ref on " + std::to_string(n) +
                           " ranks, funneled " + std::to_string(modes.ranks(Backend::kFunneled)) +
                           " x " + std::to_string(modes.threads()) +
                           " threads; 9-point halo, one level of doubles, periodic; global grid " +
                           std::to_string(gpx) + " x " + std::to_string(gpy) + " subdomains";
  modes.print_launch(line.c_str());
  for (const Point& point : points) {
    // The key of the point, the same in every launch and backend: the halo
    // of one subdomain of the grid's ranks, (b + 2w)^2 - b^2 doubles.
    const std::size_t side = static_cast<std::size_t>(point.block + 2 * point.width);
    const std::size_t key_bytes =
        (side * side - static_cast<std::size_t>(point.block) * point.block) * sizeof(double);
    std::vector<bench::Record> records;
    const auto measure = [&](Backend b, HaloAlgorithm a, bool shared = false) {
      const auto [px, py] = bench::kernels::grid_of(modes.ranks(b));
      collectives::HaloSpec spec;
      spec.decomposition = collectives::Decomposition::even(gpx * point.block, gpy * point.block,
                                                            px, py, true, true);
      spec.width = point.width;
      spec.algorithm = a;
      if (b == Backend::kRef) {
        if (const std::string why = RefHaloPlan::why_unsupported(spec); !why.empty()) {
          if (root && !shared) {
            std::printf("# %s: no ref mode: %s\n", point.test.c_str(), why.c_str());
          }
          return;
        }
      }
      const auto times = modes.run(b, [&](const auto& comm) {
        std::size_t sent = 0;
        return time_halo(comm, spec, opt, point.with_step, shared, sent);
      });
      if (!root) return;
      bench::Record record;
      record.test = point.test;
      record.mode = shared ? std::string("ref.shm") : halo_mode(b, a);
      record.ranks = modes.record_ranks(b);
      record.threads = modes.record_threads(b);
      record.iterations = opt.iterations;
      record.repetitions = opt.repetitions;
      record.time = bench::TimeStats::from_seconds(*times);
      records.push_back(record);
    };
    for (const HaloAlgorithm a : kHaloAlgorithms) {
      if (!bench::selected(opt.algorithms, collectives::halo_algorithm_name(a))) continue;
      for (const Backend b : kBackends) {
        if (b != Backend::kRef && modes.selected(b)) measure(b, a);
      }
    }
    if (modes.selected(Backend::kRef)) {
      measure(Backend::kRef, HaloAlgorithm::kTwoSweep);
      measure(Backend::kRef, HaloAlgorithm::kTwoSweep, true);
    }
    if (!root) continue;
    for (auto& record : records) {
      record.bytes = key_bytes;
      record.mbps = static_cast<double>(key_bytes) / record.time.avg_us;
      report.add(record);
    }
    std::printf(
        "\n# block %d, w %d; t = time per exchange, bytes = the halo of one subdomain of the "
        "%d-rank grid",
        point.block, point.width, n);
    report.print_table(stdout, point.test, {});
  }
  if (!root) return;
  std::printf("\n# targets (ratios of t_avg in this run)\n");
  for (const Point& point : points) {
    std::size_t key = 0;
    for (const auto& r : report.records()) {
      if (r.test == point.test) key = r.bytes;
    }
    for (const Backend b : kBackends) {
      bench::kernels::print_point_target(stdout, report, "neighbor <= two_sweep", point.test, key,
                                         halo_mode(b, HaloAlgorithm::kNeighbor),
                                         halo_mode(b, HaloAlgorithm::kTwoSweep), 1.0);
    }
    for (const HaloAlgorithm a : kHaloAlgorithms) {
      bench::kernels::print_point_target(stdout, report, "mpi <= 1.2 ref", point.test, key,
                                         halo_mode(Backend::kMpi, a),
                                         halo_mode(Backend::kRef, HaloAlgorithm::kTwoSweep), 1.2);
    }
    // ep against mpi only on one process: the 1xT layout the target is for.
    print_ep_targets(report, point.test, key,
                     modes.processes() == 1 ? "ep <= 0.8 mpi (1xT)" : nullptr, 0.8);
  }
  bench::kernels::write_results(report, opt);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  return bench::kernels::run_main(argc, argv, kBenchName, opt, own_options(opt), [&] { run(opt); });
}
