! xios_date_mod against values worked out by hand, in the gregorian, noleap and
! 360_day calendars, written as XIOS's own test client writes them
! (dtime%second = 3600, 0.5 * dtime, date + 3 * (dtime + dtime), ...). The
! calendar is the test-only one of tests/xios_lite/date_test_calendar.hpp.
! Prints "xios date tests passed", or each failed check and stops with 1.
program date_test
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char, c_double, c_float, &
                                         c_long_long
  use xios_date_mod
  implicit none

  include 'date_test_calendar.inc'

  integer :: failures = 0
  type(xios_date) :: date, start
  type(xios_duration) :: dtime
  character(len=32) :: text

  ! ---- gregorian, timestep 1800 s, time origin the day before the start ----
  call use_calendar('gregorian', xios_date(1999, 12, 31, 0, 0, 0))
  call expect_date(xios_date(2000, 1, 31, 0, 0, 0) + xios_month, xios_date(2000, 2, 29, 0, 0, 0), &
                   'leap February clamps 31 January + 1 month')
  call expect_date(xios_date(2001, 1, 31, 0, 0, 0) + xios_month, xios_date(2001, 2, 28, 0, 0, 0), &
                   '2001: February of 28 days')
  call expect_date(xios_date(1900, 2, 28, 0, 0, 0) + xios_day, xios_date(1900, 3, 1, 0, 0, 0), &
                   '1900 is no leap year')
  call expect_date(xios_date(2000, 2, 29, 0, 0, 0) + xios_year, xios_date(2001, 2, 28, 0, 0, 0), &
                   '29 February + 1 year')
  call expect_date(xios_date(2000, 3, 31, 0, 0, 0) - xios_month, xios_date(2000, 2, 29, 0, 0, 0), &
                   '31 March - 1 month')

  ! XIOS's test client: 1 h and 1 timestep, halved, doubled, tripled.
  dtime%second = 3600
  dtime%timestep = 1
  dtime = 0.5 * dtime
  call expect(dtime == xios_duration(0, 0, 0, 0, 0, 1800, 0.5), '0.5 * dtime')
  start = xios_date(2000, 01, 01, 00, 00, 00)
  date = start + 3 * (dtime + dtime)   ! 3 * (3600 s + 1 ts of 1800 s)
  call expect_date(date, xios_date(2000, 1, 1, 4, 30, 0), 'date + 3 * (dtime + dtime)')
  call expect_date(date - 2.5 * xios_hour, xios_date(2000, 1, 1, 2, 0, 0), 'date - 2.5 * xios_hour')
  call expect_date(start - xios_second, xios_date(1999, 12, 31, 23, 59, 59), 'back across a year')
  call expect_date(start + (-xios_day), xios_date(1999, 12, 31, 0, 0, 0), '-xios_day')
  call expect_date(start + xios_day * 2, xios_date(2000, 1, 3, 0, 0, 0), 'xios_day * 2')
  call expect_date(start + 2.0_c_float * xios_hour, xios_date(2000, 1, 1, 2, 0, 0), 'real(4) * duration')
  call expect_date(start + xios_minute * 1.5_c_double, xios_date(2000, 1, 1, 0, 1, 30), &
                   'duration * real(8)')
  call expect_date(start + 3 * xios_timestep, xios_date(2000, 1, 1, 1, 30, 0), '3 timesteps of 30 min')
  call expect(xios_day + xios_hour == xios_duration(0, 0, 1, 1, 0, 0, 0), 'duration sum')
  call expect(xios_day - xios_hour == xios_duration(0, 0, 1, -1, 0, 0, 0), 'duration difference')
  call expect(xios_day /= 24 * xios_hour, '1 day /= 24 hours, component by component')
  call expect(xios_date(2000, 3, 1, 0, 0, 0) - xios_date(2000, 2, 28, 12, 30, 15) == &
              xios_duration(0, 0, 1, 11, 29, 45, 0), 'date - date')
  date = 3 * xios_day   ! assignment: 0000-01-01 + 3 days
  call expect_date(date, xios_date(0, 1, 4, 0, 0, 0), 'date = duration')

  call expect(xios_date(2000, 1, 31, 23, 59, 59) < xios_date(2000, 2, 1, 0, 0, 0), '<')
  call expect(xios_date(2000, 2, 1, 0, 0, 0) <= xios_date(2000, 2, 1, 0, 0, 0), '<=')
  call expect(xios_date(2001, 1, 1, 0, 0, 0) > xios_date(2000, 12, 31, 0, 0, 0), '>')
  call expect(xios_date(2001, 1, 1, 0, 0, 0) >= xios_date(2001, 1, 1, 0, 0, 0), '>=')
  call expect(xios_date(2001, 1, 1, 0, 0, 0) /= xios_date(2001, 1, 1, 0, 0, 1), '/=')
  call expect(.not. (xios_date(2001, 1, 1, 0, 0, 0) < xios_date(2000, 12, 31, 0, 0, 0)), 'not <')

  call expect(xios_get_year_length_in_seconds(2000) == 366 * 86400, 'gregorian 2000: 366 days')
  call expect(xios_get_year_length_in_seconds(1900) == 365 * 86400, 'gregorian 1900: 365 days')
  call expect(xios_get_day_length_in_seconds() == 86400, 'day length')
  date = xios_date(2000, 3, 1, 0, 0, 0)
  call expect(xios_get_year_length_in_seconds(date%year) == 31622400, 'year length of date%year')
  call expect(xios_date_get_second_of_year(date) == (31 + 29) * 86400, 'second of year')
  call expect(xios_date_convert_to_seconds(date) == (1 + 31 + 29) * 86400_c_long_long, &
              'seconds since the time origin')
  call expect(near(xios_date_get_day_of_year(xios_date(2000, 2, 1, 12, 0, 0)), 31.5_c_double), &
              'day of year')
  call expect(near(xios_date_get_fraction_of_year(xios_date(2000, 7, 2, 0, 0, 0)), &
                    183.0_c_double / 366.0_c_double), 'fraction of a leap year (182 + 1 days)')
  call expect(xios_date_get_second_of_day(xios_date(2000, 5, 5, 13, 25, 10)) == 48310, 'second of day')
  call expect(near(xios_date_get_fraction_of_day(xios_date(2000, 5, 5, 18, 0, 0)), 0.75_c_double), &
              'fraction of day')

  call xios_date_convert_to_string(xios_date(2000, 2, 29, 6, 5, 4), text)
  call expect(text == '2000-02-29 06:05:04', 'date to string: ' // trim(text))
  call xios_duration_convert_to_string(dtime, text)
  call expect(text == '1800s 0.5ts', 'duration to string: ' // trim(text))
  call xios_duration_convert_to_string(xios_duration(), text)
  call expect(text == '0s', 'zero duration to string: ' // trim(text))
  call expect(xios_duration_convert_from_string('1d12h') == xios_day + 12 * xios_hour, &
              'duration from string')
  call expect(xios_duration_convert_from_string('0.5h 2ts') == 0.5 * xios_hour + 2 * xios_timestep, &
              'real duration from string')
  call expect_date(xios_date_convert_from_string('2000-02-29 06:00:00'), xios_date(2000, 2, 29, 6, 0, 0), &
                   'date from string')
  print *, 'gregorian date: ', start   ! XIOS's PRINT *, date: the six components

  ! ---- noleap: 31 January + 1 month, no 29 February, 365 days ----
  call use_month_day_year('noleap', xios_date(2000, 1, 31, 0, 0, 0), xios_date(2000, 2, 28, 0, 0, 0), &
                          xios_date(2000, 2, 28, 0, 0, 0), xios_date(2000, 3, 1, 0, 0, 0), 365)
  call expect(xios_date_get_second_of_year(xios_date(2000, 3, 1, 0, 0, 0)) == (31 + 28) * 86400, &
              'noleap second of year')
  call expect(near(xios_date_get_fraction_of_year(xios_date(2000, 7, 2, 0, 0, 0)), &
                    182.0_c_double / 365.0_c_double), 'noleap fraction of year')

  ! ---- 360_day: 30 February, a year of 12 months of 30 days ----
  call use_month_day_year('360_day', xios_date(2000, 1, 30, 0, 0, 0), xios_date(2000, 2, 30, 0, 0, 0), &
                          xios_date(2000, 12, 30, 0, 0, 0), xios_date(2001, 1, 1, 0, 0, 0), 360)
  call expect(near(xios_date_get_fraction_of_year(xios_date(2000, 7, 1, 0, 0, 0)), 0.5_c_double), &
              '360_day: 1 July is half the year')
  call expect(near(xios_date_get_day_of_year(xios_date(2000, 3, 1, 6, 0, 0)), 60.25_c_double), &
              '360_day: day of year')

  if (failures > 0) then
    print '(i0, a)', failures, ' xios date checks failed'
    error stop 1
  end if
  print '(a)', 'xios date tests passed'

contains

  subroutine use_calendar(type, origin)
    character(len=*), intent(in) :: type
    type(xios_date), intent(in) :: origin
    if (set_calendar(type // c_null_char, xios_date(2000, 1, 1, 0, 0, 0), 1800_c_int, origin) /= 0) then
      print '(a)', 'cannot set the ' // type // ' calendar'
      error stop 2
    end if
  end subroutine use_calendar

  !> Calendar `type` (time origin 2000-01-01): `month_from` + 1 month is
  !> `month_to`, `day_from` + 1 day is `day_to`, and 2000 has `days` days.
  subroutine use_month_day_year(type, month_from, month_to, day_from, day_to, days)
    character(len=*), intent(in) :: type
    type(xios_date), intent(in) :: month_from, month_to, day_from, day_to
    integer, intent(in) :: days
    call use_calendar(type, xios_date(2000, 1, 1, 0, 0, 0))
    call expect_date(month_from + xios_month, month_to, type // ': + 1 month')
    call expect_date(day_from + xios_day, day_to, type // ': + 1 day')
    call expect(xios_get_year_length_in_seconds(2000) == days * 86400, type // ': days of 2000')
  end subroutine use_month_day_year

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(a)', 'FAILED: ' // what
    end if
  end subroutine expect

  subroutine expect_date(got, want, what)
    type(xios_date), intent(in) :: got, want
    character(len=*), intent(in) :: what
    character(len=32) :: g, w
    call xios_date_convert_to_string(got, g)
    call xios_date_convert_to_string(want, w)
    call expect(got == want, what // ': ' // trim(g) // ' instead of ' // trim(w))
  end subroutine expect_date

  logical function near(a, b)
    real(c_double), intent(in) :: a, b
    near = abs(a - b) <= 1.0e-12_c_double * max(1.0_c_double, abs(b))
  end function near

end program date_test
