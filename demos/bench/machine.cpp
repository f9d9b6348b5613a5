#include "machine.hpp"

#include <unistd.h>

#include <cstdio>

#if defined(__linux__)
#include <sched.h>
#endif

namespace bench {

int allowed_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return CPU_COUNT(&set);
#else
  return 0;
#endif
}

int online_cpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

double load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1.0;
  double one_minute = -1.0;
  if (std::fscanf(f, "%lf", &one_minute) != 1) one_minute = -1.0;
  std::fclose(f);
  return one_minute;
}

void print_load(std::FILE* out, const char* when) {
  const double load = load_average();
  if (load >= 0) {
    std::fprintf(out, "# load average (1 min) at %s: %.2f on %d CPUs\n", when, load, online_cpus());
  }
}

int widen_affinity_to_all_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  const int n = online_cpus();
  for (int cpu = 0; cpu < n && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &set);
  // The kernel intersects the mask with the cpuset of the container, so asking
  // for every online CPU never grants more than the system allows; it fails
  // only when none of them is allowed, and then the old mask stays.
  (void)sched_setaffinity(0, sizeof set, &set);
#endif
  return allowed_cpus();
}

}  // namespace bench
