# Sourced by the scripts that launch MPI programs (run-demo.sh, run-bench.sh):
# the same mpiexec flags and environment as the ctest tests
# (cmake/EpTesting.cmake, EP_MPIEXEC_FLAGS; keep the two in sync).
#
#   --allow-run-as-root / OMPI_ALLOW_RUN_AS_ROOT*   containers and CI run as root
#   --oversubscribe                                 more ranks than cores is normal here
#   --bind-to none                                  a process's threads must not share
#                                                   the one core Open MPI would bind it to
#   btl_vader_single_copy_mechanism none            no CMA in containers (and faster here)
#   mpi_yield_when_idle 1                           no busy polling when oversubscribed
#
# Override: MPIEXEC=/path/to/mpiexec, EP_MPIEXEC_FLAGS="..." (space-separated).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_base_warn_component_unused=0
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

MPIEXEC="${MPIEXEC:-mpiexec}"
if [[ -n "${EP_MPIEXEC_FLAGS:-}" ]]; then
  read -r -a ep_mpiexec_flags <<<"$EP_MPIEXEC_FLAGS"
else
  ep_mpiexec_flags=(--allow-run-as-root --oversubscribe --bind-to none
    --mca btl_vader_single_copy_mechanism none --mca mpi_yield_when_idle 1)
fi

# ep_mpiexec -n N [-x VAR] program args...
ep_mpiexec() {
  echo "+ $MPIEXEC ${ep_mpiexec_flags[*]} $*" >&2
  "$MPIEXEC" "${ep_mpiexec_flags[@]}" "$@"
}
