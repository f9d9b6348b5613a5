// limits: the floors of the machine the benchmarks run on, measured without
// any communication library, so that the scoreboard can say how far each
// figure is from what the hardware allows (scripts/render_benchmarks.py,
// the "/ floor" column; docs/benchmarks.md, "Floors").
//
//   build/release/demos/bench/limits [--quick] [--threads T]
//
// Every floor runs on threads pinned to distinct CPUs (the first ones this
// process may use) that spin while they wait. Modes (test = the floor's name):
//
//   floor.line_handoff  two threads bounce one 64-byte cache line: each
//                       writes an 8-byte counter the other waits for; t = half
//                       the round trip, the one-way latency of a line hand-off
//   floor.barrier       a sense-reversing counter barrier of T threads
//                       (--threads, default 2) whose counter and sense share
//                       one 64-byte line; t = one barrier round
//   floor.ring          a single-producer single-consumer ring of 64-byte
//                       slots, each with its own sequence word, carrying
//                       8-byte messages; t = per message, msg_rate = 1/t
//   floor.memcpy        std::memcpy between two cache-warm buffers on one
//                       thread, 8 B to --max-bytes (default 4 MiB, the range
//                       of the kernels' messages); t = per copy, MBps
//   floor.cross_copy    std::memcpy by one thread of a buffer that the other
//                       thread (pinned to another CPU) has just written, into
//                       the copier's own cache-warm buffer, 4 KiB to
//                       --max-bytes; t = per copy, MBps. What a thread pays to
//                       read a neighbour's array (the zero-copy kernels): the
//                       source lines come from the writer's cache, not from
//                       the copier's. Shown beside the floors, not one of
//                       them (the scoreboard's kernel floors are memcpy's)
//   floor.exchange      two threads, each gathering b bytes into its own
//                       target array, half from its own source array and half
//                       from the other thread's, in runs of 128 bytes (the
//                       transposition's x-runs at 64 KiB), then a barrier; and
//                       back (targets to sources, restoring them). t = one
//                       direction, half a round trip. The data movement of a
//                       zero-copy kernel between two cores, at memcpy speed,
//                       with nothing else: what a transposition round trip
//                       (2 t) or a halo exchange (about t) of the same bytes
//                       could cost at best once the bytes must change cores.
//                       Shown beside the floors, not one of them
//
// Method (as the other benchmarks): per point a warm-up (a tenth of the
// iterations, at least 2), then --reps timed batches; min/avg/max are over
// the batches' time per operation. The hand-off, the ring and the copies are
// checked (counters and bytes received as sent), so a broken floor fails
// instead of printing a fast number. With fewer allowed CPUs than threads,
// threads share cores and the run says so: those figures are not floors.
//
// Thread safety: main() owns everything; the floors start and join their own
// threads. Nothing here calls MPI.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench_cli.hpp"
#include "bench_report.hpp"
#include "machine.hpp"

