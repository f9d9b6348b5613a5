! A hybrid MPI+OpenMP Fortran model on endpoints: linearised shallow water
! (height h, velocities u, v) on a doubly periodic box, with XIOS output.
!
!   mpiexec -n P shallow_water ep|mpi|funneled [--steps N] [--ni N] [--nj N] [--no-output]
!
! run in a directory holding iodef.xml (XIOS reads it from there; the demo's
! is demos/fortran/shallow_water_iodef.xml). The three modes run the same
! numerics on the same problem, so their step times compare:
!
!   ep        every OpenMP thread of every process is an EP rank with a
!             subdomain of its own; halo exchanges (ep_irecv / ep_isend /
!             ep_waitall) and global sums (ep_allreduce) on every thread;
!             every thread is an XIOS client (xios_context_initialize(id, ep))
!   mpi       one MPI rank per process, one thread (OMP_NUM_THREADS is not
!             used); MPI_Irecv / MPI_Isend / MPI_Waitall and MPI_Allreduce;
!             one XIOS client per process (xios_context_initialize(id, comm))
!   funneled  one MPI rank per process; its threads share every loop over
!             rows, the master thread alone calls MPI and XIOS between the
!             OpenMP loops
!
! The scheme: Arakawa C grid (u on the east face of a cell, v on its north
! face), forward-backward in time: the velocities step with the old height
! gradient, then the height with the new velocities' divergence. The height
! update is a difference of face fluxes, so the fluxes telescope and the
! total mass is conserved to round-off; the run checks it after every step.
! Halo width 1: one exchange of (h, u, v) per step serves the whole step.
!
! The last line is "fortran model ok" when the mass is conserved (relative
! change below 1e-12 at every step) and the output files exist. --no-output
! leaves XIOS out of the time loop (no context, no file): the modes' model
! and communication alone, for comparing them.
module shallow_water_mod
  use mpi
  use omp_lib
  use ep_mod
  use xios
  implicit none
  private
  public :: model_world, model_result, run_model, mode_ep, mode_mpi, mode_funneled

  integer, parameter :: mode_ep = 1, mode_mpi = 2, mode_funneled = 3
  character(len=8), parameter :: mode_names(3) = [character(len=8) :: 'ep', 'mpi', 'funneled']

  ! The physical problem: a 1 m Gaussian bump on 100 m of water, 10 km
  ! cells, a 150 s step (gravity-wave Courant number 0.47 per direction).
  real(8), parameter :: gravity = 9.81d0, mean_depth = 100.0d0
  real(8), parameter :: dx = 10.0d3, dy = 10.0d3, dt = 150.0d0
  real(8), parameter :: bump_height = 1.0d0
  ! Relative change of the total mass allowed at any step: round-off only.
  real(8), parameter :: mass_tolerance = 1.0d-12

  ! Phases timed on every rank.
  integer, parameter :: ph_compute = 1, ph_halo = 2, ph_sums = 3, ph_output = 4, n_phases = 4
  ! After the phases in the report's arrays: the loop's wall time, the finalise.
  integer, parameter :: ph_total = n_phases + 1, ph_finalise = n_phases + 2
  character(len=8), parameter :: phase_names(n_phases) = &
    [character(len=8) :: 'compute', 'halo', 'sums', 'output']

  ! Message tags: the direction a halo travels (one rank can be its own
  ! neighbour on several sides, or both the east and the west one).
  integer, parameter :: tag_east = 1, tag_west = 2, tag_north = 3, tag_south = 4

  ! Who this rank is and how it talks: an endpoint (ep) or an MPI rank.
  type :: model_world
    integer :: mode = mode_ep
    type(ep_comm) :: ep            ! mode_ep: this thread's endpoint
    integer :: comm = MPI_COMM_NULL  ! mpi / funneled: the model processes
    integer :: rank = 0, nranks = 1
    integer :: processes = 1, threads = 1
    integer :: nsteps = 240, ni_glo = 256, nj_glo = 128
    logical :: output = .true.
  end type model_world

  type :: model_result
    logical :: mass_conserved = .false.
  end type model_result

  ! This rank's subdomain and its neighbours on the periodic px x py grid.
  type :: subdomain
    integer :: px, py, ibegin, ni, jbegin, nj
    integer :: east, west, north, south
  end type subdomain

