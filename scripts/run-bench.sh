#!/usr/bin/env bash
# `make bench`: runs the benchmarks and renders docs/benchmarks.md.
#
# Part 0, the machine's floors (demos/bench/limits, no MPI: threads pinned to
# distinct cores), once per round beside the fair runs, merged like them; the
# scoreboard divides every figure by its floor.
# Part 1, the fair runs (judged; the scoreboard of docs/benchmarks.md). The
# shapes fit the cores: T = BENCH_THREADS (default: the online CPUs) threads
# in one process for ep and funneled, T processes for mpi and ref, each side
# launched as its users launch it on dedicated cores (scripts/mpi-env.sh:
# ep_mpiexec_threaded, ep_mpiexec_flat). The two sides cannot share a launch
# (demos/bench/launch_layout.hpp), so each benchmark runs as a threaded and a
# flat launch, alternated over BENCH_ROUNDS rounds (default 3), and
# scripts/bench_merge.py keeps each point's median over the rounds:
#   ep_pingpong, ep_collectives, the kernels of collectives/ (alltoallv,
#   transpose, allreduce, halo, solver), neighbor_bench (MPI's neighbourhood
#   alltoall: blocking, nonblocking, persistent)   threaded / flat
#   model_bench   mini_model, one launch per backend (ep 1 x T, mpi T x 1,
#                 funneled 1 x T), 48 steps without output (judged) and
#                 with output (one more process, the server: printed), and
#                 its compute-only floor (--no-communication, mode
#                 floor.compute_only: every exchange a local copy)
#   output_bench  1 client x 1 thread + 1 server (judged: client time
#                 against sync and against a memcpy of its data), then
#                 1 x T + 1 server (ep against funneled clients; printed)
# Part 2, printed and not judged: the oversubscribed mixed launches, 2
# processes x T threads against 2T processes in one job, as the tests run.
#
# Results: bench-results/fair/ (per launch <bench>.<side>.r<k>.json and the
# merged <bench>.json), bench-results/printed/ (part 2 and the trace
# overhead), environment.json.
#
#   BUILD_DIR=build/release bash scripts/run-bench.sh
#   BENCH_ROUNDS=5 BENCH_THREADS=2 ...
#   BENCH_QUICK=1 ...   the --quick presets and 8 model steps: a check of the
#                       pipeline in a minute, not numbers to quote
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/mpi-env.sh

out="${BENCH_RESULTS:-bench-results}"
threads="${BENCH_THREADS:-$(nproc)}"
rounds="${BENCH_ROUNDS:-3}"
quick=()
output_quick=()
steps=48
if [[ "${BENCH_QUICK:-0}" != 0 ]]; then
  quick=(--quick)
  output_quick=(--steps 5 --reps 1)
  steps=8
fi
fair="$out/fair"
printed="$out/printed"
rm -rf "$fair" "$printed"
mkdir -p "$fair" "$printed"

# launch <file stem> <launcher and its arguments...> -- <program> [args...]:
# runs it with --json/--csv into <file stem>, the terminal output kept beside
# (its target lines go into docs/benchmarks.md as printed).
launch() {
  local stem="$1"
  shift
  local start=$SECONDS
  echo "=== $(basename "$stem") ==="
  "$@" --json "$stem.json" --csv "$stem.csv" 2>&1 | tee "$stem.log"
  echo "=== $(basename "$stem"): $((SECONDS - start)) s ==="
}

threaded() { ep_mpiexec_threaded "$threads" -n 1 "$@"; }
flat() { ep_mpiexec_flat -n "$threads" "$@"; }

python3 - "$out/environment.json" "$build_dir" "$threads" "$rounds" <<'PY'
import json, os, platform, subprocess, sys, datetime
path, build_dir, threads, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
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
    "threads_per_process": threads, "rounds": rounds,
    "load_start": os.getloadavg()[0],
    "mpi": (cmd("mpiexec", "--version").splitlines() or [""])[0],
    "git": cmd("git", "rev-parse", "--short", "HEAD"),
    "build": cache,
}, open(path, "w"), indent=2)
PY

# ---- part 1: fair runs, alternated ----------------------------------------
kernels=(alltoallv_bench transpose_bench allreduce_bench halo_bench solver_bench neighbor_bench)
model="$(ep_built demos/model/mini_model)"
model_run=("$model" --config demos/model/model_iodef.xml --output-dir "$fair/model_output"
  --quiet --steps "$steps")