namespace {

constexpr const char* kBenchName = "limits";
constexpr const char* kUsage =
    "usage: limits [--quick] [--threads T] [--modes LIST] [--max-bytes N] [--iters N]\n"
    "              [--reps N] [--json FILE] [--csv FILE]\n"
    "  The machine's floors: a cache line's hand-off between two pinned threads, a\n"
    "  T-thread barrier on one line, an 8-byte SPSC ring, memcpy bandwidth, and\n"
    "  memcpy of a buffer another thread has just written (cross_copy), a\n"
    "  two-thread exchange of arrays in 128-byte runs (exchange).\n"
    "  --quick        a tenth of the iterations, 3 repetitions, 4 memcpy sizes\n"
    "  --threads T    threads of the barrier (default 2; the other floors use 2)\n"
    "  --modes LIST   line_handoff,barrier,ring,memcpy,cross_copy,exchange\n"
    "                 (default: all)\n"
    "  --max-bytes N  largest memcpy, powers of two from 8 B (default 4M)\n"
    "  --iters N      operations per repetition (default: per floor)\n"
    "  --reps N       timed repetitions per point (default 10)\n"
    "  --json FILE    JSON records (default bench-results/limits.json)\n"
    "  --csv FILE     CSV records (default bench-results/limits.csv)\n";

constexpr std::string_view kModes[] = {"line_handoff", "barrier",    "ring",
                                       "memcpy",       "cross_copy", "exchange"};
constexpr std::size_t kLine = 64;
constexpr std::size_t kKiB = 1024;

struct Options {
  bool quick = false;
  int threads = 2;
  std::vector<std::string> modes;
  std::size_t max_bytes = 4 * kKiB * kKiB;
  long iterations = 0;  // 0: the floor's default
  int repetitions = 0;  // 0: 10, or 3 with --quick
  std::string json = "bench-results/limits.json";
  std::string csv = "bench-results/limits.csv";
};

/// Iterations of a floor: --iters, else its default (a tenth with --quick).
long iterations_for(const Options& o, long full) {
  if (o.iterations > 0) return o.iterations;
  return o.quick ? std::max(100L, full / 10) : full;
}

long warmup(long iterations) { return std::max(2L, iterations / 10); }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// Spins until `done()`. Every few thousand polls it yields once: on a
/// shared machine a partner that lost its core then gets it back sooner,
/// while a partner that runs answers long before the first yield.
template <class Done>
void spin_until(Done done) {
  for (unsigned polls = 1; !done(); ++polls) {
    cpu_relax();
    if (polls % 4096 == 0) std::this_thread::yield();
  }
}

/// Keeps the compiler from dropping or merging copies whose result it never reads.
inline void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

// ------------------------------------------------------------ pinning ----

/// The CPUs this process may run on, in order.
std::vector<int> allowed_cpu_list() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  return cpus;
}

/// Runs body(t) on `threads` threads, thread t pinned to the t-th allowed CPU
/// (modulo their count), and rethrows the first exception any of them threw.
/// A thread that fails sets `failed`, which every spin loop of the floors
/// polls, so the others give up instead of waiting for it forever.
template <class Body>
void run_pinned(int threads, const std::vector<int>& cpus, std::atomic<bool>& failed, Body body) {
  std::exception_ptr first;
  std::mutex first_mutex;
  std::vector<std::thread> team;
  team.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    team.emplace_back([&, t] {
      try {
        if (!cpus.empty()) {
          cpu_set_t one;
          CPU_ZERO(&one);
          CPU_SET(cpus[static_cast<std::size_t>(t) % cpus.size()], &one);
          if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof one, &one); rc != 0) {
            throw std::runtime_error("limits: pthread_setaffinity_np failed for thread " +
                                     std::to_string(t) + " (error " + std::to_string(rc) + ")");
          }
        }
        body(t);
      } catch (...) {
        failed.store(true, std::memory_order_relaxed);
        const std::scoped_lock lock(first_mutex);
        if (!first) first = std::current_exception();
      }
    });
  }
  for (std::thread& thread : team) thread.join();
  if (first) std::rethrow_exception(first);
}

/// Thrown inside a floor's thread when a partner failed (the partner's own
/// exception is the one reported).
struct PartnerFailed : std::runtime_error {
  PartnerFailed() : std::runtime_error("limits: a partner thread failed") {}
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bench::Record make_record(std::string_view floor, int threads, std::size_t bytes, long iterations,
                          const std::vector<double>& per_op_seconds) {
  bench::Record record;
  record.test = std::string(floor);
  record.mode = "floor." + std::string(floor);
  record.threads = threads;
  record.bytes = bytes;
  record.iterations = iterations;
  record.repetitions = static_cast<int>(per_op_seconds.size());
  record.time = bench::TimeStats::from_seconds(per_op_seconds);
  record.mbps = static_cast<double>(bytes) / record.time.avg_us;
  return record;
}

// ------------------------------------------------------------- floors ----

/// The sense-reversing counter barrier of floor.barrier, also the start line
/// of every repetition of the other floors. Counter and sense share one line
/// on purpose: that is the floor measured (one line, every thread).
class LineBarrier {
 public:
  LineBarrier(int threads, const std::atomic<bool>& failed) : threads_(threads), failed_(failed) {}

