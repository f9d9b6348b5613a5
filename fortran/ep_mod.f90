! Fortran interface of the endpoint layer (over the C interface ep/ep.h).
!
!   use ep_mod
!   type(ep_comm), allocatable :: comms(:)
!   allocate(comms(omp_get_max_threads()))
!   !$omp parallel
!   !$omp single
!   call ep_create_endpoints(MPI_COMM_WORLD, omp_get_num_threads(), comms)
!   !$omp end single                     (the implied barrier hands them out)
!   associate (comm => comms(omp_get_thread_num() + 1))
!     call ep_comm_rank(comm, rank)      ! 0 .. size-1, over every thread of every process
!     call ep_irecv(halo, n, MPI_DOUBLE_PRECISION, left, 0, comm, reqs(1))
!     call ep_isend(edge, n, MPI_DOUBLE_PRECISION, right, 0, comm, reqs(2))
!     call ep_waitall(reqs)
!     ...
!     call ep_comm_free(comm)            ! collective over every endpoint
!   end associate
!   !$omp end parallel
!
! Errors: every routine takes an optional `ierr`. Present: it receives 0 or an
! EP_ERR_* code and trim(ep_last_error()) the message. Absent: a failure prints the
! message on standard error and stops the program (error stop, which makes
! mpiexec end the whole job).
module ep_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_null_ptr, c_associated, c_char, &
                                         c_size_t, c_f_pointer, c_intptr_t
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  public :: ep_comm, ep_create_endpoints, ep_comm_rank, ep_comm_size, ep_comm_local_thread, &
            ep_comm_free, ep_last_error, ep_c_string, ep_report_error
  public :: ep_request, ep_wait, ep_waitall, ep_barrier
  public :: ep_c_query, ep_c_release, ep_c_call
  ! The rest of the endpoint API, MPI's calls with ep_ for MPI_ (see "The whole API" below).
  public :: ep_message, ep_iprobe, ep_improbe, ep_test, ep_testany, ep_testall, &
            ep_comm_test_inter, ep_intercomm_merge, ep_cart_create, ep_cart_get, ep_cart_sub, &
            ep_dist_graph_create_adjacent, ep_dist_graph_neighbors_count, ep_is_null
  public :: ep_send, ep_ssend, ep_isend, ep_issend, ep_recv, ep_irecv, ep_sendrecv, &
             ep_sendrecv_replace, ep_probe, ep_mprobe, ep_mrecv, ep_imrecv, ep_waitany, &
             ep_waitsome, ep_testsome, ep_cancel, ep_test_cancelled, &
             ep_get_count, ep_ibarrier, ep_bcast, ep_ibcast, ep_reduce, ep_ireduce, &
             ep_allreduce, ep_iallreduce, ep_gather, ep_igather, ep_gatherv, ep_igatherv, &
             ep_scatter, ep_iscatter, ep_scatterv, ep_iscatterv, ep_allgather, ep_iallgather, &
             ep_allgatherv, ep_iallgatherv, ep_alltoall, ep_ialltoall, ep_alltoallv, &
             ep_ialltoallv, ep_alltoallw, ep_ialltoallw, ep_reduce_scatter, ep_ireduce_scatter, &
             ep_reduce_scatter_block, ep_ireduce_scatter_block, ep_scan, ep_iscan, ep_exscan, &
             ep_iexscan, ep_comm_dup, ep_comm_split, ep_comm_compare, ep_comm_remote_size, &
             ep_intercomm_create, ep_dims_create, ep_cartdim_get, ep_cart_coords, ep_cart_rank, &
             ep_cart_shift, ep_topo_test, ep_dist_graph_neighbors, ep_neighbor_allgather, &
             ep_ineighbor_allgather, ep_neighbor_allgatherv, ep_ineighbor_allgatherv, &
             ep_neighbor_alltoall, ep_ineighbor_alltoall, ep_neighbor_alltoallv, &
             ep_ineighbor_alltoallv, ep_neighbor_alltoallw, ep_ineighbor_alltoallw

  !> One endpoint (one thread's rank). Opaque; a thread uses only its own.
  !> bind(C): the calls below hand it to C as the ep_comm_t it holds.
  type, bind(C) :: ep_comm
    type(c_ptr) :: handle = c_null_ptr
  end type ep_comm

  !> A pending nonblocking operation; null once completed by ep_wait(all).
  type, bind(C) :: ep_request
    type(c_ptr) :: handle = c_null_ptr
  end type ep_request

  !> A message taken out of matching by ep_mprobe / ep_improbe (MPI_Message),
  !> received once by ep_mrecv / ep_imrecv; null for MPI_MESSAGE_NO_PROC.
  type, bind(C) :: ep_message
    type(c_ptr) :: handle = c_null_ptr
  end type ep_message

  !> The return codes of ep/ep.h, one per error kind (tests/support/check_fortran_codes.cmake
  !> checks that the two lists agree).
  integer, parameter, public :: EP_OK = 0, EP_ERR_RANK = 1, EP_ERR_TAG = 2, EP_ERR_COUNT = 3, &
                                EP_ERR_TRUNCATE = 4, EP_ERR_TOO_MANY_ENDPOINTS = 5, &
                                EP_ERR_THREAD_LEVEL = 6, EP_ERR_FREED_COMM = 7, &
                                EP_ERR_ARGUMENT = 8, EP_ERR_REQUEST = 9, EP_ERR_MPI = 10, &
                                EP_ERR_NO_MEMORY = 11, EP_ERR_OTHER = 99
  !> Length of the message ep_last_error() returns (as MPI_MAX_ERROR_STRING).
  integer, parameter, public :: EP_MAX_ERROR_STRING = 4096

  !> The shapes of the C functions that take a handle, shared with xios_lite_mod:
  !> each C function of that shape is bound once, as
  !> procedure(<shape>), bind(C, name="<C name>") :: <Fortran name>.
  abstract interface
    !> int f(handle, int* value): a query of the handle.
    integer(c_int) function ep_c_query(handle, value) bind(C)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: value
    end function ep_c_query
    !> int f(handle*): frees the handle and nulls it.
    integer(c_int) function ep_c_release(handle) bind(C)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: handle
    end function ep_c_release
    !> int f(handle): an operation on the handle alone.
    integer(c_int) function ep_c_call(handle) bind(C)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
    end function ep_c_call
  end interface

  procedure(ep_c_query), bind(C, name="ep_comm_rank") :: c_comm_rank
  procedure(ep_c_query), bind(C, name="ep_comm_size") :: c_comm_size
  procedure(ep_c_query), bind(C, name="ep_comm_local_thread") :: c_comm_local_thread
  procedure(ep_c_release), bind(C, name="ep_comm_free") :: c_comm_free
  procedure(ep_c_call), bind(C, name="ep_barrier") :: c_barrier

  interface
    integer(c_int) function c_create_endpoints(parent, n_local, comms) &
        bind(C, name="ep_create_endpoints_f")
      import :: c_int, c_ptr
      integer(c_int), value :: parent, n_local
      type(c_ptr), intent(out) :: comms(*)
    end function c_create_endpoints
    integer(c_int) function c_waitall(count, requests) bind(C, name="ep_waitall")
      import :: c_int, c_ptr
      integer(c_int), value :: count
      type(c_ptr), intent(inout) :: requests(*)
    end function c_waitall
    type(c_ptr) function c_last_error() bind(C, name="ep_last_error")
      import :: c_ptr
    end function c_last_error
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function c_strlen
  end interface

  ! ---- The whole API ----
  !
  ! MPI's calls with ep_ for MPI_ and the arguments in MPI's order: a Fortran
  ! model is ported by renaming its calls and declaring communicators
  ! type(ep_comm), requests type(ep_request) and messages type(ep_message).
  ! Buffers are of any type, kind and rank, scalars included (assumed type
  ! and rank: C gets the descriptor); a non-contiguous section is refused
  ! with EP_ERR_ARGUMENT (nonblocking calls must not get a temporary copy).
  ! Datatypes and ops are MPI's Fortran handles (MPI_REAL8, MPI_SUM),
  ! statuses MPI's: integer status(MPI_STATUS_SIZE), with status(MPI_SOURCE)
  ! the EP rank of the sender and MPI_Get_count or ep_get_count reading
  ! the count. MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE and MPI_UNWEIGHTED of
  ! `use mpi` (or mpif.h) are recognised by address. Counts and ranks are
  ! EP ranks of the communicator. "Collective": every endpoint calls, each
  ! thread with its own handle, in the same order on every thread; "Local":
  ! the calling thread alone. The trailing ierr is optional as everywhere in
  ! this module. The bind(C) names are the functions of
  ! fortran/ep_fortran_glue.cpp, which call ep/ep.h.

  interface
    !> MPI_Send. Local.
    subroutine ep_send(buf, count, datatype, dest, tag, comm, ierr) &
        bind(C, name="ep_f_send")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: dest
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_send
    !> MPI_Ssend. Local.
    subroutine ep_ssend(buf, count, datatype, dest, tag, comm, ierr) &
        bind(C, name="ep_f_ssend")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: dest
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ssend
    !> MPI_Isend. Local.
    subroutine ep_isend(buf, count, datatype, dest, tag, comm, request, ierr) &
        bind(C, name="ep_f_isend")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: dest
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_isend
    !> MPI_Issend. Local.
    subroutine ep_issend(buf, count, datatype, dest, tag, comm, request, ierr) &
        bind(C, name="ep_f_issend")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: dest
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_issend
    !> MPI_Recv. Local.
    subroutine ep_recv(buf, count, datatype, source, tag, comm, status, ierr) &
        bind(C, name="ep_f_recv")
      import :: c_int, ep_comm
      type(*), dimension(..) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_recv
    !> MPI_Irecv. Local.
    subroutine ep_irecv(buf, count, datatype, source, tag, comm, request, ierr) &
        bind(C, name="ep_f_irecv")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_irecv
    !> MPI_Sendrecv. Local.
    subroutine ep_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, &
                           recvtype, source, recvtag, comm, status, ierr) &
        bind(C, name="ep_f_sendrecv")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      integer(c_int), intent(in) :: dest
      integer(c_int), intent(in) :: sendtag
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: recvtag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_sendrecv
    !> MPI_Sendrecv_replace. Local.
    subroutine ep_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, &
                                   status, ierr) &
        bind(C, name="ep_f_sendrecv_replace")
      import :: c_int, ep_comm
      type(*), dimension(..) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: dest
      integer(c_int), intent(in) :: sendtag
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: recvtag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_sendrecv_replace
    !> MPI_Probe. Local.
    subroutine ep_probe(source, tag, comm, status, ierr) &
        bind(C, name="ep_f_probe")
      import :: c_int, ep_comm
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_probe
    !> MPI_Mprobe. Local.
    subroutine ep_mprobe(source, tag, comm, message, status, ierr) &
        bind(C, name="ep_f_mprobe")
      import :: c_int, ep_comm, ep_message
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      type(ep_message), intent(out) :: message
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_mprobe
    !> MPI_Mrecv. Local.
    subroutine ep_mrecv(buf, count, datatype, message, status, ierr) &
        bind(C, name="ep_f_mrecv")
      import :: c_int, ep_message
      type(*), dimension(..) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      type(ep_message), intent(inout) :: message
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_mrecv
    !> MPI_Imrecv. Local.
    subroutine ep_imrecv(buf, count, datatype, message, request, ierr) &
        bind(C, name="ep_f_imrecv")
      import :: c_int, ep_request, ep_message
      type(*), dimension(..) :: buf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      type(ep_message), intent(inout) :: message
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_imrecv
    !> MPI_Waitany (index 1-based, MPI_UNDEFINED when all are null). By the requests' thread.
    subroutine ep_waitany(count, requests, index, status, ierr) &
        bind(C, name="ep_f_waitany")
      import :: c_int, ep_request
      integer(c_int), intent(in) :: count
      type(ep_request), intent(inout) :: requests(*)
      integer(c_int), intent(out) :: index
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_waitany
    !> MPI_Waitsome: outcount completed requests (at least one), their 1-based
    !> positions in indices(1:outcount) and statuses(:, 1:outcount); outcount
    !> MPI_UNDEFINED when all are null. By the requests' thread.
    subroutine ep_waitsome(count, requests, outcount, indices, statuses, ierr) &
        bind(C, name="ep_f_waitsome")
      import :: c_int, ep_request
      integer(c_int), intent(in) :: count
      type(ep_request), intent(inout) :: requests(*)
      integer(c_int), intent(out) :: outcount
      integer(c_int), intent(out) :: indices(*)
      integer(c_int), intent(inout) :: statuses(1, *)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_waitsome
    !> MPI_Testsome: as ep_waitsome, outcount 0 when none is complete yet.
    subroutine ep_testsome(count, requests, outcount, indices, statuses, ierr) &
        bind(C, name="ep_f_testsome")
      import :: c_int, ep_request
      integer(c_int), intent(in) :: count
      type(ep_request), intent(inout) :: requests(*)
      integer(c_int), intent(out) :: outcount
      integer(c_int), intent(out) :: indices(*)
      integer(c_int), intent(inout) :: statuses(1, *)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_testsome
    !> MPI_Cancel: a receive not yet matched is cancelled; complete the request
    !> as usual (ep_test_cancelled on its status says so). Local.
    subroutine ep_cancel(request, ierr) bind(C, name="ep_f_cancel")
      import :: c_int, ep_request
      type(ep_request), intent(inout) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_cancel
    !> MPI_Get_count of a status this module filled. Local.
    subroutine ep_get_count(status, datatype, count, ierr) &
        bind(C, name="ep_f_get_count")
      import :: c_int
      integer(c_int), intent(in) :: status(*)
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(out) :: count
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_get_count
    !> MPI_Ibarrier. Collective.
    subroutine ep_ibarrier(comm, request, ierr) &
        bind(C, name="ep_f_ibarrier")
      import :: c_int, ep_comm, ep_request
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ibarrier
    !> MPI_Bcast. Collective.
    subroutine ep_bcast(buffer, count, datatype, root, comm, ierr) &
        bind(C, name="ep_f_bcast")
      import :: c_int, ep_comm
      type(*), dimension(..) :: buffer
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_bcast
    !> MPI_Ibcast. Collective.
    subroutine ep_ibcast(buffer, count, datatype, root, comm, request, ierr) &
        bind(C, name="ep_f_ibcast")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..) :: buffer
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ibcast
    !> MPI_Reduce (sendbuf MPI_IN_PLACE at the root). Collective.
    subroutine ep_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, ierr) &
        bind(C, name="ep_f_reduce")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_reduce
    !> MPI_Ireduce. Collective.
    subroutine ep_ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, ierr) &
        bind(C, name="ep_f_ireduce")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ireduce
    !> MPI_Allreduce (sendbuf may be MPI_IN_PLACE). Collective.
    subroutine ep_allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierr) &
        bind(C, name="ep_f_allreduce")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_allreduce
    !> MPI_Iallreduce. Collective.
    subroutine ep_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request, ierr) &
        bind(C, name="ep_f_iallreduce")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_iallreduce
    !> MPI_Gather. Collective.
    subroutine ep_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, &
                         comm, ierr) &
        bind(C, name="ep_f_gather")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_gather
    !> MPI_Igather. Collective.
    subroutine ep_igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, &
                          comm, request, ierr) &
        bind(C, name="ep_f_igather")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_igather
    !> MPI_Gatherv. Collective.
    subroutine ep_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, &
                          root, comm, ierr) &
        bind(C, name="ep_f_gatherv")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_gatherv
    !> MPI_Igatherv. Collective.
    subroutine ep_igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, &
                           root, comm, request, ierr) &
        bind(C, name="ep_f_igatherv")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_igatherv
    !> MPI_Scatter. Collective.
    subroutine ep_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, &
                          comm, ierr) &
        bind(C, name="ep_f_scatter")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_scatter
    !> MPI_Iscatter. Collective.
    subroutine ep_iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, &
                           comm, request, ierr) &
        bind(C, name="ep_f_iscatter")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_iscatter
    !> MPI_Scatterv. Collective.
    subroutine ep_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, &
                           root, comm, ierr) &
        bind(C, name="ep_f_scatterv")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_scatterv
    !> MPI_Iscatterv. Collective.
    subroutine ep_iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, &
                            recvtype, root, comm, request, ierr) &
        bind(C, name="ep_f_iscatterv")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      integer(c_int), intent(in) :: root
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_iscatterv
    !> MPI_Allgather. Collective.
    subroutine ep_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &
                            ierr) &
        bind(C, name="ep_f_allgather")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_allgather
    !> MPI_Iallgather. Collective.
    subroutine ep_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &
                             request, ierr) &
        bind(C, name="ep_f_iallgather")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_iallgather
    !> MPI_Allgatherv. Collective.
    subroutine ep_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
                             recvtype, comm, ierr) &
        bind(C, name="ep_f_allgatherv")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_allgatherv
    !> MPI_Iallgatherv. Collective.
    subroutine ep_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
                              recvtype, comm, request, ierr) &
        bind(C, name="ep_f_iallgatherv")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_iallgatherv
    !> MPI_Alltoall. Collective.
    subroutine ep_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &
                           ierr) &
        bind(C, name="ep_f_alltoall")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_alltoall
    !> MPI_Ialltoall. Collective.
    subroutine ep_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &
                            request, ierr) &
        bind(C, name="ep_f_ialltoall")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ialltoall
    !> MPI_Alltoallv. Collective.
    subroutine ep_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, &
                            rdispls, recvtype, comm, ierr) &
        bind(C, name="ep_f_alltoallv")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_alltoallv
    !> MPI_Ialltoallv. Collective.
    subroutine ep_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, &
                             rdispls, recvtype, comm, request, ierr) &
        bind(C, name="ep_f_ialltoallv")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ialltoallv
    !> MPI_Alltoallw (displacements in bytes). Collective.
    subroutine ep_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, &
                            rdispls, recvtypes, comm, ierr) &
        bind(C, name="ep_f_alltoallw")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtypes(*)
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtypes(*)
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_alltoallw
    !> MPI_Ialltoallw. Collective.
    subroutine ep_ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, &
                             rdispls, recvtypes, comm, request, ierr) &
        bind(C, name="ep_f_ialltoallw")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtypes(*)
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtypes(*)
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ialltoallw
    !> MPI_Reduce_scatter. Collective.
    subroutine ep_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, ierr) &
        bind(C, name="ep_f_reduce_scatter")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_reduce_scatter
    !> MPI_Ireduce_scatter. Collective.
    subroutine ep_ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request, &
                                  ierr) &
        bind(C, name="ep_f_ireduce_scatter")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ireduce_scatter
    !> MPI_Reduce_scatter_block. Collective.
    subroutine ep_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, ierr) &
        bind(C, name="ep_f_reduce_scatter_block")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_reduce_scatter_block
    !> MPI_Ireduce_scatter_block. Collective.
    subroutine ep_ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, &
                                        request, ierr) &
        bind(C, name="ep_f_ireduce_scatter_block")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ireduce_scatter_block
    !> MPI_Scan. Collective.
    subroutine ep_scan(sendbuf, recvbuf, count, datatype, op, comm, ierr) &
        bind(C, name="ep_f_scan")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_scan
    !> MPI_Iscan. Collective.
    subroutine ep_iscan(sendbuf, recvbuf, count, datatype, op, comm, request, ierr) &
        bind(C, name="ep_f_iscan")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_iscan
    !> MPI_Exscan (EP rank 0's recvbuf untouched). Collective.
    subroutine ep_exscan(sendbuf, recvbuf, count, datatype, op, comm, ierr) &
        bind(C, name="ep_f_exscan")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_exscan
    !> MPI_Iexscan. Collective.
    subroutine ep_iexscan(sendbuf, recvbuf, count, datatype, op, comm, request, ierr) &
        bind(C, name="ep_f_iexscan")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: count
      integer(c_int), intent(in) :: datatype
      integer(c_int), intent(in) :: op
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_iexscan
    !> MPI_Comm_dup. Collective.
    subroutine ep_comm_dup(comm, newcomm, ierr) &
        bind(C, name="ep_f_comm_dup")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      type(ep_comm), intent(out) :: newcomm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_comm_dup
    !> MPI_Comm_split (MPI_UNDEFINED: a null handle). Collective.
    subroutine ep_comm_split(comm, color, key, newcomm, ierr) &
        bind(C, name="ep_f_comm_split")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: color
      integer(c_int), intent(in) :: key
      type(ep_comm), intent(out) :: newcomm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_comm_split
    !> MPI_Comm_compare. Local.
    subroutine ep_comm_compare(comm1, comm2, result, ierr) &
        bind(C, name="ep_f_comm_compare")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm1
      type(ep_comm), intent(in) :: comm2
      integer(c_int), intent(out) :: result
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_comm_compare
    !> MPI_Comm_remote_size of an intercommunicator. Local.
    subroutine ep_comm_remote_size(comm, size, ierr) &
        bind(C, name="ep_f_comm_remote_size")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out) :: size
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_comm_remote_size
    !> MPI_Intercomm_create (peer_comm: an MPI communicator). Collective over both groups.
    subroutine ep_intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, &
                                   newintercomm, ierr) &
        bind(C, name="ep_f_intercomm_create")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: local_comm
      integer(c_int), intent(in) :: local_leader
      integer(c_int), intent(in) :: peer_comm
      integer(c_int), intent(in) :: remote_leader
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(out) :: newintercomm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_intercomm_create
    !> MPI_Dims_create. Local.
    subroutine ep_dims_create(nnodes, ndims, dims, ierr) &
        bind(C, name="ep_f_dims_create")
      import :: c_int
      integer(c_int), intent(in) :: nnodes
      integer(c_int), intent(in) :: ndims
      integer(c_int), intent(inout) :: dims(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_dims_create
    !> MPI_Cartdim_get. Local.
    subroutine ep_cartdim_get(comm, ndims, ierr) &
        bind(C, name="ep_f_cartdim_get")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out) :: ndims
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_cartdim_get
    !> MPI_Cart_coords. Local.
    subroutine ep_cart_coords(comm, rank, maxdims, coords, ierr) &
        bind(C, name="ep_f_cart_coords")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: rank
      integer(c_int), intent(in) :: maxdims
      integer(c_int), intent(inout) :: coords(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_cart_coords
    !> MPI_Cart_rank. Local.
    subroutine ep_cart_rank(comm, coords, rank, ierr) &
        bind(C, name="ep_f_cart_rank")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: coords(*)
      integer(c_int), intent(out) :: rank
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_cart_rank
    !> MPI_Cart_shift. Local.
    subroutine ep_cart_shift(comm, direction, disp, rank_source, rank_dest, ierr) &
        bind(C, name="ep_f_cart_shift")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: direction
      integer(c_int), intent(in) :: disp
      integer(c_int), intent(out) :: rank_source
      integer(c_int), intent(out) :: rank_dest
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_cart_shift
    !> MPI_Topo_test (MPI_CART, MPI_DIST_GRAPH, MPI_UNDEFINED). Local.
    subroutine ep_topo_test(comm, status, ierr) &
        bind(C, name="ep_f_topo_test")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out) :: status
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_topo_test
    !> MPI_Dist_graph_neighbors (weights: MPI_UNWEIGHTED or arrays, of any rank:
  !> MPI_UNWEIGHTED is an array in Open MPI, a scalar in MPICH). Local.
    subroutine ep_dist_graph_neighbors(comm, maxindegree, sources, sourceweights, maxoutdegree, &
                                       destinations, destweights, ierr) &
        bind(C, name="ep_f_dist_graph_neighbors")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: maxindegree
      integer(c_int), intent(inout) :: sources(*)
      integer(c_int), dimension(..), intent(inout) :: sourceweights
      integer(c_int), intent(in) :: maxoutdegree
      integer(c_int), intent(inout) :: destinations(*)
      integer(c_int), dimension(..), intent(inout) :: destweights
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_dist_graph_neighbors
    !> MPI_Neighbor_allgather. Collective.
    subroutine ep_neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, &
                                     recvtype, comm, ierr) &
        bind(C, name="ep_f_neighbor_allgather")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_neighbor_allgather
    !> MPI_Ineighbor_allgather. Collective.
    subroutine ep_ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, &
                                      recvtype, comm, request, ierr) &
        bind(C, name="ep_f_ineighbor_allgather")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ineighbor_allgather
    !> MPI_Neighbor_allgatherv. Collective.
    subroutine ep_neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, &
                                      displs, recvtype, comm, ierr) &
        bind(C, name="ep_f_neighbor_allgatherv")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_neighbor_allgatherv
    !> MPI_Ineighbor_allgatherv. Collective.
    subroutine ep_ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, &
                                       displs, recvtype, comm, request, ierr) &
        bind(C, name="ep_f_ineighbor_allgatherv")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: displs(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ineighbor_allgatherv
    !> MPI_Neighbor_alltoall. Collective.
    subroutine ep_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &
                                    comm, ierr) &
        bind(C, name="ep_f_neighbor_alltoall")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_neighbor_alltoall
    !> MPI_Ineighbor_alltoall. Collective.
    subroutine ep_ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, &
                                     recvtype, comm, request, ierr) &
        bind(C, name="ep_f_ineighbor_alltoall")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcount
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcount
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ineighbor_alltoall
    !> MPI_Neighbor_alltoallv. Collective.
    subroutine ep_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, &
                                     recvcounts, rdispls, recvtype, comm, ierr) &
        bind(C, name="ep_f_neighbor_alltoallv")
      import :: c_int, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_neighbor_alltoallv
    !> MPI_Ineighbor_alltoallv. Collective.
    subroutine ep_ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, &
                                      recvcounts, rdispls, recvtype, comm, request, ierr) &
        bind(C, name="ep_f_ineighbor_alltoallv")
      import :: c_int, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_int), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_int), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtype
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ineighbor_alltoallv
    !> MPI_Neighbor_alltoallw (displacements: integer(MPI_ADDRESS_KIND), bytes). Collective.
    subroutine ep_neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, &
                                     recvcounts, rdispls, recvtypes, comm, ierr) &
        bind(C, name="ep_f_neighbor_alltoallw")
      import :: c_int, c_intptr_t, ep_comm
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_intptr_t), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtypes(*)
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_intptr_t), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtypes(*)
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_neighbor_alltoallw
    !> MPI_Ineighbor_alltoallw. Collective.
    subroutine ep_ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, &
                                      recvcounts, rdispls, recvtypes, comm, request, ierr) &
        bind(C, name="ep_f_ineighbor_alltoallw")
      import :: c_int, c_intptr_t, ep_comm, ep_request
      type(*), dimension(..), intent(in) :: sendbuf
      integer(c_int), intent(in) :: sendcounts(*)
      integer(c_intptr_t), intent(in) :: sdispls(*)
      integer(c_int), intent(in) :: sendtypes(*)
      type(*), dimension(..) :: recvbuf
      integer(c_int), intent(in) :: recvcounts(*)
      integer(c_intptr_t), intent(in) :: rdispls(*)
      integer(c_int), intent(in) :: recvtypes(*)
      type(ep_comm), intent(in) :: comm
      type(ep_request), intent(out) :: request
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_ineighbor_alltoallw
    subroutine c_iprobe(source, tag, comm, flag, status, ierr) &
        bind(C, name="ep_f_iprobe")
      import :: c_int, ep_comm
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out) :: flag
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_iprobe
    subroutine c_improbe(source, tag, comm, flag, message, status, ierr) &
        bind(C, name="ep_f_improbe")
      import :: c_int, ep_comm, ep_message
      integer(c_int), intent(in) :: source
      integer(c_int), intent(in) :: tag
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out) :: flag
      type(ep_message), intent(out) :: message
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_improbe
    subroutine c_test(request, flag, status, ierr) &
        bind(C, name="ep_f_test")
      import :: c_int, ep_request
      type(ep_request), intent(inout) :: request
      integer(c_int), intent(out) :: flag
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_test
    subroutine c_testany(count, requests, index, flag, status, ierr) &
        bind(C, name="ep_f_testany")
      import :: c_int, ep_request
      integer(c_int), intent(in) :: count
      type(ep_request), intent(inout) :: requests(*)
      integer(c_int), intent(out) :: index
      integer(c_int), intent(out) :: flag
      integer(c_int), intent(inout) :: status(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_testany
    subroutine c_testall(count, requests, flag, statuses, ierr) &
        bind(C, name="ep_f_testall")
      import :: c_int, ep_request
      integer(c_int), intent(in) :: count
      type(ep_request), intent(inout) :: requests(*)
      integer(c_int), intent(out) :: flag
      integer(c_int), intent(inout) :: statuses(1, *)
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_testall
    subroutine c_test_cancelled(status, flag, ierr) bind(C, name="ep_f_test_cancelled")
      import :: c_int
      integer(c_int), intent(in) :: status(*)
      integer(c_int), intent(out) :: flag
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_test_cancelled
    subroutine c_comm_test_inter(comm, flag, ierr) &
        bind(C, name="ep_f_comm_test_inter")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out) :: flag
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_comm_test_inter
    subroutine c_intercomm_merge(intercomm, high, newintracomm, ierr) &
        bind(C, name="ep_f_intercomm_merge")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: intercomm
      integer(c_int), intent(in) :: high
      type(ep_comm), intent(out) :: newintracomm
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_intercomm_merge
    subroutine c_cart_create(comm, ndims, dims, periods, reorder, comm_cart, ierr) &
        bind(C, name="ep_f_cart_create")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: ndims
      integer(c_int), intent(in) :: dims(*)
      integer(c_int), intent(in) :: periods(*)
      integer(c_int), intent(in) :: reorder
      type(ep_comm), intent(out) :: comm_cart
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_cart_create
    subroutine c_cart_get(comm, maxdims, dims, periods, coords, ierr) &
        bind(C, name="ep_f_cart_get")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: maxdims
      integer(c_int), intent(inout) :: dims(*)
      integer(c_int), intent(inout) :: periods(*)
      integer(c_int), intent(inout) :: coords(*)
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_cart_get
    subroutine c_cart_sub(comm, remain_dims, newcomm, ierr) &
        bind(C, name="ep_f_cart_sub")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: remain_dims(*)
      type(ep_comm), intent(out) :: newcomm
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_cart_sub
    subroutine c_dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, &
                                            destinations, destweights, info, reorder, &
                                            comm_dist_graph, ierr) &
        bind(C, name="ep_f_dist_graph_create_adjacent")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(in) :: indegree
      integer(c_int), intent(in) :: sources(*)
      integer(c_int), dimension(..), intent(in) :: sourceweights
      integer(c_int), intent(in) :: outdegree
      integer(c_int), intent(in) :: destinations(*)
      integer(c_int), dimension(..), intent(in) :: destweights
      integer(c_int), intent(in) :: info
      integer(c_int), intent(in) :: reorder
      type(ep_comm), intent(out) :: comm_dist_graph
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_dist_graph_create_adjacent
    subroutine c_dist_graph_neighbors_count(comm, indegree, outdegree, weighted, ierr) &
        bind(C, name="ep_f_dist_graph_neighbors_count")
      import :: c_int, ep_comm
      type(ep_comm), intent(in) :: comm
      integer(c_int), intent(out) :: indegree
      integer(c_int), intent(out) :: outdegree
      integer(c_int), intent(out) :: weighted
      integer(c_int), intent(out), optional :: ierr
    end subroutine c_dist_graph_neighbors_count
  end interface

  !> MPI_Wait: ep_wait(request [, ierr]) or, as MPI, ep_wait(request, status [, ierr]).
  interface ep_wait
    module procedure ep_wait_one
      subroutine ep_wait_status(request, status, ierr) &
            bind(C, name="ep_f_wait")
        import :: c_int, ep_request
        type(ep_request), intent(inout) :: request
        integer(c_int), intent(inout) :: status(*)
        integer(c_int), intent(out), optional :: ierr
      end subroutine ep_wait_status
  end interface ep_wait

  !> MPI_Waitall: ep_waitall(requests [, ierr]) over the whole array or, as
  !> MPI, ep_waitall(count, requests, statuses [, ierr]) with statuses
  !> MPI_STATUSES_IGNORE or integer statuses(MPI_STATUS_SIZE, count).
  interface ep_waitall
    module procedure ep_waitall_array
    subroutine ep_waitall_status(count, requests, statuses, ierr) &
        bind(C, name="ep_f_waitall")
      import :: c_int, ep_request
      integer(c_int), intent(in) :: count
      type(ep_request), intent(inout) :: requests(*)
      integer(c_int), intent(inout) :: statuses(1, *)
      integer(c_int), intent(out), optional :: ierr
    end subroutine ep_waitall_status
  end interface ep_waitall

