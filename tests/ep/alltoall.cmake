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
