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
                                         c_size_t, c_f_pointer
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  public :: ep_comm, ep_create_endpoints, ep_comm_rank, ep_comm_size, ep_comm_local_thread, &
            ep_comm_free, ep_last_error, ep_c_string, ep_report_error
  public :: ep_request, ep_isend, ep_irecv, ep_wait, ep_waitall, ep_barrier
  public :: ep_c_query, ep_c_release, ep_c_call

  !> One endpoint (one thread's rank). Opaque; a thread uses only its own.
  type :: ep_comm
    type(c_ptr) :: handle = c_null_ptr
  end type ep_comm

  !> A pending nonblocking operation; null once completed by ep_wait(all).
  type :: ep_request
    type(c_ptr) :: handle = c_null_ptr
  end type ep_request

  !> The return codes of ep/ep.h, one per error kind (tests/support/check_fortran_codes.cmake
  !> checks that the two lists agree).
  integer, parameter, public :: EP_OK = 0, EP_ERR_RANK = 1, EP_ERR_TAG = 2, EP_ERR_COUNT = 3, &
                                EP_ERR_TRUNCATE = 4, EP_ERR_TOO_MANY_ENDPOINTS = 5, &
                                EP_ERR_THREAD_LEVEL = 6, EP_ERR_FREED_COMM = 7, &
                                EP_ERR_ARGUMENT = 8, EP_ERR_REQUEST = 9, EP_ERR_MPI = 10, &
                                EP_ERR_NO_MEMORY = 11, EP_ERR_IO = 12, EP_ERR_CONFIG = 13, &
                                EP_ERR_OTHER = 99
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
    integer(c_int) function c_isend(buf, count, datatype, dest, tag, comm, request) &
        bind(C, name="ep_isend_f")
      import :: c_int, c_ptr
      type(*), dimension(*), intent(in) :: buf
      integer(c_int), value :: count, datatype, dest, tag
      type(c_ptr), value :: comm
      type(c_ptr), intent(out) :: request
    end function c_isend
    integer(c_int) function c_irecv(buf, count, datatype, source, tag, comm, request) &
        bind(C, name="ep_irecv_f")
      import :: c_int, c_ptr
      type(*), dimension(*) :: buf
      integer(c_int), value :: count, datatype, source, tag
      type(c_ptr), value :: comm
      type(c_ptr), intent(out) :: request
    end function c_irecv
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

  !> MPI_Isend on the endpoint communicator: `count` elements of the MPI
  !> datatype `datatype` (a Fortran handle such as MPI_DOUBLE_PRECISION) to
  !> EP rank `dest`, tag 0..32767. Local. `buf` must not change until the
  !> request completes: give the actual argument the ASYNCHRONOUS attribute
  !> (or keep it in a module or common block) as for MPI's own isend.
  subroutine ep_isend(buf, count, datatype, dest, tag, comm, request, ierr)
    type(*), dimension(*), intent(in) :: buf
    integer, intent(in) :: count, datatype, dest, tag
    type(ep_comm), intent(in) :: comm
    type(ep_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call check(int(c_isend(buf, int(count, c_int), int(datatype, c_int), &
                                     int(dest, c_int), int(tag, c_int), comm%handle, &
                                     request%handle)), ierr)
  end subroutine ep_isend

  !> MPI_Irecv on the endpoint communicator (MPI_ANY_SOURCE and MPI_ANY_TAG
  !> work). Local. `buf` is written until the request completes.
  subroutine ep_irecv(buf, count, datatype, source, tag, comm, request, ierr)
    type(*), dimension(*) :: buf
    integer, intent(in) :: count, datatype, source, tag
    type(ep_comm), intent(in) :: comm
    type(ep_request), intent(out) :: request
    integer, intent(out), optional :: ierr
    call check(int(c_irecv(buf, int(count, c_int), int(datatype, c_int), &
                                     int(source, c_int), int(tag, c_int), comm%handle, &
                                     request%handle)), ierr)
  end subroutine ep_irecv

  !> MPI_Wait: completes the request (by the thread that started it).
  subroutine ep_wait(request, ierr)
    type(ep_request), intent(inout) :: request
    integer, intent(out), optional :: ierr
    type(ep_request) :: one(1)
    one(1) = request
    call ep_waitall(one, ierr)
    request = one(1)
  end subroutine ep_wait

  !> MPI_Waitall: completes every request (null ones are skipped), also when
  !> one fails; the first failure is reported.
  subroutine ep_waitall(requests, ierr)
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
  end subroutine ep_waitall

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

  !> Decimal digits of `i`, blank padded (use trim()); fixed length for the
  !> reason given at ep_last_error.
  pure function itoa(i) result(s)
    integer, intent(in) :: i
    character(len=24) :: s
    write (s, '(i0)') i
  end function itoa

end module ep_mod
