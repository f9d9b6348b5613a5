! A small Fortran model against the installed packages (xios_lite::fortran):
! the last rank serves, every OpenMP thread of the other ranks is a client;
! 3 steps of t(i, j) = 1000 step + 10 (j - 1) + (i - 1) in single precision
! (a real(4) array). Prints "model_f90: done" on client 0.
program model_f90
  use mpi
  use omp_lib
  use ep_mod
  use xios_lite_mod
  implicit none
  integer, parameter :: ni = 8, nj_glo = 4
  type(xios_lite_world) :: world
  type(ep_comm), allocatable :: comms(:)
  integer :: provided, ierr

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call xios_lite_split_last_ranks(MPI_COMM_WORLD, 1, world)
  if (xios_lite_is_server(world)) then
    call xios_lite_run_server(world, 'iodef.xml')
  else
    allocate(comms(omp_get_max_threads()))
    !$omp parallel
    !$omp single
    call ep_create_endpoints(xios_lite_local_comm(world), omp_get_num_threads(), comms)
    !$omp end single
    call run_client(comms(omp_get_thread_num() + 1))
    !$omp end parallel
  end if
  call xios_lite_free_world(world)
  call MPI_Finalize(ierr)

contains

  subroutine run_client(comm)
    type(ep_comm), intent(inout) :: comm
    type(xios_lite_client) :: client
    real(4), allocatable :: t(:, :)
    integer :: rank, size, j0, nj, step, i, j

    call ep_comm_rank(comm, rank)
    call ep_comm_size(comm, size)
    j0 = nj_glo * rank / size
    nj = nj_glo * (rank + 1) / size - j0
    allocate(t(ni, nj))
    call xios_lite_initialise(client, comm, world, 'iodef.xml')
    call xios_lite_set_domain_block(client, 'd', 0, ni, j0, nj)
    call xios_lite_close_definition(client)
    do step = 1, 3
      call xios_lite_update_calendar(client, step)
      do j = 1, nj
        do i = 1, ni
          t(i, j) = real(1000 * step + 10 * (j0 + j - 1) + (i - 1), 4)
        end do
      end do
      call xios_lite_send_field(client, 't', t)
    end do
    call xios_lite_finalise(client)
    if (rank == 0) write (*, '(a)') 'model_f90: done'
    call ep_comm_free(comm)
  end subroutine run_client

end program model_f90