  /// `sense` is the calling thread's own, starting at 0.
  void arrive_and_wait(unsigned& sense) {
    sense ^= 1U;
    if (line_.count.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      line_.count.store(0, std::memory_order_relaxed);
      line_.sense.store(sense, std::memory_order_release);  // releases every arrival's writes
      return;
    }
    spin_until([&] {
      if (failed_.load(std::memory_order_relaxed)) throw PartnerFailed();
      return line_.sense.load(std::memory_order_acquire) == sense;
    });
  }

 private:
  struct alignas(kLine) Line {
    std::atomic<int> count{0};
    std::atomic<unsigned> sense{0};
  };
  Line line_;
  const int threads_;
  const std::atomic<bool>& failed_;
};

bench::Record line_handoff(const Options& o, const std::vector<int>& cpus) {
  const long iterations = iterations_for(o, 200000);
  const int reps = o.repetitions;
  struct alignas(kLine) Line {
    std::atomic<std::uint64_t> value{0};
  };
  const auto line = std::make_unique<Line>();
  std::atomic<bool> failed{false};
  std::vector<double> per_op(static_cast<std::size_t>(reps));
  const long total = warmup(iterations) + static_cast<long>(reps) * iterations;
  // Round trip k: thread 0 writes 2k+1, thread 1 answers 2k+2. The counter is
  // the message, so every hand-off is checked by the wait that ends it.
  auto await = [&](std::uint64_t expected) {
    spin_until([&] {
      if (failed.load(std::memory_order_relaxed)) throw PartnerFailed();
      return line->value.load(std::memory_order_acquire) == expected;
    });
  };
  run_pinned(2, cpus, failed, [&](int t) {
    std::uint64_t k = 0;
    if (t == 1) {
      for (; k < static_cast<std::uint64_t>(total); ++k) {
        await(2 * k + 1);
        line->value.store(2 * k + 2, std::memory_order_release);
      }
      return;
    }
    auto round_trips = [&](long n) {
      for (long i = 0; i < n; ++i, ++k) {
        line->value.store(2 * k + 1, std::memory_order_release);
        await(2 * k + 2);
      }
    };
    round_trips(warmup(iterations));
    for (int r = 0; r < reps; ++r) {
      const Clock::time_point start = Clock::now();
      round_trips(iterations);
      per_op[static_cast<std::size_t>(r)] =
          seconds_since(start) / (2.0 * static_cast<double>(iterations));
    }
  });
  return make_record("line_handoff", 2, sizeof(std::uint64_t), iterations, per_op);
}

bench::Record barrier(const Options& o, const std::vector<int>& cpus) {
  const long iterations = iterations_for(o, 200000);
  const int reps = o.repetitions;
  std::atomic<bool> failed{false};
  LineBarrier line(o.threads, failed);
  std::vector<double> per_op(static_cast<std::size_t>(reps));
  run_pinned(o.threads, cpus, failed, [&](int t) {
    unsigned sense = 0;
    for (long i = 0; i < warmup(iterations); ++i) line.arrive_and_wait(sense);
    for (int r = 0; r < reps; ++r) {
      const Clock::time_point start = Clock::now();
      for (long i = 0; i < iterations; ++i) line.arrive_and_wait(sense);
      if (t == 0) {
        per_op[static_cast<std::size_t>(r)] =
            seconds_since(start) / static_cast<double>(iterations);
      }
    }
  });
  return make_record("barrier", o.threads, 0, iterations, per_op);
}

bench::Record ring(const Options& o, const std::vector<int>& cpus) {
  const long iterations = iterations_for(o, 2000000);
  const int reps = o.repetitions;
  // Each slot owns its line and its sequence word, so producer and consumer
  // share no index: slot s of lap L is free for message m = L*N+s while its
  // sequence is m, and holds message m when it is m+1.
  constexpr std::uint64_t kSlots = 256;
  struct alignas(kLine) Slot {
    std::atomic<std::uint64_t> sequence{0};
    std::uint64_t payload = 0;
  };
  const std::unique_ptr<Slot[]> slots(new Slot[kSlots]);
  for (std::uint64_t s = 0; s < kSlots; ++s) slots[s].sequence.store(s, std::memory_order_relaxed);
  std::atomic<bool> failed{false};
  LineBarrier start_line(2, failed);
  std::vector<double> per_op(static_cast<std::size_t>(reps));
  auto await = [&](const Slot& slot, std::uint64_t expected) {
    spin_until([&] {
      if (failed.load(std::memory_order_relaxed)) throw PartnerFailed();
      return slot.sequence.load(std::memory_order_acquire) == expected;
    });
  };
  run_pinned(2, cpus, failed, [&](int t) {
    unsigned sense = 0;
    std::uint64_t m = 0;
    // The payload is a function of the message number, checked on arrival.
    auto payload_of = [](std::uint64_t n) { return n * 0x9E3779B97F4A7C15ULL; };
    auto produce = [&](long n) {
      for (long i = 0; i < n; ++i, ++m) {
        Slot& slot = slots[m % kSlots];
        await(slot, m);
        slot.payload = payload_of(m);
        slot.sequence.store(m + 1, std::memory_order_release);
      }
    };
    auto consume = [&](long n) {
      for (long i = 0; i < n; ++i, ++m) {
        Slot& slot = slots[m % kSlots];
        await(slot, m + 1);
        if (slot.payload != payload_of(m)) {
          throw std::runtime_error("limits: floor.ring: message " + std::to_string(m) +
                                   " arrived with a wrong payload");
        }
        slot.sequence.store(m + kSlots, std::memory_order_release);
      }
    };
    auto batch = [&](long n) { t == 0 ? produce(n) : consume(n); };
    start_line.arrive_and_wait(sense);
    batch(warmup(iterations));
    for (int r = 0; r < reps; ++r) {
      start_line.arrive_and_wait(sense);
      const Clock::time_point start = Clock::now();
      batch(iterations);
      // The consumer's clock: the batch ends when its last message arrived.
      if (t == 1) {
        per_op[static_cast<std::size_t>(r)] =
            seconds_since(start) / static_cast<double>(iterations);
      }
    }
  });
  bench::Record record = make_record("ring", 2, sizeof(std::uint64_t), iterations, per_op);
  record.pairs = 1;
  record.msg_rate = 1e6 / record.time.avg_us;
  return record;
}

/// A page-aligned buffer, so that copies start on a line and a page.
struct PageFree {
  void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{4096}); }
};
using PageBuffer = std::unique_ptr<std::byte[], PageFree>;
PageBuffer page_buffer(std::size_t bytes) {
  return PageBuffer(new (std::align_val_t{4096}) std::byte[bytes]);
}

