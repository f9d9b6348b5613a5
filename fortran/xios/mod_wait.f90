! The waiting helpers XIOS's test programs use beside `USE xios`
! (init_wait, wait_us): a model's compute phase stands in as a sleep, so
! that output overlaps it as in a real run.
module mod_wait
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  private
  public :: init_wait, wait_us

  interface
    integer(c_int) function c_usleep(us) bind(C, name="usleep")
      import :: c_int
      integer(c_int), value :: us
    end function
  end interface

contains

  !> Kept for XIOS's programs: nothing to prepare here.
  subroutine init_wait()
  end subroutine init_wait

  !> Sleeps `us` microseconds (the caller's thread only).
  subroutine wait_us(us)
    integer, intent(in) :: us
    integer(c_int) :: rc
    if (us <= 0) return
    rc = c_usleep(int(us, c_int))
  end subroutine wait_us

end module mod_wait
