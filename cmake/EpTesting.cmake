# Test registration for the endpoint runtime.
#
# ep_add_mpi_test(NAME <name>
#                 SOURCES <file>...
#                 [SHAPES r<R>t<T>...]        default EP_TEST_DEFAULT_SHAPES
#                 [LABELS <label>...]          e.g. unit io demo
#                 [TIMEOUT <seconds>]          default 120 (times EP_TEST_TIMEOUT_MULTIPLIER)
#                 [LIBRARIES <target>...]      extra link libraries (collectives, xios_lite...)
#                 [ARGS <arg>...]              extra arguments for the executable
#                 [TCP])
#
#   Builds ONE executable <name> (linked to ep::ep, GTest::gtest and the shared
#   MPI test main ep_test_main) and registers one ctest per shape, named
#   <name>.r<R>t<T>, that runs
#     mpiexec <EP_MPIEXEC_FLAGS> -n R <name> [ARGS]
#   with OMP_NUM_THREADS=T. Labels: the given ones, plus `loopback` when R == 1
#   (one process, every message on the intra-process path) or `mpi` when R > 1.
#   With TCP, every shape with R > 1 also gets <name>.r<R>t<T>.tcp, run with
#   `--mca btl tcp,self` (inter-process traffic over TCP on the loopback device,
#   a stand-in for several nodes), labelled `mpi` and `tcp`.
#
# ep_add_mpi_test_variant(NAME <name> SUFFIX <suffix> SHAPES r<R>t<T>...
#                         ENV <VAR=value>... [LABELS <label>...])
#
#   Runs the executable of an earlier ep_add_mpi_test(NAME <name>) once more
#   per shape, as <name>.r<R>t<T>.<suffix>, with extra environment variables
#   (for example EP_TAG_UB=524287: the narrow tag layout of Intel MPI). Same
#   arguments, timeout and labels as the original, plus <suffix> and LABELS.
#
# ep_add_unit_test(NAME <name> SOURCES <file>... [LABELS ...] [TIMEOUT s]
#                  [LIBRARIES ...] [ARGS ...])
#
#   A plain GoogleTest executable with GoogleTest's own main (no MPI_Init, no
#   mpiexec) for pure functions: tag encoding, rank map arithmetic, parsers.
#   Label `unit`. Anything that calls MPI belongs in ep_add_mpi_test (a unit
#   test that needs MPI: SHAPES r1t1 LABELS unit).
#
# ep_add_program_test(NAME <name> TARGET <target> PASS <regex>
#                     SHAPES r<R>t<T>... [LABELS <label>...] [TIMEOUT <seconds>]
#                     [ARGS <arg>...])
#
#   A program that is not a GoogleTest suite (the Fortran tests, the demos):
#   one ctest per shape, <name>.r<R>t<T>, running the existing <target> as
#   ep_add_mpi_test does (same environment, PROCESSORS, labels and timeout,
#   default 120), that passes when its output matches <regex>.
#
# ep_add_stop_test(NAME <name> EXPECT <grep regex> COMMAND <command>...
#                  [PROCESSORS <n>] [THREADS <t>] [TIMEOUT <seconds>]
#                  [LABELS <label>...] [WORKING_DIRECTORY <dir>])
#
#   A run that must stop: passes when <command> exits non-zero and its output
#   matches <regex> (grep), so that an error path is shown to end the job with
#   its message instead of hanging or going on. T OpenMP threads (default 1),
#   the tests' base environment, timeout default 60.
#
# The functions do nothing when BUILD_TESTING is OFF. Every executable they
# create is a dependency of the `ep_tests` target (all test binaries).
#
# Cache knobs:
#   EP_TEST_MAX_PROCESSORS       cap on a test's PROCESSORS property (default:
#                                this machine's logical cores, at least 2)
#   EP_TEST_TIMEOUT_MULTIPLIER   scales every TIMEOUT (the tsan preset sets 4)
#   EP_MPIEXEC_EXTRA_FLAGS       appended to the mpiexec flags of every test
include_guard(GLOBAL)

# The shapes a suite runs in unless it names its own: one process with one
# and four threads (the loopback tier), two processes of two threads, and
# the odd mixed shapes r3t2 and r2t3 (uneven counts, both paths).
set(EP_TEST_DEFAULT_SHAPES r1t1 r1t4 r2t2 r3t2 r2t3)

