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

  public :: ep_comm, ep_create_endpoints, ep_comm_free, ep_last_error, ep_c_string, &
            ep_report_error
  public :: ep_request, ep_wait, ep_waitall, ep_barrier
  public :: ep_c_query, ep_c_release, ep_c_call
  ! The rest of the endpoint API, MPI's calls with ep_ for MPI_ (see "The whole API" below):
  ! these and the public statement of ep_calls.inc.
  public :: ep_message, ep_intercomm_merge, ep_cart_create, ep_cart_get, ep_cart_sub, &
            ep_dist_graph_create_adjacent, ep_is_null

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

  procedure(ep_c_release), bind(C, name="ep_comm_free") :: c_comm_free
  procedure(ep_c_call), bind(C, name="ep_barrier") :: c_barrier

  interface
    integer(c_int) function c_create_endpoints(parent, n_local, comms) &
        bind(C, name="ep_create_endpoints_f")
      import :: c_int, c_ptr
      integer(c_int), value :: parent, n_local
      type(c_ptr), intent(out) :: comms(*)
    end function c_create_endpoints
    integer(c_int) function c_waitall_handles(count, requests) bind(C, name="ep_waitall")
      import :: c_int, c_ptr
      integer(c_int), value :: count
      type(c_ptr), intent(inout) :: requests(*)
    end function c_waitall_handles
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
  !
  ! The interfaces below are written at build time from the call table
  ! fortran/ep_calls.txt (one line a call, with its doc comment) by
  ! fortran/generate_ep_calls.py, which also writes the C prototypes the glue
  ! is compiled against: a new call is one entry there and its glue function.

  include 'ep_calls.inc'

  !> MPI_Wait: ep_wait(request [, ierr]) or, as MPI, ep_wait(request, status [, ierr]).
  interface ep_wait
    module procedure ep_wait_one
    procedure c_wait
  end interface ep_wait

  !> MPI_Waitall: ep_waitall(requests [, ierr]) over the whole array or, as
  !> MPI, ep_waitall(count, requests, statuses [, ierr]) with statuses
  !> MPI_STATUSES_IGNORE or integer statuses(MPI_STATUS_SIZE, count).
  interface ep_waitall
    module procedure ep_waitall_array
    procedure c_waitall
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
    rc = int(c_waitall_handles(int(size(requests), c_int), handles))
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
  ! interoperable: these convert and call the C glue). Those with a logical
  ! flag out are written from ep_calls.txt, the others are here. ----

  include 'ep_calls_procedures.inc'

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
