#!/usr/bin/env python3
"""Writes the array transfers of module xios_lite_mod, which differ only by
the array's type, its intent and the C function they call: the specific
procedures of the generics xios_lite_send_field (real(8), real(4)) and
xios_lite_recv_field (real(8)), from one template.

Run by CMake at build time (fortran/CMakeLists.txt):
  generate_lite_fields.py <output.inc>
The output is included into xios_lite_mod.f90 after its `contains`.
"""
import sys

# (procedure, the array's Fortran type, its intent, the C function bound in
# xios_lite_mod.f90 (fortran/xios_lite_c_calls.txt), its documentation).
TRANSFERS = [
    ("send_field_r8", "real(c_double)", "in", "c_send",
     "field(ni, nj[, nk[, n2]]) or the model's own array, real(8)."),
    ("send_field_r4", "real(c_float)", "in", "c_send_float",
     "The same in single precision."),
    ("recv_field_r8", "real(c_double)", "out", "c_recv",
     "field from a file in read mode: the record of the current step's period."),
]

TEMPLATE = """\
  !> {doc}
  subroutine {name}(client, field_id, field, ierr)
    type(xios_lite_client), intent(in) :: client
    character(len=*), intent(in) :: field_id
    {type}, intent({intent}), contiguous, target :: field(..)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: extents(max_rank)
    extents(:rank(field)) = int(shape(field), c_int64_t)
    call check(int({c_call}(client%handle, trim(field_id) // c_null_char, c_loc(field), &
               int(rank(field), c_int), extents)), ierr)
  end subroutine {name}
"""


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate_lite_fields.py <output.inc>")
    header = ("  ! Written at build time by fortran/generate_lite_fields.py (the template\n"
              "  ! and the table of transfers are there).\n\n")
    text = header + "\n".join(
        TEMPLATE.format(name=name, type=type_, intent=intent, c_call=c_call, doc=doc)
        for name, type_, intent, c_call, doc in TRANSFERS)
    with open(sys.argv[1], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
