# Communication tracing (ep/trace.hpp): counts, bytes, size classes and the
# communication matrix checked against a known pattern, and the JSON file.
# One process with two threads, two processes of two threads, three
# single-threaded processes. Label `trace`.
ep_add_mpi_test(NAME test_trace
  SOURCES test_trace.cpp
  SHAPES r1t2 r2t2 r3t1
  LABELS trace
  TIMEOUT 120)

# Demo test: EP_TRACE=<dir> switches tracing on from the environment; the
# trace files appear when trace_env_run frees its communicator, and
# scripts/plot_trace.py turns them into three non-empty PNG pictures.
# Two processes of two threads. Label `demo` (plus `trace`).
add_executable(trace_env_run trace_env_run.cpp)
target_link_libraries(trace_env_run PRIVATE ep::ep)
add_dependencies(ep_tests trace_env_run)
add_test(NAME trace_plot_env
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/trace_plot_check.sh
          ${CMAKE_CURRENT_BINARY_DIR}/trace_plot_env 2
          ${PROJECT_SOURCE_DIR}/scripts/plot_trace.py --
          ${MPIEXEC_EXECUTABLE} ${EP_MPIEXEC_FLAGS} ${EP_MPIEXEC_EXTRA_FLAGS}
          ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:trace_env_run>
          ${MPIEXEC_POSTFLAGS})
set_tests_properties(trace_plot_env PROPERTIES
  ENVIRONMENT "${EP_TEST_BASE_ENV}"
  PROCESSORS 2
  TIMEOUT 120
  SKIP_RETURN_CODE 77
  LABELS "demo;trace")
