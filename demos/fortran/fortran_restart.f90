! A Fortran model that reads its input through xios_lite: the file
! fortran_model.f90 wrote (fortran_out.nc), declared in read mode, is read
! back record by record with xios_lite_recv_field, every OpenMP thread an
! endpoint reading its own block:
!
!   OMP_NUM_THREADS=2 mpiexec -n 2 fortran_restart iodef_fortran_read.xml [MODE]
!
! MODE is endpoints (the default: the last rank serves and reads the file)
! or synchronous (no server: each thread reads its block itself). Every
! value is compared with the one fortran_model wrote; a record past the end
! is refused with the record named. Prints "fortran input read back
! exactly" and exits 0 when everything matched.
program fortran_restart
  use mpi
  use omp_lib
  use ep_mod
  use xios_lite_mod
  implicit none

  integer, parameter :: ni_glo = 12, nj_glo = 6, nk = 3, n_steps = 4
  character(len=512) :: config
  character(len=32) :: mode_name
  integer :: mode
  type(xios_lite_world) :: world
  type(ep_comm), allocatable :: comms(:)
  integer :: provided, ierr, failures, rank

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  if (provided < MPI_THREAD_MULTIPLE .or. command_argument_count() < 1) then
    write (*, '(a)') 'usage: fortran_restart CONFIG.xml [endpoints|synchronous]'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call get_command_argument(1, config)
  mode_name = 'endpoints'
  if (command_argument_count() >= 2) call get_command_argument(2, mode_name)
  mode = merge(XIOS_LITE_MODE_SYNCHRONOUS, XIOS_LITE_MODE_ENDPOINTS, &
               trim(mode_name) == 'synchronous')

  failures = 0
  call xios_lite_split_last_ranks(MPI_COMM_WORLD, merge(0, 1, mode == XIOS_LITE_MODE_SYNCHRONOUS), &
                                  world)
  if (xios_lite_is_server(world)) then
    call xios_lite_run_server(world, config)
  else
    allocate(comms(omp_get_max_threads()))
    !$omp parallel reduction(+:failures)
    !$omp single
    call ep_create_endpoints(xios_lite_local_comm(world), omp_get_num_threads(), comms)
    !$omp end single
    call run_client(comms(omp_get_thread_num() + 1), failures)
    !$omp end parallel
  end if
  call xios_lite_free_world(world)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0 .and. failures == 0) write (*, '(a)') 'fortran input read back exactly'
  call MPI_Finalize(ierr)
  if (failures /= 0) error stop 1

contains

  !> The value fortran_model wrote at step s, level k, point (i, j).
  pure real(8) function value(step, k, j, i)
    integer, intent(in) :: step, k, j, i
    value = step * 10000d0 + k * 1000d0 + j * 100d0 + i
  end function value

  subroutine run_client(comm, failures)
    type(ep_comm), intent(inout) :: comm
    integer, intent(inout) :: failures
    type(xios_lite_client) :: client
    real(8), allocatable :: tas(:, :), ta(:, :, :)
    character(len=EP_MAX_ERROR_STRING) :: message
    integer :: rank, size, j0, nj, step, i, j, k, ierr

    call ep_comm_rank(comm, rank)
    call ep_comm_size(comm, size)
    j0 = nj_glo * rank / size
    nj = nj_glo * (rank + 1) / size - j0
    allocate(tas(ni_glo, nj), ta(ni_glo, nj, nk))

    call xios_lite_initialise(client, comm, world, config, mode)
    call xios_lite_set_domain_block(client, 'atm', 0, ni_glo, j0, nj)
    call xios_lite_close_definition(client)
    do step = 1, n_steps + 1
      call xios_lite_update_calendar(client, step)
      if (step > n_steps) then
        ! The file holds n_steps records: the next one is refused, named.
        call xios_lite_recv_field(client, 'tas', tas, ierr)
        message = xios_lite_last_error()
        if (nj > 0 .and. (ierr /= EP_ERR_ARGUMENT .or. index(message, 'record 4 does not exist') == 0)) then
          write (*, '(a, i0, a)') 'fortran_restart: a record past the end gave ierr ', ierr, &
                                  ': ' // trim(message)
          failures = failures + 1
        end if
        exit
      end if
      call xios_lite_recv_field(client, 'tas', tas)
      call xios_lite_recv_field(client, 'ta', ta)
      do j = 1, nj
        do i = 1, ni_glo
          if (abs(tas(i, j) - value(step, 0, j0 + j - 1, i - 1)) > 0d0) failures = failures + 1
          do k = 1, nk
            if (abs(ta(i, j, k) - value(step, k, j0 + j - 1, i - 1)) > 0d0) failures = failures + 1
          end do
        end do
      end do
    end do
    if (failures /= 0) write (*, '(a, i0, a, i0)') 'fortran_restart: client ', rank, &
                                                   ' values differing: ', failures
    call xios_lite_finalise(client)
    call ep_comm_free(comm)
  end subroutine run_client

end program fortran_restart