# GoogleTest is found here, at the top level, so that GTest::gtest is visible to
# tests registered from any folder (imported targets are directory-scoped).
# `ep_tests` builds every test executable and nothing else (the tsan tier
# builds only that).
if(BUILD_TESTING)
  find_package(GTest REQUIRED)
  add_custom_target(ep_tests)
endif()

cmake_host_system_information(RESULT _ep_cores QUERY NUMBER_OF_LOGICAL_CORES)
if(_ep_cores LESS 2)
  set(_ep_cores 2)
endif()
set(EP_TEST_MAX_PROCESSORS ${_ep_cores} CACHE STRING
  "Largest PROCESSORS value given to one test (ctest -j budget)")
set(EP_TEST_TIMEOUT_MULTIPLIER 1 CACHE STRING "Multiplier applied to every test TIMEOUT")
set(EP_MPIEXEC_EXTRA_FLAGS "" CACHE STRING "Extra mpiexec flags for every MPI test")

# Which MPI the tests launch: its mpiexec takes different flags. Detected
# from the MPI library FindMPI chose (the mpich preset points FindMPI at
# MPICH's wrappers); override with -DEP_MPI_FLAVOR=openmpi|mpich.
if(NOT DEFINED EP_MPI_FLAVOR)
  include(CheckSymbolExists)
  set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
  check_symbol_exists(MPICH_VERSION "mpi.h" EP_MPI_IS_MPICH)
  unset(CMAKE_REQUIRED_INCLUDES)
  if(EP_MPI_IS_MPICH)
    set(_flavor mpich)
  else()
    set(_flavor openmpi)
  endif()
  set(EP_MPI_FLAVOR ${_flavor} CACHE STRING "MPI implementation the tests launch: openmpi or mpich")
endif()
set_property(CACHE EP_MPI_FLAVOR PROPERTY STRINGS openmpi mpich)

if(EP_MPI_FLAVOR STREQUAL "openmpi")
  # Flags for every mpiexec launch (also used by scripts/mpi-env.sh; keep in sync):
  #   --allow-run-as-root       containers and CI run as root
  #   --oversubscribe           more ranks than cores is the normal case here
  #   --bind-to none            a process's OpenMP threads must not share the one
  #                             core Open MPI would otherwise bind it to
  #   btl_vader_single_copy_mechanism none
  #                             CMA is not permitted in most containers (and
  #                             copy-in/copy-out is faster on this machine)
  #   mpi_yield_when_idle 1     Open MPI's progress loop yields: with oversubscription,
  #                             busy polling made a barrier 300x slower
  set(EP_MPIEXEC_FLAGS
    --allow-run-as-root
    --oversubscribe
    --bind-to none
    --mca btl_vader_single_copy_mechanism none
    --mca mpi_yield_when_idle 1)
  # Inter-process traffic over TCP. The loopback device is named explicitly
  # because Open MPI excludes it by default and a CI sandbox may have no other.
  set(EP_MPIEXEC_TCP_FLAGS --mca btl tcp,self --mca btl_tcp_if_include lo)
elseif(EP_MPI_FLAVOR STREQUAL "mpich")
  # MPICH's Hydra runs as root, oversubscribes and leaves threads unbound by
  # default. It has no per-launch switch to TCP, so MPICH runs no tcp variants.
  set(EP_MPIEXEC_FLAGS -bind-to none)
  set(EP_MPIEXEC_TCP_FLAGS "")
else()
  message(FATAL_ERROR "EP_MPI_FLAVOR must be openmpi or mpich, not '${EP_MPI_FLAVOR}'")
endif()

# Environment of every MPI test. OMP_WAIT_POLICY=passive: idle OpenMP threads
# sleep instead of spinning on an oversubscribed machine; OMP_DYNAMIC=false so
# the team has exactly OMP_NUM_THREADS threads; the btl warning is noise from
# unused InfiniBand components in containers. The sanitizer tiers' run-time
# options and suppressions (EP_SANITIZER_ENV, empty otherwise) are part of it,
# so that a test registered by hand with add_test gets them too.
set(EP_TEST_BASE_ENV
  "OMP_WAIT_POLICY=passive"
  "OMP_DYNAMIC=false"
  "OMPI_MCA_rmaps_base_oversubscribe=1"
  "OMPI_MCA_btl_base_warn_component_unused=0"
  "OMPI_ALLOW_RUN_AS_ROOT=1"
  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  ${EP_SANITIZER_ENV})

