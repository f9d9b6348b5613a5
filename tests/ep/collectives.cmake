# Collective tests of the endpoint layer (ep/src/collective): every
# collective of ep/collectives.hpp, in the shapes below and, inside each
# test, in several endpoint layouts, permuted rank orders made with ep::split
# among them (see coll_helpers.hpp). Label `coll`.
foreach(_coll_test IN ITEMS test_collectives test_collectives_reduce test_reduce_predefined)
  ep_add_mpi_test(NAME ${_coll_test}
    SOURCES ${_coll_test}.cpp
    LABELS coll
    TIMEOUT 180
    TCP)
endforeach()

# reduce_scatter(_block) of 1.2 MB vectors whose process shares differ, in
# place and not: MPICH 4.0's MPI_Ireduce_scatter aborts on MPI_IN_PLACE
# there. r2t8: shares of 8 growing blocks; r4t1: its uneven layout has 1, 2,
# 3 and 4 endpoints per process.
ep_add_mpi_test(NAME test_reduce_scatter_uneven
  SOURCES test_reduce_scatter_uneven.cpp
  SHAPES r2t8 r4t1
  LABELS coll
  TIMEOUT 180)

# A failure in a collective's MPI stage reaches every local endpoint (the
# test-only hook of ep/src/p2p/test_hooks.hpp). One process has no MPI
# stage; the r1t3 shape checks that the armed failure stays unused.
ep_add_mpi_test(NAME test_collective_faults
  SOURCES test_collective_faults.cpp
  SHAPES r1t3 r2t1 r2t3
  LABELS coll
  INTERNAL)

# The collectives in each wait mode (ep/backoff.hpp): team rounds whose
# waiters spin, and whose waiters park and are woken.
if(TARGET test_collectives)
  ep_add_mpi_test_variant(NAME test_collectives SUFFIX spin SHAPES r1t2 r2t1
    ENV EP_WAIT_POLICY=spin LABELS coll)
  ep_add_mpi_test_variant(NAME test_collectives SUFFIX park SHAPES r1t2 r2t2
    ENV EP_WAIT_POLICY=park LABELS coll)
endif()
