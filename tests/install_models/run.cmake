# Run by EpInstallTest.cmake (EP_RUN_SCRIPT) once the downstream models are
# built: each runs on 2 processes x 2 threads (the last process serves) in
# its own directory, and ncdump must show the last record's values.
# Inputs: EP_WORK_DIR EP_SOURCE_DIR EP_MPIEXEC (the mpiexec command line)
separate_arguments(_mpiexec UNIX_COMMAND "${EP_MPIEXEC}")
foreach(_model model_cpp model_f90)
  if(NOT EXISTS "${EP_WORK_DIR}/${_model}")
    if(_model STREQUAL "model_f90")
      message(STATUS "install test: no Fortran compiler, model_f90 not built")
      continue()
    endif()
    message(FATAL_ERROR "install test: ${_model} was not built")
  endif()
  set(_dir "${EP_WORK_DIR}/run_${_model}")
  file(REMOVE_RECURSE "${_dir}")
  file(MAKE_DIRECTORY "${_dir}")
  file(COPY "${EP_SOURCE_DIR}/iodef.xml" DESTINATION "${_dir}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=2 ${_mpiexec} -n 2
                          "${EP_WORK_DIR}/${_model}"
    WORKING_DIRECTORY "${_dir}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
    TIMEOUT 120)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "${_model}: done")
    message(FATAL_ERROR "install test: ${_model} failed (${_rc}):\n${_out}\n${_err}")
  endif()
  execute_process(COMMAND ncdump -v t "${_dir}/downstream_out.nc"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _dump)
  # The last record, row 3: 3030, 3031, ... 3037.
  if(NOT _rc EQUAL 0 OR NOT _dump MATCHES "3030, 3031, 3032, 3033, 3034, 3035, 3036, 3037")
    message(FATAL_ERROR "install test: ${_model}'s file is not as written:\n${_dump}")
  endif()
  message(STATUS "install test: ${_model} ran against the installed packages, file read back")
endforeach()

# The XIOS-style model: one client per process after a plain MPI_Init, its
# iodef.xml beside it, the clients writing (no server).
if(EXISTS "${EP_WORK_DIR}/model_xios")
  set(_dir "${EP_WORK_DIR}/run_model_xios")
  file(REMOVE_RECURSE "${_dir}")
  file(MAKE_DIRECTORY "${_dir}")
  file(COPY "${EP_SOURCE_DIR}/../fortran_xios/iodef.xml" DESTINATION "${_dir}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1 ${_mpiexec} -n 2
                          "${EP_WORK_DIR}/model_xios" process
    WORKING_DIRECTORY "${_dir}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
    TIMEOUT 120)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "xios model test done")
    message(FATAL_ERROR "install test: model_xios failed (${_rc}):\n${_out}\n${_err}")
  endif()
  execute_process(COMMAND ncdump -h "${_dir}/xios_model_output.nc"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _dump)
  if(NOT _rc EQUAL 0 OR NOT _dump MATCHES "double field_C\\(time, axis_A_zoom, lat, lon\\)")
    message(FATAL_ERROR "install test: model_xios's file is not as written:\n${_dump}")
  endif()
  message(STATUS "install test: model_xios (USE xios) ran against the installed packages")
elseif(EXISTS "${EP_WORK_DIR}/model_f90")
  message(FATAL_ERROR "install test: model_xios was not built beside model_f90")
endif()
