#!/usr/bin/env bash
# The Fortran shallow-water model's three modes on fair terms (docs/model.md,
# "The Fortran model"): T = the cores (BENCH_THREADS, default nproc); ep and
# funneled as 1 process x T threads spinning on pinned cores, mpi as T bound
# single-threaded processes (scripts/mpi-env.sh: ep_mpiexec_threaded,
# ep_mpiexec_flat), launches alternated over BENCH_ROUNDS rounds (default 3).
# Prints each run's step time (and the step without output: compute, halo
# and sums), then the medians and the ratios ep/funneled and ep/mpi of both,
# and the 1-minute load average before and after.
#
#   BUILD_DIR=build/release bash demos/fortran/bench_shallow_water.sh [model options]
#
# Model options go to every run (default: the model's 256 x 128 grid, 240
# steps, output every 24 steps; docs/model.md's tables used --steps 960, and
# --no-output --ni 1024 --nj 512 --steps 960); the runs work in
# $BENCH_RESULTS/shallow_water (default bench-results/shallow_water), one
# folder per mode.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/mpi-env.sh

model="$(realpath "$(ep_built demos/fortran/shallow_water)")"
iodef="$PWD/demos/fortran/shallow_water_iodef.xml"
out="${BENCH_RESULTS:-bench-results}/shallow_water"
threads="${BENCH_THREADS:-$(nproc)}"
rounds="${BENCH_ROUNDS:-3}"
modes=(ep funneled mpi)

rm -rf "$out"
for mode in "${modes[@]}"; do
  mkdir -p "$out/$mode"
  cp "$iodef" "$out/$mode/iodef.xml"
  : >"$out/$mode/step_ms"
done

load_before="$(cut -d' ' -f1 /proc/loadavg)"
for ((r = 1; r <= rounds; ++r)); do
  for mode in "${modes[@]}"; do
    log="$out/$mode/run.r$r.log"
    rm -f "$out/$mode"/*.nc  # "fortran model ok" must not see an earlier run's files
    if [[ $mode == mpi ]]; then
      (cd "$out/$mode" && ep_mpiexec_flat -n "$threads" "$model" "$mode" "$@") >"$log" 2>&1
    else
      (cd "$out/$mode" && ep_mpiexec_threaded "$threads" -n 1 "$model" "$mode" "$@") >"$log" 2>&1
    fi
    if ! grep -q '^fortran model ok$' "$log"; then
      echo "bench_shallow_water: $mode round $r failed, see $log" >&2
      exit 1
    fi
    ms="$(sed -n 's/^step time: *\([0-9.]*\) ms\/step.*/\1/p' "$log")"
    model_ms="$(sed -n 's/^step time without output: *\([0-9.]*\) ms\/step.*/\1/p' "$log")"
    echo "$ms $model_ms" >>"$out/$mode/step_ms"
    printf 'round %d  %-9s %9s ms/step, %9s without output   load %s   %s\n' "$r" "$mode" "$ms" \
      "$model_ms" "$(cut -d' ' -f1 /proc/loadavg)" "$(grep '^split:' "$log")"
  done
done
load_after="$(cut -d' ' -f1 /proc/loadavg)"

python3 - "$out" "$threads" "$rounds" "$load_before" "$load_after" "${modes[@]}" <<'PY'
import statistics, sys
out, threads, rounds, before, after, *modes = sys.argv[1:]
for column, what in ((0, "step"), (1, "step without output")):
    median = {}
    for m in modes:
        values = [float(line.split()[column]) for line in open(f"{out}/{m}/step_ms")]
        median[m] = statistics.median(values)
        print(f"{what}: {m:9s} median {median[m]:.4f} ms over {len(values)} runs: "
              + " ".join(f"{v:.4f}" for v in values))
    print(f"{what}: ep/funneled {median['ep'] / median['funneled']:.3f}   "
          f"ep/mpi {median['ep'] / median['mpi']:.3f}")
print(f"T = {threads}, {rounds} rounds, load average (1 min) {before} before, {after} after")
PY
