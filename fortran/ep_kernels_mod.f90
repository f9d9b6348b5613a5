! Fortran interface of the kernels of collectives/ over an endpoint
! communicator (the C interface collectives/collectives.h): the recursive-k
! allreduce, halo exchange plans, spectral transposition plans and the GCR
! and CG solves. Library ep_kernels_fortran (ep_fortran and collectives).
!
!   use ep_mod
!   use ep_kernels_mod
!   type(ep_halo_plan) :: halo
!   call ep_halo_create(comm, ni, nj, px, py, .true., .false., 1, COLLECTIVES_STENCIL_NINE_POINT, &
!                       COLLECTIVES_HALO_TWO_SWEEP, halo)
!   call ep_halo_local(halo, nx, ny, x0, y0, part)
!   allocate(u(nx + 2, ny + 2, nk))           ! width 1: interior u(2:nx+1, 2:ny+1, :)
!   call ep_halo_exchange(halo, u, nk, MPI_REAL8)
!   call ep_halo_free(halo)
!
! Every routine takes an optional trailing ierr (as in ep_mod: absent, a
! failure prints its message and stops). "Collective": every endpoint calls,
! each thread with its own handles and plans, in the same order. Buffers are
! of any type and rank but must be contiguous (a section is refused).
module ep_kernels_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_null_ptr, c_double, c_long_long
  use ep_mod, only: ep_comm, ep_report_error, ep_last_error, EP_OK, EP_ERR_ARGUMENT
  implicit none
  private

  public :: ep_halo_plan, ep_transpose_plan, ep_solve_result
  public :: ep_kernels_allreduce, ep_halo_create, ep_halo_local, ep_halo_exchange, ep_halo_free, &
            ep_transpose_create, ep_transpose_box, ep_transpose_forward, ep_transpose_backward, &
            ep_transpose_free, ep_gcr_solve, ep_cg_solve

  !> The constants of collectives/collectives.h.
  integer, parameter, public :: COLLECTIVES_ALLREDUCE_LIBRARY = 0, &
                                COLLECTIVES_ALLREDUCE_RECURSIVE_DOUBLING = 1, &
                                COLLECTIVES_ALLREDUCE_RECURSIVE_K = 2
  integer, parameter, public :: COLLECTIVES_HALO_TWO_SWEEP = 0, COLLECTIVES_HALO_NEIGHBOR = 1, &
                                COLLECTIVES_HALO_DIRECT = 2, COLLECTIVES_HALO_SPLIT = 3
  integer, parameter, public :: COLLECTIVES_STENCIL_FIVE_POINT = 5, &
                                COLLECTIVES_STENCIL_NINE_POINT = 9
  integer, parameter, public :: COLLECTIVES_SPACE_GRID = 0, COLLECTIVES_SPACE_YZ = 1, &
                                COLLECTIVES_SPACE_XZ = 2, COLLECTIVES_SPACE_SPECTRAL = 3
  integer, parameter, public :: COLLECTIVES_CG_NONE = 0, COLLECTIVES_CG_JACOBI = 1, &
                                COLLECTIVES_CG_SYMMETRIC_GAUSS_SEIDEL = 2

  !> A halo exchange plan; belongs to the thread that created it.
  type, bind(C) :: ep_halo_plan
    type(c_ptr) :: handle = c_null_ptr
  end type ep_halo_plan

  !> A spectral transposition plan (real(8) fields); belongs to its thread.
  type, bind(C) :: ep_transpose_plan
    type(c_ptr) :: handle = c_null_ptr
  end type ep_transpose_plan

  !> collectives_solve_result_t: iterations, converged (0/1), the relative
  !> residuals and this endpoint's interior box of the solution.
  type, bind(C) :: ep_solve_result
    integer(c_int) :: iterations = 0, converged = 0
    real(c_double) :: initial_residual = 0, final_residual = 0, true_residual = 0
    integer(c_int) :: nx = 0, ny = 0, nz = 0, x0 = 0, y0 = 0
  end type ep_solve_result

  interface
    type(c_ptr) function address_of(x) bind(C, name="ep_f_address_of")
      import :: c_ptr
      type(*), dimension(..), intent(in) :: x
    end function address_of
    integer(c_int) function c_allreduce(comm, inout, count, datatype, op, algorithm, radix) &
        bind(C, name="ep_f_kernels_allreduce")
      import :: c_int, c_ptr, ep_comm
      type(c_ptr), value :: comm
      type(c_ptr), value :: inout
      integer(c_int), value :: count, datatype, op, algorithm, radix
    end function c_allreduce
    integer(c_int) function c_halo_create(comm, ni, nj, px, py, periodic_x, periodic_y, width, &
                                          stencil, algorithm, land, plan) &
        bind(C, name="collectives_halo_create")
      import :: c_int, c_ptr, ep_comm, ep_halo_plan
      type(c_ptr), value :: comm
      integer(c_int), value :: ni, nj, px, py, periodic_x, periodic_y, width, stencil, algorithm
      type(c_ptr), value :: land
      type(ep_halo_plan), intent(out) :: plan
    end function c_halo_create
    integer(c_int) function c_halo_local(plan, nx, ny, x0, y0, takes_part) &
        bind(C, name="collectives_halo_local")
      import :: c_int, c_ptr, ep_halo_plan
      type(c_ptr), value :: plan
      integer(c_int), intent(out) :: nx, ny, x0, y0, takes_part
    end function c_halo_local
    integer(c_int) function c_halo_exchange(plan, field, levels, datatype) &
        bind(C, name="ep_f_halo_exchange")
      import :: c_int, c_ptr, ep_halo_plan
      type(c_ptr), value :: plan
      type(c_ptr), value :: field
      integer(c_int), value :: levels, datatype
    end function c_halo_exchange
    integer(c_int) function c_halo_free(plan) bind(C, name="collectives_halo_free")
      import :: c_int, c_ptr, ep_halo_plan
      type(ep_halo_plan), intent(inout) :: plan
    end function c_halo_free
    integer(c_int) function c_transpose_create(comm, nx, ny, nz, cx, cy, plan) &
        bind(C, name="collectives_transpose_create")
      import :: c_int, c_ptr, ep_comm, ep_transpose_plan
      type(c_ptr), value :: comm
      integer(c_int), value :: nx, ny, nz, cx, cy
      type(ep_transpose_plan), intent(out) :: plan
    end function c_transpose_create
    integer(c_int) function c_transpose_box(plan, space, lo, n) &
        bind(C, name="collectives_transpose_box")
      import :: c_int, c_ptr, ep_transpose_plan
      type(c_ptr), value :: plan
      integer(c_int), value :: space
      integer(c_int), intent(out) :: lo(3), n(3)
    end function c_transpose_box
    integer(c_int) function c_transpose_forward(plan, grid, spectral) &
        bind(C, name="collectives_transpose_forward")
      import :: c_int, c_ptr, ep_transpose_plan
      type(c_ptr), value :: plan
      type(c_ptr), value :: grid, spectral
    end function c_transpose_forward
    integer(c_int) function c_transpose_backward(plan, spectral, grid) &
        bind(C, name="collectives_transpose_backward")
      import :: c_int, c_ptr, ep_transpose_plan
      type(c_ptr), value :: plan
      type(c_ptr), value :: spectral, grid
    end function c_transpose_backward
    integer(c_int) function c_transpose_free(plan) bind(C, name="collectives_transpose_free")
      import :: c_int, c_ptr, ep_transpose_plan
      type(ep_transpose_plan), intent(inout) :: plan
    end function c_transpose_free
    integer(c_int) function c_gcr_solve(comm, ni, nj, px, py, periodic_x, periodic_y, levels, &
                                        alpha, cx, cy, cz, restart, max_iterations, tolerance, &
                                        algorithm, radix, result, solution, capacity) &
        bind(C, name="collectives_gcr_solve")
      import :: c_int, c_ptr, c_double, c_long_long, ep_comm, ep_solve_result
      type(c_ptr), value :: comm
      integer(c_int), value :: ni, nj, px, py, periodic_x, periodic_y, levels, restart, &
                               max_iterations, algorithm, radix
      real(c_double), value :: alpha, cx, cy, cz, tolerance
      type(ep_solve_result), intent(out) :: result
      type(c_ptr), value :: solution
      integer(c_long_long), value :: capacity
    end function c_gcr_solve
    integer(c_int) function c_cg_solve(comm, ni, nj, px, py, levels, preconditioner, &
                                       max_iterations, tolerance, algorithm, radix, result, &
                                       solution, capacity) bind(C, name="collectives_cg_solve")
      import :: c_int, c_ptr, c_double, c_long_long, ep_comm, ep_solve_result
      type(c_ptr), value :: comm
      integer(c_int), value :: ni, nj, px, py, levels, preconditioner, max_iterations, &
                               algorithm, radix
      real(c_double), value :: tolerance
      type(ep_solve_result), intent(out) :: result
      type(c_ptr), value :: solution
      integer(c_long_long), value :: capacity
    end function c_cg_solve
  end interface

