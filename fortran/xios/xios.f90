! XIOS's Fortran interface, `USE xios`, over xios_lite: a model written for
! XIOS 2.5 or 3 compiles unchanged (docs/fortran.md has the table of
! routines). The attribute routines (xios_set_<kind>_attr & co.), the
! handles, xios_add_child and xios_send_field come from the generated
! module xios_attributes; the dates and durations from xios_date_mod.
!
! Two ways to be a client:
!   - one per process, as with XIOS: xios_initialize, then
!     xios_context_initialize(id, comm) with the model's communicator;
!   - one per OpenMP thread (endpoints): xios_initialize once per process,
!     then every thread calls xios_context_initialize(id, ep) with its own
!     endpoint (type(ep_comm) from ep_mod's ep_create_endpoints); the
!     contexts and the current context are then the thread's own.
! A failure prints its message and stops (error stop), as XIOS aborts.
module xios
  use, intrinsic :: iso_c_binding
  use xios_date_mod
  use xios_handles
  use xios_attributes
  use ep_mod, only: ep_comm
  implicit none
  private

  ! Everything the three modules export, as XIOS's module does.
  public :: xios_context, xios_field, xios_fieldgroup, xios_file, xios_filegroup
  public :: xios_domain, xios_domaingroup, xios_axis, xios_axisgroup, xios_scalar
  public :: xios_scalargroup, xios_grid, xios_gridgroup, xios_variable, xios_variablegroup
  public :: xios_calendar_wrapper, xios_zoom_domain, xios_zoom_axis, xios_extract_domain
  public :: xios_extract_axis
  public :: xios_initialize, xios_finalize
  public :: xios_context_initialize, xios_context_finalize, xios_close_context_definition
  public :: xios_set_current_context, xios_get_current_context, xios_solve_inheritance
  public :: xios_update_calendar, xios_field_is_active, xios_getvar, xios_get_variable
  public :: xios_define_calendar, xios_set_timestep, xios_get_timestep, xios_get_calendar_type
  public :: xios_get_time_origin, xios_get_start_date, xios_set_time_origin
  public :: xios_set_start_date, xios_is_valid_context, xios_get_context_handle
  public :: xios_last_error
  ! The dates and durations (xios_date_mod).
  include 'xios_date_public.inc'
  ! The attribute routines, handles, add_child and send_field (xios_attributes).
  include "xios_attributes_public.inc"

  interface xios_context_initialize
    module procedure xios_context_initialize_comm, xios_context_initialize_ep
  end interface xios_context_initialize

  ! xios_get_handle also names contexts (the other kinds: xios_attributes).
  interface xios_get_handle
    module procedure xios_get_context_handle
  end interface xios_get_handle
  public :: xios_get_handle

  interface xios_getvar
    module procedure xios_getvar_int, xios_getvar_real8, xios_getvar_real4, &
      xios_getvar_logical, xios_getvar_string
  end interface xios_getvar
  interface xios_get_variable
    module procedure xios_getvar_int, xios_getvar_real8, xios_getvar_real4, &
      xios_getvar_logical, xios_getvar_string
  end interface xios_get_variable

  ! The C functions of xios_lite/xios.h that this module calls (interface
  ! bodies written at build time from xios_c_calls.txt).
  include 'xios_c_calls.inc'

contains

  ! The routines that pass their arguments straight to xios_lite's C call
  ! (xios_finalize, xios_close_context_definition, xios_context_finalize,
  ! xios_set_timestep, xios_get/set_time_origin, xios_get/set_start_date),
  ! written at build time from the entries marked `->` in xios_c_calls.txt.
  include 'xios_c_wrappers.inc'

  ! ---- the process ----

  !> XIOS's xios_initialize: collective over MPI_COMM_WORLD, one thread per
  !> process. return_comm gets the model's processes (without the servers).
  subroutine xios_initialize(client_id, local_comm, return_comm)
    character(len=*), intent(in) :: client_id
    integer, optional, intent(in) :: local_comm
    integer, optional, intent(out) :: return_comm
    integer(c_int), target :: local
    integer(c_int) :: comm
    if (present(local_comm)) then
      local = int(local_comm, c_int)
      call xios_check_(cxios_init_client(client_id, len(client_id), c_loc(local), comm))
    else
      call xios_check_(cxios_init_client(client_id, len(client_id), c_null_ptr, comm))
    end if
    if (present(return_comm)) return_comm = int(comm)
  end subroutine xios_initialize

  ! ---- contexts ----

  subroutine xios_context_initialize_comm(context_id, comm)
    character(len=*), intent(in) :: context_id
    integer, intent(in) :: comm
    call xios_check_(cxios_context_initialize(context_id, len(context_id), int(comm, c_int)))
  end subroutine xios_context_initialize_comm

  subroutine xios_context_initialize_ep(context_id, comm)
    character(len=*), intent(in) :: context_id
    type(ep_comm), intent(in) :: comm
    call xios_check_(cxios_context_initialize_ep(context_id, len(context_id), comm%handle))
  end subroutine xios_context_initialize_ep

  subroutine xios_get_context_handle(id, handle)
    character(len=*), intent(in) :: id
    type(xios_context), intent(out) :: handle
    handle%daddr = xios_handle_of_('context', id)
  end subroutine xios_get_context_handle

  logical function xios_is_valid_context(id)
    character(len=*), intent(in) :: id
    xios_is_valid_context = xios_valid_('context', id)
  end function xios_is_valid_context

  subroutine xios_set_current_context(context, withswap)
    type(xios_context), intent(in) :: context
    logical, optional, intent(in) :: withswap
    if (present(withswap)) continue
    call xios_check_(cxios_context_set_current(context%daddr))
  end subroutine xios_set_current_context

  subroutine xios_get_current_context(context)
    type(xios_context), intent(out) :: context
    call xios_check_(cxios_context_get_current(context%daddr))
  end subroutine xios_get_current_context

  !> Inheritance is solved at close_context_definition; nothing to do before.
  subroutine xios_solve_inheritance()
  end subroutine xios_solve_inheritance

  ! ---- the calendar ----

  subroutine xios_define_calendar(type, timestep, start_date, time_origin, day_length, &
      month_lengths, year_length, leap_year_month, leap_year_drift, leap_year_drift_offset, &
      leap_year_month_offset)
    character(len=*), intent(in) :: type
    type(xios_duration), optional, intent(in) :: timestep
    type(xios_date), optional, intent(in) :: start_date, time_origin
    integer, optional, intent(in) :: day_length, year_length, leap_year_month
    integer, optional, intent(in) :: month_lengths(:)
    real(c_double), optional, intent(in) :: leap_year_drift, leap_year_drift_offset
    integer, optional, intent(in) :: leap_year_month_offset
    type(xios_calendar_wrapper) :: cal
    call xios_get_calendar_wrapper_handle('calendar', cal)
    call xios_set_calendar_wrapper_attr_hdl(cal, type=type, timestep=timestep, &
      start_date=start_date, time_origin=time_origin, day_length=day_length, &
      month_lengths=month_lengths, year_length=year_length, leap_year_month=leap_year_month, &
      leap_year_drift=leap_year_drift, leap_year_drift_offset=leap_year_drift_offset)
    if (present(leap_year_month_offset)) continue
  end subroutine xios_define_calendar

  subroutine xios_get_timestep(timestep)
    type(xios_duration), intent(out) :: timestep
    type(xios_calendar_wrapper) :: cal
    timestep = xios_duration(0, 0, 0, 0, 0, 0, 0)
    call xios_get_calendar_wrapper_handle('calendar', cal)
    call xios_get_calendar_wrapper_attr_hdl(cal, timestep=timestep)
  end subroutine xios_get_timestep

  subroutine xios_get_calendar_type(calendar_type)
    character(len=*), intent(out) :: calendar_type
    call xios_check_(cxios_get_calendar_type(calendar_type, len(calendar_type)))
  end subroutine xios_get_calendar_type

  ! ---- the time loop ----

  subroutine xios_update_calendar(step)
    integer, intent(in) :: step
    call xios_check_(cxios_update_calendar(int(step, c_int)))
  end subroutine xios_update_calendar

  !> Whether a file needs the field (directly, through a reference or an
  !> expression): NEMO's iom_use. After close_context_definition.
  logical function xios_field_is_active(field_id, at_current_timestep)
    character(len=*), intent(in) :: field_id
    logical, optional, intent(in) :: at_current_timestep
    integer(c_int) :: active
    if (present(at_current_timestep)) continue
    call xios_check_(cxios_field_is_active_checked(field_id, len(field_id), active))
    xios_field_is_active = active /= 0
  end function xios_field_is_active

  ! ---- <variable>s of the context (xios_getvar) ----

  logical function getvar_(name, type, value, value_len)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: type, value_len
    type(c_ptr), intent(in) :: value
    integer(c_int) :: found
    call xios_check_(cxios_getvar(name, len(name), type, value, value_len, found))
    getvar_ = found /= 0
  end function getvar_

  ! xios_getvar_int, _real8, _real4 and _logical: one procedure a type, as
  ! the generic needs, written at build time by generate_typed_procedures.py.
  include 'xios_getvar_typed.inc'

  logical function xios_getvar_string(name, value)
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: value
    character(kind=c_char), allocatable, target :: chars(:)
    integer :: i
    allocate (chars(max(1, len(value))))
    chars = ' '
    xios_getvar_string = getvar_(name, cxios_string, c_loc(chars), int(len(value), c_int))
    do i = 1, len(value)
      value(i:i) = chars(i)
    end do
  end function xios_getvar_string

end module xios
