#!/usr/bin/env bash
# `make demo`: the mini hybrid model (demos/model, docs/model.md) in its
# default configuration -- 2 model processes x 2 endpoint threads plus one
# xios_lite output server process -- writing NetCDF under output/, then the
# quick ping-pong benchmark (endpoints vs MPI processes vs MPI between threads).
#
#   BUILD_DIR=build/release bash scripts/run-demo.sh [extra mini_model options]
#
# EP_TRACE (default output/trace) is passed to every process: an ep build with
# communication tracing writes its per-rank JSON there; without it the
# variable is ignored.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/mpi-env.sh

build_dir="${BUILD_DIR:-build/release}"
model="$build_dir/demos/model/mini_model"
pingpong="$build_dir/demos/bench/ep_pingpong"
for exe in "$model" "$pingpong"; do
  if [[ ! -x "$exe" ]]; then
    echo "run-demo: $exe is not built (run 'make build')" >&2
    exit 1
  fi
done

mkdir -p output
export EP_TRACE="${EP_TRACE:-$PWD/output/trace}"
mkdir -p "$EP_TRACE"

# 2 model processes x 2 threads + 1 server process (the last rank).
OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" ep_mpiexec -n 3 -x OMP_NUM_THREADS -x EP_TRACE \
  "$model" --config demos/model/model_iodef.xml --output-dir output "$@"
echo "run-demo: model output in output/, trace (if enabled) in $EP_TRACE/"

out="$build_dir/demo-results"
mkdir -p "$out"
echo
echo "run-demo: quick ping-pong, 2 processes x 2 threads"
OMP_NUM_THREADS=2 ep_mpiexec -n 2 -x OMP_NUM_THREADS \
  "$pingpong" --quick --json "$out/ep_pingpong.json" --csv "$out/ep_pingpong.csv"
echo "run-demo: ping-pong results in $out/"
