#!/usr/bin/env bash
# config_check.sh "CONTEXT..." MPIEXEC... : runs an MPMD launch of config_model
# beside xios_lite_server in the current directory (its old .nc files removed
# first) under a 100 s limit, prints its output, and passes ("configuration
# checked") when the launch succeeded and config_model reported "every value
# checked" for each of the CONTEXTs (space-separated).
contexts=$1
shift
rm -f ./*.nc
out=$(timeout 100 "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
  echo "config_check: the launch ended with status $rc"
  exit 0
fi
for context in $contexts; do
  if ! grep -q "config_model $context: every value checked" <<<"$out"; then
    echo "config_check: context $context was not checked"
    exit 0
  fi
done
echo "configuration checked"
