# All-to-all collectives (alltoall, alltoallv, alltoallw) and the nonblocking
# collectives (ibarrier, ibcast, iallreduce, ialltoallv). Each test also runs
# an uneven layout (1 + world rank threads per process) and a split with
# reversed keys, so every shape covers different endpoint counts and EP
# ranks out of process order.
ep_add_mpi_test(NAME test_alltoall
  SOURCES test_alltoall.cpp
  LABELS coll
  TIMEOUT 180
  TCP)

ep_add_mpi_test(NAME test_nonblocking_collectives
  SOURCES test_nonblocking_collectives.cpp
  LABELS coll
  TIMEOUT 180
  TCP)

# The rest of the nonblocking set (ialltoall, ialltoallw, igather(v),
# iscatter(v), iallgather(v), ireduce, iscan, iexscan, ireduce_scatter(_block))
# against the blocking forms in every layout of coll_helpers.hpp.
ep_add_mpi_test(NAME test_nonblocking_collectives2
  SOURCES test_nonblocking_collectives2.cpp
  SHAPES r1t3 r2t2 r3t1 r2t3
  LABELS coll
  TIMEOUT 180)

# The all-to-all suite again with collective checking on
# (EP_CHECK_COLLECTIVES=1): block sizes agreed between processes before the
# MPI stage, one endpoint per process included; mismatches across processes
# are ep::Errors, not MPI aborts. 2x1, 4x1, 2x2 and 3x2; every run adds the
# uneven and permuted layouts.
if(TARGET test_alltoall)
  ep_add_mpi_test_variant(NAME test_alltoall SUFFIX checked SHAPES r2t1 r4t1 r2t2 r3t2
    ENV EP_CHECK_COLLECTIVES=1 LABELS coll)
endif()
