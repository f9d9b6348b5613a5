#!/usr/bin/env python3
"""Writes the module procedures of XIOS's Fortran interface that differ only
by a type or an operator: a Fortran generic (operator(*), operator(<),
xios_getvar) needs one specific procedure per type, so they are written here
from one template each instead of by hand.

  <out dir>/xios_date_typed.inc  (included after `contains` in xios_date.f90)
    real4/real8/int_duration_mult(val, dur) and duration_real4/real8/int_mult
    (dur, val2): val * dur through `scaled`; xios_date_eq/neq/lt/le/gt/ge
    (date1, date2): the order of the two dates (`order_of`) against 0;
    xios_duration/date_convert_to_string and _from_string; the functions
    that are one C call through `check` (date arithmetic, the queries of a
    date or of the calendar), one a line of xios_date_functions.txt.
  <out dir>/xios_getvar_typed.inc  (included after `contains` in xios.f90)
    xios_getvar_int/real8/real4/logical(name, value): the context's
    <variable> `name` through `getvar_`, converted from the C value.

Run by CMake at build time (fortran/xios/CMakeLists.txt):
  generate_typed_procedures.py fortran/xios/xios_date_functions.txt <out dir>
"""
import os
import sys
import textwrap

# The numbers a duration may be multiplied by: (name, Fortran type, the
# value as real(c_double) with `{v}` for the argument).
SCALARS = [
    ("real4", "real(c_float)", "real({v}, c_double)"),
    ("real8", "real(c_double)", "{v}"),
    ("int", "integer", "real({v}, c_double)"),
]

# Date comparisons: (name, Fortran relational operator).
COMPARISONS = [("eq", "=="), ("neq", "/="), ("lt", "<"), ("le", "<="), ("gt", ">"),
               ("ge", ">=")]

# The types that convert to and from text: (xios_<type>, the argument's
# name, what the text is, what is read back). Their C functions are
# c_<type>_to_string and c_<type>_from_string.
TEXTS = [
    ("duration", "dur", 'str = "1y 2mo 1.5d 6h 30mi 10s 2ts" (the non-zero components; "0s").',
     'The duration written in `str`: "1d12h", "0.5h", "1y 2mo", "3ts".'),
    ("date", "date", 'str = "YYYY-MM-DD hh:mm:ss".',
     'The date written in `str` ("YYYY-MM-DD hh:mm:ss", later fields optional),\n'
     '  !> valid in the current calendar.'),
]

# The one-call functions are the lines of xios_date_functions.txt (its head
# says the format): the Fortran types of their arguments and results.
TYPES = {"date": "type(xios_date)", "duration": "type(xios_duration)", "int": "integer(c_int)",
         "long": "integer(c_long_long)", "real": "real(c_double)", "seconds": "integer(c_int)"}

# xios_getvar's scalar types: (suffix, type of `value`, type of the C value,
# the C type code, `value` from the C value `v`).
GETVAR = [
    ("int", "integer", "integer(c_int)", "cxios_int", "int(v)"),
    ("real8", "real(c_double)", "real(c_double)", "cxios_double", "v"),
    ("real4", "real(c_float)", "real(c_double)", "cxios_double", "real(v, c_float)"),
    ("logical", "logical", "integer(c_int)", "cxios_bool", "v /= 0"),
]

HEAD = "! Written by fortran/xios/generate_typed_procedures.py at build time: do not edit.\n"


