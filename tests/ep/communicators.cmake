# Communicator management on endpoint communicators (label `comm`): dup,
# split, compare and free, and intercommunicators between groups of
# different sizes. The intercommunicator suites need two processes for
# disjoint groups; in one-process shapes they check the argument errors only.
ep_add_mpi_test(NAME test_comm_management
  SOURCES test_comm_management.cpp
  LABELS comm
  TIMEOUT 180
  TCP)

ep_add_mpi_test(NAME test_intercomm
  SOURCES test_intercomm.cpp
  LABELS comm
  TIMEOUT 180
  TCP)
