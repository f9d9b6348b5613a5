#!/usr/bin/env python3
"""Writes the generated part of XIOS's Fortran interface (module xios_attributes)
from the attribute table xios_lite/include/xios_lite/xios_attributes.def:
for every element kind K (and its group kind KG), as XIOS names them,

  xios_set_K_attr(K_id, <attr>=...),  xios_set_K_attr_hdl(K_hdl, ...)
  xios_get_K_attr(K_id, <attr>=...),  xios_get_K_attr_hdl(K_hdl, ...)
  xios_is_defined_K_attr(K_id, <attr>=...), xios_is_defined_K_attr_hdl(...)
  xios_get_K_handle(id, hdl),  xios_is_valid_K(id)

the generics xios_set_attr, xios_get_attr, xios_is_defined_attr (over the
handles) and xios_get_handle, xios_add_child (over the handle kinds), and
xios_send_field / xios_recv_field for real(8) and real(4) arrays of rank 0 to 7.

Run by CMake at build time (fortran/xios/CMakeLists.txt):
  generate_interface.py <xios_attributes.def> <output.f90>
which also writes <output>_public.inc, the names module xios re-exports.
"""
import re
import sys

# Element kinds with groups, as in XIOS (the *_group and *_definition elements).
GROUPED = ["domain", "axis", "scalar", "grid", "field", "file", "variable"]

# (parent kind, child kind): what xios_add_child adds where.
CHILDREN = [
    ("fieldgroup", "field"), ("fieldgroup", "fieldgroup"), ("file", "field"),
    ("file", "fieldgroup"), ("file", "variable"), ("field", "variable"),
    ("filegroup", "file"), ("filegroup", "filegroup"),
    ("domaingroup", "domain"), ("domaingroup", "domaingroup"),
    ("axisgroup", "axis"), ("axisgroup", "axisgroup"),
    ("scalargroup", "scalar"), ("scalargroup", "scalargroup"),
    ("gridgroup", "grid"), ("gridgroup", "gridgroup"),
    ("grid", "domain"), ("grid", "axis"), ("grid", "scalar"),
    ("domain", "zoom_domain"), ("domain", "extract_domain"),
    ("axis", "zoom_axis"), ("axis", "extract_axis"),
    ("variablegroup", "variable"), ("variablegroup", "variablegroup"),
]

FORTRAN = {
    "string": "character(len=*)",
    "bool": "logical",
    "int": "integer",
    "double": "real(kind=c_double)",
    "duration": "type(xios_duration)",
    "date": "type(xios_date)",
    "int_1d": "integer, dimension(:)",
    "bool_1d": "logical, dimension(:)",
    "bool_2d": "logical, dimension(:,:)",
    "double_1d": "real(kind=c_double), dimension(:)",
    "double_2d": "real(kind=c_double), dimension(:,:)",
    "double_3d": "real(kind=c_double), dimension(:,:,:)",
}

# The helper that sets / gets each type: string's in module xios_handles,
# the others written below from VALUES.
HELPER = {
    "string": "string", "bool": "bool", "int": "int", "double": "double",
    "duration": "duration", "date": "date", "int_1d": "ints1",
    "bool_1d": "bools1", "bool_2d": "bools2", "double_1d": "reals1",
    "double_2d": "reals2", "double_3d": "reals3",
}


