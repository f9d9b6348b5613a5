# One library of the tree, as each top-level folder builds it:
#
#   ep_library(<target> PACKAGE <package> SOURCES <file>...)
#
# <target> from SOURCES with the alias <package>::<target>; C++20; the
# folder's include/ on the public include path (the installed include
# directory once installed); MPI's C interface only (the deprecated C++
# bindings skipped, with their headers and warnings); installed into the
# export set <package>Targets as <target>, with its headers include/<target>.
# Links and private include paths stay with the caller.
function(ep_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PACKAGE" "SOURCES")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_PACKAGE OR NOT arg_SOURCES)
    message(FATAL_ERROR "ep_library(${target}): PACKAGE and SOURCES are required "
                        "(unknown: ${arg_UNPARSED_ARGUMENTS})")
  endif()
  add_library(${target} ${arg_SOURCES})
  add_library(${arg_PACKAGE}::${target} ALIAS ${target})
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_definitions(${target} PUBLIC OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${target})
  install(TARGETS ${target} EXPORT ${arg_PACKAGE}Targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/${target} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
