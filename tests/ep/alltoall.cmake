# All-to-all collectives (alltoall, alltoallv, alltoallw) and the size
# mismatches of every collective that moves blocks. Each test also runs one
# endpoint per process, an uneven layout (1 + world rank threads per
# process) and a split with reversed keys, so every shape covers different
# endpoint counts and EP ranks out of process order; r2t1 and r4t1 are
# one endpoint per process in their own layout too.
ep_add_mpi_test(NAME test_alltoall
  SOURCES test_alltoall.cpp
  SHAPES r1t1 r1t4 r2t1 r2t2 r3t2 r2t3 r4t1
  LABELS coll
  TIMEOUT 180
  TCP)

# The nonblocking collectives ibarrier, ibcast, iallreduce and ialltoallv.
ep_add_mpi_test(NAME test_nonblocking_collectives
  SOURCES test_nonblocking_collectives.cpp
  LABELS coll
  TIMEOUT 180
  TCP)

# The rest of the nonblocking set (ialltoall, ialltoallw, igather(v),
# iscatter(v), iallgather(v), ireduce, iscan, iexscan, ireduce_scatter(_block))
# against the blocking forms in every layout of coll_helpers.hpp.
ep_add_mpi_test(NAME test_nonblocking_against_blocking
  SOURCES test_nonblocking_against_blocking.cpp
  SHAPES r1t3 r2t2 r3t1 r2t3
  LABELS coll
  TIMEOUT 180)