# Without tests the registration functions exist and do nothing, and the
# helpers below are not needed.
if(NOT BUILD_TESTING)
  function(ep_add_mpi_test)
  endfunction()
  function(ep_add_mpi_test_variant)
  endfunction()
  function(ep_add_unit_test)
  endfunction()
  function(ep_add_program_test)
  endfunction()
  function(ep_add_stop_test)
  endfunction()
  return()
endif()

# <out>: the TIMEOUT given (<default> when empty) times EP_TEST_TIMEOUT_MULTIPLIER.
function(_ep_test_timeout out seconds default)
  if(NOT seconds)
    set(seconds ${default})
  endif()
  # EP_TEST_TIMEOUT_MULTIPLIER must be an integer (math(EXPR) is integer-only).
  math(EXPR _t "${seconds} * ${EP_TEST_TIMEOUT_MULTIPLIER}")
  set(${out} ${_t} PARENT_SCOPE)
endfunction()

# The watchdog of the shared test main (tests/support/hang_watchdog.hpp) ends
# an executable that runs past this budget, a little below the ctest timeout,
# with a message naming the running test and where each endpoint is; ctest's
# own timeout would kill it without a word.
function(_ep_test_budget out timeout)
  math(EXPR _margin "${timeout} / 10")
  if(_margin LESS 10)
    set(_margin 10)
  endif()
  math(EXPR _budget "${timeout} - ${_margin}")
  if(_budget LESS 1)
    set(_budget 1)
  endif()
  set(${out} "EP_TEST_TIME_BUDGET_SECONDS=${_budget}" PARENT_SCOPE)
endfunction()

# _ep_require_arguments(<caller> <KEYWORD>...): fails unless the caller's
# parsed arguments (arg_*) hold every <KEYWORD> and nothing unknown.
function(_ep_require_arguments caller)
  set(_missing "")
  foreach(_keyword IN LISTS ARGN)
    if(NOT arg_${_keyword})
      list(APPEND _missing ${_keyword})
    endif()
  endforeach()
  if(_missing OR arg_UNPARSED_ARGUMENTS)
    list(JOIN ARGN ", " _required)
    message(FATAL_ERROR "${caller}: ${_required} are required (missing: ${_missing}; "
                        "unknown: ${arg_UNPARSED_ARGUMENTS})")
  endif()
endfunction()

# Reads shape r<R>t<T> of `caller`'s test into <out_r> and <out_t> (at least 1 each).
function(_ep_parse_shape caller shape out_r out_t)
  if(NOT shape MATCHES "^r([0-9]+)t([0-9]+)$")
    message(FATAL_ERROR "${caller}: bad shape '${shape}', expected r<ranks>t<threads>")
  endif()
  if(CMAKE_MATCH_1 LESS 1 OR CMAKE_MATCH_2 LESS 1)
    message(FATAL_ERROR "${caller}: shape '${shape}' needs at least 1 rank and 1 thread")
  endif()
  set(${out_r} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out_t} ${CMAKE_MATCH_2} PARENT_SCOPE)
endfunction()

# _ep_add_run(<test> <target> <ranks> <threads> TIMEOUT <s> [FLAGS <mpiexec flag>...]
#             [ARGS <arg>...] [LABELS <label>...] [ENV <VAR=value>...])
#   One ctest running <target> as <ranks> processes of <threads> OpenMP
#   threads under mpiexec: PROCESSORS ranks x threads (capped), the label
#   `loopback` (one process) or `mpi`, the watchdog's budget and the base,
#   extra and sanitizer environments.
function(_ep_add_run test target r t)
  cmake_parse_arguments(PARSE_ARGV 4 arg "" "TIMEOUT" "FLAGS;ARGS;LABELS;ENV")
  math(EXPR _procs "${r} * ${t}")
  if(_procs GREATER EP_TEST_MAX_PROCESSORS)
    set(_procs ${EP_TEST_MAX_PROCESSORS})
  endif()
  set(_labels ${arg_LABELS})
  if(r EQUAL 1)
    list(APPEND _labels loopback)
  else()
    list(APPEND _labels mpi)
  endif()
  list(REMOVE_DUPLICATES _labels)
  _ep_test_budget(_budget ${arg_TIMEOUT})
  set(_env "OMP_NUM_THREADS=${t}" ${EP_TEST_BASE_ENV} ${_budget} ${arg_ENV})
  add_test(NAME ${test}
    COMMAND ${MPIEXEC_EXECUTABLE} ${EP_MPIEXEC_FLAGS} ${arg_FLAGS} ${EP_MPIEXEC_EXTRA_FLAGS}
            ${MPIEXEC_NUMPROC_FLAG} ${r} ${MPIEXEC_PREFLAGS}
            $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} ${arg_ARGS})
  set_tests_properties(${test} PROPERTIES
    ENVIRONMENT "${_env}"
    PROCESSORS ${_procs}
    TIMEOUT ${arg_TIMEOUT}
    LABELS "${_labels}")
