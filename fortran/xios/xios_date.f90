! XIOS's dates and durations for Fortran models, under XIOS's own names
! (module xios re-exports them; a model's code compiles unchanged):
!
!   type(xios_date) :: date
!   type(xios_duration) :: dtime
!   dtime%second = 3600
!   date = xios_date(2000, 01, 01, 00, 00, 00) + 3 * (0.5 * dtime + xios_timestep)
!   if (date - 2.5 * xios_hour < start) ...
!   print *, xios_date_get_day_of_year(date), xios_get_year_length_in_seconds(date%year)
!
! The types have XIOS's layout (bind(C)): a date is six integers, a duration
! seven reals, so fractions of hours or days are durations. Arithmetic on
! durations is done here, component by component, as in XIOS. Whatever needs a
! calendar (date + duration, date - date, the day of the year, year lengths,
! seconds since the time origin, reading a date) calls the C functions of
! xios_lite/xios_date.h, which use the calling thread's current context's
! calendar; date comparisons need none (field by field, which for valid dates
! is every calendar's order).
!
! Errors: XIOS's functions have no ierr, so a failure (no calendar yet, an
! invalid date, a fraction of a month added to a date, a string too short)
! prints `error <code>: <message>` on standard error and stops with
! `error stop`, as ep_mod does without ierr.
!
! Threads: every routine reads only its arguments and the calling thread's
! current calendar; compiled with -frecursive, all OpenMP threads call them at
! once.
module xios_date_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_double, c_float, c_long_long, c_char, &
                                         c_null_char
  use ep_mod, only: ep_report_error, ep_last_error, EP_OK, EP_ERR_COUNT
  implicit none
  private

  include 'xios_date_public.inc'

  !> A date: year, month (1..), day (1..), hour, minute, second.
  type, bind(C) :: xios_date
    integer(c_int) :: year, month, day, hour, minute, second
  end type xios_date

  !> A duration: a sum of years, months, days, hours, minutes, seconds and
  !> timesteps, each a real (zero unless set).
  type, bind(C) :: xios_duration
    real(c_double) :: year = 0.0_c_double, month = 0.0_c_double, day = 0.0_c_double, &
                      hour = 0.0_c_double, minute = 0.0_c_double, second = 0.0_c_double, &
                      timestep = 0.0_c_double
  end type xios_duration

  real(c_double), parameter, private :: zero = 0.0_c_double, one = 1.0_c_double
  type(xios_duration), parameter :: xios_year = xios_duration(one, zero, zero, zero, zero, zero, zero)
  type(xios_duration), parameter :: xios_month = xios_duration(zero, one, zero, zero, zero, zero, zero)
  type(xios_duration), parameter :: xios_day = xios_duration(zero, zero, one, zero, zero, zero, zero)
  type(xios_duration), parameter :: xios_hour = xios_duration(zero, zero, zero, one, zero, zero, zero)
  type(xios_duration), parameter :: xios_minute = xios_duration(zero, zero, zero, zero, one, zero, zero)
  type(xios_duration), parameter :: xios_second = xios_duration(zero, zero, zero, zero, zero, one, zero)
  type(xios_duration), parameter :: xios_timestep = xios_duration(zero, zero, zero, zero, zero, zero, one)

  !> Room for any date or duration text of the C functions (a duration of
  !> seven components of at most 24 characters, a unit and a space each).
  integer, parameter :: text_room = 256

  interface operator(+)
    module procedure xios_duration_add, xios_date_add_duration
  end interface
  interface operator(-)
    module procedure xios_duration_sub, xios_duration_neg, xios_date_sub_duration, xios_date_sub
  end interface
  interface operator(*)
    module procedure real4_duration_mult, duration_real4_mult, real8_duration_mult, &
                     duration_real8_mult, int_duration_mult, duration_int_mult
  end interface
  !> xios_duration_mult(val, dur) or (dur, val): val * dur, val integer, real(4) or real(8).
  interface xios_duration_mult
    module procedure real4_duration_mult, duration_real4_mult, real8_duration_mult, &
                     duration_real8_mult, int_duration_mult, duration_int_mult
  end interface
  interface operator(==)
    module procedure xios_date_eq, xios_duration_eq
  end interface
  interface operator(/=)
    module procedure xios_date_neq, xios_duration_neq
  end interface
  interface operator(<)
    module procedure xios_date_lt
  end interface
  interface operator(<=)
    module procedure xios_date_le
  end interface
  interface operator(>)
    module procedure xios_date_gt
  end interface
  interface operator(>=)
    module procedure xios_date_ge
  end interface
  !> date = duration: the date 0000-01-01 00:00:00 + duration (as in XIOS).
  interface assignment(=)
    module procedure date_assign_duration
  end interface

  ! The C functions of xios_lite/xios_date.h (arguments by reference, results
  ! through the last argument, an EP_* code returned): interface bodies
  ! written at build time from xios_c_calls.txt.
  include 'xios_date_c_calls.inc'

contains

  ! ---- durations: component by component, no calendar ----

  function xios_duration_add(dur1, dur2) result(res)
    type(xios_duration), intent(in) :: dur1, dur2
    type(xios_duration) :: res
    res = xios_duration(dur1%year + dur2%year, dur1%month + dur2%month, dur1%day + dur2%day, &
                        dur1%hour + dur2%hour, dur1%minute + dur2%minute, &
                        dur1%second + dur2%second, dur1%timestep + dur2%timestep)
  end function xios_duration_add

  function xios_duration_sub(dur1, dur2) result(res)
    type(xios_duration), intent(in) :: dur1, dur2
    type(xios_duration) :: res
    res = xios_duration_add(dur1, scaled(-one, dur2))
  end function xios_duration_sub

  function xios_duration_neg(dur) result(res)
    type(xios_duration), intent(in) :: dur
    type(xios_duration) :: res
    res = scaled(-one, dur)
  end function xios_duration_neg

  ! real4/real8/int_duration_mult and duration_real4/real8/int_mult, the date
  ! comparisons xios_date_eq/neq/lt/le/gt/ge (one procedure a type or an
  ! operator, as the generics need), the conversions to and from text
  ! (xios_duration/date_convert_to_string, _from_string) and the functions
  ! that are one C call (date + duration, date - duration, date - date,
  ! order_of, the queries of a date or of the calendar: the lines of
  ! xios_date_functions.txt), written at build time by
  ! generate_typed_procedures.py over `scaled`, `check` and `from_c_text`.
  include 'xios_date_typed.inc'

  pure function scaled(val, dur) result(res)
    real(c_double), intent(in) :: val
    type(xios_duration), intent(in) :: dur
    type(xios_duration) :: res
    res = xios_duration(val * dur%year, val * dur%month, val * dur%day, val * dur%hour, &
                        val * dur%minute, val * dur%second, val * dur%timestep)
  end function scaled

  !> Every component equal (1 day /= 24 hours, as in XIOS).
  function xios_duration_eq(dur1, dur2) result(res)
    type(xios_duration), intent(in) :: dur1, dur2
    logical :: res
    integer(c_int) :: equal
    call check(c_duration_equal(dur1, dur2, equal))
    res = equal /= 0
  end function xios_duration_eq

  function xios_duration_neq(dur1, dur2) result(res)
    type(xios_duration), intent(in) :: dur1, dur2
    logical :: res
    res = .not. xios_duration_eq(dur1, dur2)
  end function xios_duration_neq

  ! ---- dates: in the calling thread's current calendar ----

  subroutine date_assign_duration(date, dur)
    type(xios_date), intent(out) :: date
    type(xios_duration), intent(in) :: dur
    date = xios_date_add_duration(xios_date(0, 1, 1, 0, 0, 0), dur)
  end subroutine date_assign_duration

  ! ---- helpers ----

  !> A failed C call (rc /= EP_OK) prints its message and stops.
  subroutine check(rc)
    integer(c_int), intent(in) :: rc
    if (rc /= EP_OK) call ep_report_error(int(rc), ep_last_error())
  end subroutine check

  !> Copies the NUL-terminated `buf` into `str`, blank padded; a text longer
  !> than `str` is an error (XIOS refuses it too), never cut silently.
  subroutine from_c_text(buf, str, caller)
    character(kind=c_char), intent(in) :: buf(:)
    character(len=*), intent(out) :: str
    character(len=*), intent(in) :: caller
    integer :: n, i
    n = 0
    do while (n < size(buf))
      if (buf(n + 1) == c_null_char) exit
      n = n + 1
    end do
    if (n > len(str)) then
      call ep_report_error(EP_ERR_COUNT, caller // ': the string is too short for the text')
    end if
    str = ''
    do i = 1, n
      str(i:i) = buf(i)
    end do
  end subroutine from_c_text

end module xios_date_mod
