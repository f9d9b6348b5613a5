# Point-to-point tests of the endpoint layer (ep/src/p2p).
#
# Every MPI test runs in the shapes below: one process with one and four
# threads (the loopback tier: every message on the intra-process path), two
# single-threaded processes (every message through MPI), and the mixed shapes
# r2t3 and r3t2 (both paths, odd counts). Shapes with several processes also
# run over TCP. Labels: `p2p` here, plus `loopback` / `mpi` / `tcp` added by
# ep_add_mpi_test.
set(EP_P2P_SHAPES r1t1 r1t4 r2t1 r2t3 r3t2)

function(ep_add_p2p_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TIMEOUT" "")
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  ep_add_mpi_test(NAME ${name}
    SOURCES ${name}.cpp
    SHAPES ${EP_P2P_SHAPES}
    LABELS p2p
    TIMEOUT ${arg_TIMEOUT}
    TCP)
endfunction()

ep_add_p2p_test(test_rank_map)          # identity, rank map, process-major numbering
ep_add_p2p_test(test_p2p_basic)         # rings, all-pairs, ssend, sendrecv_replace, PROC_NULL
ep_add_p2p_test(test_p2p_ordering TIMEOUT 180)  # non-overtaking under 10^4-message streams
ep_add_p2p_test(test_p2p_probe)         # wildcards, probe/iprobe, mprobe/improbe
ep_add_p2p_test(test_p2p_nonblocking)   # storms with the wait/test family, cancel
ep_add_p2p_test(test_p2p_datatypes)     # vector, subarray, struct types on both sides
ep_add_p2p_test(test_p2p_paths)         # same results through self, thread and process
ep_add_p2p_test(test_p2p_pingpong)      # 8 B .. 1 MiB nonblocking ping-pong
ep_add_p2p_test(test_p2p_errors)        # ep::Error kinds and messages

# Failures inside the drain, injected through the library's test-only hooks
# (ep/src/p2p/test_hooks.hpp, hence the private include path). Needs two
# processes to drain anything; the one-process shape checks that the armed
# failures stay unused.
ep_add_mpi_test(NAME test_p2p_faults
  SOURCES test_p2p_faults.cpp
  SHAPES r1t3 r2t1 r2t3
  LABELS p2p
  INTERNAL)

# The rings of the intra-process path: LocalRing on its own (wrap-around,
# full rings, old data), then order across every path of a pair (inline,
# envelopes, rendezvous, synchronous, the overflow) with every kind of
# receive, probes, cancel, truncation and the wake-up of parked waiters.
ep_add_mpi_test(NAME test_p2p_rings
  SOURCES test_p2p_rings.cpp
  SHAPES r1t1 r1t2 r1t4 r2t3
  LABELS p2p
  INTERNAL)

# Floods: one drain call routes a bounded number of messages; every message
# of a flood arrives in order. Uses the test-only counters of test_hooks.hpp.
ep_add_mpi_test(NAME test_p2p_flood
  SOURCES test_p2p_flood.cpp
  SHAPES r1t3 r2t1 r2t3
  LABELS p2p
  INTERNAL)

# The point-to-point suites again with direct receives off
# (EP_DIRECT_RECEIVE=0): every receive is matched in its endpoint's queue,
# the path that wildcard receives always take (docs/ep.md, "Direct receives").
foreach(_test IN ITEMS test_p2p_basic test_p2p_ordering test_p2p_probe test_p2p_nonblocking
                       test_p2p_errors)
  if(TARGET ${_test})
    ep_add_mpi_test_variant(NAME ${_test} SUFFIX queued SHAPES r2t3
      ENV EP_DIRECT_RECEIVE=0 LABELS p2p)
  endif()
endforeach()

# The wait policy (ep/backoff.hpp): explicit and automatic choices, a bad
# EP_WAIT_POLICY, waiters that park and are woken, in shapes that fit the
# cores and shapes that do not.
ep_add_mpi_test(NAME test_wait_policy
  SOURCES test_wait_policy.cpp
  SHAPES r1t1 r1t2 r2t1 r2t3
  LABELS p2p)
# Point-to-point and collectives in each mode, whatever auto would choose:
# spinning where the shape fits 2 cores, parking where it is oversubscribed
# (and parking at a shape that fits, where waits are short).
foreach(_test IN ITEMS test_p2p_basic test_p2p_nonblocking)
  if(TARGET ${_test})
    ep_add_mpi_test_variant(NAME ${_test} SUFFIX spin SHAPES r1t2 r2t1
      ENV EP_WAIT_POLICY=spin LABELS p2p)
    ep_add_mpi_test_variant(NAME ${_test} SUFFIX park SHAPES r1t2 r2t3
      ENV EP_WAIT_POLICY=park LABELS p2p)
  endif()
endforeach()
