! porting_example_mpi.f90 on endpoints: every OpenMP thread is a rank, and
! every MPI call became its ep_ call (docs/porting.md shows the diff). It
! prints the norm the MPI version prints with as many processes. The
! parallel region names its private variables: default(private) would also
! privatise MPI_IN_PLACE of `use mpi`, whose address then no longer says "in
! place" (to MPI as much as to ep_mod).
program porting_example
  use mpi
  use omp_lib
  use ep_mod
  implicit none
  integer, parameter :: n = 4
  type(ep_comm), allocatable :: comms(:)
  type(ep_comm) :: comm, cart
  type(ep_request) :: reqs(2)
  integer :: status(MPI_STATUS_SIZE), ierr, provided
  integer :: rank, nranks, dims(2), west, east, got, k
  logical :: periods(2)
  real(8) :: edge(n), halo(n), norm
  integer, allocatable :: ranks(:)

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  allocate(comms(omp_get_max_threads()))
  !$omp parallel private(comm, cart, reqs, status, rank, nranks, dims, west, east, got, k) &
  !$omp private(periods, edge, halo, norm, ranks, ierr)
  !$omp single
  call ep_create_endpoints(MPI_COMM_WORLD, omp_get_num_threads(), comms)
  !$omp end single
  comm = comms(omp_get_thread_num() + 1)
  call ep_comm_rank(comm, rank, ierr)
  call ep_comm_size(comm, nranks, ierr)
  dims = 0
  periods = .true.
  call ep_dims_create(nranks, 2, dims, ierr)
  call ep_cart_create(comm, 2, dims, periods, .false., cart, ierr)
  call ep_cart_shift(cart, 1, 1, west, east, ierr)

  edge = [(rank * 10d0 + k, k = 1, n)]
  call ep_irecv(halo, n, MPI_REAL8, west, 1, cart, reqs(1), ierr)
  call ep_isend(edge, n, MPI_REAL8, east, 1, cart, reqs(2), ierr)
  call ep_waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)

  norm = sum(halo)
  call ep_allreduce(MPI_IN_PLACE, norm, 1, MPI_REAL8, MPI_SUM, cart, ierr)

  allocate(ranks(nranks))
  call ep_gather(rank, 1, MPI_INTEGER, ranks, 1, MPI_INTEGER, 0, cart, ierr)

  call ep_send(ranks, merge(nranks, 0, rank == 0), MPI_INTEGER, east, 7, cart, ierr)
  call ep_probe(MPI_ANY_SOURCE, 7, cart, status, ierr)
  call ep_get_count(status, MPI_INTEGER, got, ierr)
  call ep_recv(ranks, got, MPI_INTEGER, status(MPI_SOURCE), 7, cart, MPI_STATUS_IGNORE, ierr)

  if (rank == 0) print '(a, f0.1)', 'norm ', norm
  call ep_comm_free(cart, ierr)
  call ep_comm_free(comm, ierr)
  !$omp end parallel
  call MPI_Finalize(ierr)
end program porting_example
