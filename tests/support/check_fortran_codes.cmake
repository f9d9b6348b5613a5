# cmake -DC_HEADER=ep/ep.h -DFORTRAN_MODULE=fortran/ep_mod.f90 [-DPREFIX=EP]
#       -P check_fortran_codes.cmake
#
# A Fortran module mirrors the return codes of a C interface by hand (Fortran
# cannot include a C header): every <PREFIX>_OK / <PREFIX>_ERR_* of the header
# must be a parameter of the module with the same value, and the module may
# have no other (ep_mod: EP_, xios_lite_mod: XIOS_LITE_).
if(NOT DEFINED PREFIX)
  set(PREFIX EP)
endif()
foreach(_var C_HEADER FORTRAN_MODULE)
  if(NOT EXISTS "${${_var}}")
    message(FATAL_ERROR "check_fortran_codes: ${_var} '${${_var}}' does not exist")
  endif()
endforeach()

# "NAME = value" pairs of <PREFIX>_OK and <PREFIX>_ERR_*, sorted, from one file.
function(_codes_of file out)
  file(READ "${file}" _text)
  string(REGEX MATCHALL "${PREFIX}_(OK|ERR_[A-Z_]+) *= *[0-9]+" _pairs "${_text}")
  set(_codes "")
  foreach(_pair IN LISTS _pairs)
    string(REGEX REPLACE " *= *" "=" _pair "${_pair}")
    list(APPEND _codes "${_pair}")
  endforeach()
  list(REMOVE_DUPLICATES _codes)
  list(SORT _codes)
  set(${out} "${_codes}" PARENT_SCOPE)
endfunction()

_codes_of("${C_HEADER}" _c)
_codes_of("${FORTRAN_MODULE}" _fortran)
list(LENGTH _c _count)
if(_count LESS 1)
  message(FATAL_ERROR "check_fortran_codes: found ${_count} codes in ${C_HEADER}")
endif()
if(NOT _c STREQUAL _fortran)
  message(FATAL_ERROR "the return codes differ:\n  ${C_HEADER}: ${_c}\n  ${FORTRAN_MODULE}: ${_fortran}")
endif()
message(STATUS "${_count} return codes agree")