# How a value of each helper type goes to the C layer (cxios_set_attr,
# cxios_get_attr): (model's declaration, C declaration, CXIOS_* type, rank,
# the value in C, the C value back for the model). Arrays travel as a copy
# of the C type, so a model's logical or default integer never needs to be
# interoperable.
VALUES = {
    "bool": ("logical", "integer(c_int)", "cxios_bool", 0,
             "merge(1_c_int, 0_c_int, value)", "v /= 0"),
    "int": ("integer", "integer(c_int)", "cxios_int", 0, "int(value, c_int)", "int(v)"),
    "double": ("real(c_double)", "real(c_double)", "cxios_double", 0, "value", "v"),
    "duration": ("type(xios_duration)", "type(xios_duration)", "cxios_duration_type", 0,
                 "value", "v"),
    "date": ("type(xios_date)", "type(xios_date)", "cxios_date_type", 0, "value", "v"),
    "ints1": ("integer", "integer(c_int)", "cxios_int_1d", 1, "int(value, c_int)", "int(v)"),
    "bools1": ("logical", "integer(c_int)", "cxios_bool_1d", 1,
               "merge(1_c_int, 0_c_int, value)", "v /= 0"),
    "bools2": ("logical", "integer(c_int)", "cxios_bool_2d", 2,
               "merge(1_c_int, 0_c_int, value)", "v /= 0"),
    "reals1": ("real(c_double)", "real(c_double)", "cxios_double_1d", 1, "value", "v"),
    "reals2": ("real(c_double)", "real(c_double)", "cxios_double_2d", 2, "value", "v"),
    "reals3": ("real(c_double)", "real(c_double)", "cxios_double_3d", 3, "value", "v"),
}


def value_routines():
    """xios_set_<helper>_ and xios_get_<helper>_ of every VALUES type: the
    value copied into its C type, handed to xios_set_value_ / xios_get_value_
    (a getter leaves `value` as it is when the attribute is not defined)."""
    out = []
    for helper, (decl, c_decl, type_, rank, to_c, from_c) in VALUES.items():
        shape = "(" + ", ".join([":"] * rank) + ")" if rank else ""
        store = f"allocate (v, source={to_c})" if rank else f"v = {to_c}"
        local = f"{c_decl}, {'allocatable, ' if rank else ''}target :: v{shape}"
        extents = "int(shape(value), c_int64_t)" if rank else "[0_c_int64_t]"
        args = f"h, name, {type_}, c_loc(v), {rank}, {extents}"
        for verb, intent, call in (("set", "in", f"call xios_set_value_({args})"),
                                   ("get", "inout", f"if (xios_get_value_({args})) value = {from_c}")):
            out.append(f"""  subroutine xios_{verb}_{helper}_(h, name, value)
    integer(c_intptr_t), intent(in) :: h
    character(len=*), intent(in) :: name
    {decl}, intent({intent}) :: value{shape}
    {local}
    {store}
    {wrap(call, "    ")}
  end subroutine xios_{verb}_{helper}_""")
    return out


def read_table(path):
    table = {}
    # The interface lines: XIOS_ATTRIBUTE(kind, name, type, use) and
    # XIOS_REFUSED(kind, name, type, use, "why"); the XML-only lines
    # (XIOS_XML_*) are not part of the interface.
    pattern = re.compile(r"^XIOS_(?:ATTRIBUTE|REFUSED)\((\w+),\s*(\w+),\s*(\w+),\s*\w+[,)]")
    with open(path) as f:
        for line in f:
            m = pattern.match(line.strip())
            if m:
                kind, name, type_ = m.groups()
                table.setdefault(kind, []).append((name, type_))
    for kind in GROUPED:
        table[kind + "group"] = table.get(kind, []) + [("group_ref", "string")]
    return table


def wrap(text, indent):
    """Fortran free form: continue lines over 100 columns."""
    out, line = [], ""
    for word in text.split(" "):
        if line and len(line) + len(word) + 1 > 95:
            out.append(line + " &")
            line = indent + "  " + word
        else:
            line = (line + " " + word) if line else word
    out.append(line)
    return "\n".join(out)