def date_procedures(functions: list) -> str:
    out = [HEAD]
    for name, ftype, as_double in SCALARS:
        out.append(f"""
  function {name}_duration_mult(val, dur) result(res)
    {ftype}, intent(in) :: val
    type(xios_duration), intent(in) :: dur
    type(xios_duration) :: res
    res = scaled({as_double.format(v="val")}, dur)
  end function {name}_duration_mult

  function duration_{name}_mult(dur, val2) result(res)
    type(xios_duration), intent(in) :: dur
    {ftype}, intent(in) :: val2
    type(xios_duration) :: res
    res = scaled({as_double.format(v="val2")}, dur)
  end function duration_{name}_mult
""")
    for name, op in COMPARISONS:
        out.append(f"""
  function xios_date_{name}(date1, date2) result(res)
    type(xios_date), intent(in) :: date1, date2
    logical :: res
    res = order_of(date1, date2) {op} 0
  end function xios_date_{name}
""")
    for name, arg, written, read in TEXTS:
        out.append(f"""
  !> {written}
  subroutine xios_{name}_convert_to_string({arg}, str)
    type(xios_{name}), intent(in) :: {arg}
    character(len=*), intent(out) :: str
    character(kind=c_char) :: buf(text_room)
    call check(c_{name}_to_string({arg}, buf, int(text_room, c_int)))
    call from_c_text(buf, str, 'xios_{name}_convert_to_string')
  end subroutine xios_{name}_convert_to_string

  !> {read}
  function xios_{name}_convert_from_string(str) result(res)
    character(len=*), intent(in) :: str
    type(xios_{name}) :: res
    call check(c_{name}_from_string(trim(str) // c_null_char, res))
  end function xios_{name}_convert_from_string
""")
    for routine, arguments, c_function, result, what in functions:
        names = [name for name, _ in arguments]
        lines = [*textwrap.wrap(what, 88, initial_indent="  !> ", subsequent_indent="  !> "),
                 f"  function {routine}({', '.join(names)}) result(res)"]
        lines += [f"    {TYPES[kind]}, intent(in) :: {name}" for name, kind in arguments]
        lines.append(f"    {TYPES[result]} :: res")
        if result == "seconds":
            lines += ["    integer(c_long_long) :: s",
                      f"    call check({c_function}({', '.join(names + ['s'])}))",
                      "    res = int(s, c_int)"]
        else:
            lines.append(f"    call check({c_function}({', '.join(names + ['res'])}))")
        lines.append(f"  end function {routine}")
        out.append("\n" + "\n".join(lines) + "\n")
    return "".join(out)


def getvar_procedures() -> str:
    out = [HEAD]
    for suffix, ftype, ctype, code, converted in GETVAR:
        out.append(f"""
  logical function xios_getvar_{suffix}(name, value)
    character(len=*), intent(in) :: name
    {ftype}, intent(out) :: value
    {ctype}, target :: v
    v = 0
    xios_getvar_{suffix} = getvar_(name, {code}, c_loc(v), 0_c_int)
    value = {converted}
  end function xios_getvar_{suffix}
""")
    return "".join(out)


def read_functions(table: str) -> list:
    """The lines of the one-call table: (routine, [(argument, type)], C function,
    result type, what it gives)."""
    rows = []
    with open(table, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = [field.strip() for field in line.split("|")]
            try:
                routine, args, c_function, result, what = fields
                arguments = [tuple(part.strip() for part in arg.split(":"))
                             for arg in args.split(",") if arg.strip()]
                if result not in TYPES or any(len(a) != 2 or a[1] not in TYPES for a in arguments):
                    raise ValueError
            except ValueError:
                raise SystemExit(f"{table}:{number}: not <routine> | <name>: <type>, ... | "
                                 f"<C function> | <result> | <what>: {line.strip()}") from None
            rows.append((routine, arguments, c_function, result, what))
    return rows


def write(path: str, text: str) -> None:
    # Rewritten only when changed, so that the modules are not rebuilt for nothing.
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: generate_typed_procedures.py <function table> <out dir>", file=sys.stderr)
        return 2
    table, out_dir = sys.argv[1:]
    write(os.path.join(out_dir, "xios_date_typed.inc"), date_procedures(read_functions(table)))
    write(os.path.join(out_dir, "xios_getvar_typed.inc"), getvar_procedures())
    return 0


if __name__ == "__main__":
    sys.exit(main())
