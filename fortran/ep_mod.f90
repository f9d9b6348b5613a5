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
!     ...
!     call ep_comm_free(comm)            ! collective over every endpoint
!   end associate
!   !$omp end parallel
!
! Errors: every routine takes an optional `ierr`. Present: it receives 0 or an
! EP_ERR_* code and ep_last_error() the message. Absent: a failure prints the
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

  !> One endpoint (one thread's rank). Opaque; a thread uses only its own.
  type :: ep_comm
    type(c_ptr) :: handle = c_null_ptr
  end type ep_comm

  integer, parameter, public :: EP_OK = 0, EP_ERR_COUNT = 3, EP_ERR_ARGUMENT = 8

  interface
    integer(c_int) function c_create_endpoints(parent, n_local, comms) &
        bind(C, name="ep_create_endpoints_f")
      import :: c_int, c_ptr
      integer(c_int), value :: parent, n_local
      type(c_ptr), intent(out) :: comms(*)
    end function c_create_endpoints
    integer(c_int) function c_comm_rank(comm, rank) bind(C, name="ep_comm_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(out) :: rank
    end function c_comm_rank
    integer(c_int) function c_comm_size(comm, size) bind(C, name="ep_comm_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(out) :: size
    end function c_comm_size
    integer(c_int) function c_comm_local_thread(comm, thread) bind(C, name="ep_comm_local_thread")
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(out) :: thread
    end function c_comm_local_thread
    integer(c_int) function c_comm_free(comm) bind(C, name="ep_comm_free")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: comm
    end function c_comm_free
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
                           itoa(size(comms)) // ' elements for n_local = ' // itoa(n_local), ierr)
      return
    end if
    allocate(handles(n_local))
    rc = c_create_endpoints(int(parent, c_int), int(n_local, c_int), handles)
    if (rc == EP_OK) then
      do i = 1, n_local
        comms(i)%handle = handles(i)
      end do
    end if
    call ep_report_error(rc, ep_last_error(), ierr)
  end subroutine ep_create_endpoints

  !> Rank of this endpoint in the endpoint communicator. Local.
  subroutine ep_comm_rank(comm, rank, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out) :: rank
    integer, intent(out), optional :: ierr
    integer(c_int) :: r
    r = -1
    call ep_report_error(int(c_comm_rank(comm%handle, r)), ep_last_error(), ierr)
    rank = int(r)
  end subroutine ep_comm_rank

  !> Number of endpoints (every thread of every process). Local.
  subroutine ep_comm_size(comm, size, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out) :: size
    integer, intent(out), optional :: ierr
    integer(c_int) :: s
    s = 0
    call ep_report_error(int(c_comm_size(comm%handle, s)), ep_last_error(), ierr)
    size = int(s)
  end subroutine ep_comm_size

  !> Index (0-based) of this endpoint among its process's endpoints. Local.
  subroutine ep_comm_local_thread(comm, thread, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(out) :: thread
    integer, intent(out), optional :: ierr
    integer(c_int) :: t
    t = -1
    call ep_report_error(int(c_comm_local_thread(comm%handle, t)), ep_last_error(), ierr)
    thread = int(t)
  end subroutine ep_comm_local_thread

  !> MPI_Comm_free: collective over every endpoint; the handle becomes null.
  subroutine ep_comm_free(comm, ierr)
    type(ep_comm), intent(inout) :: comm
    integer, intent(out), optional :: ierr
    call ep_report_error(int(c_comm_free(comm%handle)), ep_last_error(), ierr)
  end subroutine ep_comm_free

  !> The calling thread's last error message of the ep C interface.
  function ep_last_error() result(message)
    character(len=:), allocatable :: message
    message = ep_c_string(c_last_error())
  end function ep_last_error

  !> A copy of a NUL-terminated C string.
  function ep_c_string(s) result(f)
    type(c_ptr), intent(in) :: s
    character(len=:), allocatable :: f
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(s)) then
      f = ''
      return
    end if
    n = int(c_strlen(s))
    call c_f_pointer(s, chars, [n])
    allocate(character(len=n) :: f)
    do i = 1, n
      f(i:i) = chars(i)
    end do
  end function ep_c_string

  !> Hands `rc` to `ierr` when present; otherwise a failure (rc /= 0) prints
  !> `message` and stops the program.
  subroutine ep_report_error(rc, message, ierr)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: message
    integer, intent(out), optional :: ierr
    if (present(ierr)) then
      ierr = rc
    else if (rc /= EP_OK) then
      write (error_unit, '(a, i0, a)') 'error ', rc, ': ' // message
      flush (error_unit)
      error stop 1
    end if
  end subroutine ep_report_error

  pure function itoa(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: buffer
    write (buffer, '(i0)') i
    s = trim(buffer)
  end function itoa

end module ep_mod