endfunction()

# _ep_add_test_executable(<caller> <library>...)
#   The executable of a test that <caller> registers, from the caller's
#   parsed arguments (arg_NAME, arg_SOURCES, arg_LIBRARIES, arg_INTERNAL):
#   linked to <library>... and arg_LIBRARIES, ep/src on the include path when
#   INTERNAL (the test reaches the library's internals, such as the test-only
#   hooks of ep/src/p2p/test_hooks.hpp), built by `ep_tests`. Fails on unknown
#   arguments and on a missing NAME or SOURCES.
function(_ep_add_test_executable caller)
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${caller}: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "${caller}: NAME and SOURCES are required")
  endif()
  add_executable(${arg_NAME} ${arg_SOURCES})
  target_link_libraries(${arg_NAME} PRIVATE ${ARGN} ${arg_LIBRARIES})
  if(arg_INTERNAL)
    target_include_directories(${arg_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/ep/src)
  endif()
  ep_target_warnings(${arg_NAME})
  add_dependencies(ep_tests ${arg_NAME})
endfunction()

function(ep_add_mpi_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "TCP;INTERNAL" "NAME;TIMEOUT"
    "SOURCES;SHAPES;LABELS;LIBRARIES;ARGS")
  _ep_add_test_executable(ep_add_mpi_test ep_test_main ep::ep GTest::gtest)
  if(NOT arg_SHAPES)
    set(arg_SHAPES ${EP_TEST_DEFAULT_SHAPES})
  endif()
  # The TSan tier runs the loopback shapes (one process); it also runs every
  # such suite with an odd thread count, r1t3, where a team has no partner
  # for every thread and races of uneven splits show.
  if(EP_SANITIZER STREQUAL "thread" AND NOT "r1t3" IN_LIST arg_SHAPES)
    set(_has_loopback FALSE)
    foreach(_shape IN LISTS arg_SHAPES)
      if(_shape MATCHES "^r1t[0-9]+$")
        set(_has_loopback TRUE)
      endif()
    endforeach()
    if(_has_loopback)
      list(APPEND arg_SHAPES r1t3)
    endif()
  endif()
  _ep_test_timeout(_timeout "${arg_TIMEOUT}" 120)

  set_target_properties(${arg_NAME} PROPERTIES
    EP_TEST_ARGS "${arg_ARGS}" EP_TEST_TIMEOUT "${_timeout}" EP_TEST_LABELS "${arg_LABELS}")

  set(_seen "")
  foreach(_shape IN LISTS arg_SHAPES)
    _ep_parse_shape("ep_add_mpi_test(${arg_NAME})" ${_shape} _r _t)
    if(_shape IN_LIST _seen)
      message(FATAL_ERROR "ep_add_mpi_test(${arg_NAME}): shape '${_shape}' given twice")
    endif()
    list(APPEND _seen ${_shape})
    _ep_add_run(${arg_NAME}.${_shape} ${arg_NAME} ${_r} ${_t}
      TIMEOUT ${_timeout} ARGS ${arg_ARGS} LABELS ${arg_LABELS})
    if(arg_TCP AND _r GREATER 1 AND EP_MPIEXEC_TCP_FLAGS)
      _ep_add_run(${arg_NAME}.${_shape}.tcp ${arg_NAME} ${_r} ${_t}
        TIMEOUT ${_timeout} FLAGS ${EP_MPIEXEC_TCP_FLAGS} ARGS ${arg_ARGS} LABELS ${arg_LABELS} tcp)
    endif()
  endforeach()
endfunction()

function(ep_add_mpi_test_variant)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SUFFIX" "SHAPES;ENV;LABELS")
  _ep_require_arguments(ep_add_mpi_test_variant NAME SUFFIX SHAPES ENV)
  if(NOT TARGET ${arg_NAME})
    message(FATAL_ERROR "ep_add_mpi_test_variant: no test executable ${arg_NAME}")
  endif()
  get_target_property(_args ${arg_NAME} EP_TEST_ARGS)
  get_target_property(_timeout ${arg_NAME} EP_TEST_TIMEOUT)
  get_target_property(_base_labels ${arg_NAME} EP_TEST_LABELS)
  if(NOT _args)
    set(_args "")
  endif()
  if(NOT _base_labels)
    set(_base_labels "")
  endif()
  foreach(_shape IN LISTS arg_SHAPES)
    _ep_parse_shape("ep_add_mpi_test_variant(${arg_NAME})" ${_shape} _r _t)
    _ep_add_run(${arg_NAME}.${_shape}.${arg_SUFFIX} ${arg_NAME} ${_r} ${_t}
      TIMEOUT ${_timeout} ARGS ${_args} LABELS ${_base_labels} ${arg_LABELS} ${arg_SUFFIX}
      ENV ${arg_ENV})
  endforeach()
endfunction()

function(ep_add_unit_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "INTERNAL" "NAME;TIMEOUT" "SOURCES;LABELS;LIBRARIES;ARGS")
  _ep_add_test_executable(ep_add_unit_test ep::ep GTest::gtest_main)
  _ep_test_timeout(_timeout "${arg_TIMEOUT}" 60)

  add_test(NAME ${arg_NAME} COMMAND ${arg_NAME} ${arg_ARGS})
  set(_labels unit ${arg_LABELS})
  list(REMOVE_DUPLICATES _labels)
  set_tests_properties(${arg_NAME} PROPERTIES
    ENVIRONMENT "${EP_SANITIZER_ENV}"
    PROCESSORS 1
    TIMEOUT ${_timeout}
    LABELS "${_labels}")
endfunction()

function(ep_add_program_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;TARGET;PASS;TIMEOUT" "SHAPES;LABELS;ARGS")
  _ep_require_arguments(ep_add_program_test NAME TARGET PASS SHAPES)
  _ep_test_timeout(_timeout "${arg_TIMEOUT}" 120)
  foreach(_shape IN LISTS arg_SHAPES)
    _ep_parse_shape("ep_add_program_test(${arg_NAME})" ${_shape} _r _t)
    _ep_add_run(${arg_NAME}.${_shape} ${arg_TARGET} ${_r} ${_t}
      TIMEOUT ${_timeout} ARGS ${arg_ARGS} LABELS ${arg_LABELS})
    set_tests_properties(${arg_NAME}.${_shape} PROPERTIES PASS_REGULAR_EXPRESSION "${arg_PASS}")
  endforeach()
  add_dependencies(ep_tests ${arg_TARGET})
endfunction()

function(ep_add_stop_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;EXPECT;PROCESSORS;THREADS;TIMEOUT;WORKING_DIRECTORY"
    "COMMAND;LABELS")
  _ep_require_arguments(ep_add_stop_test NAME EXPECT COMMAND)
  foreach(_option PROCESSORS THREADS)
    if(NOT arg_${_option})
      set(arg_${_option} 1)
    endif()
  endforeach()
  if(NOT arg_WORKING_DIRECTORY)
    set(arg_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  add_test(NAME ${arg_NAME}
    COMMAND bash -c [=[
      expect=$1; shift
      out=$("$@" 2>&1); rc=$?; printf '%s\n' "$out"
      if [ $rc -ne 0 ] && grep -q -- "$expect" <<<"$out"; then
        echo 'stopped with the expected message'
      fi]=] bash "${arg_EXPECT}" ${arg_COMMAND}
    WORKING_DIRECTORY ${arg_WORKING_DIRECTORY})
  _ep_test_timeout(_timeout "${arg_TIMEOUT}" 60)
  set_tests_properties(${arg_NAME} PROPERTIES
    ENVIRONMENT "OMP_NUM_THREADS=${arg_THREADS};${EP_TEST_BASE_ENV}"
    PROCESSORS ${arg_PROCESSORS}
    TIMEOUT ${_timeout}
    PASS_REGULAR_EXPRESSION "stopped with the expected message"
    LABELS "${arg_LABELS}")
endfunction()
