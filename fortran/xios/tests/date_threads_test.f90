! Every OpenMP thread computes with xios_date_mod at once, each in its own
! calendar (as each model thread in its own context): odd threads noleap, even
! ones gregorian. A routine keeping state in static storage, or a calendar
! shared between threads, gives some thread another's answers.
! Prints "xios date threads agree", or stops with 1.
program date_threads_test
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char
  use omp_lib, only: omp_get_thread_num
  use xios_date_mod
  implicit none

  include 'date_test_calendar.inc'

  integer :: wrong

  wrong = 0
  !$omp parallel reduction(+:wrong)
  wrong = run(mod(omp_get_thread_num(), 2) == 1)
  !$omp end parallel
  if (wrong /= 0) then
    print '(i0, a)', wrong, ' wrong answers across the threads'
    error stop 1
  end if
  print '(a)', 'xios date threads agree'

contains

  !> Wrong answers of 2000 steps in a noleap or a gregorian calendar.
  integer function run(noleap)
    logical, intent(in) :: noleap
    type(xios_date) :: start, date
    character(len=32) :: text, want_text
    integer :: step, want_length
    start = xios_date(2000, 1, 31, 0, 0, 0)
    if (noleap) then
      if (set_calendar('noleap' // c_null_char, start, 3600_c_int, start) /= 0) error stop 2
      want_length = 365 * 86400
      want_text = '2000-02-28 00:00:00'
    else
      if (set_calendar('gregorian' // c_null_char, start, 3600_c_int, start) /= 0) error stop 2
      want_length = 366 * 86400
      want_text = '2000-02-29 00:00:00'
    end if
    run = 0
    do step = 1, 2000
      date = start + xios_month
      call xios_date_convert_to_string(date, text)
      if (text /= want_text) run = run + 1
      if (xios_get_year_length_in_seconds(2000) /= want_length) run = run + 1
      if (xios_date_convert_to_seconds(start + step * xios_timestep) /= step * 3600) run = run + 1
    end do
  end function run

end program date_threads_test
