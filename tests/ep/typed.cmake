# The typed layer (ep/typed.hpp): every overload, on one process with an odd
# thread count (intra-process paths) and on two processes of two threads
# (both paths). Label `typed`.
ep_add_mpi_test(NAME test_typed
  SOURCES test_typed.cpp
  SHAPES r1t3 r2t2
  LABELS typed
  TIMEOUT 120)
