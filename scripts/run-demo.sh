#!/usr/bin/env bash
# `make demo`: a quick look at what endpoints buy -- the ping-pong benchmark
# (endpoints intra- and inter-process vs MPI processes vs MPI between threads)
# in its --quick form, 2 processes x 2 threads. Its JSON/CSV go to
# $BUILD_DIR/demo-results/ so that a demo never overwrites bench-results/.
#
#   BUILD_DIR=build/release bash scripts/run-demo.sh [extra ep_pingpong options]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/mpi-env.sh

build_dir="${BUILD_DIR:-build/release}"
exe="$build_dir/demos/bench/ep_pingpong"
if [[ ! -x "$exe" ]]; then
  echo "run-demo: $exe is not built (run 'make build')" >&2
  exit 1
fi
out="$build_dir/demo-results"
mkdir -p "$out"

OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" ep_mpiexec -n 2 -x OMP_NUM_THREADS \
  "$exe" --quick --json "$out/ep_pingpong.json" --csv "$out/ep_pingpong.csv" "$@"
echo "run-demo: results in $out/"