/// The copy sizes of a floor: powers of two from `smallest` to --max-bytes,
/// or four of them with --quick.
std::vector<std::size_t> copy_sizes(const Options& o, std::size_t smallest) {
  std::vector<std::size_t> sizes;
  if (o.quick) {
    for (const std::size_t s : {smallest, kKiB, 64 * kKiB}) {
      if (s >= smallest && s < o.max_bytes && (sizes.empty() || s > sizes.back())) {
        sizes.push_back(s);
      }
    }
    sizes.push_back(o.max_bytes);
  } else {
    for (std::size_t s = smallest; s <= o.max_bytes; s *= 2) sizes.push_back(s);
    if (sizes.empty() || sizes.back() != o.max_bytes) sizes.push_back(o.max_bytes);
  }
  return sizes;
}

std::vector<bench::Record> memcpy_floor(const Options& o, const std::vector<int>& cpus) {
  const std::vector<std::size_t> sizes = copy_sizes(o, 8);
  // Two buffers of the largest size, written once so that the timed copies
  // find them mapped (and, up to the cache sizes, cached).
  const PageBuffer src = page_buffer(o.max_bytes);
  const PageBuffer dst = page_buffer(o.max_bytes);
  for (std::size_t i = 0; i < o.max_bytes; ++i) src[i] = static_cast<std::byte>(i * 131 + 7);
  std::memset(dst.get(), 0, o.max_bytes);
  std::vector<bench::Record> records;
  std::atomic<bool> failed{false};
  run_pinned(1, cpus, failed, [&](int) {
    for (const std::size_t bytes : sizes) {
      const long iterations =
          bench::scaled_iterations(iterations_for(o, 20000), 4 * kKiB, bytes, 20);
      auto copies = [&](long n) {
        for (long i = 0; i < n; ++i) {
          std::memcpy(dst.get(), src.get(), bytes);
          escape(dst.get());
        }
      };
      copies(warmup(iterations));
      if (std::memcmp(dst.get(), src.get(), bytes) != 0) {
        throw std::runtime_error("limits: floor.memcpy: the copy of " + bench::format_bytes(bytes) +
                                 " differs from its source");
      }
      std::vector<double> per_op(static_cast<std::size_t>(o.repetitions));
      for (double& seconds : per_op) {
        const Clock::time_point start = Clock::now();
        copies(iterations);
        seconds = seconds_since(start) / static_cast<double>(iterations);
      }
      records.push_back(make_record("memcpy", 1, bytes, iterations, per_op));
    }
  });
  return records;
}

