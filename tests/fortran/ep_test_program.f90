! The frame of the Fortran test programs of ep_mod and ep_kernels_mod: MPI
! with MPI_THREAD_MULTIPLE, one endpoint per OpenMP thread, a check that
! every thread runs on its own endpoint, and its failures (expect) counted
! over every thread and process.
module ep_test_program
  use mpi
  use omp_lib
  use ep_mod
  implicit none
  private
  public :: endpoint_check, run_checks, expect

  abstract interface
    !> The checks of one thread on its endpoint `comm`, each through expect.
    subroutine endpoint_check(comm)
      import :: ep_comm
      type(ep_comm), intent(inout) :: comm
    end subroutine endpoint_check
  end interface

  ! The calling thread's endpoint rank and its failed checks so far: every
  ! thread checks its own endpoint, so each has its own (threadprivate).
  integer :: checked_rank = -1, failures = 0
  !$omp threadprivate(checked_rank, failures)

contains

  !> The whole program: MPI_Init_thread, `check` on every thread's endpoint
  !> of MPI_COMM_WORLD (freed after it), MPI_Finalize. World rank 0 prints
  !> "<what> exact" when no check failed anywhere, else "<what>: <n> failed
  !> checks"; a failure stops every process with 1.
  subroutine run_checks(check, what)
    procedure(endpoint_check) :: check
    character(len=*), intent(in) :: what
    type(ep_comm), allocatable :: comms(:)
    integer :: provided, ierr, failed, world_rank
    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, world_rank, ierr)
    allocate(comms(omp_get_max_threads()))
    failed = 0
    !$omp parallel reduction(+:failed)
    !$omp single
    call ep_create_endpoints(MPI_COMM_WORLD, omp_get_num_threads(), comms)
    !$omp end single
    call ep_comm_rank(comms(omp_get_thread_num() + 1), checked_rank)
    failures = 0
    call check(comms(omp_get_thread_num() + 1))
    failed = failures
    call ep_comm_free(comms(omp_get_thread_num() + 1))
    !$omp end parallel
    call MPI_Allreduce(MPI_IN_PLACE, failed, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (world_rank == 0 .and. failed == 0) print '(a)', what // ' exact'
    if (world_rank == 0 .and. failed /= 0) print '(2a, i0, a)', what, ': ', failed, ' failed checks'
    call MPI_Finalize(ierr)
    if (failed /= 0) error stop 1
  end subroutine run_checks

  !> A check of the calling thread's endpoint, inside run_checks' `check`:
  !> when not `ok`, one more failure of this thread and a line
  !> "ep rank <rank>: FAILED <what>".
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    write (*, '(a, i0, a)') 'ep rank ', checked_rank, ': FAILED ' // what
  end subroutine expect

end module ep_test_program
