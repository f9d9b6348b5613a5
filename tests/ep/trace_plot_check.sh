#!/usr/bin/env bash
# Demo test of tracing: runs trace_env_run under mpiexec with EP_TRACE set,
# checks that every process wrote its trace file, runs scripts/plot_trace.py
# on the directory and checks that the three pictures exist and are not empty.
# Skips (exit 77) only when python3-matplotlib is missing.
#
# usage: trace_plot_check.sh OUT_DIR PROCESSES PLOT_SCRIPT -- MPIEXEC_COMMAND...
set -euo pipefail
out="$1" processes="$2" plot="$3"
shift 4
# Debian's python3-matplotlib is in the system interpreter, which a python3
# earlier on PATH (pyenv, a virtualenv) may not be.
python=python3
if [[ -x /usr/bin/python3 ]]; then python=/usr/bin/python3; fi
if ! "$python" -c 'import matplotlib' 2>/dev/null; then
  echo "trace_plot_check: SKIP: python3-matplotlib is not installed (scripts/install-deps.sh)"
  exit 77
fi
rm -rf "$out"
EP_TRACE="$out" OMP_NUM_THREADS=2 "$@"
for ((p = 0; p < processes; ++p)); do
  if [[ ! -s "$out/trace.$p.json" ]]; then
    echo "trace_plot_check: $out/trace.$p.json missing or empty" >&2
    exit 1
  fi
done
pictures="$("$python" "$plot" "$out" --title "trace_env_run")"
echo "$pictures"
count=0
while read -r picture; do
  if [[ ! -s "$picture" || "$picture" != *.png ]]; then
    echo "trace_plot_check: picture '$picture' missing or empty" >&2
    exit 1
  fi
  count=$((count + 1))
done <<<"$pictures"
if ((count != 3)); then
  echo "trace_plot_check: expected 3 pictures, got $count" >&2
  exit 1
fi
echo "trace_plot_check: $count pictures from $processes trace files"
