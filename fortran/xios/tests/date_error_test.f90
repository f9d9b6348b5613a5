! A date function called before any calendar exists stops the program with
! XIOS's kind of message instead of returning a wrong value: no ierr in XIOS's
! interface, so `error <code>: <message>` on standard error and error stop.
program date_error_test
  use xios_date_mod
  implicit none
  print '(i0)', xios_get_day_length_in_seconds()
  print '(a)', 'not stopped'
end program date_error_test