contains

  !> In-place allreduce of `count` elements (real(4), real(8), integer,
  !> integer(8): datatype MPI_REAL4/MPI_REAL8/MPI_INTEGER/MPI_INTEGER8 or
  !> their aliases) with `algorithm` (COLLECTIVES_ALLREDUCE_*; radix: k of
  !> recursive-k). Collective.
  subroutine ep_kernels_allreduce(inout, count, datatype, op, comm, algorithm, radix, ierr)
    type(*), dimension(..), intent(inout) :: inout
    integer, intent(in) :: count, datatype, op, algorithm, radix
    type(ep_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    if (.not. contiguous_ok(inout, 'ep_kernels_allreduce', ierr)) return
    call check(c_allreduce(comm%handle, address_of(inout), count, datatype, op, algorithm, radix), ierr)
  end subroutine ep_kernels_allreduce

  !> A halo plan over the ni x nj domain split px x py (periodic per
  !> direction), halo `width`, stencil COLLECTIVES_STENCIL_*, algorithm
  !> COLLECTIVES_HALO_*; land(ni, nj) (optional, .true. = land) leaves
  !> all-land subdomains out. Collective, the same values everywhere.
  subroutine ep_halo_create(comm, ni, nj, px, py, periodic_x, periodic_y, width, stencil, &
                            algorithm, plan, land, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(in) :: ni, nj, px, py, width, stencil, algorithm
    logical, intent(in) :: periodic_x, periodic_y
    type(ep_halo_plan), intent(out) :: plan
    logical, intent(in), optional, target :: land(:, :)
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable, target :: cells(:, :)
    type(c_ptr) :: land_ptr
    land_ptr = c_null_ptr
    if (present(land)) then
      if (size(land, 1) /= ni .or. size(land, 2) /= nj) then
        call ep_report_error(EP_ERR_ARGUMENT, 'ep_halo_create: land must be shaped (ni, nj)', ierr)
        return
      end if
      allocate(cells(ni, nj))
      cells = merge(1, 0, land)
      land_ptr = address_of(cells)
    end if
    call check(c_halo_create(comm%handle, ni, nj, px, py, merge(1, 0, periodic_x), &
                             merge(1, 0, periodic_y), width, stencil, algorithm, land_ptr, &
                             plan), ierr)
  end subroutine ep_halo_create

  !> This endpoint's subdomain: nx x ny interior cells from the 0-based
  !> global (x0, y0); takes_part .false. on a land or spare rank. A field is
  !> u(nx + 2 width, ny + 2 width, levels). Local.
  subroutine ep_halo_local(plan, nx, ny, x0, y0, takes_part, ierr)
    type(ep_halo_plan), intent(in) :: plan
    integer, intent(out) :: nx, ny, x0, y0
    logical, intent(out) :: takes_part
    integer, intent(out), optional :: ierr
    integer(c_int) :: part
    part = 0
    call check(c_halo_local(plan%handle, nx, ny, x0, y0, part), ierr)
    takes_part = part /= 0
  end subroutine ep_halo_local

  !> Fills the halo of `field` (any type of 1 to 16 bytes, `levels` levels,
  !> the plan's size). Collective over the endpoints that take part.
  subroutine ep_halo_exchange(plan, field, levels, datatype, ierr)
    type(ep_halo_plan), intent(in) :: plan
    type(*), dimension(..), intent(inout) :: field
    integer, intent(in) :: levels, datatype
    integer, intent(out), optional :: ierr
    if (.not. contiguous_ok(field, 'ep_halo_exchange', ierr)) return
    call check(c_halo_exchange(plan%handle, address_of(field), levels, datatype), ierr)
  end subroutine ep_halo_exchange

  !> Releases the plan (null afterwards). Collective: the same order everywhere.
  subroutine ep_halo_free(plan, ierr)
    type(ep_halo_plan), intent(inout) :: plan
    integer, intent(out), optional :: ierr
    call check(c_halo_free(plan), ierr)
  end subroutine ep_halo_free

  !> A transposition plan of an nx x ny x nz real(8) field on cx x cy EP
  !> ranks (cx * cy = size). Collective.
  subroutine ep_transpose_create(comm, nx, ny, nz, cx, cy, plan, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(in) :: nx, ny, nz, cx, cy
    type(ep_transpose_plan), intent(out) :: plan
    integer, intent(out), optional :: ierr
    call check(c_transpose_create(comm%handle, nx, ny, nz, cx, cy, plan), ierr)
  end subroutine ep_transpose_create

  !> The local box of `space` (COLLECTIVES_SPACE_*): 0-based first point lo
  !> and extents n, (x, y, z); its array is real(8) a(n(1), n(2), n(3)). Local.
  subroutine ep_transpose_box(plan, space, lo, n, ierr)
    type(ep_transpose_plan), intent(in) :: plan
    integer, intent(in) :: space
    integer, intent(out) :: lo(3), n(3)
    integer, intent(out), optional :: ierr
    call check(c_transpose_box(plan%handle, space, lo, n), ierr)
  end subroutine ep_transpose_box

  !> grid -> spectral (through yz and xz): real(8) arrays of the two boxes. Collective.
  subroutine ep_transpose_forward(plan, grid, spectral, ierr)
    type(ep_transpose_plan), intent(in) :: plan
    real(c_double), dimension(..), intent(in) :: grid
    real(c_double), dimension(..), intent(inout) :: spectral
    integer, intent(out), optional :: ierr
    if (.not. contiguous_ok(grid, 'ep_transpose_forward', ierr)) return
    if (.not. contiguous_ok(spectral, 'ep_transpose_forward', ierr)) return
    call check(c_transpose_forward(plan%handle, address_of(grid), address_of(spectral)), ierr)
  end subroutine ep_transpose_forward

  !> spectral -> grid, bit for bit the inverse of ep_transpose_forward. Collective.
  subroutine ep_transpose_backward(plan, spectral, grid, ierr)
    type(ep_transpose_plan), intent(in) :: plan
    real(c_double), dimension(..), intent(in) :: spectral
    real(c_double), dimension(..), intent(inout) :: grid
    integer, intent(out), optional :: ierr
    if (.not. contiguous_ok(grid, 'ep_transpose_backward', ierr)) return
    if (.not. contiguous_ok(spectral, 'ep_transpose_backward', ierr)) return
    call check(c_transpose_backward(plan%handle, address_of(spectral), address_of(grid)), ierr)
  end subroutine ep_transpose_backward

  !> Releases the plan (null afterwards). Collective: the same order everywhere.
  subroutine ep_transpose_free(plan, ierr)
    type(ep_transpose_plan), intent(inout) :: plan
    integer, intent(out), optional :: ierr
    call check(c_transpose_free(plan), ierr)
  end subroutine ep_transpose_free

  !> GCR(restart) on the Helmholtz problem of collectives/solvers/gcr.hpp;
  !> global sums with `algorithm` (COLLECTIVES_ALLREDUCE_*, radix). solution
  !> (optional, real(8), at least nx * ny * nz of the result's box) receives
  !> this endpoint's interior. Collective.
  subroutine ep_gcr_solve(comm, ni, nj, px, py, periodic_x, periodic_y, levels, alpha, cx, cy, &
                          cz, restart, max_iterations, tolerance, algorithm, radix, result, &
                          solution, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(in) :: ni, nj, px, py, levels, restart, max_iterations, algorithm, radix
    logical, intent(in) :: periodic_x, periodic_y
    real(8), intent(in) :: alpha, cx, cy, cz, tolerance
    type(ep_solve_result), intent(out) :: result
    real(c_double), dimension(..), intent(inout), optional :: solution
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    integer(c_long_long) :: room
    if (.not. solution_room(solution, 'ep_gcr_solve', p, room, ierr)) return
    call check(c_gcr_solve(comm%handle, ni, nj, px, py, merge(1, 0, periodic_x), merge(1, 0, periodic_y), &
                           levels, alpha, cx, cy, cz, restart, max_iterations, tolerance, &
                           algorithm, radix, result, p, room), ierr)
  end subroutine ep_gcr_solve

  !> Preconditioned CG (COLLECTIVES_CG_*) on HPCG's 27-point Poisson problem
  !> (exact solution all ones), otherwise as ep_gcr_solve. Collective.
  subroutine ep_cg_solve(comm, ni, nj, px, py, levels, preconditioner, max_iterations, &
                         tolerance, algorithm, radix, result, solution, ierr)
    type(ep_comm), intent(in) :: comm
    integer, intent(in) :: ni, nj, px, py, levels, preconditioner, max_iterations, algorithm, &
                           radix
    real(8), intent(in) :: tolerance
    type(ep_solve_result), intent(out) :: result
    real(c_double), dimension(..), intent(inout), optional :: solution
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    integer(c_long_long) :: room
    if (.not. solution_room(solution, 'ep_cg_solve', p, room, ierr)) return
    call check(c_cg_solve(comm%handle, ni, nj, px, py, levels, preconditioner, max_iterations, &
                          tolerance, algorithm, radix, result, p, room), ierr)
  end subroutine ep_cg_solve

  ! Where a solve writes its solution: the address and size of the optional
  ! `solution` of `call`, null and 0 when it is absent. .false. (reported as
  ! EP_ERR_ARGUMENT) for a non-contiguous section.
  logical function solution_room(solution, call, p, room, ierr)
    real(c_double), dimension(..), intent(in), optional :: solution
    character(len=*), intent(in) :: call
    type(c_ptr), intent(out) :: p
    integer(c_long_long), intent(out) :: room
    integer, intent(out), optional :: ierr
    p = c_null_ptr
    room = 0
    solution_room = .true.
    if (.not. present(solution)) return
    solution_room = contiguous_ok(solution, call, ierr)
    if (.not. solution_room) return
    p = address_of(solution)
    room = size(solution, kind=c_long_long)
  end function solution_room

  ! Whether `x` is contiguous; otherwise reports EP_ERR_ARGUMENT naming `call`.
  logical function contiguous_ok(x, call, ierr)
    type(*), dimension(..), intent(in) :: x
    character(len=*), intent(in) :: call
    integer, intent(out), optional :: ierr
    contiguous_ok = is_contiguous(x)
    if (.not. contiguous_ok) then
      call ep_report_error(EP_ERR_ARGUMENT, call // ': a non-contiguous array section: ' // &
                           'pass a contiguous array', ierr)
    end if
  end function contiguous_ok

  subroutine check(rc, ierr)
    integer(c_int), intent(in) :: rc
    integer, intent(out), optional :: ierr
    if (rc /= EP_OK) then
      call ep_report_error(int(rc), ep_last_error(), ierr)
    else if (present(ierr)) then
      ierr = EP_OK
    end if
  end subroutine check

end module ep_kernels_mod
