# The narrow wire-tag layouts of MPIs with a small MPI_TAG_UB (see
# ep/include/ep/tag_encoding.hpp), run on this MPI through the EP_TAG_UB
# override: the point-to-point, collective and communicator suites again,
# in shapes with several processes (only inter-process messages carry tags).
#
#   tagub19  2^19-1  Intel MPI 2021
#   tagub23  2^23-1  Open MPI with UCX
#   tagub16  2^16-1  no real MPI; leaves one pair bit in the tag, so even
#                    three threads per process spread over eight channel
#                    communicators (the multi-channel drain)
#   taghdr   2^16-1 with a budget of 2 channels (EP_TAG_CHANNELS): the
#                    source-header layout that 256 endpoints get under
#                    Intel MPI's 2^19-1, at three threads per process: the
#                    source thread in a header, small messages with their
#                    data, large and synchronous ones apart; also the
#                    failure-injection and flood suites on that path
set(_ep_tag_layout_tests
  test_p2p_basic test_p2p_ordering test_p2p_probe test_p2p_nonblocking test_p2p_errors
  test_collectives test_alltoall test_nonblocking_collectives test_nonblocking_against_blocking
  test_comm_management test_intercomm)
foreach(_variant IN ITEMS "tagub19;524287" "tagub23;8388607" "tagub16;65535")
  list(GET _variant 0 _suffix)
  list(GET _variant 1 _bound)
  foreach(_test IN LISTS _ep_tag_layout_tests)
    if(TARGET ${_test})
      ep_add_mpi_test_variant(NAME ${_test} SUFFIX ${_suffix} SHAPES r2t3
        ENV EP_TAG_UB=${_bound} LABELS tag_layout)
    endif()
  endforeach()
endforeach()
foreach(_test IN LISTS _ep_tag_layout_tests ITEMS test_p2p_faults test_p2p_flood)
  if(TARGET ${_test})
    ep_add_mpi_test_variant(NAME ${_test} SUFFIX taghdr SHAPES r2t3
      ENV EP_TAG_UB=65535 EP_TAG_CHANNELS=2 LABELS tag_layout)
  endif()
endforeach()

ep_add_mpi_test(NAME test_tag_layout
  SOURCES test_tag_layout.cpp
  SHAPES r1t1 r2t1 r3t1
  LABELS p2p tag_layout)
