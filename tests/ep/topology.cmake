# Topologies (Cartesian, distributed graph) and neighbourhood collectives:
# queries against coordinate arithmetic and graphs with repeated and one-way
# edges (test_topology), Cartesian neighbour collectives on grids with
# periodic dimensions of size 1 and 2 (test_topology_neighbors). The
# reference arithmetic both use is in topology_helpers.hpp.
foreach(_topo_test IN ITEMS test_topology test_topology_neighbors)
  ep_add_mpi_test(NAME ${_topo_test}
    SOURCES ${_topo_test}.cpp
    LABELS topo
    TIMEOUT 180
    TCP)
endforeach()

# Nonblocking neighbourhood collectives (ineighbor_*): against the blocking
# forms on the grids above and on a graph with repeated edges, many in
# flight at once, argument errors.
ep_add_mpi_test(NAME test_ineighbor
  SOURCES test_ineighbor.cpp
  SHAPES r1t3 r2t2 r3t1 r2t3
  LABELS topo
  TIMEOUT 180)

# cart_sub against the reference arithmetic on every grid and kept set, and
# compare on intercommunicators (two or more processes).
ep_add_mpi_test(NAME test_cart_sub
  SOURCES test_cart_sub.cpp
  SHAPES r1t3 r2t2 r3t1 r2t3
  LABELS topo
  TIMEOUT 180)

# Persistent neighbourhood collectives (neighbor_*_init, start): rounds
# against the blocking forms with new data each round, start_all, request
# lifetime, misuse; the array check of debug builds.
ep_add_mpi_test(NAME test_persistent_neighbor
  SOURCES test_persistent_neighbor.cpp
  SHAPES r1t1 r1t3 r2t2 r3t1 r2t3
  LABELS topo
  TIMEOUT 180)
