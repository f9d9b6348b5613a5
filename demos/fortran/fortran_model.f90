! A Fortran model that writes its output through xios_lite, every OpenMP
! thread an endpoint and an output client:
!
!   OMP_NUM_THREADS=2 mpiexec -n 2 fortran_model iodef_fortran.xml [MODE]
!
! MODE is endpoints (the default: every thread is a client of the server),
! funneled (the master thread of each process is the client) or synchronous
! (no server: the client processes write the file themselves). With a server,
! the last MPI rank serves. The threads of the client ranks split the rows of a 12 x 6 domain with 3 levels. Each step every thread
! sends tas(ni, nj) and ta(ni, nj, nk), and per_client, its own point of an
! axis with one point per client; check_fortran_output then reads
! fortran_out.nc back. The value at global point (i, j), level k and step s
! is s*10000 + k*1000 + j*100 + i (0-based i, j; k = 0 for tas); per_client's
! at point r (the client of ep rank r) is s*10000 + r.
! With a third argument `read` (and iodef_fortran_read.xml, which declares
! fortran_out.nc a file in read mode) the same model reads that file back as
! input instead, record by record with xios_lite_recv_field, compares every
! value with the one written, checks that a record past the end is refused
! and prints "fortran input read back exactly".
! Exit status 0 when everything worked, 1 otherwise.
program fortran_model
  use mpi
  use omp_lib
  use ep_mod
  use xios_lite_mod
  implicit none

  integer, parameter :: ni_glo = 12, nj_glo = 6, nk = 3, n_steps = 4
  character(len=512) :: config
  character(len=32) :: mode_name, action
  integer :: mode
  type(xios_lite_world) :: world
  type(ep_comm), allocatable :: comms(:)
  integer :: provided, ierr, failures, rank
  logical :: reading

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  if (provided < MPI_THREAD_MULTIPLE .or. command_argument_count() < 1) then
    write (*, '(a)') 'usage: fortran_model CONFIG.xml [endpoints|funneled|synchronous [read]]' // &
                     ' (needs MPI_THREAD_MULTIPLE)'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call get_command_argument(1, config)
  mode_name = 'endpoints'
  if (command_argument_count() >= 2) call get_command_argument(2, mode_name)
  action = 'write'
  if (command_argument_count() >= 3) call get_command_argument(3, action)
  reading = trim(action) == 'read'
  select case (trim(mode_name))
  case ('endpoints')
    mode = XIOS_LITE_MODE_ENDPOINTS
  case ('funneled')
    mode = XIOS_LITE_MODE_FUNNELED
  case ('synchronous')
    mode = XIOS_LITE_MODE_SYNCHRONOUS
  case default
    write (*, '(a)') 'fortran_model: unknown mode ' // trim(mode_name)
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end select

  failures = 0
  ! The synchronous mode has no server process.
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
    if (reading) then
      call read_client(comms(omp_get_thread_num() + 1), failures)
    else
      call run_client(comms(omp_get_thread_num() + 1), failures)
    end if
    !$omp end parallel
  end if
  call xios_lite_free_world(world)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (reading .and. rank == 0 .and. failures == 0) then
    write (*, '(a)') 'fortran input read back exactly'
  end if
  call MPI_Finalize(ierr)
  if (failures /= 0) error stop 1

