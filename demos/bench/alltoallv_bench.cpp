// alltoallv_bench: the alltoallv algorithms of collectives/ (library, burst,
// pairwise, bruck, ring<k>, auto) on endpoints, MPI processes and funneled,
// the same kernel code on each, beside MPI_Alltoallv called directly (mode
// ref.alltoallv). Layout: kernel_bench.hpp.
//
//   mpiexec -n 1 alltoallv_bench --threads 2 --backends ep,funneled   (threaded)
//   mpiexec -n 2 alltoallv_bench --threads 2 --backends mpi,ref       (flat)
//   mpiexec -n 4 alltoallv_bench --threads 2 [--quick]                (mixed)
//
// bytes = one block (every rank sends one block of doubles to every rank,
// uniform sizes). ep, mpi and ref have the grid's ranks; funneled has one
// rank per process, so each of its blocks carries the T x T blocks of its
// threads (T*T*bytes), which the threads copy in and out around the call
// (AlltoallvCall): every mode moves the same data between the same workers. Targets (printed as
// met / NOT met where the launch has both sides): per backend the best
// ring<k> and auto at or below library; ep at or below funneled.
// ALLTOALLV_BENCH_CHECK=arrivals (the default of collectives::alltoallv:
// receivers verify what arrives) or agreed (one agreement round first) times
// the calls with that check (options.check); none or unset, as a plan that
// has checked its counts once runs them, without. ALLTOALLV_BENCH_CHECKED=1
// is the older spelling of arrivals.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/alltoallv.hpp"
#include "kernel_bench.hpp"

namespace {

using bench::kernels::Backend;
using bench::kernels::RefComm;
constexpr const char* kBench = "alltoallv_bench";

/// The name of the timed calls' check level (see the file comment).
std::string timed_check_name() {
  const char* level = std::getenv("ALLTOALLV_BENCH_CHECK");
  const char* old = std::getenv("ALLTOALLV_BENCH_CHECKED");
  if (level != nullptr && *level != '\0') return level;
  return old != nullptr && std::string(old) == "1" ? "arrivals" : "none";
}

/// The timed calls' check level; an unknown name throws.
collectives::AlltoallvCheck timed_check() {
  const std::string name = timed_check_name();
  if (name == "none") return collectives::AlltoallvCheck::kNone;
  if (name == "arrivals") return collectives::AlltoallvCheck::kArrivals;
  if (name == "agreed") return collectives::AlltoallvCheck::kAgreed;
  throw std::runtime_error(std::string(kBench) + ": ALLTOALLV_BENCH_CHECK=" + name +
                           " (none, arrivals or agreed)");
}

/// Fills a send buffer of n blocks so that block j starts with rank*1000 + j.
void fill_blocks(std::vector<double>& send, int n, int block, int rank) {
  for (int j = 0; j < n; ++j) send[static_cast<std::size_t>(j * block)] = rank * 1000.0 + j;
}

/// n uniform blocks of `block` elements: counts, displacements and the send
/// and receive buffers they describe.
void lay_out_blocks(int n, int block, std::vector<int>& counts, std::vector<int>& displs,
                    std::vector<double>& send, std::vector<double>& recv) {
  send.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(block));
  recv.assign(send.size(), -1.0);
  for (int j = 0; j < n; ++j) {
    counts.push_back(block);
    displs.push_back(j * block);
  }
}

/// Whether every received block j starts with j*1000 + rank.
bool blocks_arrived(const std::vector<double>& recv, int n, int block, int rank) {
  for (int j = 0; j < n; ++j) {
    if (recv[static_cast<std::size_t>(j * block)] != j * 1000.0 + rank) return false;
  }
  return true;
}

/// One alltoallv call of a point, with its buffers; the constructor makes a
/// checked (and, for auto, tuning) call and verifies the result.
///
/// Funneled: every thread holds one block for each of the P*T workers, as an
/// ep or mpi rank does. A call is what a funneled model does around its one
/// MPI call: the threads copy their blocks into the process's send buffer
/// (one T x T group per process), the master exchanges it, the threads copy
/// the blocks meant for them out of the receive buffer.
template <class C>
struct AlltoallvCall {
  static constexpr bool kFunneled = std::is_same_v<C, collectives::FunneledComm>;
  C comm;
  std::vector<double> send, recv;
  std::vector<int> counts, displs;
  collectives::AlltoallvTuner tuner;
  collectives::AlltoallvOptions options;
  collectives::alltoallv_algorithms::Scratch<double, typename C::Request> scratch;
  /// Funneled: each thread's own blocks (P*T of `per_worker` each), by thread.
  std::vector<std::vector<double>> thread_send, thread_recv;
  int per_worker = 0;