std::vector<bench::Record> cross_copy_floor(const Options& o, const std::vector<int>& cpus) {
  const std::vector<std::size_t> sizes = copy_sizes(o, 4 * kKiB);
  const PageBuffer src = page_buffer(o.max_bytes);
  const PageBuffer dst = page_buffer(o.max_bytes);
  std::memset(src.get(), 0, o.max_bytes);
  std::memset(dst.get(), 0, o.max_bytes);
  std::vector<bench::Record> records;
  std::atomic<bool> failed{false};
  LineBarrier line(2, failed);
  // Round k: thread 0 writes the source with byte k, both meet, thread 1
  // copies it (timed alone) and checks its ends, both meet again before the
  // next write. Only the copy is timed, its own clock around it.
  run_pinned(2, cpus, failed, [&](int t) {
    unsigned sense = 0;
    std::uint64_t k = 0;
    for (const std::size_t bytes : sizes) {
      const long iterations =
          bench::scaled_iterations(iterations_for(o, 4000), 4 * kKiB, bytes, 10);
      auto rounds = [&](long n) {
        double copying = 0;
        for (long i = 0; i < n; ++i, ++k) {
          const auto value = static_cast<std::byte>(k % 251 + 1);
          if (t == 0) std::memset(src.get(), static_cast<int>(value), bytes);
          line.arrive_and_wait(sense);
          if (t == 1) {
            const Clock::time_point start = Clock::now();
            std::memcpy(dst.get(), src.get(), bytes);
            escape(dst.get());
            copying += seconds_since(start);
            if (dst[0] != value || dst[bytes - 1] != value) {
              throw std::runtime_error("limits: floor.cross_copy: the copy of " +
                                       bench::format_bytes(bytes) + " differs from its source");
            }
          }
          line.arrive_and_wait(sense);
        }
        return copying;
      };
      rounds(warmup(iterations));
      std::vector<double> per_op(static_cast<std::size_t>(o.repetitions));
      for (double& seconds : per_op) seconds = rounds(iterations) / static_cast<double>(iterations);
      if (t == 1) records.push_back(make_record("cross_copy", 2, bytes, iterations, per_op));
    }
  });
  return records;
}