def routine(verb, kind, attrs, by_handle):
    names = [n for n, _ in attrs]
    first = f"{kind}_hdl" if by_handle else f"{kind}_id"
    suffix = "_hdl" if by_handle else ""
    lines = [wrap(f"  subroutine xios_{verb}_{kind}_attr{suffix}({first}, " + ", ".join(names) + ")", "  ")]
    if by_handle:
        lines.append(f"    type(xios_{kind}), intent(in) :: {first}")
    else:
        lines.append(f"    character(len=*), intent(in) :: {first}")
        lines.append(f"    type(xios_{kind}) :: handle")
    for name, type_ in attrs:
        if verb == "set":
            lines.append(f"    {FORTRAN[type_]}, optional, intent(in) :: {name}")
        elif verb == "get":
            lines.append(f"    {FORTRAN[type_]}, optional, intent(out) :: {name}")
        else:
            lines.append(f"    logical, optional, intent(out) :: {name}")
    if not by_handle:
        lines.append(f"    call xios_get_{kind}_handle({first}, handle)")
        lines.append(wrap(f"    call xios_{verb}_{kind}_attr_hdl(handle, " + ", ".join(names) + ")", "    "))
    else:
        for name, type_ in attrs:
            if verb == "set":
                call = f"call xios_set_{HELPER[type_]}_({first}%daddr, '{name}', {name})"
            elif verb == "get":
                call = f"call xios_get_{HELPER[type_]}_({first}%daddr, '{name}', {name})"
            else:
                call = f"{name} = xios_defined_({first}%daddr, '{name}')"
            lines.append(wrap(f"    if (present({name})) {call}", "    "))
    lines.append(f"  end subroutine xios_{verb}_{kind}_attr{suffix}")
    return "\n".join(lines)


def handle_routines(kind):
    return f"""  subroutine xios_get_{kind}_handle(id, handle)
    character(len=*), intent(in) :: id
    type(xios_{kind}), intent(out) :: handle
    handle%daddr = xios_handle_of_('{kind}', id)
  end subroutine xios_get_{kind}_handle

  logical function xios_is_valid_{kind}(id)
    character(len=*), intent(in) :: id
    xios_is_valid_{kind} = xios_valid_('{kind}', id)
  end function xios_is_valid_{kind}"""


def add_child_routine(parent, child):
    return f"""  subroutine xios_add_{child}_to_{parent}(parent_hdl, child_hdl, child_id)
    type(xios_{parent}), intent(in) :: parent_hdl
    type(xios_{child}), intent(out) :: child_hdl
    character(len=*), optional, intent(in) :: child_id
    child_hdl%daddr = xios_add_child_(parent_hdl%daddr, '{child}', child_id)
  end subroutine xios_add_{child}_to_{parent}"""


FIELD_TYPES = [("r8", "real(kind=c_double)", "k8"), ("r4", "real(kind=c_float)", "k4")]


def dims(rank):
    return "" if rank == 0 else ", dimension(" + ",".join([":"] * rank) + ")"


def data_routine(verb, tag, decl, rank, intent, c_call):
    """xios_<verb>_field_<tag>_<rank>d: `data` in place through `c_call`."""
    contiguous = ", contiguous" if rank > 0 else ""
    shape = "int(shape(data), c_int64_t)" if rank > 0 else "[0_c_int64_t]"
    return f"""  subroutine xios_{verb}_field_{tag}_{rank}d(fieldid, data)
    character(len=*), intent(in) :: fieldid
    {decl}, intent({intent}), target{contiguous}{dims(rank)} :: data
    integer(c_int64_t) :: extents(max(1, {rank}))
    extents = {shape}
    call xios_check_({c_call}(fieldid, len(fieldid), c_loc(data), {rank}, extents))
  end subroutine xios_{verb}_field_{tag}_{rank}d"""


def field_routines():
    out = []
    for tag, decl, kind in FIELD_TYPES:
        for rank in range(8):
            out.append(data_routine("send", tag, decl, rank, "in", f"cxios_write_data_{kind}"))
        for rank in range(8):
            if tag == "r4":
                # Read in double precision, handed back in the model's.
                shape = "int(shape(data), c_int64_t)" if rank > 0 else "[0_c_int64_t]"
                bounds = ", ".join(f"size(data, {d + 1})" for d in range(rank))
                alloc = f"allocate (values({bounds}))" if rank > 0 else ""
                out.append(f"""  subroutine xios_recv_field_r4_{rank}d(fieldid, data)
    character(len=*), intent(in) :: fieldid
    {decl}, intent(out){dims(rank)} :: data
    real(kind=c_double), {"allocatable, " if rank > 0 else ""}target{dims(rank)} :: values
    integer(c_int64_t) :: extents(max(1, {rank}))
    {alloc}
    extents = {shape}
    call xios_check_(cxios_read_data_k8(fieldid, len(fieldid), c_loc(values), {rank}, extents))
    data = real(values, c_float)
  end subroutine xios_recv_field_r4_{rank}d""")
                continue
            out.append(data_routine("recv", tag, decl, rank, "out", "cxios_read_data_k8"))
    return out


