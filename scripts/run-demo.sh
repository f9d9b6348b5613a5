#!/usr/bin/env bash
# `make demo`: the mini hybrid model (demos/model, docs/model.md) in its
# default configuration -- 2 model processes x 2 endpoint threads plus one
# xios_lite output server process -- writing NetCDF under output/, then the
# Fortran shallow-water model (demos/fortran/shallow_water.f90, 2 processes x
# 2 endpoint threads, every thread an XIOS client) writing under
# output/shallow_water/, then the quick ping-pong benchmark (endpoints vs MPI
# processes vs MPI between threads).
#
#   BUILD_DIR=build/release bash scripts/run-demo.sh [extra mini_model options]
#
# EP_TRACE (default output/trace) switches on the endpoint layer's
# communication tracing for the model: one JSON per process, drawn by
# scripts/plot_trace.py into output/pictures/ (communication matrix,
# message-size classes, time split per rank), whose paths are printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/mpi-env.sh

# Both programs are checked before anything runs.
model="$(ep_built demos/model/mini_model)"
pingpong="$(ep_built demos/bench/ep_pingpong)"

mkdir -p output
export EP_TRACE="${EP_TRACE:-$PWD/output/trace}"
mkdir -p "$EP_TRACE"

# 2 model processes x 2 threads + 1 server process (the last rank).
OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" ep_mpiexec -n 3 -x OMP_NUM_THREADS -x EP_TRACE \
  "$model" --config demos/model/model_iodef.xml --output-dir output "$@"
echo "run-demo: model output in output/, trace in $EP_TRACE/"
# plot_trace.py finds Debian's matplotlib itself (python3-matplotlib).
python3 scripts/plot_trace.py "$EP_TRACE" --out output/pictures --title "mini_model"
unset EP_TRACE  # nothing below is traced (it would overwrite the model's files)

# The Fortran model: without a Fortran compiler, MPI's Fortran bindings or
# OpenMP for Fortran it is not built (demos/fortran/CMakeLists.txt), and skipped.
if [[ -x "$build_dir/demos/fortran/shallow_water" ]]; then
  shallow_water="$(realpath "$build_dir/demos/fortran/shallow_water")"
  mkdir -p output/shallow_water
  cp demos/fortran/shallow_water_iodef.xml output/shallow_water/iodef.xml
  echo
  echo "run-demo: Fortran shallow-water model, 2 processes x 2 endpoint threads"
  (cd output/shallow_water &&
    OMP_NUM_THREADS=2 ep_mpiexec -n 2 -x OMP_NUM_THREADS "$shallow_water" ep)
  echo "run-demo: Fortran model output in output/shallow_water/"
else
  echo "run-demo: $build_dir/demos/fortran/shallow_water is not built (no Fortran): skipped"
fi

out="$build_dir/demo-results"
mkdir -p "$out"
echo
echo "run-demo: quick ping-pong, 2 processes x 2 threads"
OMP_NUM_THREADS=2 ep_mpiexec -n 2 -x OMP_NUM_THREADS \
  "$pingpong" --quick --json "$out/ep_pingpong.json" --csv "$out/ep_pingpong.csv"
echo "run-demo: ping-pong results in $out/"
