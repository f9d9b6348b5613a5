! A model written against XIOS's Fortran interface (USE xios), in the style
! of XIOS's own test programs: the domain, axis and timestep set at run
! time, a field sent with its halo (data_ibegin = -1, data_jbegin = -2),
! fields added at run time (xios_add_child, xios_set_attr), the calendar and
! attribute queries, then 24 hourly steps.
!
!   mpiexec -n 2 xios_model_test process       one client per process (MPI_Init)
!   mpiexec -n 2 xios_model_test threads       every OpenMP thread a client
!   mpiexec -n 2 xios_model_test process : -n 1 xios_lite_server
!
! Each client owns rows of the 20 x 12 domain; field_A at (i, j, level l),
! step ts is i + 100 j + 10000 l + 1e6 ts (0-based global i, j), and 1e30
! in the halo, which must never reach a file. check_xios_files reads the
! file back.
program xios_model_test
  use xios
  use mod_wait
  use ep_mod
  use xios_test_launch
  implicit none

  integer, parameter :: ni_glo = 20, nj_glo = 12, llm = 3, nsteps = 24

  call launch(run_client, 'xios model test done')

contains

  subroutine run_client(comm, ep)
    integer, intent(in) :: comm
    type(ep_comm), optional, intent(in) :: ep
    type(xios_context) :: ctx
    type(xios_fieldgroup) :: fieldgroup
    type(xios_file) :: file
    type(xios_field) :: field
    type(xios_duration) :: dtime
    type(xios_date) :: origin, start
    character(len=32) :: calendar, name
    double precision, allocatable :: field_A(:, :, :), lon(:), lat(:), lonvalue(:)
    double precision :: levels(llm)
    integer :: me, ni, nj, ibegin, jbegin, i, j, l, ts, got_ni, nsteps_var
    logical :: defined, ok
    character(len=16) :: greeting

    call client_rows(comm, ep, nj_glo, me, jbegin, nj)
    ni = ni_glo
    ibegin = 0

    allocate (field_A(0:ni + 1, -1:nj + 2, llm), lon(ni), lat(nj), lonvalue(ni))
    do i = 1, ni
      lon(i) = -171.0d0 + 18.0d0 * (ibegin + i - 1)
    end do
    do j = 1, nj
      lat(j) = -82.5d0 + 15.0d0 * (jbegin + j - 1)
    end do
    do l = 1, llm
      levels(l) = 100.0d0 * l
    end do

    call open_context('test', comm, ep)
    call xios_get_handle('test', ctx)
    call xios_set_current_context(ctx)

    call xios_get_calendar_type(calendar)
    call expect(trim(calendar) == 'Gregorian', 'calendar type ' // trim(calendar))

    call xios_set_axis_attr('axis_A', n_glo=llm, value=levels)
    call xios_set_domain_attr('domain_A', ni_glo=ni_glo, nj_glo=nj_glo, ibegin=ibegin, ni=ni, &
      jbegin=jbegin, nj=nj, type='rectilinear')
    call xios_set_domain_attr('domain_A', data_dim=2, data_ibegin=-1, data_ni=ni + 2, &
      data_jbegin=-2, data_nj=nj + 4)
    call xios_set_domain_attr('domain_A', lonvalue_1d=lon, latvalue_1d=lat)
    call xios_set_fieldgroup_attr('field_definition', enabled=.true.)
    ! The model's unit replaces the file's, spelt `units` there (both on one
    ! element would be refused at close).
    call xios_set_field_attr('field_A', unit='K')
    call xios_get_field_attr('field_A', unit=name)
    call expect(trim(name) == 'K', 'field_A unit ' // trim(name))

    ! A field added to the definitions and one added to the file.
    call xios_get_handle('field_definition', fieldgroup)
    call xios_add_child(fieldgroup, field, 'field_B')
    call xios_set_attr(field, field_ref='field_A', name='field_B')
    call xios_get_handle('output', file)
    call xios_add_child(file, field)
    call xios_set_attr(field, field_ref='field_A_zoom', name='field_C', long_name='field A again')

    dtime%second = 3600
    call xios_set_timestep(dtime)

    call xios_get_time_origin(origin)
    call expect(origin%year == 2012 .and. origin%month == 2 .and. origin%day == 29 .and. &
      origin%hour == 15, 'time origin 2012-02-29 15:00 (a leap day)')
    call xios_get_start_date(start)
    call expect(start%month == 3 .and. start%day == 1, 'start date 2012-03-01')

    got_ni = -1
    lonvalue = 0
    call xios_get_domain_attr('domain_A', ni=got_ni, lonvalue_1d=lonvalue)
    call expect(got_ni == ni .and. all(abs(lonvalue - lon) < 1.0d-12), 'ni and lonvalue_1d read back')
    call xios_is_defined_field_attr('field_A', enabled=defined)
    call expect(.not. defined, 'enabled not defined on field_A before close')
    call xios_is_defined_field_attr('field_A', operation=defined)
    call expect(defined, 'operation defined on field_A')
    call expect(xios_is_valid_field('field_B'), 'field_B is valid')
    call expect(.not. xios_is_valid_field('field_Z'), 'field_Z is not valid')

    ok = xios_getvar('nsteps', nsteps_var)
    call expect(ok .and. nsteps_var == nsteps, 'variable nsteps = 24')
    ok = xios_getvar('greeting', greeting)
    call expect(ok .and. trim(greeting) == 'bonjour', 'variable greeting')
    ok = xios_getvar('no_such_variable', nsteps_var)
    call expect(.not. ok, 'no variable no_such_variable')

    call xios_close_context_definition()

    name = ' '
    call xios_get_field_attr('field_A_zoom', name=name)
    call xios_is_defined_field_attr('field_A', enabled=defined)
    call expect(defined, 'enabled inherited by field_A after close')
    call expect(xios_field_is_active('field_A'), 'field_A is active')
    call expect(.not. xios_field_is_active('field_unused'), 'field_unused is not active')

    do ts = 1, nsteps
      field_A = 1.0d30  ! the halo: never written
      do l = 1, llm
        do j = 1, nj
          do i = 1, ni
            field_A(i, j, l) = (ibegin + i - 1) + 100.0d0 * (jbegin + j - 1) + 10000.0d0 * l + &
              1.0d6 * ts
          end do
        end do
      end do
      call xios_update_calendar(ts)
      call xios_send_field('field_A', field_A)
      call wait_us(100)
    end do

    call xios_context_finalize()
  end subroutine run_client


end program xios_model_test