def main():
    table_path, out_path = sys.argv[1], sys.argv[2]
    table = read_table(table_path)
    handle_kinds = [k for k in table if k not in ("context",)]
    parts = []
    generics = {"xios_set_attr": [], "xios_get_attr": [], "xios_is_defined_attr": []}
    routines = []
    for kind, attrs in table.items():
        if kind == "context":
            continue
        for verb in ("set", "get", "is_defined"):
            routines.append(routine(verb, kind, attrs, by_handle=False))
            routines.append(routine(verb, kind, attrs, by_handle=True))
            generics[f"xios_{verb}_attr"].append(f"xios_{verb}_{kind}_attr_hdl")
        routines.append(handle_routines(kind))
    add_children = [f"xios_add_{c}_to_{p}" for p, c in CHILDREN]
    routines += [add_child_routine(p, c) for p, c in CHILDREN]
    routines += field_routines()
    routines += value_routines()

    parts.append("! Generated by fortran/xios/generate_interface.py from")
    parts.append("! xios_lite/include/xios_lite/xios_attributes.def: do not edit.")
    parts.append("module xios_attributes")
    parts.append("  use, intrinsic :: iso_c_binding")
    parts.append("  use xios_date_mod, only: xios_date, xios_duration")
    parts.append("  use xios_handles")
    parts.append("  implicit none")
    parts.append("  private")
    public = []
    for name, specifics in generics.items():
        parts.append(f"  interface {name}")
        parts.append(wrap("    module procedure " + ", ".join(specifics), "    "))
        parts.append(f"  end interface {name}")
        public.append(name)
    parts.append("  interface xios_get_handle")
    parts.append(wrap("    module procedure " + ", ".join(f"xios_get_{k}_handle" for k in handle_kinds), "    "))
    parts.append("  end interface xios_get_handle")
    public.append("xios_get_handle")
    parts.append("  interface xios_add_child")
    parts.append(wrap("    module procedure " + ", ".join(add_children), "    "))
    parts.append("  end interface xios_add_child")
    public.append("xios_add_child")
    sends = [f"xios_send_field_{t}_{r}d" for t, _, _ in FIELD_TYPES for r in range(8)]
    recvs = [f"xios_recv_field_{t}_{r}d" for t, _, _ in FIELD_TYPES for r in range(8)]
    parts.append("  interface xios_send_field")
    parts.append(wrap("    module procedure " + ", ".join(sends), "    "))
    parts.append("  end interface xios_send_field")
    parts.append("  interface xios_recv_field")
    parts.append(wrap("    module procedure " + ", ".join(recvs), "    "))
    parts.append("  end interface xios_recv_field")
    public += ["xios_send_field", "xios_recv_field"]
    for kind in handle_kinds:
        for verb in ("set", "get", "is_defined"):
            public.append(f"xios_{verb}_{kind}_attr")
            public.append(f"xios_{verb}_{kind}_attr_hdl")
        public.append(f"xios_get_{kind}_handle")
        public.append(f"xios_is_valid_{kind}")
    for name in public:
        parts.append(f"  public :: {name}")
    parts.append("contains")
    parts.extend(routines)
    parts.append("end module xios_attributes")
    with open(out_path, "w") as f:
        f.write("\n".join(parts) + "\n")
    # What module xios re-exports of it (included there).
    with open(out_path.replace(".f90", "_public.inc"), "w") as f:
        f.write("! Generated by fortran/xios/generate_interface.py: do not edit.\n")
        for name in public:
            if name != "xios_get_handle":
                f.write(f"  public :: {name}\n")


if __name__ == "__main__":
    main()
