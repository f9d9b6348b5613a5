# Sanitizer builds, selected with the EP_SANITIZER cache variable (see the asan
# and tsan presets in CMakePresets.json).
#
#   address  AddressSanitizer + UndefinedBehaviorSanitizer (GCC or Clang).
#   thread   ThreadSanitizer. Needs Clang: with Clang, -fopenmp uses LLVM's
#            libomp, whose OMPT tool "archer" (libarcher.so, shipped with
#            libomp-dev) is loaded automatically and tells TSan about OpenMP's
#            barriers, tasks and locks. GCC's libgomp has no such annotations,
#            so every OpenMP barrier would look like a race.
#
# The run-time options and suppression files (cmake/sanitizers/) are put into
# every test's environment by EpTesting.cmake; EP_SANITIZER_ENV holds them.
include_guard(GLOBAL)

set(EP_SANITIZER_DIR "${CMAKE_CURRENT_LIST_DIR}/sanitizers")
set(EP_SANITIZER_FLAGS "")
set(EP_SANITIZER_ENV "")

if(EP_SANITIZER STREQUAL "")
  # nothing to do
elseif(EP_SANITIZER STREQUAL "address")
  set(EP_SANITIZER_FLAGS
    -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer -O1 -g)
  # fast_unwind_on_malloc=0: Open MPI's libraries have no frame pointers, so
  # the fast unwinder stops before reaching them and the library-based leak
  # suppressions could not match. detect_leaks stays on for our own code.
  set(EP_SANITIZER_ENV
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
    "LSAN_OPTIONS=suppressions=${EP_SANITIZER_DIR}/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=${EP_SANITIZER_DIR}/ubsan.supp")
elseif(EP_SANITIZER STREQUAL "thread")
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(WARNING
      "EP_SANITIZER=thread with ${CMAKE_CXX_COMPILER_ID}: OpenMP (libgomp) is not "
      "TSan-aware and will report false races. Use the tsan preset (Clang + libomp).")
  endif()
  set(EP_SANITIZER_FLAGS -fsanitize=thread -fno-omit-frame-pointer -O1 -g)
  # ignore_noninstrumented_modules=1: Open MPI, libomp and libstdc++ are not
  # instrumented; their internal accesses (progress engine, shared-memory
  # transport, the runtime's own thread pool) would otherwise be reported
  # against our code. Archer asks for this option explicitly.
  # exitcode=66 (the default) makes a process with reports fail its test.
  set(EP_SANITIZER_ENV
    "TSAN_OPTIONS=ignore_noninstrumented_modules=1:suppressions=${EP_SANITIZER_DIR}/tsan.supp:second_deadlock_stack=1:history_size=4:halt_on_error=0:exitcode=66")
else()
  message(FATAL_ERROR "EP_SANITIZER='${EP_SANITIZER}': expected '', 'address' or 'thread'")
endif()

if(EP_SANITIZER_FLAGS)
  message(STATUS "ep: sanitizer build (${EP_SANITIZER}): ${EP_SANITIZER_FLAGS}")
  add_compile_options(${EP_SANITIZER_FLAGS})
  add_link_options(${EP_SANITIZER_FLAGS})
endif()