contains

  !> MPI_Comm_create_endpoints over the Fortran communicator `parent`: fills
  !> comms(1:n_local); thread t (omp_get_thread_num()) uses comms(t + 1).
  !> Collective over `parent`, called by one thread per process.
  subroutine ep_create_endpoints(parent, n_local, comms, ierr)
    integer, intent(in) :: parent, n_local
    type(ep_comm), intent(inout) :: comms(:)
    integer, intent(out), optional :: ierr
    type(c_ptr), allocatable :: handles(:)
    integer :: rc, i
    if (n_local < 1 .or. size(comms) < n_local) then
      call ep_report_error(EP_ERR_ARGUMENT, 'ep_create_endpoints: comms has ' // &
                           trim(itoa(size(comms))) // ' elements for n_local = ' // trim(itoa(n_local)), &
                           ierr)
      return
    end if
    allocate(handles(n_local))
    rc = c_create_endpoints(int(parent, c_int), int(n_local, c_int), handles)
    if (rc == EP_OK) then
      do i = 1, n_local
        comms(i)%handle = handles(i)
      end do
    end if
    call check(rc, ierr)
  end subroutine ep_create_endpoints

  !> Rank of this endpoint in the endpoint communicator. Local.
  subroutine ep_comm_rank(comm, rank, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out) :: rank
    integer, intent(out), optional :: ierr
    call query(c_comm_rank, comm%handle, rank, -1, ierr)
  end subroutine ep_comm_rank

  !> Number of endpoints (every thread of every process). Local.
  subroutine ep_comm_size(comm, size, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out) :: size
    integer, intent(out), optional :: ierr
    call query(c_comm_size, comm%handle, size, 0, ierr)
  end subroutine ep_comm_size

  !> Index (0-based) of this endpoint among its process's endpoints. Local.
  subroutine ep_comm_local_thread(comm, thread, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out) :: thread
    integer, intent(out), optional :: ierr
    call query(c_comm_local_thread, comm%handle, thread, -1, ierr)
  end subroutine ep_comm_local_thread

  !> MPI_Comm_free: collective over every endpoint; the handle becomes null.
  subroutine ep_comm_free(comm, ierr)
    type(ep_comm), intent(inout) :: comm
    integer, intent(out), optional :: ierr
    call check(int(c_comm_free(comm%handle)), ierr)
  end subroutine ep_comm_free

  !> MPI_Wait: completes the request (by the thread that started it).
  subroutine ep_wait_one(request, ierr)
    type(ep_request), intent(inout) :: request
    integer, intent(out), optional :: ierr
    type(ep_request) :: one(1)
    one(1) = request
    call ep_waitall_array(one, ierr)
    request = one(1)
  end subroutine ep_wait_one

  !> MPI_Waitall: completes every request (null ones are skipped), also when
  !> one fails; the first failure is reported.
  subroutine ep_waitall_array(requests, ierr)
    type(ep_request), intent(inout) :: requests(:)
    integer, intent(out), optional :: ierr
    type(c_ptr), allocatable :: handles(:)
    integer :: i, rc
    allocate(handles(size(requests)))
    do i = 1, size(requests)
      handles(i) = requests(i)%handle
    end do
    rc = int(c_waitall(int(size(requests), c_int), handles))
    do i = 1, size(requests)
      requests(i)%handle = handles(i)
    end do
    call check(rc, ierr)
  end subroutine ep_waitall_array

  !> MPI_Barrier over every endpoint. Collective.
  subroutine ep_barrier(comm, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call check(int(c_barrier(comm%handle)), ierr)
  end subroutine ep_barrier

  !> The calling thread's last error message of the ep C interface, blank
  !> padded to EP_MAX_ERROR_STRING (use trim()); a longer message is cut there.
  ! Why not a deferred-length (len=:) result: gfortran 12 keeps the length of
  ! such a result in a static variable of the caller, so two threads calling
  ! at once can copy each other's length and read a blank or overrun message.
  ! A fixed length has no hidden shared state.
  function ep_last_error() result(message)
    character(len=EP_MAX_ERROR_STRING) :: message
    call ep_c_string(c_last_error(), message)
  end function ep_last_error

  !> Copies the NUL-terminated C string `s` into `f`, blank padded; a null
  !> pointer gives blanks. Characters past len(f) are left out.
  subroutine ep_c_string(s, f)
    type(c_ptr), intent(in) :: s
    character(len=*), intent(out) :: f
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    f = ''
    if (.not. c_associated(s)) return
    n = int(c_strlen(s))
    call c_f_pointer(s, chars, [n])
    do i = 1, min(n, len(f))
      f(i:i) = chars(i)
    end do
  end subroutine ep_c_string

  !> Hands `rc` to `ierr` when present; otherwise a failure (rc /= 0) prints
  !> `message` and stops the program.
  subroutine ep_report_error(rc, message, ierr)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: message
    integer, intent(out), optional :: ierr
    if (present(ierr)) then
      ierr = rc
    else if (rc /= EP_OK) then
      write (error_unit, '(a, i0, a)') 'error ', rc, ': ' // trim(message)
      flush (error_unit)
      error stop 1
    end if
  end subroutine ep_report_error

  !> value = what the query `fn` (an ep_c_query of the C API) answers for
  !> `handle`; `unset` when the call fails (ierr, or the abort, says why).
  subroutine query(fn, handle, value, unset, ierr)
    procedure(ep_c_query) :: fn
    type(c_ptr), intent(in) :: handle
    integer, intent(out) :: value
    integer, intent(in) :: unset
    integer, intent(out), optional :: ierr
    integer(c_int) :: answer
    answer = int(unset, c_int)
    call check(int(fn(handle, answer)), ierr)
    value = int(answer)
  end subroutine query

  !> ep_report_error for a return code of the ep C interface: the message is
  !> fetched only on failure.
  subroutine check(rc, ierr)
    integer, intent(in) :: rc
    integer, intent(out), optional :: ierr
    if (rc /= EP_OK) then
      call ep_report_error(rc, ep_last_error(), ierr)
    else if (present(ierr)) then
      ierr = EP_OK
    end if
  end subroutine check

  ! ---- The calls with logical arguments (MPI's Fortran logicals are not C
  ! interoperable: these convert and call the C glue) ----

  !> MPI_Iprobe. Local.
  subroutine ep_iprobe(source, tag, comm, flag, status, ierr)
    integer, intent(in) :: source, tag
    type(ep_comm), intent(in) :: comm
    logical, intent(out) :: flag
    integer, intent(inout) :: status(*)
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call c_iprobe(source, tag, comm, f, status, ierr)
    flag = f /= 0
  end subroutine ep_iprobe

  !> MPI_Improbe. Local.
  subroutine ep_improbe(source, tag, comm, flag, message, status, ierr)
    integer, intent(in) :: source, tag
    type(ep_comm), intent(in) :: comm
    logical, intent(out) :: flag
    type(ep_message), intent(out) :: message
    integer, intent(inout) :: status(*)
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call c_improbe(source, tag, comm, f, message, status, ierr)
    flag = f /= 0
  end subroutine ep_improbe

  !> MPI_Test: flag .true. when complete (the request is then null). By the
  !> request's thread.
  subroutine ep_test(request, flag, status, ierr)
    type(ep_request), intent(inout) :: request
    logical, intent(out) :: flag
    integer, intent(inout) :: status(*)
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call c_test(request, f, status, ierr)
    flag = f /= 0
  end subroutine ep_test

  !> MPI_Testany (index 1-based; flag .true. and index MPI_UNDEFINED when all
  !> are null). By the requests' thread.
  subroutine ep_testany(count, requests, index, flag, status, ierr)
    integer, intent(in) :: count
    type(ep_request), intent(inout) :: requests(*)
    integer, intent(out) :: index
    logical, intent(out) :: flag
    integer, intent(inout) :: status(*)
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call c_testany(count, requests, index, f, status, ierr)
    flag = f /= 0
  end subroutine ep_testany

  !> MPI_Testall: flag .true. only when all are complete. By the requests' thread.
  subroutine ep_testall(count, requests, flag, statuses, ierr)
    integer, intent(in) :: count
    type(ep_request), intent(inout) :: requests(*)
    logical, intent(out) :: flag
    integer, intent(inout) :: statuses(1, *)
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call c_testall(count, requests, f, statuses, ierr)
    flag = f /= 0
  end subroutine ep_testall

  !> MPI_Test_cancelled on a status this module filled. Local.
  subroutine ep_test_cancelled(status, flag, ierr)
    integer, intent(in) :: status(*)
    logical, intent(out) :: flag
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call c_test_cancelled(status, f, ierr)
    flag = f /= 0
  end subroutine ep_test_cancelled

  !> MPI_Comm_test_inter. Local.
  subroutine ep_comm_test_inter(comm, flag, ierr)
    type(ep_comm), intent(in) :: comm
    logical, intent(out) :: flag
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call c_comm_test_inter(comm, f, ierr)
    flag = f /= 0
  end subroutine ep_comm_test_inter

  !> MPI_Intercomm_merge. Collective over both groups.
  subroutine ep_intercomm_merge(intercomm, high, newintracomm, ierr)
    type(ep_comm), intent(in) :: intercomm
    logical, intent(in) :: high
    type(ep_comm), intent(out) :: newintracomm
    integer, intent(out), optional :: ierr
    call c_intercomm_merge(intercomm, merge(1, 0, high), newintracomm, ierr)
  end subroutine ep_intercomm_merge

  !> MPI_Cart_create (reorder accepted and ignored: ranks stay). Endpoints
  !> past the grid get a null handle. Collective.
  subroutine ep_cart_create(comm, ndims, dims, periods, reorder, comm_cart, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(in) :: ndims, dims(*)
    logical, intent(in) :: periods(*), reorder
    type(ep_comm), intent(out) :: comm_cart
    integer, intent(out), optional :: ierr
    integer(c_int) :: p(max(ndims, 1))
    integer :: d
    p = 0
    do d = 1, ndims
      p(d) = merge(1, 0, periods(d))
    end do
    call c_cart_create(comm, ndims, dims, p, merge(1, 0, reorder), comm_cart, ierr)
  end subroutine ep_cart_create

  !> MPI_Cart_get. Local.
  subroutine ep_cart_get(comm, maxdims, dims, periods, coords, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(in) :: maxdims
    integer, intent(inout) :: dims(*), coords(*)
    logical, intent(inout) :: periods(*)
    integer, intent(out), optional :: ierr
    integer(c_int) :: p(max(maxdims, 1))
    integer :: d
    p = 0
    call c_cart_get(comm, maxdims, dims, p, coords, ierr)
    do d = 1, maxdims
      periods(d) = p(d) /= 0
    end do
  end subroutine ep_cart_get

  !> MPI_Cart_sub. Collective.
  subroutine ep_cart_sub(comm, remain_dims, newcomm, ierr)
    type(ep_comm), intent(in) :: comm
    logical, intent(in) :: remain_dims(*)
    type(ep_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    integer(c_int) :: keep(64)
    integer :: d, n, rc
    call ep_cartdim_get(comm, n, rc)
    if (rc /= EP_OK) then
      call check(rc, ierr)
      return
    end if
    keep = 0
    do d = 1, min(n, size(keep))
      keep(d) = merge(1, 0, remain_dims(d))
    end do
    call c_cart_sub(comm, keep, newcomm, ierr)
  end subroutine ep_cart_sub

  !> MPI_Dist_graph_create_adjacent (weights: arrays or MPI_UNWEIGHTED; info
  !> and reorder are accepted and ignored). Collective.
  subroutine ep_dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, &
                                           destinations, destweights, info, reorder, &
                                           comm_dist_graph, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(in) :: indegree, outdegree, info
    integer, intent(in) :: sources(*), destinations(*)
    ! Assumed rank: MPI_UNWEIGHTED is an array in Open MPI's `use mpi`, a scalar in MPICH's.
    integer, dimension(..), intent(in) :: sourceweights, destweights
    logical, intent(in) :: reorder
    type(ep_comm), intent(out) :: comm_dist_graph
    integer, intent(out), optional :: ierr
    call c_dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, &
                                      destinations, destweights, info, merge(1, 0, reorder), &
                                      comm_dist_graph, ierr)
  end subroutine ep_dist_graph_create_adjacent

  !> MPI_Dist_graph_neighbors_count. Local.
  subroutine ep_dist_graph_neighbors_count(comm, indegree, outdegree, weighted, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out) :: indegree, outdegree
    logical, intent(out) :: weighted
    integer, intent(out), optional :: ierr
    integer(c_int) :: w
    w = 0
    call c_dist_graph_neighbors_count(comm, indegree, outdegree, w, ierr)
    weighted = w /= 0
  end subroutine ep_dist_graph_neighbors_count

  !> Whether `comm` is a null handle (MPI_COMM_NULL: unset, freed, or what
  !> ep_comm_split with MPI_UNDEFINED and ep_cart_create past the grid give). Local.
  pure logical function ep_is_null(comm)
    type(ep_comm), intent(in) :: comm
    ep_is_null = .not. c_associated(comm%handle)
  end function ep_is_null

  !> What the C glue calls on a failure without ierr, once it printed the message.
  subroutine ep_f_error_stop() bind(C, name="ep_f_error_stop")
    error stop 1
  end subroutine ep_f_error_stop

  !> Decimal digits of `i`, blank padded (use trim()); fixed length for the
  !> reason given at ep_last_error.
  pure function itoa(i) result(s)
    integer, intent(in) :: i
    character(len=24) :: s
    write (s, '(i0)') i
  end function itoa

end module ep_mod
