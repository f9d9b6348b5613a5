#!/usr/bin/env bash
# `make bench`: runs the benchmarks at full size and writes their JSON (and
# CSV) to bench-results/, one file per benchmark, plus the machine and build
# they ran on (bench-results/environment.json).
#
#   BUILD_DIR=build/release bash scripts/run-bench.sh [ep_pingpong options]
#   BENCH_THREADS=4 ...      threads per process (default 2); ep_collectives
#                            runs 2 processes x BENCH_THREADS threads against
#                            2 * BENCH_THREADS MPI processes (file
#                            ep_collectives), then 1 x BENCH_THREADS against
#                            BENCH_THREADS (ep_collectives.1x<T>); the kernel
#                            benchmarks (alltoallv, transpose, allreduce,
#                            halo, solver) run 1 and 2 processes x
#                            BENCH_THREADS threads against BENCH_THREADS and
#                            2 * BENCH_THREADS MPI processes (files
#                            <bench>.1x<T> and <bench>.2x<T>)
#
# New benchmarks: add a run_bench line below.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/mpi-env.sh

build_dir="${BUILD_DIR:-build/release}"
out="${BENCH_RESULTS:-bench-results}"
threads="${BENCH_THREADS:-2}"
mkdir -p "$out"

# run_bench <name> <processes> <executable relative to the build dir> [args...]
run_bench() {
  local name="$1" procs="$2" exe="$build_dir/$3"
  shift 3
  if [[ ! -x "$exe" ]]; then
    echo "run-bench: $exe is not built (run 'make build')" >&2
    return 1
  fi
  echo "=== $name: $procs processes, OMP_NUM_THREADS=$threads ==="
  # The terminal output is kept beside the JSON: its target verdicts go into
  # docs/benchmarks.md as the benchmark printed them.
  local start=$SECONDS
  OMP_NUM_THREADS="$threads" ep_mpiexec -n "$procs" -x OMP_NUM_THREADS \
    "$exe" --json "$out/$name.json" --csv "$out/$name.csv" "$@" 2>&1 | tee "$out/$name.log"
  echo "=== $name: $((SECONDS - start)) s ==="
}

python3 - "$out/environment.json" "$build_dir" "$threads" <<'PY'
import json, os, platform, subprocess, sys, datetime
path, build_dir, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
def cmd(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""
cache = {}
try:
    for line in open(os.path.join(build_dir, "CMakeCache.txt")):
        for key in ("CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER", "EP_SANITIZER"):
            if line.startswith(key + ":"):
                cache[key] = line.split("=", 1)[1].strip()
except OSError:
    pass
json.dump({
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    "host": platform.node(), "cpus": os.cpu_count(), "kernel": platform.release(),
    "threads_per_process": threads,
    "mpi": (cmd("mpiexec", "--version").splitlines() or [""])[0],
    "git": cmd("git", "rev-parse", "--short", "HEAD"),
    "build": cache,
}, open(path, "w"), indent=2)
PY

run_bench ep_pingpong 2 demos/bench/ep_pingpong "$@"
# Tracing off vs on (docs/ep.md, "Tracing"): one process, two EP threads.
run_bench trace_overhead 1 demos/bench/trace_overhead
# Collectives: EP 2 x T against 2T MPI processes, then EP 1 x T against T.
run_bench ep_collectives $((2 * threads)) demos/bench/ep_collectives --threads "$threads"
run_bench "ep_collectives.1x$threads" "$threads" demos/bench/ep_collectives --threads "$threads"
# Kernels of collectives/: one launch per layout, EP 1 x T against T MPI
# processes and EP 2 x T against 2T (docs/collectives.md).
for kernel in alltoallv_bench transpose_bench allreduce_bench halo_bench solver_bench; do
  for procs in 1 2; do
    run_bench "$kernel.${procs}x$threads" $((procs * threads)) demos/bench/$kernel \
      --threads "$threads"
  done
done
# xios_lite output: 2 client processes x $threads threads + 1 server process.
if [[ -x "$build_dir/demos/bench/output_bench" ]]; then
  run_bench output_bench 3 demos/bench/output_bench --threads "$threads"
fi
echo "run-bench: results in $out/ ($SECONDS s in all)"
# docs/benchmarks.md and its plots (docs/img/bench/) from this run. Debian's
# python3 has matplotlib (install-deps); another python3 first in PATH may not.
/usr/bin/python3 scripts/render_benchmarks.py "$out" "${BENCH_DOCS:-docs}"
