! Fortran interface of xios_lite (over the C interface xios_lite/xios_lite.h):
! the calls a model makes. See docs/xios_lite.md, "Fortran and C interface".
!
!   call xios_lite_split_last_ranks(MPI_COMM_WORLD, 1, world)   ! last rank serves
!   if (xios_lite_is_server(world)) then
!     call xios_lite_run_server(world, 'iodef.xml')
!   else
!     ... endpoints over xios_lite_local_comm(world), one per OpenMP thread ...
!     !$omp parallel: each thread with its own comm and client
!       call xios_lite_initialise(client, comm, world, 'iodef.xml')
!       call xios_lite_set_domain_block(client, 'atm', ibegin, ni, jbegin, nj)
!       call xios_lite_close_definition(client)
!       do step = 1, n
!         call xios_lite_update_calendar(client, step)
!         call xios_lite_send_field(client, 'tas', tas)      ! tas(ni, nj)
!         call xios_lite_send_field(client, 'ta', ta)        ! ta(ni, nj, nk)
!       end do
!       call xios_lite_finalise(client)
!   end if
!   call xios_lite_free_world(world)
!
! Layout: xios_lite stores a block ni fastest, then nj, then levels. A Fortran
! array a(ni, nj) or a(ni, nj, nk) is column-major, so a(i, j, k) already lies
! where xios_lite expects it: arrays are passed without any copy or transpose
! (a non-contiguous section is copied into a contiguous temporary first).
! Block indices (ibegin, jbegin) are 0-based global offsets, as in XIOS.
!
! Threads: each OpenMP thread owns its ep_comm and its xios_lite_client and
! calls with them; initialise, close_definition and finalise are collective
! over every endpoint. Errors: as in ep_mod (optional ierr, or stop with the
! message); trim(xios_lite_last_error()) gives the calling thread's last message.
module xios_lite_mod
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_float, c_ptr, &
                                         c_null_ptr, c_char, c_null_char, c_loc
  use ep_mod, only: ep_comm, ep_c_string, ep_report_error, EP_MAX_ERROR_STRING, ep_c_query, &
                    ep_c_release, ep_c_call
  implicit none
  private

  public :: xios_lite_world, xios_lite_client, xios_lite_split_last_ranks, xios_lite_split_world, &
            xios_lite_is_server, xios_lite_local_comm, xios_lite_free_world, xios_lite_run_server, &
            xios_lite_initialise, xios_lite_set_domain_block, xios_lite_set_domain_mask, &
            xios_lite_set_domain_attr, xios_lite_set_axis_attr, xios_lite_define_calendar, &
            xios_lite_set_timestep, xios_lite_close_definition, &
            xios_lite_update_calendar, xios_lite_send_field, xios_lite_recv_field, &
            xios_lite_finalise, &
            xios_lite_last_error

  !> The output library's return codes of xios_lite/xios_lite.h, beside ep_mod's EP_ERR_*
  !> (tests/support/check_fortran_codes.cmake checks that the two lists agree).
  integer, parameter, public :: XIOS_LITE_ERR_IO = 12, XIOS_LITE_ERR_CONFIG = 13
  integer, parameter, public :: XIOS_LITE_ROLE_CLIENT = 0, XIOS_LITE_ROLE_SERVER = 1
  integer, parameter, public :: XIOS_LITE_MODE_ENDPOINTS = 0, XIOS_LITE_MODE_FUNNELED = 1, &
                                XIOS_LITE_MODE_SYNCHRONOUS = 2

  !> This process's role and the communicators of the roles. Opaque.
  type :: xios_lite_world
    type(c_ptr) :: handle = c_null_ptr
  end type xios_lite_world

  !> One thread's output client. Opaque.
  type :: xios_lite_client
    type(c_ptr) :: handle = c_null_ptr
  end type xios_lite_client

  !> Sends a 2-D (ni, nj), 3-D (ni, nj, nk) or 4-D (ni, nj, n1, n2) real(8)
  !> or real(4) array (the file's precision is the field's `prec`, whichever
  !> the model sends); with the domain's data_* attributes, the model's own
  !> array of rank 1 to 4 (halo'd, field(0:ni+1, -1:nj+2, nk), or compressed,
  !> field(nb_pt, nk)). Another rank is refused at run time.
  interface xios_lite_send_field
    module procedure send_field_r8, send_field_r4
  end interface xios_lite_send_field

  !> Receives a real(8) array of the shapes send_field takes from a file in
  !> read mode (xios_recv_field).
  interface xios_lite_recv_field
    module procedure recv_field_r8
  end interface xios_lite_recv_field
  !> Room for the extents of any array (Fortran's largest rank).
  integer, parameter :: max_rank = 15

  !> The shapes of the C functions bound below (besides ep_mod's ep_c_query,
  !> ep_c_release and ep_c_call); each C function of a shape is bound once, as
  !> procedure(<shape>), bind(C, name="<C name>") :: <Fortran name>.
  !> Functions with an integer passed by value keep an interface body each:
  !> through such a declaration gfortran 12 passed that integer wrongly
  !> (xios_lite_send_field saw a rank of 11093792).
  abstract interface
    !> int f(handle, const char* text).
    integer(c_int) function c_text_call(handle, text) bind(C)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: text(*)
    end function c_text_call
  end interface

  procedure(ep_c_query), bind(C, name="xios_lite_world_role") :: c_role
  procedure(ep_c_query), bind(C, name="xios_lite_world_local_f") :: c_local
  procedure(ep_c_release), bind(C, name="xios_lite_world_free") :: c_free_world
  procedure(ep_c_release), bind(C, name="xios_lite_finalise") :: c_finalise
  procedure(ep_c_call), bind(C, name="xios_lite_close_definition") :: c_close
  procedure(c_text_call), bind(C, name="xios_lite_set_timestep") :: c_timestep
  procedure(c_text_call), bind(C, name="xios_lite_run_server") :: c_run_server

  ! The functions with an integer by value and the others of no shape above:
  ! interface bodies written at build time from fortran/xios_lite_c_calls.txt.
  include 'xios_lite_mod_c_calls.inc'

contains

  !> split_world with the last `n_servers` ranks of `comm` serving. Collective
  !> over `comm`, one thread per process.
  subroutine xios_lite_split_last_ranks(comm, n_servers, world, ierr)
    integer, intent(in) :: comm, n_servers
    type(xios_lite_world), intent(out) :: world
    integer, intent(out), optional :: ierr
    call check(int(c_split_last(int(comm, c_int), int(n_servers, c_int), world%handle)), ierr)
  end subroutine xios_lite_split_last_ranks

  !> split_world with an explicit role (MPMD launches: XIOS_LITE_ROLE_CLIENT).
  !> context: several contexts in one run, the context this client process
  !> writes (servers leave it out); see split_world in xios_lite/server.hpp.
  subroutine xios_lite_split_world(comm, role, world, ierr, context)
    integer, intent(in) :: comm, role
    type(xios_lite_world), intent(out) :: world
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: context
    if (present(context)) then
      call check(int(c_split_context(int(comm, c_int), int(role, c_int), &
                                     trim(context) // c_null_char, world%handle)), ierr)
    else
      call check(int(c_split(int(comm, c_int), int(role, c_int), world%handle)), ierr)
    end if
  end subroutine xios_lite_split_world

  logical function xios_lite_is_server(world)
    type(xios_lite_world), intent(in) :: world
    integer(c_int) :: role
    role = XIOS_LITE_ROLE_CLIENT
    call check(int(c_role(world%handle, role)))
    xios_lite_is_server = role == XIOS_LITE_ROLE_SERVER
  end function xios_lite_is_server

  !> The Fortran communicator of this role's processes (create endpoints over it).
  integer function xios_lite_local_comm(world)
    type(xios_lite_world), intent(in) :: world
    integer(c_int) :: local
    local = 0
    call check(int(c_local(world%handle, local)))
    xios_lite_local_comm = int(local)
  end function xios_lite_local_comm

  !> free_world: collective over the processes of the role.
  subroutine xios_lite_free_world(world, ierr)
    type(xios_lite_world), intent(inout) :: world
    integer, intent(out), optional :: ierr
    call check(int(c_free_world(world%handle)), ierr)
  end subroutine xios_lite_free_world

  !> Serves until every client has finalised (server processes).
  subroutine xios_lite_run_server(world, config_path, ierr)
    type(xios_lite_world), intent(in) :: world
    character(len=*), intent(in) :: config_path
    integer, intent(out), optional :: ierr
    call check(int(c_run_server(world%handle, trim(config_path) // c_null_char)), ierr)
  end subroutine xios_lite_run_server

  !> Creates this thread's client. Collective over every endpoint of `comm`
  !> (and the servers). `mode` defaults to XIOS_LITE_MODE_ENDPOINTS.
  subroutine xios_lite_initialise(client, comm, world, config_path, mode, ierr)
    type(xios_lite_client), intent(out) :: client
    type(ep_comm), intent(in) :: comm
    type(xios_lite_world), intent(in) :: world
    character(len=*), intent(in) :: config_path
    integer, intent(in), optional :: mode
    integer, intent(out), optional :: ierr
    integer(c_int) :: m
    m = XIOS_LITE_MODE_ENDPOINTS
    if (present(mode)) m = int(mode, c_int)
    call check(int(c_create(comm%handle, world%handle, trim(config_path) // c_null_char, m, &
                            client%handle)), ierr)
  end subroutine xios_lite_initialise

  !> This client's block of `domain_id`: ni x nj points from the 0-based
  !> global offsets (ibegin, jbegin). Local.
  subroutine xios_lite_set_domain_block(client, domain_id, ibegin, ni, jbegin, nj, ierr)
    type(xios_lite_client), intent(in) :: client
    character(len=*), intent(in) :: domain_id
    integer, intent(in) :: ibegin, ni, jbegin, nj
    integer, intent(out), optional :: ierr
    call check(int(c_set_block(client%handle, trim(domain_id) // c_null_char, int(ibegin, c_int), &
                               int(ni, c_int), int(jbegin, c_int), int(nj, c_int))), ierr)
  end subroutine xios_lite_set_domain_block

  !> Masks points of this client's block of `domain_id`: valid(ni, nj) of the
  !> block, .false. = masked (land): left out of every temporal operation,
  !> _FillValue in the files. Local, after xios_lite_set_domain_block.
  subroutine xios_lite_set_domain_mask(client, domain_id, valid, ierr)
    type(xios_lite_client), intent(in) :: client
    character(len=*), intent(in) :: domain_id
    logical, intent(in) :: valid(:, :)
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable :: flags(:)
    flags = reshape(merge(1_c_int, 0_c_int, valid), [size(valid)])
    call check(int(c_set_mask(client%handle, trim(domain_id) // c_null_char, flags, &
                              int(size(valid, 1), c_int), int(size(valid, 2), c_int))), ierr)
  end subroutine xios_lite_set_domain_mask

  !> xios_lite_set_domain_attr(client, domain_id, <attribute>=...) and
  !> xios_lite_set_axis_attr(client, axis_id, <attribute>=...): XIOS's
  !> xios_set_domain_attr and xios_set_axis_attr, one optional argument per
  !> attribute the model sets, named as in XIOS, then ierr. Generated at
  !> build time from xios_lite/xios_attributes.def (its read_model,
  !> read_mask and `model` lines) by fortran/generate_lite_attributes.py;
  !> the arguments these routines had before keep their order.
  !> Domain: sizes and type are global; ibegin/ni/jbegin/nj (0-based) this
  !> client's block; the arrays this block's values: lonvalue_1d(ni),
  !> latvalue_1d(nj) (rectilinear), lonvalue_2d(ni, nj), latvalue_2d(ni, nj)
  !> (curvilinear), bounds_lon_1d(2, ni), bounds_lat_1d(2, nj),
  !> bounds_lon_2d(nvertex, ni, nj), bounds_lat_2d(nvertex, ni, nj),
  !> area(ni, nj), mask_1d(ni*nj) or mask_2d(ni, nj) (.false. = masked). How
  !> the model's arrays hold the block, as in XIOS: data_dim (1 or 2),
  !> data_ibegin, data_ni, data_jbegin, data_nj (a halo: negative begins),
  !> and for a compressed array data_n_index values at the points
  !> data_i_index(:) (and data_j_index(:)), 0-based from data_ibegin
  !> (data_jbegin).
  !> Axis: n_glo, value(n_glo), bounds(2, n_glo), the text attributes; begin
  !> and n (0-based) this client's part of an axis that stands alone in a
  !> grid; data_n, data_begin and data_index are refused (EP_ERR_ARGUMENT,
  !> naming the attribute). Every client that sets a global attribute sets
  !> the same value. The first refused attribute stops the call: its code in
  !> ierr, its message in xios_lite_last_error().
  !> Local (no communication); each thread with its own client; before
  !> close_definition.
  include 'xios_lite_attributes.inc'

  !> XIOS's xios_define_calendar: type ('Gregorian', 'NoLeap', 'D360',
  !> 'AllLeap', 'Julian', 'user_defined'), start_date and time_origin
  !> ('2000-01-01 00:00:00', an offset '+ 1d' allowed), timestep (a
  !> duration, '1800s'), and a user_defined calendar's day_length (s) and
  !> month_lengths (days). Every argument optional. Local.
  subroutine xios_lite_define_calendar(client, type, start_date, time_origin, timestep, &
                                       day_length, month_lengths, ierr)
    type(xios_lite_client), intent(in) :: client
    character(len=*), intent(in), optional :: type, start_date, time_origin, timestep
    integer, intent(in), optional :: day_length
    integer, intent(in), optional :: month_lengths(:)
    integer, intent(out), optional :: ierr
    integer :: rc
    rc = int(c_calendar(client%handle, text(type), text(start_date), text(time_origin), &
                        text(timestep)))
    if (rc == 0 .and. (present(day_length) .or. present(month_lengths))) then
      if (.not. (present(day_length) .and. present(month_lengths))) then
        rc = int(c_calendar_user(client%handle, 0_c_int64_t, [0_c_int], 0_c_int))
      else
        rc = int(c_calendar_user(client%handle, int(day_length, c_int64_t), &
                                 int(month_lengths, c_int), int(size(month_lengths), c_int)))
      end if
    end if
    call check(rc, ierr)
  contains
    function text(value) result(out)
      character(len=*), intent(in), optional :: value
      character(len=:), allocatable :: out
      if (present(value)) then
        out = trim(value) // c_null_char
      else
        out = c_null_char
      end if
    end function text
  end subroutine xios_lite_define_calendar

  !> XIOS's xios_set_timestep: the timestep as a duration ('1800s', '1h')
  !> or in seconds. Local; before close_definition.
  subroutine xios_lite_set_timestep(client, duration, seconds, ierr)
    type(xios_lite_client), intent(in) :: client
    character(len=*), intent(in), optional :: duration
    integer, intent(in), optional :: seconds
    integer, intent(out), optional :: ierr
    character(len=32) :: text
    if (present(duration)) then
      text = duration
    else if (present(seconds)) then
      write (text, '(i0, "s")') seconds
    else
      text = ''
    end if
    call check(int(c_timestep(client%handle, trim(text) // c_null_char)), ierr)
  end subroutine xios_lite_set_timestep

  !> Assembles and completes the definitions, checks every block and tells
  !> the servers. Collective.
  subroutine xios_lite_close_definition(client, ierr)
    type(xios_lite_client), intent(in) :: client
    integer, intent(out), optional :: ierr
    call check(int(c_close(client%handle)), ierr)
  end subroutine xios_lite_close_definition

  !> Starts timestep `step` (1, 2, ...).
  subroutine xios_lite_update_calendar(client, step, ierr)
    type(xios_lite_client), intent(in) :: client
    integer, intent(in) :: step
    integer, intent(out), optional :: ierr
    call check(int(c_update(client%handle, int(step, c_int64_t))), ierr)
  end subroutine xios_lite_update_calendar

  ! send_field and recv_field take an array of any rank and pass its rank
  ! and extents on: the C layer checks them against the field's grid
  ! (rank 1 to 4; the client's block, or the model's array as the domain's
  ! data_* give it) and refuses any other with the call, the EP rank and
  ! the shape. The array is contiguous (a section is copied in, and out for
  ! recv_field).

  ! send_field_r8, send_field_r4 and recv_field_r8, written at build time
  ! from one template by fortran/generate_lite_fields.py.
  include 'xios_lite_fields.inc'

  !> Flushes, waits for the servers, prints the report. Collective; the
  !> client is released (also on failure).
  subroutine xios_lite_finalise(client, ierr)
    type(xios_lite_client), intent(inout) :: client
    integer, intent(out), optional :: ierr
    call check(int(c_finalise(client%handle)), ierr)
  end subroutine xios_lite_finalise

  !> The calling thread's last error message of the xios_lite C interface.
  !> Blank padded to EP_MAX_ERROR_STRING (use trim()); a fixed length for the
  !> reason given at ep_last_error.
  function xios_lite_last_error() result(message)
    character(len=EP_MAX_ERROR_STRING) :: message
    call ep_c_string(c_last_error(), message)
  end function xios_lite_last_error

  subroutine check(rc, ierr)
    integer, intent(in) :: rc
    integer, intent(out), optional :: ierr
    if (rc /= 0) then
      call ep_report_error(rc, xios_lite_last_error(), ierr)
    else if (present(ierr)) then
      ierr = 0
    end if
  end subroutine check

end module xios_lite_mod
