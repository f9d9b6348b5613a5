# Compiler warnings for the project's own targets only.
#
#   ep_target_warnings(<target>)            warnings for one target
#   ep_apply_warnings_to_directory(<dir>)   for every target defined in <dir>
#                                           and its sub-directories
#
# The flags are PRIVATE compile options, never usage requirements, so nothing
# leaks into installed targets (epTargets) or into downstream projects, and
# imported third-party targets (MPI, OpenMP, GTest) are never touched.
# EP_WARNINGS_AS_ERRORS=ON (CI, `make build`) adds -Werror.
include_guard(GLOBAL)

set(EP_WARNING_FLAGS -Wall -Wextra -Wpedantic)
# Fortran targets (fortran/, demos/fortran) get gfortran's -Wall -Wextra,
# and -Werror under the same switch.
set(EP_FORTRAN_WARNING_FLAGS -Wall -Wextra)
if(EP_WARNINGS_AS_ERRORS)
  list(APPEND EP_WARNING_FLAGS -Werror)
  list(APPEND EP_FORTRAN_WARNING_FLAGS -Werror)
endif()

function(ep_target_warnings target)
  get_target_property(_type ${target} TYPE)
  get_target_property(_imported ${target} IMPORTED)
  get_target_property(_opt_out ${target} EP_NO_WARNINGS)
  if(_imported OR _opt_out OR _type STREQUAL "INTERFACE_LIBRARY" OR _type STREQUAL "UTILITY")
    return()
  endif()
  get_target_property(_done ${target} EP_WARNINGS_APPLIED)
  if(_done)
    return()
  endif()
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX,C>:${EP_WARNING_FLAGS}>"
    "$<$<COMPILE_LANGUAGE:Fortran>:${EP_FORTRAN_WARNING_FLAGS}>")
  set_target_properties(${target} PROPERTIES EP_WARNINGS_APPLIED TRUE)
endfunction()

function(ep_apply_warnings_to_directory dir)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_t IN LISTS _targets)
    ep_target_warnings(${_t})
  endforeach()
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_d IN LISTS _subdirs)
    ep_apply_warnings_to_directory("${_d}")
  endforeach()
endfunction()
