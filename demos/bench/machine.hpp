// The machine a benchmark runs on: CPU affinity and load.
//
// mpiexec binds each process to one core when there are no more processes
// than cores (Open MPI 4.1: --bind-to core for np <= 2). A benchmark that then
// runs several threads per process would time threads queueing for that one
// core, not the communication it means to measure. These helpers let such a
// benchmark see and, when it chooses to, lift that binding.
//
// Thread safety: call from the main thread before any OpenMP parallel region;
// affinity is per thread and threads inherit it from their creator, so threads
// that exist already keep their old mask.
#pragma once

#include <cstdio>

namespace bench {

/// CPUs the calling thread may run on (0 when the platform cannot tell).
int allowed_cpus();

/// Online CPUs of the machine (at least 1).
int online_cpus();

/// The 1-minute load average (/proc/loadavg), or a negative value when unknown.
/// Benchmarks print it: on a small shared machine, other jobs are the main
/// source of noise, and busy-polling MPI suffers from them far more than
/// waiters that yield.
double load_average();

/// Prints "# load average (1 min) at <when>: L on N CPUs" to `out` (nothing
/// when the load is unknown), so that every table says how busy the machine was.
void print_load(std::FILE* out, const char* when);

/// Lets the calling thread, and the threads it creates from now on, run on
/// every online CPU the system allows it. Returns allowed_cpus() afterwards;
/// on failure (or a platform without affinity) returns the unchanged count.
int widen_affinity_to_all_cpus();

}  // namespace bench
