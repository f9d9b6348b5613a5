! A small model's communication, plain MPI: a 2-D periodic grid of ranks,
! a halo exchange along x, a global norm, a gather to rank 0 and a
! probe-driven receive. porting_example_ep.f90 is the same model on
! endpoints; docs/porting.md shows the diff. Both print the same norm for
! the same number of ranks (ctest checks it).
program porting_example
  use mpi
  implicit none
  integer, parameter :: n = 4
  integer :: comm, cart
  integer :: reqs(2), status(MPI_STATUS_SIZE), ierr, provided
  integer :: rank, nranks, dims(2), west, east, got, k
  logical :: periods(2)
  real(8) :: edge(n), halo(n), norm
  integer, allocatable :: ranks(:)

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, nranks, ierr)
  dims = 0
  periods = .true.
  call MPI_Dims_create(nranks, 2, dims, ierr)
  call MPI_Cart_create(comm, 2, dims, periods, .false., cart, ierr)
  call MPI_Cart_shift(cart, 1, 1, west, east, ierr)

  edge = [(rank * 10d0 + k, k = 1, n)]
  call MPI_Irecv(halo, n, MPI_REAL8, west, 1, cart, reqs(1), ierr)
  call MPI_Isend(edge, n, MPI_REAL8, east, 1, cart, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)

  norm = sum(halo)
  call MPI_Allreduce(MPI_IN_PLACE, norm, 1, MPI_REAL8, MPI_SUM, cart, ierr)

  allocate(ranks(nranks))
  call MPI_Gather(rank, 1, MPI_INTEGER, ranks, 1, MPI_INTEGER, 0, cart, ierr)

  call MPI_Send(ranks, merge(nranks, 0, rank == 0), MPI_INTEGER, east, 7, cart, ierr)
  call MPI_Probe(MPI_ANY_SOURCE, 7, cart, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, got, ierr)
  call MPI_Recv(ranks, got, MPI_INTEGER, status(MPI_SOURCE), 7, cart, MPI_STATUS_IGNORE, ierr)

  if (rank == 0) print '(a, f0.1)', 'norm ', norm
  call MPI_Comm_free(cart, ierr)
  call MPI_Comm_free(comm, ierr)
  call MPI_Finalize(ierr)
end program porting_example
