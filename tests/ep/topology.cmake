# Topologies (Cartesian, distributed graph) and neighbourhood collectives:
# queries against coordinate arithmetic, neighbour collectives on grids with
# periodic dimensions of size 1 and 2, graphs with repeated and one-way edges.
ep_add_mpi_test(NAME test_topology
  SOURCES test_topology.cpp
  LABELS topo
  TIMEOUT 180
  TCP)
