#!/usr/bin/env bash
# Where a benchmark's time goes, in the fair launch that docs/benchmarks.md
# judges: the program runs under `perf record` (sampling the CPU clock, a
# software event, so it works where a virtual machine offers no hardware
# counters), launched as run-bench.sh launches it, and the report lists the
# symbols that hold the most samples, with the share of all samples.
#
#   scripts/profile-fair.sh threaded|flat OUT_STEM PROGRAM [ARGS...]
#
#   threaded   1 process x BENCH_THREADS threads (default: the online CPUs),
#              threads spinning and pinned (ep_mpiexec_threaded)
#   flat       BENCH_THREADS processes bound to a core each (ep_mpiexec_flat)
#
# Writes OUT_STEM.perf (the samples; one file per process, suffixed by its
# rank in a flat launch) and OUT_STEM.txt (the report). Example, the 8-byte
# allreduce of both sides:
#   scripts/profile-fair.sh threaded /tmp/ar-ep build/release/demos/bench/ep_collectives \
#     --modes ep --collectives allreduce --max-bytes 8 --iters 20000 --reps 5
#   scripts/profile-fair.sh flat /tmp/ar-mpi build/release/demos/bench/ep_collectives \
#     --modes mpi --mpi-wait block --keep-binding --collectives allreduce --max-bytes 8 ...
#
# Needs `perf` (Debian: linux-perf), which the project's build and tests do
# not; a kernel that lets the user sample (kernel.perf_event_paranoid <= 2).
set -euo pipefail

if [[ $# -lt 3 || ("$1" != threaded && "$1" != flat) ]]; then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
side="$1"
stem="$2"
shift 2
command -v perf >/dev/null || {
  echo "profile-fair: perf is not installed (apt-get install linux-perf)" >&2
  exit 1
}

# shellcheck source=scripts/mpi-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/mpi-env.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
threads="${BENCH_THREADS:-$(nproc)}"
mkdir -p "$(dirname "$stem")"
rm -f "$stem".perf*

# Each process writes its own file: perf cannot share one between processes.
record=(sh -c 'exec perf record -q -e cpu-clock -F 10000 \
  -o "$0.perf${OMPI_COMM_WORLD_RANK:+.$OMPI_COMM_WORLD_RANK}" "$@"' "$stem")
if [[ "$side" == threaded ]]; then
  ep_mpiexec_threaded "$threads" -n 1 "${record[@]}" "$@" --json "$stem.json" --csv "$stem.csv"
else
  ep_mpiexec_flat -n "$threads" "${record[@]}" "$@" --json "$stem.json" --csv "$stem.csv"
fi

{
  echo "# $side launch, $threads per side: $*"
  echo "# load average (1 min) at the end: $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
  for data in "$stem".perf*; do
    echo "## $(basename "$data"): share of the samples by symbol (self), top 20"
    perf report -q -i "$data" --no-children --sort dso,symbol 2>/dev/null | grep -v '^$' |
      sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//; s/[[:space:]]+$//' | head -20
  done
} | tee "$stem.txt"