std::vector<bench::Record> exchange_floor(const Options& o, const std::vector<int>& cpus) {
  constexpr std::size_t kRun = 128 / sizeof(double);  // doubles per run
  const std::vector<std::size_t> sizes = copy_sizes(o, 4 * kKiB);
  // Per thread a source and a target of the largest size, in doubles.
  const std::size_t most = std::max<std::size_t>(2 * kRun, o.max_bytes / sizeof(double));
  std::array<std::vector<double>, 2> sources;
  std::array<std::vector<double>, 2> targets;
  for (std::size_t t = 0; t < 2; ++t) {
    sources[t].resize(most);
    targets[t].assign(most, 0.0);
    for (std::size_t i = 0; i < most; ++i) sources[t][i] = static_cast<double>(t * most + i);
  }
  std::vector<bench::Record> records;
  std::atomic<bool> failed{false};
  LineBarrier line(2, failed);
  run_pinned(2, cpus, failed, [&](int t) {
    const auto me = static_cast<std::size_t>(t);
    unsigned sense = 0;
    for (const std::size_t bytes : sizes) {
      // n doubles per array, a whole number of run pairs.
      const std::size_t n =
          std::max<std::size_t>(2 * kRun, bytes / sizeof(double)) / (2 * kRun) * (2 * kRun);
      const std::size_t half = n / 2;
      // Forward: run r of the half of source q that belongs to thread t goes
      // to run 2r + q of t's target (interleaved, as a transposition's
      // target takes alternate runs from each source). Backward undoes it:
      // thread t writes its source from both targets.
      auto forward = [&] {
        for (std::size_t q = 0; q < 2; ++q) {
          const double* from = sources[q].data() + me * half;
          for (std::size_t r = 0; r < half / kRun; ++r) {
            std::memcpy(targets[me].data() + (2 * r + q) * kRun, from + r * kRun,
                        kRun * sizeof(double));
          }
        }
        line.arrive_and_wait(sense);
      };
      auto backward = [&] {
        for (std::size_t q = 0; q < 2; ++q) {
          double* to = sources[me].data() + q * half;
          for (std::size_t r = 0; r < half / kRun; ++r) {
            std::memcpy(to + r * kRun, targets[q].data() + (2 * r + me) * kRun,
                        kRun * sizeof(double));
          }
        }
        line.arrive_and_wait(sense);
      };
      const long iterations =
          bench::scaled_iterations(iterations_for(o, 4000), 4 * kKiB, bytes, 10);
      auto round_trips = [&](long count) {
        for (long i = 0; i < count; ++i) {
          forward();
          backward();
        }
      };
      line.arrive_and_wait(sense);
      round_trips(warmup(iterations));
      std::vector<double> per_op(static_cast<std::size_t>(o.repetitions));
      for (double& seconds : per_op) {
        line.arrive_and_wait(sense);
        const Clock::time_point start = Clock::now();
        round_trips(iterations);
        seconds = seconds_since(start) / (2.0 * static_cast<double>(iterations));
      }
      // Every round trip restores the sources; the last forward's targets
      // hold the interleaved runs.
      forward();
      for (std::size_t q = 0; q < 2; ++q) {
        for (std::size_t r = 0; r < half / kRun; ++r) {
          const std::size_t at = (2 * r + q) * kRun;
          const double expected = static_cast<double>(q * most + me * half + r * kRun);
          if (targets[me][at] != expected ||
              sources[me][at] != static_cast<double>(me * most + at)) {
            throw std::runtime_error("limits: floor.exchange: run " + std::to_string(r) +
                                     " of thread " + std::to_string(q) + " arrived wrong at " +
                                     bench::format_bytes(bytes));
          }
        }
      }
      backward();
      if (t == 0) records.push_back(make_record("exchange", 2, bytes, iterations, per_op));
    }
  });
  return records;
}

