! The kernels of collectives/ from Fortran (ep_kernels_mod) on endpoints:
! the allreduce algorithms, halo plans (two algorithms, real(8) and integer
! fields, periodic both ways), the transposition plan (values in every
! space checked exactly, and back bit for bit), the GCR and CG solves, and
! bad input. Rank 0 prints "fortran ep kernels exact" when every endpoint
! agrees; the exit status is non-zero otherwise.
module ep_kernels_checks
  use mpi
  use ep_mod
  use ep_test_program, only: expect
  use ep_kernels_mod
  implicit none
  private
  public :: run_kernels

contains

  subroutine run_kernels(comm)
    type(ep_comm), intent(inout) :: comm
    integer :: rank, n, ierr
    call ep_comm_rank(comm, rank)
    call ep_comm_size(comm, n)
    call allreduces()
    call halos(COLLECTIVES_HALO_TWO_SWEEP)
    call halos(COLLECTIVES_HALO_NEIGHBOR)
    call transposes()
    call solves()
    call bad_input()

  contains

    subroutine allreduces()
      real(8) :: r(5)
      integer :: i(3), k
      integer(8) :: l
      r = [(rank + k * 0.5d0, k = 1, 5)]
      call ep_kernels_allreduce(r, 5, MPI_REAL8, MPI_SUM, comm, COLLECTIVES_ALLREDUCE_RECURSIVE_K, &
                                3, ierr)
      call expect(ierr == EP_OK .and. all(r == [(n * (n - 1) / 2d0 + n * k * 0.5d0, k = 1, 5)]), &
                  'recursive-k allreduce real(8)')
      i = [rank, -rank, 1]
      call ep_kernels_allreduce(i, 3, MPI_INTEGER, MPI_MAX, comm, &
                                COLLECTIVES_ALLREDUCE_RECURSIVE_DOUBLING, 0, ierr)
      call expect(ierr == EP_OK .and. all(i == [n - 1, 0, 1]), 'recursive doubling integer')
      l = int(rank, 8) + 1
      call ep_kernels_allreduce(l, 1, MPI_INTEGER8, MPI_SUM, comm, COLLECTIVES_ALLREDUCE_LIBRARY, &
                                0, ierr)
      call expect(ierr == EP_OK .and. l == int(n, 8) * (n + 1) / 2, 'library allreduce integer(8)')
    end subroutine allreduces

    ! Periodic ni x nj on n x 1 subdomains, width 1, 9 points: every halo
    ! cell holds the value of the global cell it mirrors.
    subroutine halos(algorithm)
      integer, intent(in) :: algorithm
      integer, parameter :: ni = 12, nj = 5, nk = 2
      type(ep_halo_plan) :: plan
      real(8), allocatable :: u(:, :, :)
      integer, allocatable :: f(:, :, :)
      integer :: nx, ny, x0, y0, i, j, k, gi, gj
      logical :: part, ok
      character(len=16) :: name
      write (name, '(a, i0)') 'halo ', algorithm
      call ep_halo_create(comm, ni, nj, n, 1, .true., .true., 1, COLLECTIVES_STENCIL_NINE_POINT, &
                          algorithm, plan, ierr=ierr)
      call expect(ierr == EP_OK, trim(name) // ' create')
      call ep_halo_local(plan, nx, ny, x0, y0, part, ierr)
      call expect(part .and. ny == nj .and. y0 == 0, trim(name) // ' local')
      allocate(u(0:nx + 1, 0:ny + 1, nk), f(0:nx + 1, 0:ny + 1, nk))
      u = -1
      f = -1
      do k = 1, nk
        do j = 1, ny
          do i = 1, nx
            u(i, j, k) = value_at(x0 + i - 1, y0 + j - 1, k)
            f(i, j, k) = int(u(i, j, k))
          end do
        end do
      end do
      call ep_halo_exchange(plan, u, nk, MPI_REAL8, ierr)
      call expect(ierr == EP_OK, trim(name) // ' exchange real(8)')
      call ep_halo_exchange(plan, f, nk, MPI_INTEGER, ierr)
      call expect(ierr == EP_OK, trim(name) // ' exchange integer')
      ok = .true.
      do k = 1, nk
        do j = 0, ny + 1
          do i = 0, nx + 1
            gi = modulo(x0 + i - 1, ni)
            gj = modulo(y0 + j - 1, nj)
            ok = ok .and. u(i, j, k) == value_at(gi, gj, k) .and. f(i, j, k) == int(value_at(gi, gj, k))
          end do
        end do
      end do
      call expect(ok, trim(name) // ' halo values')
      call ep_halo_free(plan, ierr)
    end subroutine halos

    pure real(8) function value_at(gi, gj, k)
      integer, intent(in) :: gi, gj, k
      value_at = 1000d0 * k + 100d0 * gj + gi
    end function value_at

    subroutine transposes()
      integer, parameter :: nx = 7, ny = 5, nz = 4
      type(ep_transpose_plan) :: plan
      integer :: lo(3), m(3), glo(3), gm(3), i, j, k
      real(8), allocatable :: grid(:, :, :), back(:, :, :), spec(:, :, :)
      logical :: ok
      call ep_transpose_create(comm, nx, ny, nz, n, 1, plan, ierr)
      call expect(ierr == EP_OK, 'transpose create')
      call ep_transpose_box(plan, COLLECTIVES_SPACE_GRID, glo, gm)
      call ep_transpose_box(plan, COLLECTIVES_SPACE_SPECTRAL, lo, m)
      allocate(grid(gm(1), gm(2), gm(3)), back(gm(1), gm(2), gm(3)), spec(m(1), m(2), m(3)))
      do k = 1, gm(3)
        do j = 1, gm(2)
          do i = 1, gm(1)
            grid(i, j, k) = (glo(1) + i - 1) + 10d0 * (glo(2) + j - 1) + 100d0 * (glo(3) + k - 1)
          end do
        end do
      end do
      call ep_transpose_forward(plan, grid, spec, ierr)
      ok = ierr == EP_OK
      do k = 1, m(3)
        do j = 1, m(2)
          do i = 1, m(1)
            ok = ok .and. spec(i, j, k) == (lo(1) + i - 1) + 10d0 * (lo(2) + j - 1) + &
                                           100d0 * (lo(3) + k - 1)
          end do
        end do
      end do
      call expect(ok, 'transpose forward values')
      back = -1
      call ep_transpose_backward(plan, spec, back, ierr)
      call expect(ierr == EP_OK .and. all(back == grid), 'transpose backward bit for bit')
      call ep_transpose_free(plan, ierr)
    end subroutine transposes

    subroutine solves()
      type(ep_solve_result) :: res
      real(8), allocatable :: x(:)
      integer :: its(2)
      call ep_gcr_solve(comm, 12, 6, n, 1, .false., .true., 4, 0.5d0, 0.8d0, -0.5d0, 0.3d0, 8, &
                        200, 1d-9, COLLECTIVES_ALLREDUCE_RECURSIVE_K, 4, res, ierr=ierr)
      call expect(ierr == EP_OK .and. res%converged == 1 .and. res%true_residual < 1d-7, &
                  'gcr converges')
      its = [res%iterations, -res%iterations]
      call ep_allreduce(MPI_IN_PLACE, its, 2, MPI_INTEGER, MPI_MAX, comm)
      call expect(its(1) == -its(2), 'gcr: the same iterations everywhere')
      allocate(x(12 * 6 * 4))
      call ep_cg_solve(comm, 12, 6, n, 1, 4, COLLECTIVES_CG_SYMMETRIC_GAUSS_SEIDEL, 200, 1d-10, &
                       COLLECTIVES_ALLREDUCE_RECURSIVE_DOUBLING, 0, res, x, ierr)
      call expect(ierr == EP_OK .and. res%converged == 1, 'cg converges')
      call expect(res%nx * res%ny * res%nz == 0 .or. &
                  maxval(abs(x(1:res%nx * res%ny * res%nz) - 1d0)) < 1d-7, &
                  'cg solution is all ones')
    end subroutine solves

    subroutine bad_input()
      type(ep_halo_plan) :: plan
      real(8) :: r(4)
      character(len=EP_MAX_ERROR_STRING) :: msg
      r = 1
      call ep_kernels_allreduce(r, 4, MPI_REAL8, MPI_SUM, comm, COLLECTIVES_ALLREDUCE_RECURSIVE_K, &
                                1, ierr)
      msg = ep_last_error()
      call expect(ierr == EP_ERR_ARGUMENT .and. index(msg, 'radix 1') > 0, 'bad radix: ' // trim(msg))
      call ep_kernels_allreduce(r, 4, MPI_CHARACTER, MPI_SUM, comm, &
                                COLLECTIVES_ALLREDUCE_LIBRARY, 0, ierr)
      call expect(ierr == EP_ERR_ARGUMENT, 'unsupported datatype')
      call ep_kernels_allreduce(r(1:4:2), 2, MPI_REAL8, MPI_SUM, comm, &
                                COLLECTIVES_ALLREDUCE_LIBRARY, 0, ierr)
      call expect(ierr == EP_ERR_ARGUMENT, 'non-contiguous section')
      call ep_halo_create(comm, 12, 5, n, 1, .true., .true., 0, COLLECTIVES_STENCIL_NINE_POINT, &
                          COLLECTIVES_HALO_DIRECT, plan, ierr=ierr)
      msg = ep_last_error()
      call expect(ierr /= EP_OK .and. index(msg, 'width') > 0, 'halo width 0: ' // trim(msg))
      call ep_barrier(comm, ierr)
      call expect(ierr == EP_OK, 'barrier after the errors')
    end subroutine bad_input

  end subroutine run_kernels

end module ep_kernels_checks

program ep_kernels_test
  use ep_kernels_checks
  use ep_test_program
  implicit none
  call run_checks(run_kernels, 'fortran ep kernels')
end program ep_kernels_test
