# Installs the CMake package of one of the project's libraries, so that a
# downstream project does find_package(<name>) and links <name>::<target>:
#
#   ep_install_package(<name> [DESTINATION <dir>])
#
# installs the export set <name>Targets (namespace <name>::), the
# configuration cmake/<name>Config.cmake.in (which finds the package's
# dependencies) and a version file (same minor version) under
# <dir> (default <libdir>/cmake/<name>).
include(CMakePackageConfigHelpers)

function(ep_install_package name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "DESTINATION" "")
  set(dir "${CMAKE_INSTALL_LIBDIR}/cmake/${name}")
  if(arg_DESTINATION)
    set(dir "${arg_DESTINATION}")
  endif()
  install(EXPORT ${name}Targets
    NAMESPACE ${name}::
    FILE ${name}Targets.cmake
    DESTINATION "${dir}")
  configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/${name}Config.cmake.in"
    "${PROJECT_BINARY_DIR}/${name}Config.cmake"
    INSTALL_DESTINATION "${dir}")
  write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/${name}ConfigVersion.cmake"
    VERSION ${PROJECT_VERSION}
    COMPATIBILITY SameMinorVersion)
  install(FILES
    "${PROJECT_BINARY_DIR}/${name}Config.cmake"
    "${PROJECT_BINARY_DIR}/${name}ConfigVersion.cmake"
    DESTINATION "${dir}")
endfunction()
