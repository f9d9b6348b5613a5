! Two XIOS contexts on the same clients, as XIOS's test_complete.f90 runs
! them: "atmosphere" (calendar and timestep from the model, a halo'd 3-D
! field) and "surface" (XIOS 1's calendar on the context element, a 30 min
! timestep, a field sent compressed: each client gives every second point of
! its block through data_dim = 1 and data_i_index). Both are defined, closed,
! then written alternately every step; surface is finalised first.
!
!   mpiexec -n 2 xios_contexts_test process
!   mpiexec -n 2 xios_contexts_test threads : -n 1 xios_lite_server
!
! check_xios_files contexts reads both files back.
program xios_contexts_test
  use xios
  use mod_wait
  use ep_mod
  use xios_test_launch
  implicit none

  integer, parameter :: ni_glo = 12, nj_glo = 8, llm = 2, nsteps = 8

  call launch(run_client, 'xios contexts test done')

contains

  subroutine run_client(comm, ep)
    integer, intent(in) :: comm
    type(ep_comm), optional, intent(in) :: ep
    type(xios_context) :: atm, srf
    type(xios_duration) :: dtime
    double precision, allocatable :: ta(:, :, :), sst(:)
    integer, allocatable :: kept(:)
    double precision :: levels(llm)
    integer :: me, ni, nj, jbegin, i, j, l, ts, n, npts
    character(len=64) :: name

    call client_rows(comm, ep, nj_glo, me, jbegin, nj)
    ni = ni_glo
    levels = [850.0d0, 500.0d0]

    ! ---- atmosphere ----
    call open_context('atmosphere', comm, ep)
    call xios_get_handle('atmosphere', atm)
    call xios_set_current_context(atm)
    call xios_define_calendar(type='Gregorian', start_date=xios_date(2000, 1, 1, 0, 0, 0), &
      time_origin=xios_date(1999, 12, 31, 0, 0, 0))
    dtime = xios_hour
    call xios_set_timestep(dtime)
    call xios_set_axis_attr('lev', n_glo=llm, value=levels, unit='hPa')
    call xios_set_domain_attr('dom_atm', ni_glo=ni_glo, nj_glo=nj_glo, ibegin=0, ni=ni, &
      jbegin=jbegin, nj=nj, type='rectilinear')
    call xios_set_domain_attr('dom_atm', data_dim=2, data_ibegin=-1, data_ni=ni + 2, &
      data_jbegin=-1, data_nj=nj + 2)
    call xios_close_context_definition()
    name = ' '
    call xios_get_field_attr('ta_max', name=name)
    call expect(trim(name) == 'ta_max', 'name of ta_max')
    call expect(xios_field_is_active('ta'), 'ta is active')

    ! ---- surface ----
    call open_context('surface', comm, ep)
    call xios_get_handle('surface', srf)
    call xios_set_current_context(srf)
    dtime = 30 * xios_minute
    call xios_set_timestep(dtime)
    call xios_set_domain_attr('dom_srf', ni_glo=ni_glo, nj_glo=nj_glo, ibegin=0, ni=ni, &
      jbegin=jbegin, nj=nj)
    ! Every second point of the block (global i + j even), by its index in
    ! the block (i fastest, from 0).
    npts = 0
    allocate (kept(ni * nj))
    do j = 1, nj
      do i = 1, ni
        if (mod((i - 1) + (jbegin + j - 1), 2) == 0) then
          npts = npts + 1
          kept(npts) = (i - 1) + (j - 1) * ni
        end if
      end do
    end do
    call xios_set_domain_attr('dom_srf', data_dim=1, data_ibegin=0, data_ni=npts, &
      data_n_index=npts, data_i_index=kept(1:npts))
    call xios_close_context_definition()
    call expect(xios_is_valid_field('sst_k'), 'sst_k is valid')
    call expect(.not. xios_field_is_active('unused_sum'), 'unused_sum is not active')

    allocate (ta(0:ni + 1, 0:nj + 1, llm), sst(npts))
    do ts = 1, nsteps
      ta = -1.0d30
      do l = 1, llm
        do j = 1, nj
          do i = 1, ni
            ta(i, j, l) = (i - 1) + 100.0d0 * (jbegin + j - 1) + 1000.0d0 * l + 1.0d5 * ts
          end do
        end do
      end do
      do n = 1, npts
        i = mod(kept(n), ni)
        j = kept(n) / ni
        sst(n) = i + 100.0d0 * (jbegin + j) + 10.0d0 * ts
      end do
      call xios_set_current_context(atm)
      call xios_update_calendar(ts)
      call xios_send_field('ta', ta)
      call xios_set_current_context(srf)
      call xios_update_calendar(ts)
      call xios_send_field('sst', sst)
      call wait_us(50)
    end do

    call xios_context_finalize()
    call xios_set_current_context(atm)
    call xios_context_finalize()
  end subroutine run_client


end program xios_contexts_test
