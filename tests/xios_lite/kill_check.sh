#!/usr/bin/env bash
# kill_check.sh BUDGET_S REGEX MPIEXEC... : runs a kill_model launch under a
# hard limit, prints its output, and passes ("kill test passed") when every
# surviving process reported "done" within BUDGET_S seconds and some line
# matches REGEX (what the survivors must have been told).
budget=$1
expect=$2
shift 2
start=$(date +%s.%N)
out=$(timeout $((budget * 2)) "$@" 2>&1)
rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
printf '%s\n' "$out"
echo "kill_check: rc $rc after ${took} s (budget ${budget} s)"
survivors=$(grep -c '^process [0-9]*: done after' <<<"$out")
if [ "$rc" -eq 124 ]; then
  echo "kill_check: the launch hung"
elif [ "$survivors" -lt 2 ]; then
  echo "kill_check: only $survivors surviving processes ended"
elif [ "$(echo "$took > $budget" | bc)" -eq 1 ]; then
  echo "kill_check: over the budget"
elif ! grep -Eq "$expect" <<<"$out"; then
  echo "kill_check: no line matches: $expect"
else
  echo "kill test passed"
fi
