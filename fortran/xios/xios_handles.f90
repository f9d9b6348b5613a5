! The handles of XIOS's Fortran interface and the bindings to its C layer
! (xios_lite/xios.h). XIOS's routines have no ierr: a failure prints the
! message (naming the XIOS call, the client's rank and the value) on standard
! error and stops with error stop, as XIOS aborts. Every OpenMP thread may
! call these at once (compiled with -frecursive, no saved state).
module xios_handles
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use xios_date_mod, only: xios_date, xios_duration
  implicit none
  private

  ! One handle type per element kind, as XIOS declares them.
  type, public :: xios_context
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_field
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_fieldgroup
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_file
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_filegroup
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_domain
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_domaingroup
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_axis
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_axisgroup
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_scalar
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_scalargroup
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_grid
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_gridgroup
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_variable
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_variablegroup
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_calendar_wrapper
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_zoom_domain
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_zoom_axis
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_extract_domain
    integer(kind=c_intptr_t) :: daddr = 0
  end type
  type, public :: xios_extract_axis
    integer(kind=c_intptr_t) :: daddr = 0
  end type

  ! The attribute types of xios_lite/xios.h (CXIOS_*).
  integer(c_int), parameter, public :: cxios_string = 0, cxios_bool = 1, cxios_int = 2, &
    cxios_double = 3, cxios_duration_type = 4, cxios_date_type = 5, cxios_int_1d = 6, &
    cxios_bool_1d = 7, cxios_bool_2d = 8, cxios_double_1d = 9, cxios_double_2d = 10, &
    cxios_double_3d = 11

  ! The longest message a failure prints.
  integer, parameter :: max_message = 4096

  ! The C functions of xios_lite/xios.h that this module calls (interface
  ! bodies written at build time from xios_c_calls.txt).
  include 'xios_handles_c_calls.inc'

  public :: cxios_write_data_k8, cxios_write_data_k4, cxios_read_data_k8
  public :: xios_check_, xios_last_error, xios_handle_of_, xios_valid_, xios_add_child_
  public :: xios_defined_
  ! The setters and getters of an attribute value: text here, the other
  ! types written by generate_interface.py over xios_set_value_ and
  ! xios_get_value_ (module xios_attributes).
  public :: xios_set_string_, xios_get_string_, xios_set_value_, xios_get_value_

contains

  ! The calling thread's last failure (fixed length: see docs/fortran.md on
  ! gfortran's deferred-length results and threads).
  function xios_last_error() result(message)
    character(len=max_message) :: message
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: p
    integer :: n, i
    message = ' '
    p = cxios_last_error()
    if (.not. c_associated(p)) return
    n = int(min(c_strlen(p), int(max_message, c_size_t)))
    call c_f_pointer(p, chars, [n])
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function xios_last_error

  ! XIOS stops on a failure: the message, then error stop (mpiexec ends the job).
  subroutine xios_check_(rc)
    integer(c_int), intent(in) :: rc
    if (rc /= 0) then
      write (error_unit, '(a, i0, a, a)') 'xios error ', rc, ': ', trim(xios_last_error())
      flush (error_unit)
      error stop 1
    end if
  end subroutine xios_check_

  function xios_handle_of_(kind, id) result(daddr)
    character(len=*), intent(in) :: kind, id
    integer(c_intptr_t) :: daddr
    call xios_check_(cxios_handle_create(kind // c_null_char, id, len(id), daddr))
  end function xios_handle_of_

  logical function xios_valid_(kind, id)
    character(len=*), intent(in) :: kind, id
    xios_valid_ = cxios_valid_id(kind // c_null_char, id, len(id))
  end function xios_valid_

  function xios_add_child_(parent, kind, id) result(child)
    integer(c_intptr_t), intent(in) :: parent
    character(len=*), intent(in) :: kind
    character(len=*), optional, intent(in) :: id
    integer(c_intptr_t) :: child
    if (present(id)) then
      call xios_check_(cxios_add_child(parent, kind // c_null_char, id, len(id), child))
    else
      call xios_check_(cxios_add_child(parent, kind // c_null_char, ' ', -1_c_int, child))
    end if
  end function xios_add_child_

  logical function xios_defined_(h, name)
    integer(c_intptr_t), intent(in) :: h
    character(len=*), intent(in) :: name
    xios_defined_ = cxios_is_defined_attr(h, name, len(name))
  end function xios_defined_

  ! ---- setters: the value at `value`, of attribute type `type` (cxios_*) ----

  subroutine xios_set_value_(h, name, type, value, rank, extents)
    integer(c_intptr_t), intent(in) :: h
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: type, rank
    type(c_ptr), intent(in) :: value
    integer(c_int64_t), intent(in) :: extents(:)
    call xios_check_(cxios_set_attr(h, name, len(name), type, value, rank, extents))
  end subroutine xios_set_value_

  subroutine xios_set_string_(h, name, value)
    integer(c_intptr_t), intent(in) :: h
    character(len=*), intent(in) :: name, value
    character(kind=c_char), allocatable, target :: chars(:)
    integer :: i
    allocate (chars(max(1, len(value))))
    do i = 1, len(value)
      chars(i) = value(i:i)
    end do
    call xios_set_value_(h, name, cxios_string, c_loc(chars), 1, [int(len(value), c_int64_t)])
  end subroutine xios_set_string_

  ! ---- getters: .true. when the attribute is defined (its value then at
  ! `value`); a value not defined leaves the argument as it is ----

  logical function xios_get_value_(h, name, type, value, rank, extents)
    integer(c_intptr_t), intent(in) :: h
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: type, rank
    type(c_ptr), intent(in) :: value
    integer(c_int64_t), intent(in) :: extents(:)
    integer(c_int) :: defined
    defined = 0
    call xios_check_(cxios_get_attr(h, name, len(name), type, value, rank, extents, defined))
    xios_get_value_ = defined /= 0
  end function xios_get_value_

  subroutine xios_get_string_(h, name, value)
    integer(c_intptr_t), intent(in) :: h
    character(len=*), intent(in) :: name
    character(len=*), intent(inout) :: value
    character(kind=c_char), allocatable, target :: chars(:)
    integer :: i
    allocate (chars(max(1, len(value))))
    if (xios_get_value_(h, name, cxios_string, c_loc(chars), 1, [int(len(value), c_int64_t)])) then
      do i = 1, len(value)
        value(i:i) = chars(i)
      end do
    end if
  end subroutine xios_get_string_

end module xios_handles