contains

  pure real(8) function value(step, k, j, i)
    integer, intent(in) :: step, k, j, i
    value = step * 10000d0 + k * 1000d0 + j * 100d0 + i
  end function value

  !> This thread's client, its definition closed: its block is rows
  !> [j0, j0 + nj) of the whole width.
  subroutine open_client(comm, client, rank, j0, nj, failures)
    type(ep_comm), intent(inout) :: comm
    type(xios_lite_client), intent(out) :: client
    integer, intent(out) :: rank, j0, nj
    integer, intent(inout) :: failures
    integer :: size, ierr

    call ep_comm_rank(comm, rank)
    call ep_comm_size(comm, size)
    j0 = nj_glo * rank / size
    nj = nj_glo * (rank + 1) / size - j0
    call xios_lite_initialise(client, comm, world, config, mode)
    ! The block through XIOS's keyword arguments (the same as
    ! xios_lite_set_domain_block(client, 'atm', 0, ni_glo, j0, nj)).
    call xios_lite_set_domain_attr(client, 'atm', ibegin=0, ni=ni_glo, jbegin=j0, nj=nj)
    ! An axis that shares its grid with a domain is whole on every client:
    ! a part of it (begin, n) is refused, by name, and the client goes on.
    call xios_lite_set_axis_attr(client, 'lev', begin=0, n=1, ierr=ierr)
    call expect_refused('an axis part', ierr, EP_ERR_ARGUMENT, "axis 'lev': begin", rank == 0, &
                        failures)
    ! Where an axis stands alone in its grid (`by_client`), each client holds
    ! a part of it: here one point, its rank (written with iodef_fortran.xml;
    ! the read configuration has no such axis).
    if (.not. reading) call xios_lite_set_axis_attr(client, 'clients', n_glo=size, begin=rank, n=1)
    call xios_lite_close_definition(client)
  end subroutine open_client

  !> One thread writing its block at every step.
  subroutine run_client(comm, failures)
    type(ep_comm), intent(inout) :: comm
    integer, intent(inout) :: failures
    type(xios_lite_client) :: client
    real(8), allocatable :: tas(:, :), ta(:, :, :), wrong(:, :)
    real(8) :: part(1)
    real(4) :: rank5(1, 1, 1, 1, 1)
    integer :: rank, j0, nj, step, i, j, k, ierr

    call open_client(comm, client, rank, j0, nj, failures)
    allocate(tas(ni_glo, nj), ta(ni_glo, nj, nk), wrong(ni_glo, nj + 1))
    do step = 1, n_steps
      call xios_lite_update_calendar(client, step)
      do j = 1, nj
        do i = 1, ni_glo
          tas(i, j) = value(step, 0, j0 + j - 1, i - 1)
          do k = 1, nk
            ta(i, j, k) = value(step, k, j0 + j - 1, i - 1)
          end do
        end do
      end do
      if (step == 1) then
        ! A wrong shape is refused with the field and both shapes named.
        wrong = 0
        rank5 = 0
        call xios_lite_send_field(client, 'tas', wrong, ierr)
        call expect_refused('a wrong shape', ierr, EP_ERR_COUNT, "'tas'", rank == 0, failures)
        ! So is an array of a rank the C layer does not take (any rank
        ! compiles), here in single precision.
        call xios_lite_send_field(client, 'tas', rank5, ierr)
        call expect_refused('a rank-5 array', ierr, EP_ERR_ARGUMENT, 'array rank 5 is not 1 to 4', &
                            .false., failures)
      end if
      call xios_lite_send_field(client, 'tas', tas)
      call xios_lite_send_field(client, 'ta', ta)
      part = value(step, 0, 0, rank)
      call xios_lite_send_field(client, 'per_client', part)
    end do
    call xios_lite_finalise(client)
    call ep_comm_free(comm)
  end subroutine run_client

  !> One thread reading its block of every record back (read mode).
  subroutine read_client(comm, failures)
    type(ep_comm), intent(inout) :: comm
    integer, intent(inout) :: failures
    type(xios_lite_client) :: client
    real(8), allocatable :: tas(:, :), ta(:, :, :)
    integer :: rank, j0, nj, step, i, j, k, ierr

    call open_client(comm, client, rank, j0, nj, failures)
    allocate(tas(ni_glo, nj), ta(ni_glo, nj, nk))
    do step = 1, n_steps + 1
      call xios_lite_update_calendar(client, step)
      if (step > n_steps) then
        ! The file holds n_steps records: the next one is refused, named.
        call xios_lite_recv_field(client, 'tas', tas, ierr)
        if (nj > 0) call expect_refused('a record past the end', ierr, EP_ERR_ARGUMENT, &
                                        'record 4 does not exist', .false., failures)
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
    if (failures /= 0) write (*, '(a, i0, a, i0)') 'fortran_model: client ', rank, &
                                                   ' values read back differing: ', failures
    call xios_lite_finalise(client)
    call ep_comm_free(comm)
  end subroutine read_client

  !> After a call that must fail: `ierr` is `code` and the thread's last
  !> error names `part`; else a line naming `what` and one more failure.
  !> With `echo`, the refusal is printed.
  subroutine expect_refused(what, ierr, code, part, echo, failures)
    character(len=*), intent(in) :: what, part
    integer, intent(in) :: ierr, code
    logical, intent(in) :: echo
    integer, intent(inout) :: failures
    character(len=EP_MAX_ERROR_STRING) :: message
    message = xios_lite_last_error()
    if (ierr /= code .or. index(message, part) == 0) then
      write (*, '(a, i0, a)') 'fortran_model: ' // what // ' gave ierr ', ierr, ': ' // trim(message)
      failures = failures + 1
    else if (echo) then
      write (*, '(a)') 'fortran_model: refused as expected: ' // trim(message)
    end if
  end subroutine expect_refused

end program fortran_model
