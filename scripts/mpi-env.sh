# Sourced by the scripts that launch MPI programs (run-demo.sh, run-bench.sh):
# the same mpiexec flags and environment as the ctest tests
# (cmake/EpTesting.cmake, EP_MPIEXEC_FLAGS; keep the two in sync), and
# ep_built, the path of a program of the build (build_dir: BUILD_DIR, default
# build/release).
#
#   --allow-run-as-root / OMPI_ALLOW_RUN_AS_ROOT*   containers and CI run as root
#   --oversubscribe                                 more ranks than cores is normal here
#   --bind-to none                                  a process's threads must not share
#                                                   the one core Open MPI would bind it to
#   btl_vader_single_copy_mechanism none            no CMA in containers (and faster here)
#   mpi_yield_when_idle 1                           no busy polling when oversubscribed
#
# These suit tests and oversubscribed runs; ep_mpiexec_threaded and
# ep_mpiexec_flat below launch as production runs do on dedicated cores.
#
# Override: MPIEXEC=/path/to/mpiexec, EP_MPIEXEC_FLAGS="..." (space-separated).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_base_warn_component_unused=0
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

build_dir="${BUILD_DIR:-build/release}"

# ep_built PATH: prints $build_dir/PATH, or says it is not built and exits 1
# (the whole script when called directly, the $(...) around it otherwise).
ep_built() {
  local path="$build_dir/$1"
  if [[ ! -x "$path" ]]; then
    echo "$(basename "$0" .sh): $path is not built (run 'make build')" >&2
    exit 1
  fi
  echo "$path"
}

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

# Launches as production runs use dedicated cores (the fair runs of make
# bench, docs/benchmarks.md): nothing yields, nothing sleeps while it waits.
#
#   ep_mpiexec_threaded THREADS -n P program args...
#       P processes x THREADS OpenMP threads; the threads spin while they wait
#       (OMP_WAIT_POLICY=active) and each has a core (OMP_PROC_BIND=close,
#       OMP_PLACES=cores; Open MPI leaves the process unbound)
#   ep_mpiexec_flat -n N program args...
#       N single-threaded processes, one per core (--bind-to core); MPI
#       busy-polls in its waits (no mpi_yield_when_idle)
ep_mpiexec_dedicated_flags=(--allow-run-as-root --mca btl_vader_single_copy_mechanism none)
ep_mpiexec_threaded() {
  local threads="$1"
  shift
  echo "+ OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=active OMP_PROC_BIND=close OMP_PLACES=cores" \
    "$MPIEXEC ${ep_mpiexec_dedicated_flags[*]} --bind-to none $*" >&2
  OMP_NUM_THREADS="$threads" OMP_WAIT_POLICY=active OMP_PROC_BIND=close OMP_PLACES=cores \
    "$MPIEXEC" "${ep_mpiexec_dedicated_flags[@]}" --bind-to none \
    -x OMP_NUM_THREADS -x OMP_WAIT_POLICY -x OMP_PROC_BIND -x OMP_PLACES "$@"
}
ep_mpiexec_flat() {
  echo "+ OMP_NUM_THREADS=1 $MPIEXEC ${ep_mpiexec_dedicated_flags[*]} --bind-to core $*" >&2
  OMP_NUM_THREADS=1 "$MPIEXEC" "${ep_mpiexec_dedicated_flags[@]}" --bind-to core \
    -x OMP_NUM_THREADS "$@"
}