  AlltoallvCall(const C& c, int block, const collectives::AlltoallvChoice& choice) : comm(c) {
    const int n = comm.size();
    lay_out_blocks(n, block, counts, displs, send, recv);
    if constexpr (kFunneled) {
      const int t = comm.threads();
      per_worker = block / (t * t);
      const int workers = n * t;
      thread_send.assign(static_cast<std::size_t>(t),
                         std::vector<double>(static_cast<std::size_t>(workers * per_worker)));
      thread_recv.assign(thread_send.size(), std::vector<double>(thread_send[0].size(), -1.0));
      for (int me = 0; me < t; ++me) {
        fill_blocks(thread_send[static_cast<std::size_t>(me)], workers, per_worker,
                    comm.rank() * t + me);
      }
    } else {
      fill_blocks(send, n, block, comm.rank());
    }
    options.algorithm = choice.algorithm;
    options.k = choice.k;
    options.tuner = &tuner;
    options.agreed_block_bytes = static_cast<std::size_t>(block) * sizeof(double);
    call();
    bool right = true;
    if constexpr (kFunneled) {
      const int t = comm.threads();
      for (int me = 0; me < t; ++me) {
        right = right && blocks_arrived(thread_recv[static_cast<std::size_t>(me)], n * t,
                                        per_worker, comm.rank() * t + me);
      }
    } else {
      right = blocks_arrived(recv, n, block, comm.rank());
    }
    if (!right) {
      throw std::runtime_error(std::string(kBench) + ": wrong result of " +
                               collectives::alltoallv_name(choice));
    }
    // Checked once; the timed calls are what a plan runs (kNone), unless
    // ALLTOALLV_BENCH_CHECK asks to time a checked call instead.
    options.check = timed_check();
  }
  void call() {
    if constexpr (kFunneled) shuffle(true);
    collectives::alltoallv(comm, std::span<const double>(send), counts, displs,
                           std::span<double>(recv), counts, displs, options, scratch);
    if constexpr (kFunneled) shuffle(false);
  }

 private:
  /// Funneled: block (process q, local thread a -> thread b) sits at
  /// q*T*T + a*T + b of the process buffers. `pack`: every thread a copies its
  /// blocks in; else every thread b copies its blocks out. Shared by the team.
  void shuffle(bool pack) {
    const int t = comm.threads();
    const int n = comm.size();
    const auto bytes = static_cast<std::size_t>(per_worker) * sizeof(double);
    comm.parallel_for(t, [&](int me) {
      for (int q = 0; q < n; ++q) {
        for (int other = 0; other < t; ++other) {
          const auto own = static_cast<std::size_t>((q * t + other) * per_worker);
          const int a = pack ? me : other;
          const int b = pack ? other : me;
          const auto shared = static_cast<std::size_t>(((q * t + a) * t + b) * per_worker);
          if (pack) {
            std::memcpy(send.data() + shared,
                        thread_send[static_cast<std::size_t>(me)].data() + own, bytes);
          } else {
            std::memcpy(thread_recv[static_cast<std::size_t>(me)].data() + own,
                        recv.data() + shared, bytes);
          }
        }
      }
    });
  }
};

/// The reference: MPI_Alltoallv on the same blocks, nothing around it.
template <>
struct AlltoallvCall<RefComm> {
  RefComm comm;
  std::vector<double> send, recv;
  std::vector<int> counts, displs;

  AlltoallvCall(const RefComm& c, int block, const collectives::AlltoallvChoice& /*unused*/)
      : comm(c) {
    const int n = comm.size();
    lay_out_blocks(n, block, counts, displs, send, recv);
    fill_blocks(send, n, block, comm.rank());
    call();
    if (!blocks_arrived(recv, n, block, comm.rank())) {
      throw std::runtime_error(std::string(kBench) + ": wrong result of MPI_Alltoallv");
    }
  }
  void call() {
    bench::check_mpi(
        MPI_Alltoallv(send.data(), counts.data(), displs.data(), MPI_DOUBLE, recv.data(),
                      counts.data(), displs.data(), MPI_DOUBLE, comm.get()),
        "MPI_Alltoallv");
  }
};

std::vector<std::size_t> block_sizes(bool quick) {
  if (quick) return {8, 4096, 65536};
  return {8, 64, 512, 4096, 32768, 131072};
}

}  // namespace

int main(int argc, char** argv) {
  return bench::kernels::run_main(
      argc, argv, kBench,
      [](bench::kernels::Harness& harness, const bench::kernels::Options& options) {
        // Every ring stride the grid has (at least ring1).
        const std::vector<std::string> algorithms = harness.selected_algorithms(
            bench::kernels::alltoallv_algorithms(std::max(2, harness.grid_ranks()) - 1));
        const std::vector<std::size_t> sizes = block_sizes(options.quick);
        bench::Report report(kBench);
        harness.print_launch(kBench);
        if (harness.world_rank() == 0) {
          (void)timed_check();  // an unknown name stops here
          std::printf("# timed calls' check (ALLTOALLV_BENCH_CHECK): %s\n",
                      timed_check_name().c_str());
        }
        for (const std::size_t bytes : sizes) {
          const auto measure = [&](Backend backend, const std::string& algorithm) {
            const collectives::AlltoallvChoice choice = collectives::parse_alltoallv_choice(
                backend == Backend::kRef ? "library" : algorithm);
            const int threads = harness.threads();
            const int per_worker = static_cast<int>(bytes / sizeof(double));
            const int block =
                backend == Backend::kFunneled ? per_worker * threads * threads : per_worker;
            bench::Record record;
            record.test = "alltoallv";
            record.bytes = bytes;
            harness.measure(backend, algorithm, record,
                            bench::kernels::setup_calls<AlltoallvCall>(block, choice), report);
          };
          harness.measure_selected(algorithms, "alltoallv", measure);
        }
        if (harness.world_rank() != 0) return;
        bench::kernels::print_backend_tables(report, "alltoallv",
                                             "alltoallv: bytes = one block; t = time per call",
                                             algorithms, sizes);
        std::printf("# targets (t_avg ratios of this run)\n");
        for (const Backend backend : bench::kernels::kBackends) {
          const std::string b = bench::kernels::backend_name(backend);
          bench::kernels::print_family_target(report, "alltoallv", b, algorithms, "ring", "library",
                                              1.0, sizes);
          bench::kernels::print_target(report, "alltoallv", b + ".auto", b + ".library", 1.0,
                                       sizes);
        }
        bench::kernels::finish_report(report, "alltoallv", algorithms, sizes, options);
      });
}