contains

  ! ---- decomposition ----

  ! px x py = nranks, px >= py, as square as the divisors allow.
  subroutine process_grid(nranks, px, py)
    integer, intent(in) :: nranks
    integer, intent(out) :: px, py
    integer :: d
    py = 1
    do d = 1, nranks
      if (d * d > nranks) exit
      if (mod(nranks, d) == 0) py = d
    end do
    px = nranks / py
  end subroutine process_grid

  ! Part `part` (0-based) of n_glo points cut in `parts`: the first ones one more.
  subroutine split(n_glo, parts, part, begin, n)
    integer, intent(in) :: n_glo, parts, part
    integer, intent(out) :: begin, n
    n = n_glo / parts
    begin = part * n + min(part, mod(n_glo, parts))
    if (part < mod(n_glo, parts)) n = n + 1
  end subroutine split

  type(subdomain) function decompose(world) result(sub)
    type(model_world), intent(in) :: world
    integer :: ix, iy
    call process_grid(world%nranks, sub%px, sub%py)
    ix = mod(world%rank, sub%px)
    iy = world%rank / sub%px
    call split(world%ni_glo, sub%px, ix, sub%ibegin, sub%ni)
    call split(world%nj_glo, sub%py, iy, sub%jbegin, sub%nj)
    sub%east = modulo(ix + 1, sub%px) + sub%px * iy
    sub%west = modulo(ix - 1, sub%px) + sub%px * iy
    sub%north = ix + sub%px * modulo(iy + 1, sub%py)
    sub%south = ix + sub%px * modulo(iy - 1, sub%py)
  end function decompose

  ! ---- communication: the only place the modes differ ----

  ! Fills the width-1 halo of h, u and v (no corners: the scheme reads only
  ! the four face neighbours). One message per side carries all three fields.
  subroutine exchange_halos(world, sub, h, u, v)
    type(model_world), intent(in) :: world
    type(subdomain), intent(in) :: sub
    real(8), intent(inout) :: h(0:, 0:), u(0:, 0:), v(0:, 0:)
    real(8), asynchronous :: to_east(sub%nj, 3), to_west(sub%nj, 3), from_east(sub%nj, 3), &
      from_west(sub%nj, 3)
    real(8), asynchronous :: to_north(sub%ni, 3), to_south(sub%ni, 3), from_north(sub%ni, 3), &
      from_south(sub%ni, 3)
    type(ep_request) :: ep_reqs(8)
    integer :: mpi_reqs(8), ierr, ni, nj, nrow, ncol

    ni = sub%ni
    nj = sub%nj
    nrow = 3 * ni
    ncol = 3 * nj
    to_east(:, 1) = h(ni, 1:nj)
    to_east(:, 2) = u(ni, 1:nj)
    to_east(:, 3) = v(ni, 1:nj)
    to_west(:, 1) = h(1, 1:nj)
    to_west(:, 2) = u(1, 1:nj)
    to_west(:, 3) = v(1, 1:nj)
    to_north(:, 1) = h(1:ni, nj)
    to_north(:, 2) = u(1:ni, nj)
    to_north(:, 3) = v(1:ni, nj)
    to_south(:, 1) = h(1:ni, 1)
    to_south(:, 2) = u(1:ni, 1)
    to_south(:, 3) = v(1:ni, 1)

    if (world%mode == mode_ep) then
      call ep_irecv(from_west, ncol, MPI_DOUBLE_PRECISION, sub%west, tag_east, world%ep, ep_reqs(1))
      call ep_irecv(from_east, ncol, MPI_DOUBLE_PRECISION, sub%east, tag_west, world%ep, ep_reqs(2))
      call ep_irecv(from_south, nrow, MPI_DOUBLE_PRECISION, sub%south, tag_north, world%ep, ep_reqs(3))
      call ep_irecv(from_north, nrow, MPI_DOUBLE_PRECISION, sub%north, tag_south, world%ep, ep_reqs(4))
      call ep_isend(to_east, ncol, MPI_DOUBLE_PRECISION, sub%east, tag_east, world%ep, ep_reqs(5))
      call ep_isend(to_west, ncol, MPI_DOUBLE_PRECISION, sub%west, tag_west, world%ep, ep_reqs(6))
      call ep_isend(to_north, nrow, MPI_DOUBLE_PRECISION, sub%north, tag_north, world%ep, ep_reqs(7))
      call ep_isend(to_south, nrow, MPI_DOUBLE_PRECISION, sub%south, tag_south, world%ep, ep_reqs(8))
      call ep_waitall(ep_reqs)
    else
      call MPI_Irecv(from_west, ncol, MPI_DOUBLE_PRECISION, sub%west, tag_east, world%comm, mpi_reqs(1), ierr)
      call MPI_Irecv(from_east, ncol, MPI_DOUBLE_PRECISION, sub%east, tag_west, world%comm, mpi_reqs(2), ierr)
      call MPI_Irecv(from_south, nrow, MPI_DOUBLE_PRECISION, sub%south, tag_north, world%comm, mpi_reqs(3), ierr)
      call MPI_Irecv(from_north, nrow, MPI_DOUBLE_PRECISION, sub%north, tag_south, world%comm, mpi_reqs(4), ierr)
      call MPI_Isend(to_east, ncol, MPI_DOUBLE_PRECISION, sub%east, tag_east, world%comm, mpi_reqs(5), ierr)
      call MPI_Isend(to_west, ncol, MPI_DOUBLE_PRECISION, sub%west, tag_west, world%comm, mpi_reqs(6), ierr)
      call MPI_Isend(to_north, nrow, MPI_DOUBLE_PRECISION, sub%north, tag_north, world%comm, mpi_reqs(7), ierr)
      call MPI_Isend(to_south, nrow, MPI_DOUBLE_PRECISION, sub%south, tag_south, world%comm, mpi_reqs(8), ierr)
      call MPI_Waitall(8, mpi_reqs, MPI_STATUSES_IGNORE, ierr)
    end if

    h(0, 1:nj) = from_west(:, 1)
    u(0, 1:nj) = from_west(:, 2)
    v(0, 1:nj) = from_west(:, 3)
    h(ni + 1, 1:nj) = from_east(:, 1)
    u(ni + 1, 1:nj) = from_east(:, 2)
    v(ni + 1, 1:nj) = from_east(:, 3)
    h(1:ni, 0) = from_south(:, 1)
    u(1:ni, 0) = from_south(:, 2)
    v(1:ni, 0) = from_south(:, 3)
    h(1:ni, nj + 1) = from_north(:, 1)
    u(1:ni, nj + 1) = from_north(:, 2)
    v(1:ni, nj + 1) = from_north(:, 3)
  end subroutine exchange_halos

  ! Global sum or max over every rank, in place.
  subroutine global_reduce(world, values, op)
    type(model_world), intent(in) :: world
    real(8), intent(inout) :: values(:)
    integer, intent(in) :: op
    real(8) :: mine(size(values))
    integer :: ierr
    mine = values
    if (world%mode == mode_ep) then
      call ep_allreduce(mine, values, size(values), MPI_DOUBLE_PRECISION, op, world%ep)
    else
      call MPI_Allreduce(mine, values, size(values), MPI_DOUBLE_PRECISION, op, world%comm, ierr)
    end if
  end subroutine global_reduce

  ! ---- the model ----

  ! One step of the interior, threaded over rows in the funneled mode (the
  ! `if` leaves the ep and mpi ranks on their own thread). Returns this
  ! subdomain's mass, energy and max |h - H| after the step.
  subroutine advance(world, sub, h, u, v, local_sums, local_max)
    type(model_world), intent(in) :: world
    type(subdomain), intent(in) :: sub
    real(8), intent(inout) :: h(0:, 0:), u(0:, 0:), v(0:, 0:)
    real(8), intent(out) :: local_sums(2), local_max(1)
    real(8) :: gx, gy, hx, hy, mass, energy, eta_max
    integer :: i, j, ni, nj
    logical :: threaded

    ni = sub%ni
    nj = sub%nj
    gx = gravity * dt / dx
    gy = gravity * dt / dy
    hx = mean_depth * dt / dx
    hy = mean_depth * dt / dy
    mass = 0
    energy = 0
    eta_max = 0
    threaded = world%mode == mode_funneled
    !$omp parallel if(threaded) default(shared) private(i, j)
    ! Velocities from the old height, including the west column of u and the
    ! south row of v, which the height update below reads.
    !$omp do schedule(static)
    do j = 1, nj
      do i = 0, ni
        u(i, j) = u(i, j) - gx * (h(i + 1, j) - h(i, j))
      end do
    end do
    !$omp end do nowait
    !$omp do schedule(static)
    do j = 0, nj
      do i = 1, ni
        v(i, j) = v(i, j) - gy * (h(i, j + 1) - h(i, j))
      end do
    end do
    !$omp end do
    ! Height from the new velocities: a difference of fluxes.
    !$omp do schedule(static) reduction(+:mass, energy) reduction(max:eta_max)
    do j = 1, nj
      do i = 1, ni
        h(i, j) = h(i, j) - hx * (u(i, j) - u(i - 1, j)) - hy * (v(i, j) - v(i, j - 1))
        mass = mass + h(i, j)
        energy = energy + gravity * (h(i, j) - mean_depth)**2 + mean_depth * (u(i, j)**2 + v(i, j)**2)
        eta_max = max(eta_max, abs(h(i, j) - mean_depth))
      end do
    end do
    !$omp end do
    !$omp end parallel
    local_sums = [mass * dx * dy, 0.5d0 * energy * dx * dy]
    local_max = [eta_max]
  end subroutine advance

  ! One rank of the model: called by every thread in the ep mode (its arrays
  ! are then the thread's own), by the master thread otherwise.
  subroutine run_model(world, result)
    type(model_world), intent(in) :: world
    type(model_result), intent(out) :: result
    type(subdomain) :: sub
    real(8), allocatable :: h(:, :), u(:, :), v(:, :), x_km(:), y_km(:)
    real(8) :: sums(2), maxima(1), initial(2), eta_max, worst_drift, sigma, r2
    real(8) :: phase(n_phases), t0, t1, loop_start, wall, last_print
    real(8) :: phase_mean(n_phases + 2), phase_max(n_phases + 2), finalise, total
    type(xios_context) :: ctx
    type(xios_duration) :: timestep
    integer :: i, j, step, last_print_step, print_every

    sub = decompose(world)
    allocate (h(0:sub%ni + 1, 0:sub%nj + 1), u(0:sub%ni + 1, 0:sub%nj + 1), &
              v(0:sub%ni + 1, 0:sub%nj + 1), x_km(sub%ni), y_km(sub%nj))
    sigma = world%ni_glo / 16.0d0
    do j = 0, sub%nj + 1
      do i = 0, sub%ni + 1
        r2 = (sub%ibegin + i - 0.5d0 - world%ni_glo / 2.0d0)**2 + &
             (sub%jbegin + j - 0.5d0 - world%nj_glo / 2.0d0)**2
        h(i, j) = mean_depth + bump_height * exp(-r2 / (2 * sigma**2))
      end do
    end do
    u = 0
    v = 0
    x_km = [((sub%ibegin + i - 0.5d0) * dx / 1000, i = 1, sub%ni)]
    y_km = [((sub%jbegin + j - 0.5d0) * dy / 1000, j = 1, sub%nj)]

    ! ---- output: XIOS, one client per endpoint or per process ----
    if (world%output) then
      if (world%mode == mode_ep) then
        call xios_context_initialize('shallow_water', world%ep)
      else
        call xios_context_initialize('shallow_water', world%comm)
      end if
      call xios_get_handle('shallow_water', ctx)
      call xios_set_current_context(ctx)
      call xios_set_domain_attr('box', ni_glo=world%ni_glo, nj_glo=world%nj_glo, type='rectilinear', &
        ibegin=sub%ibegin, ni=sub%ni, jbegin=sub%jbegin, nj=sub%nj)
      ! The arrays go out whole, halo included: XIOS takes the interior.
      call xios_set_domain_attr('box', data_dim=2, data_ibegin=-1, data_ni=sub%ni + 2, &
        data_jbegin=-1, data_nj=sub%nj + 2)
      call xios_set_domain_attr('box', lonvalue_1d=x_km, latvalue_1d=y_km)
      timestep%second = dt
      call xios_set_timestep(timestep)
      call xios_close_context_definition()
    end if

    ! The state before the first step: its mass is the reference.
    sums = [sum(h(1:sub%ni, 1:sub%nj)) * dx * dy, &
            0.5d0 * sum(gravity * (h(1:sub%ni, 1:sub%nj) - mean_depth)**2) * dx * dy]
    call global_reduce(world, sums, MPI_SUM)
    initial = sums
    worst_drift = 0
    eta_max = 0

    if (world%rank == 0) then
      print '(a, i0, a, i0, a, i0, a, a, a, i0, a, i0, a, i0, a, i0, a)', &
        'shallow_water: ', world%ni_glo, ' x ', world%nj_glo, ' grid, fields h u v, ', &
        world%nranks, ' model ranks (', trim(mode_names(world%mode)), ' mode, ', &
        world%processes, ' process(es) x ', world%threads, ' thread(s), ', sub%px, ' x ', sub%py, &
        ' subdomains)'
      if (world%output) then
        print '(a, i0, a, a)', '  halo width 1, XIOS output: ', world%nranks, ' client(s), ', &
          trim(merge('one per thread ', 'one per process', world%mode == mode_ep)) // ', no server'
      else
        print '(a)', '  halo width 1, no output (--no-output)'
      end if
    end if

    phase = 0
    print_every = max(1, world%nsteps / 4)
    loop_start = omp_get_wtime()
    last_print = loop_start
    last_print_step = 0
    do step = 1, world%nsteps
      t0 = omp_get_wtime()
      call exchange_halos(world, sub, h, u, v)
      t1 = omp_get_wtime()
      phase(ph_halo) = phase(ph_halo) + (t1 - t0)

      call advance(world, sub, h, u, v, sums, maxima)
      t0 = omp_get_wtime()
      phase(ph_compute) = phase(ph_compute) + (t0 - t1)

      call global_reduce(world, sums, MPI_SUM)
      call global_reduce(world, maxima, MPI_MAX)
      t1 = omp_get_wtime()
      phase(ph_sums) = phase(ph_sums) + (t1 - t0)
      worst_drift = max(worst_drift, abs(sums(1) - initial(1)) / initial(1))
      eta_max = maxima(1)

      if (world%output) then
        call xios_update_calendar(step)
        call xios_send_field('h', h)
        call xios_send_field('u', u)
        call xios_send_field('v', v)
      end if
      t0 = omp_get_wtime()
      phase(ph_output) = phase(ph_output) + (t0 - t1)

      if (world%rank == 0 .and. (mod(step, print_every) == 0 .or. step == world%nsteps)) then
        print '(a, i5, a, i0, a, f8.2, a, f9.4, a, es10.3, a)', 'step ', step, '/', world%nsteps, &
          '  t = ', step * dt / 3600, ' h  ', 1000 * (t0 - last_print) / (step - last_print_step), &
          ' ms/step  (max |h - H| = ', eta_max, ' m)'
        last_print = omp_get_wtime()
        last_print_step = step
      end if
    end do
    wall = omp_get_wtime() - loop_start

    ! Closing the files is timed apart: it is once per run, not per step.
    t0 = omp_get_wtime()
    if (world%output) call xios_context_finalize()
    finalise = omp_get_wtime() - t0

    ! The report: mean and max over the ranks of each phase, of the loop's
    ! wall time (the total) and of the finalise.
    phase_mean = [phase, wall, finalise]
    phase_max = phase_mean
    call global_reduce(world, phase_mean, MPI_SUM)
    phase_mean = phase_mean / world%nranks
    call global_reduce(world, phase_max, MPI_MAX)
    result%mass_conserved = worst_drift < mass_tolerance

    if (world%rank == 0) then
      print '(/, a)', '# conservation (sums over all cells)'
      print '(a8, 2a24, a13)', 'quantity', 'initial', 'final', 'rel. change'
      print '(a8, 2es24.15, es13.3)', 'mass    ', initial(1), sums(1), (sums(1) - initial(1)) / initial(1)
      print '(a8, 2es24.15, es13.3, a)', 'energy  ', initial(2), sums(2), &
        (sums(2) - initial(2)) / initial(2), '  (not conserved by the scheme)'
      print '(a, es10.3, a, es8.1, a, a)', 'largest mass change over the steps: ', worst_drift, &
        ' (tolerance ', mass_tolerance, '): ', trim(merge('conserved    ', 'NOT conserved', &
        result%mass_conserved))
      total = phase_mean(ph_total)
      print '(/, a, i0, a, i0, a, f6.3, a)', '# time per phase over ', world%nranks, &
        ' model ranks, ', world%nsteps, ' steps (wall ', phase_max(ph_total), ' s)'
      print '(a, 2a13, a15, a9)', 'phase   ', 'mean [s]', 'max [s]', 'mean/step [ms]', 'share'
      do i = 1, n_phases
        print '(a8, 2f13.4, f15.4, f8.1, a)', phase_names(i), phase_mean(i), phase_max(i), &
          1000 * phase_mean(i) / world%nsteps, 100 * phase_mean(i) / total, '%'
      end do
      print '(a8, 2f13.4, f15.4)', 'total   ', total, phase_max(ph_total), 1000 * total / world%nsteps
      print '(a, f9.4, a)', 'step time: ', 1000 * total / world%nsteps, ' ms/step (mean over the ranks)'
      print '(a, f9.4, a)', 'step time without output: ', &
        1000 * sum(phase_mean([ph_compute, ph_halo, ph_sums])) / world%nsteps, ' ms/step (compute, halo, sums)'
      print '(a, f5.1, a, f5.1, a, f5.1, a)', 'split: communication ', &
        100 * (phase_mean(ph_halo) + phase_mean(ph_sums)) / total, '% (halo + sums), compute ', &
        100 * phase_mean(ph_compute) / total, '%, output ', 100 * phase_mean(ph_output) / total, '%'
      print '(a, f7.4, a)', 'output finalise (files closed): ', phase_max(ph_finalise), ' s (max)'
    end if
  end subroutine run_model

end module shallow_water_mod

program shallow_water
  use mpi
  use omp_lib
  use ep_mod
  use xios
  use shallow_water_mod
  implicit none
  type(model_world) :: world
  type(model_result) :: result
  type(ep_comm), allocatable :: eps(:)
  character(len=64) :: arg, value
  integer :: comm, provided, required, ierr, world_rank, n, ok_count
  logical :: conserved, inst_written, avg_written

  call get_command_argument(1, arg)
  select case (trim(arg))
  case ('ep')
    world%mode = mode_ep
    required = MPI_THREAD_MULTIPLE
  case ('mpi')
    world%mode = mode_mpi
    required = MPI_THREAD_SINGLE
  case ('funneled')
    world%mode = mode_funneled
    required = MPI_THREAD_FUNNELED
  case default
    print '(a)', 'usage: mpiexec -n P shallow_water ep|mpi|funneled [--steps N] [--ni N] [--nj N] ' // &
      '[--no-output]'
    stop 2
  end select
  n = 2
  do while (n <= command_argument_count())
    call get_command_argument(n, arg)
    if (trim(arg) == '--no-output') then
      world%output = .false.
      n = n + 1
      cycle
    end if
    call get_command_argument(n + 1, value)
    select case (trim(arg))
    case ('--steps')
      read (value, *) world%nsteps
    case ('--ni')
      read (value, *) world%ni_glo
    case ('--nj')
      read (value, *) world%nj_glo
    case default
      print '(a)', 'shallow_water: unknown option ' // trim(arg)
      stop 2
    end select
    n = n + 2
  end do

  call MPI_Init_thread(required, provided, ierr)
  if (provided < required) then
    print '(a)', 'shallow_water: MPI does not provide the thread level this mode needs'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, world_rank, ierr)
  call xios_initialize('client', return_comm=comm)
  call MPI_Comm_size(comm, world%processes, ierr)
  world%comm = comm
  world%threads = 1
  if (world%mode /= mode_mpi) world%threads = omp_get_max_threads()

  conserved = .false.
  if (world%mode == mode_ep) then
    world%nranks = world%processes * world%threads
    allocate (eps(world%threads))
    ok_count = 0
    !$omp parallel default(shared) firstprivate(world) private(result) reduction(+:ok_count)
    !$omp single
    call ep_create_endpoints(comm, omp_get_num_threads(), eps)
    !$omp end single
    world%ep = eps(omp_get_thread_num() + 1)
    call ep_comm_rank(world%ep, world%rank)
    call run_model(world, result)
    if (result%mass_conserved) ok_count = ok_count + 1
    call ep_comm_free(world%ep)
    !$omp end parallel
    conserved = ok_count == world%threads
  else
    world%nranks = world%processes
    call MPI_Comm_rank(comm, world%rank, ierr)
    call run_model(world, result)
    conserved = result%mass_conserved
  end if

  call xios_finalize()
  ! Every rank has judged the same global sums; the files are whole once
  ! every client has finalised.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (world_rank == 0) then
    print '(/, a)', 'NetCDF output in the working directory:'
    if (world%output) then
      inquire (file='shallow_water_inst.nc', exist=inst_written)
      inquire (file='shallow_water_avg.nc', exist=avg_written)
      if (inst_written) print '(a)', '  shallow_water_inst.nc'
      if (avg_written) print '(a)', '  shallow_water_avg.nc'
    else
      print '(a)', '  none (--no-output)'
      inst_written = .true.
      avg_written = .true.
    end if
    if (conserved .and. inst_written .and. avg_written) then
      print '(a)', 'fortran model ok'
    else
      print '(a)', 'fortran model FAILED: ' // trim(merge('output missing    ', 'mass not conserved', conserved))
    end if
  end if
  call MPI_Finalize(ierr)
end program shallow_water
