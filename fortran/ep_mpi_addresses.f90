! The addresses of MPI's Fortran sentinels MPI_IN_PLACE and MPI_UNWEIGHTED
! (of `use mpi` and mpif.h, which share them) and MPI_STATUS_SIZE, asked once
! by the C glue of ep_mod (fortran/ep_fortran_glue.cpp) to recognise the
! sentinels when a Fortran caller passes them. Why here and not in C: MPI's
! C interface names MPI_F_STATUS_IGNORE but no Fortran MPI_IN_PLACE, and the
! symbols behind it differ between Open MPI and MPICH; `use mpi` names it in
! both.
subroutine ep_f_mpi_addresses(in_place, unweighted, status_size) &
    bind(C, name="ep_f_mpi_addresses")
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int
  use mpi, only: MPI_IN_PLACE, MPI_UNWEIGHTED, MPI_STATUS_SIZE
  implicit none
  type(c_ptr), intent(out) :: in_place, unweighted
  integer(c_int), intent(out) :: status_size
  interface
    type(c_ptr) function address_of(x) bind(C, name="ep_f_address_of")
      import :: c_ptr
      type(*), dimension(..), intent(in) :: x
    end function address_of
  end interface
  in_place = address_of(MPI_IN_PLACE)
  unweighted = address_of(MPI_UNWEIGHTED)
  status_size = MPI_STATUS_SIZE
end subroutine ep_f_mpi_addresses
