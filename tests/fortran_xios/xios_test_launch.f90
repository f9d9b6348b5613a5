! What the programs of tests/fortran_xios share: their launch as XIOS
! clients (one per process after a plain MPI_Init, as XIOS's own programs
! do, or one per OpenMP thread on its endpoint), the rows each client owns,
! the opening of a context on either, and a check that stops the job with a
! message.
module xios_test_launch
  use xios
  use mod_wait
  use ep_mod
  use omp_lib
  use mpi
  implicit none
  private
  public :: client_body, launch, client_rows, open_context, expect

  !> One client's whole run: `comm` the model's communicator, `ep` its
  !> endpoint when every thread is a client.
  abstract interface
    subroutine client_body(comm, ep)
      import :: ep_comm
      integer, intent(in) :: comm
      type(ep_comm), optional, intent(in) :: ep
    end subroutine client_body
  end interface

contains

  !> Starts MPI and XIOS as the first command-line argument says (process
  !> or threads), runs `body` on every client, finalises, and prints
  !> `done_line` on the first process.
  subroutine launch(body, done_line)
    procedure(client_body) :: body
    character(len=*), intent(in) :: done_line
    character(len=16) :: mode
    integer :: comm, rank, ierr, provided
    type(ep_comm), allocatable :: eps(:)

    call get_command_argument(1, mode)
    if (trim(mode) == 'threads') then
      call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
    else
      call MPI_Init(ierr)  ! as XIOS's programs do: no thread level asked
    end if
    call init_wait()
    call xios_initialize('client', return_comm=comm)
    call MPI_Comm_rank(comm, rank, ierr)
    if (trim(mode) == 'threads') then
      allocate (eps(omp_get_max_threads()))
      !$omp parallel default(shared)
      !$omp single
      call ep_create_endpoints(comm, omp_get_num_threads(), eps)
      !$omp end single
      call body(comm, eps(omp_get_thread_num() + 1))
      !$omp end parallel
    else
      call body(comm)
    end if
    call xios_finalize()
    if (rank == 0) print '(a)', done_line
    call MPI_Finalize(ierr)
  end subroutine launch

  !> This client's rows of nj_glo (as evenly as possible, the first clients
  !> one more) and its index among the clients.
  subroutine client_rows(comm, ep, nj_glo, me, jbegin, nj)
    integer, intent(in) :: comm, nj_glo
    type(ep_comm), optional, intent(in) :: ep
    integer, intent(out) :: me, jbegin, nj
    integer :: clients, n, ierr
    if (present(ep)) then
      call ep_comm_rank(ep, me)
      call ep_comm_size(ep, clients)
    else
      call MPI_Comm_rank(comm, me, ierr)
      call MPI_Comm_size(comm, clients, ierr)
    end if
    nj = 0
    jbegin = 0
    do n = 0, clients - 1
      nj = nj_glo / clients
      if (n < mod(nj_glo, clients)) nj = nj + 1
      if (n == me) exit
      jbegin = jbegin + nj
    end do
  end subroutine client_rows

  !> xios_context_initialize of context `id` on the client's endpoint `ep`
  !> when it has one, else on the communicator `comm`. Collective over the
  !> context's clients.
  subroutine open_context(id, comm, ep)
    character(len=*), intent(in) :: id
    integer, intent(in) :: comm
    type(ep_comm), optional, intent(in) :: ep
    if (present(ep)) then
      call xios_context_initialize(id, ep)
    else
      call xios_context_initialize(id, comm)
    end if
  end subroutine open_context

  !> Stops the job, naming the process and what failed, unless `condition`.
  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    integer :: rank, ierr
    if (.not. condition) then
      call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
      print '(a, i0, a, a)', 'rank ', rank, ': FAILED: ', what
      error stop 1
    end if
  end subroutine expect

end module xios_test_launch