Options parse(int argc, char** argv) {
  Options o;
  auto max_bytes = static_cast<long long>(o.max_bytes);
  bench::OptionParser parser;
  parser.flag("--quick", o.quick)
      .count("--threads", o.threads)
      .list("--modes", kModes, o.modes)
      .count("--max-bytes", max_bytes)
      .count("--iters", o.iterations)
      .count("--reps", o.repetitions)
      .text("--json", o.json)
      .text("--csv", o.csv);
  parser.parse(argc, argv);
  if (o.threads < 2) {
    throw std::invalid_argument("--threads: " + std::to_string(o.threads) +
                                " (a barrier needs at least 2 threads)");
  }
  if (max_bytes < 8) {
    throw std::invalid_argument("--max-bytes: " + std::to_string(max_bytes) +
                                " (the smallest copy is 8 B)");
  }
  o.max_bytes = static_cast<std::size_t>(max_bytes);
  if (o.repetitions == 0) o.repetitions = o.quick ? 3 : 10;
  return o;
}

void run(const Options& o) {
  const std::vector<int> cpus = allowed_cpu_list();
  const int needed = bench::selected(o.modes, "barrier") ? std::max(2, o.threads) : 2;
  std::printf("# limits: the machine's floors, threads pinned to CPUs");
  for (const int cpu : cpus) std::printf(" %d", cpu);
  std::printf(" (in that order)\n");
  if (std::cmp_less(cpus.size(), needed)) {
    std::printf(
        "# WARNING: %zu CPU(s) allowed for %d threads: threads share cores, and the figures "
        "below are not the machine's floors\n",
        cpus.size(), needed);
  }
  bench::print_load(stdout, "start");
  bench::Report report(kBenchName);
  const bench::TableLayout plain;
  if (bench::selected(o.modes, "line_handoff")) {
    bench::print_header(stdout, "line_handoff: one 64-byte line between 2 threads; t = one way",
                        plain);
    report.add(line_handoff(o, cpus));
    bench::print_row(stdout, report.records().back(), plain);
  }
  if (bench::selected(o.modes, "barrier")) {
    const std::string title = "barrier: sense-reversing, one line, " + std::to_string(o.threads) +
                              " threads; t = one round";
    bench::print_header(stdout, title, plain);
    report.add(barrier(o, cpus));
    bench::print_row(stdout, report.records().back(), plain);
  }
  if (bench::selected(o.modes, "ring")) {
    const bench::TableLayout rate{.pairs = true, .window = false, .msg_rate = true};
    bench::print_header(stdout, "ring: SPSC, 256 slots of 64 B, 8 B messages; t = per message",
                        rate);
    report.add(ring(o, cpus));
    bench::print_row(stdout, report.records().back(), rate);
  }
  if (bench::selected(o.modes, "memcpy")) {
    bench::print_header(stdout, "memcpy: one thread, cache-warm buffers; t = per copy", plain);
    for (bench::Record& record : memcpy_floor(o, cpus)) {
      report.add(std::move(record));
      bench::print_row(stdout, report.records().back(), plain);
    }
  }
  if (bench::selected(o.modes, "cross_copy")) {
    bench::print_header(stdout,
                        "cross_copy: memcpy of a buffer another thread has just written; "
                        "t = per copy",
                        plain);
    for (bench::Record& record : cross_copy_floor(o, cpus)) {
      report.add(std::move(record));
      bench::print_row(stdout, report.records().back(), plain);
    }
  }
  if (bench::selected(o.modes, "exchange")) {
    bench::print_header(stdout,
                        "exchange: 2 threads gather half of each other's array in 128-byte "
                        "runs; t = one direction",
                        plain);
    for (bench::Record& record : exchange_floor(o, cpus)) {
      report.add(std::move(record));
      bench::print_row(stdout, report.records().back(), plain);
    }
  }
  bench::print_load(stdout, "end");
  report.write_json(o.json);
  report.write_csv(o.csv);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse(argc, argv);
  } catch (const std::invalid_argument& error) {
    if (error.what()[0] != '\0') std::fprintf(stderr, "%s: %s\n", kBenchName, error.what());
    std::fputs(kUsage, stderr);
    return error.what()[0] == '\0' ? 0 : 2;
  }
  try {
    run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
