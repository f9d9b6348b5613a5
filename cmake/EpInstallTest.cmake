# Run by the install.find_package test (cmake -P): installs the build tree into
# a scratch prefix, then configures and builds tests/install/ -- a downstream
# project that only does find_package(ep) and links ep::ep -- against it.
#
# Inputs (-D): EP_BUILD_DIR EP_PREFIX EP_SOURCE_DIR EP_WORK_DIR EP_GENERATOR
#              EP_CXX_COMPILER EP_BUILD_TYPE [EP_CXX_FLAGS]
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
_run("configure downstream project" ${CMAKE_COMMAND}
  -S "${EP_SOURCE_DIR}" -B "${EP_WORK_DIR}" -G "${EP_GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${EP_CXX_COMPILER}"
  "-DCMAKE_BUILD_TYPE=${EP_BUILD_TYPE}"
  "-DCMAKE_CXX_FLAGS=${_flags}"
  "-DCMAKE_PREFIX_PATH=${EP_PREFIX}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)

# The package must have come from the scratch prefix, not from a system-wide
# install that happens to exist.
file(STRINGS "${EP_WORK_DIR}/CMakeCache.txt" _ep_dir REGEX "^ep_DIR:")
string(REGEX REPLACE "^ep_DIR:[A-Z]+=" "" _ep_dir "${_ep_dir}")
file(REAL_PATH "${EP_PREFIX}" _prefix)
if(EXISTS "${_ep_dir}")
  file(REAL_PATH "${_ep_dir}" _ep_dir)
endif()
string(FIND "${_ep_dir}" "${_prefix}/" _pos)
if(NOT _pos EQUAL 0)
  message(FATAL_ERROR "install test: ep was found in '${_ep_dir}', not under '${_prefix}'")
endif()
_run("build downstream project" ${CMAKE_COMMAND} --build "${EP_WORK_DIR}"
  --config "${EP_BUILD_TYPE}")
message(STATUS "install test: downstream project found ep in ${EP_PREFIX} and linked ep::ep")
