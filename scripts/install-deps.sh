#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages this project needs, and only those that
# are missing: the check is one dpkg-query call, and apt-get (update included)
# runs only when something is missing, so a second run costs well under a second.
#
#   bash scripts/install-deps.sh        (root, or a user with sudo)
#   EP_SKIP_DEPS=1 make test            skip it (e.g. a prepared image)
set -euo pipefail

packages=(
  build-essential cmake make ninja-build g++
  clang libomp-dev                       # tsan preset: Clang + LLVM libomp (archer)
  libopenmpi-dev openmpi-bin             # Open MPI 4.1, MPI_THREAD_MULTIPLE (the default MPI)
  mpich libmpich-dev                     # MPICH 4.0: the second tested MPI (preset mpich)
  libnetcdf-mpi-dev libhdf5-mpi-dev netcdf-bin libpugixml-dev   # xios_lite
  libgtest-dev libgmock-dev libbenchmark-dev                    # tests, benchmarks
  clang-format clang-tidy
  python3
  python3-matplotlib
)

if [[ "${EP_SKIP_DEPS:-0}" == "1" ]]; then
  echo "install-deps: EP_SKIP_DEPS=1, not checking packages"
  exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: no dpkg-query (not Debian/Ubuntu); install these by hand:" >&2
  echo "  ${packages[*]}" >&2
  exit 0
fi

# One query for all packages; unknown packages print nothing on stdout.
installed="$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null \
  | awk '$2 == "installed" { print $1 }' || true)"
missing=()
for p in "${packages[@]}"; do
  if ! grep -qxF -- "$p" <<<"$installed"; then
    missing+=("$p")
  fi
done

# Both MPIs register the mpicc/mpirun alternatives; the default build and
# every script use Open MPI, whatever order the packages were installed in.
# The mpich preset names MPICH's wrappers by full path instead.
pin_open_mpi() {
  local link target
  for link in mpi mpirun; do
    case "$link" in
      mpi) target=/usr/bin/mpicc.openmpi ;;      # mpicc, mpicxx, mpif90, ...
      mpirun) target=/usr/bin/mpirun.openmpi ;;  # mpirun, mpiexec
    esac
    if [[ -e "$target" ]] && command -v update-alternatives >/dev/null 2>&1; then
      local current
      current="$(update-alternatives --query "$link" 2>/dev/null | awk '/^Value:/ { print $2 }')"
      if [[ "$current" != "$target" ]]; then
        "${sudo_cmd[@]}" update-alternatives --set "$link" "$target" >/dev/null
        echo "install-deps: alternative $link pinned to $target"
      fi
    fi
  done
}

sudo_cmd=()
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  if [[ "$(id -u)" -eq 0 ]]; then pin_open_mpi; fi
  exit 0
fi

sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "install-deps: missing packages and not root (no sudo): ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
pin_open_mpi