for ((r = 1; r <= rounds; ++r)); do
  echo "##### fair round $r of $rounds #####"
  launch "$fair/limits.pinned.r$r" "$(ep_built demos/bench/limits)" --threads "$threads" "${quick[@]}"
  # Point-to-point: the thread modes in one process, the process modes in T.
  # Fewer iterations than a sweep of its own: the rounds give the repeats.
  pingpong=(--max-pairs 1 --reps 10 --iters 1000 "${quick[@]}")
  launch "$fair/ep_pingpong.threaded.r$r" threaded "$(ep_built demos/bench/ep_pingpong)" \
    --modes ep_intra,mpi_thread_tags,memcpy "${pingpong[@]}"
  launch "$fair/ep_pingpong.flat.r$r" flat "$(ep_built demos/bench/ep_pingpong)" \
    --modes mpi_proc,ep_inter,memcpy --keep-binding "${pingpong[@]}"
  launch "$fair/ep_collectives.threaded.r$r" threaded "$(ep_built demos/bench/ep_collectives)" \
    --threads "$threads" --modes ep,funneled --mpi-wait block --reps 10 "${quick[@]}"
  launch "$fair/ep_collectives.flat.r$r" flat "$(ep_built demos/bench/ep_collectives)" \
    --threads "$threads" --modes mpi --mpi-wait block --keep-binding --reps 10 "${quick[@]}"
  for kernel in "${kernels[@]}"; do
    threaded_backends=ep,funneled
    flat_backends=mpi,ref
    [[ "$kernel" == solver_bench ]] && flat_backends=mpi  # no hand-written solver
    if [[ "$kernel" == neighbor_bench ]]; then  # MPI's own calls on both sides only
      threaded_backends=ep
      flat_backends=mpi
    fi
    launch "$fair/$kernel.threaded.r$r" threaded "$(ep_built demos/bench/$kernel)" \
      --threads "$threads" --backends "$threaded_backends" "${quick[@]}"
    launch "$fair/$kernel.flat.r$r" flat "$(ep_built demos/bench/$kernel)" \
      --threads "$threads" --backends "$flat_backends" "${quick[@]}"
  done
  # The mini model without output: each backend at the shape that fits.
  launch "$fair/model_bench.ep.r$r" threaded "${model_run[@]}" --backend ep --servers 0
  launch "$fair/model_bench.mpi.r$r" flat "${model_run[@]}" --backend mpi --servers 0
  launch "$fair/model_bench.funneled.r$r" threaded "${model_run[@]}" --backend funneled \
    --servers 0
  # Its compute-only floor: the ep layout with every exchange a local copy.
  launch "$fair/model_bench.floor.r$r" threaded "${model_run[@]}" --backend ep --servers 0 \
    --no-communication
done

# The merged, judged records: one file per benchmark.
for name in limits ep_pingpong ep_collectives "${kernels[@]}" model_bench; do
  python3 scripts/bench_merge.py "$fair/$name.json" "$fair/$name".*.r*.json
done
for stem in "$fair"/*.r[0-9]*.json; do rm -f "${stem%.json}.csv"; done

# output_bench at the shape that fits: 1 client x 1 thread + 1 server.
launch "$fair/output_bench" ep_mpiexec_flat -n 2 "$(ep_built demos/bench/output_bench)" --threads 1 \
  --modes ep_server,sync,raw_write,memcpy "${output_quick[@]}"

# ---- part 2: printed, not judged ------------------------------------------
# As the tests launch (scripts/mpi-env.sh: oversubscribed, waits that yield).
export OMP_NUM_THREADS="$threads"
# The mini model with output: the server process is one more than the cores.
for ((r = 1; r <= rounds; ++r)); do
  for backend in ep mpi funneled; do
    procs=2
    [[ "$backend" == mpi ]] && procs=$((threads + 1))
    launch "$printed/model_bench_output.$backend.r$r" ep_mpiexec -n "$procs" -x OMP_NUM_THREADS \
      "${model_run[@]}" --backend "$backend" --servers 1
  done
done
python3 scripts/bench_merge.py "$printed/model_bench_output.json" \
  "$printed"/model_bench_output.*.r*.json
# xios_lite: 1 client process x T threads + 1 server, ep against funneled clients.
launch "$printed/output_bench.1x$threads" ep_mpiexec -n 2 -x OMP_NUM_THREADS \
  "$(ep_built demos/bench/output_bench)" --threads "$threads" "${output_quick[@]}"
# Tracing off vs on (docs/ep.md, "Tracing"): one process, two EP threads.
launch "$printed/trace_overhead" ep_mpiexec -n 1 -x OMP_NUM_THREADS \
  "$(ep_built demos/bench/trace_overhead)"
# The mixed launches of 2 processes x T threads against 2T processes.
launch "$printed/ep_collectives.2x$threads" ep_mpiexec -n $((2 * threads)) -x OMP_NUM_THREADS \
  "$(ep_built demos/bench/ep_collectives)" --threads "$threads" --reps 10 "${quick[@]}"
for kernel in "${kernels[@]}"; do
  launch "$printed/$kernel.2x$threads" ep_mpiexec -n $((2 * threads)) -x OMP_NUM_THREADS \
    "$(ep_built demos/bench/$kernel)" --threads "$threads" "${quick[@]}"
done

python3 - "$out/environment.json" "$SECONDS" <<'PY'
import json, os, sys
path = sys.argv[1]
env = json.load(open(path))
env["load_end"] = os.getloadavg()[0]
env["seconds"] = int(sys.argv[2])
json.dump(env, open(path, "w"), indent=2)
PY
echo "run-bench: results in $out/ ($SECONDS s in all)"
# docs/benchmarks.md and its plots (docs/img/bench/) from this run. Debian's
# python3 has matplotlib (install-deps); another python3 first in PATH may not.
/usr/bin/python3 scripts/render_benchmarks.py "$out" "${BENCH_DOCS:-docs}"
