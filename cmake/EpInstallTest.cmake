# Run by the install tests (cmake -P): installs the build tree into a scratch
# prefix, then configures and builds a downstream project against it --
# tests/install/ (install.find_package: find_package(ep), ep::ep) or
# tests/install_models/ (install.models: find_package(xios_lite) and
# find_package(collectives), a C++ and a Fortran model) -- checks that every
# package came from that prefix, and runs EP_RUN_SCRIPT when given.
#
# Inputs (-D): EP_BUILD_DIR EP_PREFIX EP_SOURCE_DIR EP_WORK_DIR EP_GENERATOR
#              EP_CXX_COMPILER EP_BUILD_TYPE [EP_CXX_FLAGS] [EP_PACKAGES
#              (space-separated, default ep)] [EP_Fortran_COMPILER]
#              [EP_RUN_SCRIPT EP_MPIEXEC (the mpiexec command line, space-separated)]
cmake_minimum_required(VERSION 3.25)

foreach(_v EP_BUILD_DIR EP_PREFIX EP_SOURCE_DIR EP_WORK_DIR EP_GENERATOR EP_CXX_COMPILER)
  if(NOT DEFINED ${_v} OR "${${_v}}" STREQUAL "")
    message(FATAL_ERROR "EpInstallTest.cmake: ${_v} is not set")
  endif()
endforeach()
if(NOT EP_BUILD_TYPE)
  set(EP_BUILD_TYPE Release)
endif()

function(_run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "install test: ${step} failed (${_rc}): ${ARGN}")
  endif()
endfunction()

# A fresh prefix and build every time: a stale epConfig.cmake must not hide a
# broken install.
file(REMOVE_RECURSE "${EP_PREFIX}" "${EP_WORK_DIR}")

_run("cmake --install" ${CMAKE_COMMAND} --install "${EP_BUILD_DIR}"
  --prefix "${EP_PREFIX}" --config "${EP_BUILD_TYPE}")

# Sanitizer builds install instrumented static libraries; the downstream
# executable must be linked with the same flags.
string(REPLACE ";" " " _flags "${EP_CXX_FLAGS}")
set(_fortran)
if(EP_Fortran_COMPILER)
  # The installed modules need the compiler that made them.
  set(_fortran "-DCMAKE_Fortran_COMPILER=${EP_Fortran_COMPILER}")
endif()
_run("configure downstream project" ${CMAKE_COMMAND}
  -S "${EP_SOURCE_DIR}" -B "${EP_WORK_DIR}" -G "${EP_GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${EP_CXX_COMPILER}"
  ${_fortran}
  "-DCMAKE_BUILD_TYPE=${EP_BUILD_TYPE}"
  "-DCMAKE_CXX_FLAGS=${_flags}"
  "-DCMAKE_PREFIX_PATH=${EP_PREFIX}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)

# Every package must have come from the scratch prefix, not from a
# system-wide install that happens to exist.
if(NOT EP_PACKAGES)
  set(EP_PACKAGES ep)
endif()
separate_arguments(EP_PACKAGES UNIX_COMMAND "${EP_PACKAGES}")
file(REAL_PATH "${EP_PREFIX}" _prefix)
foreach(_package IN LISTS EP_PACKAGES)
  file(STRINGS "${EP_WORK_DIR}/CMakeCache.txt" _dir REGEX "^${_package}_DIR:")
  string(REGEX REPLACE "^${_package}_DIR:[A-Z]+=" "" _dir "${_dir}")
  if(EXISTS "${_dir}")
    file(REAL_PATH "${_dir}" _dir)
  endif()
  string(FIND "${_dir}" "${_prefix}/" _pos)
  if(NOT _pos EQUAL 0)
    message(FATAL_ERROR "install test: ${_package} was found in '${_dir}', not under '${_prefix}'")
  endif()
endforeach()
_run("build downstream project" ${CMAKE_COMMAND} --build "${EP_WORK_DIR}"
  --config "${EP_BUILD_TYPE}")
message(STATUS "install test: downstream project found ${EP_PACKAGES} in ${EP_PREFIX} and built")
if(EP_RUN_SCRIPT)
  include("${EP_RUN_SCRIPT}")
endif()
