! A Fortran halo exchange on endpoints: every OpenMP thread of every process
! is an EP rank owning a band of rows of a periodic ni x nj_glo field, with
! one halo row on each side. The halo rows come from the neighbouring bands
! with ep_irecv / ep_isend / ep_waitall, exactly as an MPI code does it with
! MPI_Irecv / MPI_Isend / MPI_Waitall over processes (docs/porting.md shows
! the changed lines). Every halo value is checked; the run prints
! "fortran halo exchange exact" when all endpoints agree.
program fortran_halo
  use mpi
  use omp_lib
  use ep_mod
  implicit none
  integer, parameter :: ni = 16, rows_per_rank = 3
  type(ep_comm), allocatable :: comms(:)
  integer :: provided, ierr, bad, world_rank

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, world_rank, ierr)
  allocate(comms(omp_get_max_threads()))
  bad = 0
  !$omp parallel reduction(+:bad)
  !$omp single
  call ep_create_endpoints(MPI_COMM_WORLD, omp_get_num_threads(), comms)
  !$omp end single
  bad = exchange_and_check(comms(omp_get_thread_num() + 1))
  !$omp end parallel
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (world_rank == 0) then
    if (bad == 0) then
      print '(a)', 'fortran halo exchange exact'
    else
      print '(a, i0, a)', 'fortran halo exchange: ', bad, ' wrong values'
    end if
  end if
  call MPI_Finalize(ierr)

contains

  ! The value of global point (i, j) of the field.
  pure real(8) function value_at(i, j)
    integer, intent(in) :: i, j
    value_at = 1000d0 * j + i
  end function value_at

  ! Bit-for-bit equality: the halo must hold exactly the values sent.
  pure logical function same(a, b)
    real(8), intent(in) :: a, b
    same = transfer(a, 0_8) == transfer(b, 0_8)
  end function same

  ! Fills this rank's rows, exchanges the halo rows, returns the count of
  ! wrong halo values (and of wrong error codes).
  integer function exchange_and_check(comm) result(wrong)
    type(ep_comm), intent(inout) :: comm
    real(8), allocatable, asynchronous :: u(:, :)   ! u(1:ni, 0:rows+1): halo rows 0 and rows+1
    type(ep_request) :: reqs(4)
    integer :: rank, nranks, north, south, j0, i, j, rc, nj_glo
    character(len=EP_MAX_ERROR_STRING) :: message
    character(len=24) :: tag_text
    integer :: attempt, bad_messages

    call ep_comm_rank(comm, rank)
    call ep_comm_size(comm, nranks)
    nj_glo = nranks * rows_per_rank
    j0 = rank * rows_per_rank                      ! first global row (0-based)
    north = mod(rank + 1, nranks)
    south = mod(rank - 1 + nranks, nranks)
    allocate(u(ni, 0:rows_per_rank + 1))
    u = -1d0
    do j = 1, rows_per_rank
      do i = 1, ni
        u(i, j) = value_at(i, j0 + j - 1)
      end do
    end do

    ! Tag 1 travels north, tag 2 south (one rank can be both neighbours).
    call ep_irecv(u(:, 0), ni, MPI_DOUBLE_PRECISION, south, 1, comm, reqs(1))
    call ep_irecv(u(:, rows_per_rank + 1), ni, MPI_DOUBLE_PRECISION, north, 2, comm, reqs(2))
    call ep_isend(u(:, rows_per_rank), ni, MPI_DOUBLE_PRECISION, north, 1, comm, reqs(3))
    call ep_isend(u(:, 1), ni, MPI_DOUBLE_PRECISION, south, 2, comm, reqs(4))
    call ep_waitall(reqs)

    wrong = 0
    do i = 1, ni
      if (.not. same(u(i, 0), value_at(i, modulo(j0 - 1, nj_glo)))) wrong = wrong + 1
      if (.not. same(u(i, rows_per_rank + 1), value_at(i, modulo(j0 + rows_per_rank, nj_glo)))) then
        wrong = wrong + 1
      end if
    end do

    ! A bad tag is refused with its code and message, nothing is started.
    ! Every thread does this many times at once with a tag of its own: each
    ! must read back its own message, whole (the messages are per thread).
    write (tag_text, '(i0)') 40000 + rank
    bad_messages = 0
    do attempt = 1, 2000
      call ep_isend(u(:, 1), ni, MPI_DOUBLE_PRECISION, north, 40000 + rank, comm, reqs(1), rc)
      message = ep_last_error()
      if (rc /= 2 .or. index(message, 'tag ' // trim(tag_text) // ' out of range') == 0) then
        if (bad_messages == 0) then
          write (*, '(a, i0, a)') 'fortran_halo: a bad tag gave ', rc, ': ' // trim(message)
        end if
        bad_messages = bad_messages + 1
      end if
      call ep_waitall(reqs(1:1))
    end do
    wrong = wrong + bad_messages

    call ep_barrier(comm)
    call ep_comm_free(comm)
  end function exchange_and_check

end program fortran_halo
