#!/usr/bin/env python3
"""Writes the keyword-argument routines of module xios_lite_mod,
xios_lite_set_domain_attr and xios_lite_set_axis_attr, from the attribute
table xios_lite/include/xios_lite/xios_attributes.def: one optional argument
per attribute the model sets (use read_model, read_mask, and the XIOS_REFUSED
lines of use `model`), each passed to its by-name C setter of
xios_lite/xios_lite.h (xios_lite_set_<kind>_attr_int, _index, _double, _text,
_mask) by its type.

Run by CMake at build time (fortran/CMakeLists.txt):
  generate_lite_attributes.py <xios_attributes.def> <output.inc>
The output is included into xios_lite_mod.f90 after its `contains`.
"""
import re
import sys

# The arguments in the order the routines had before they were generated:
# kept first, in this order, so that positional calls keep their meaning.
# Attributes the table adds later follow them; ierr stays last.
LEGACY_ORDER = {
    "domain": ["ni_glo", "nj_glo", "ibegin", "ni", "jbegin", "nj", "type", "lonvalue_1d",
               "latvalue_1d", "lonvalue_2d", "latvalue_2d", "nvertex", "bounds_lon_1d",
               "bounds_lat_1d", "bounds_lon_2d", "bounds_lat_2d", "area", "mask_1d", "mask_2d",
               "data_dim", "data_ibegin", "data_ni", "data_jbegin", "data_nj", "data_n_index",
               "data_i_index", "data_j_index"],
    "axis": ["n_glo", "value", "bounds", "name", "unit", "positive", "long_name",
             "standard_name"],
}

# The C setters bound in xios_lite_mod.f90, by kind and C function family.
SETTER = {
    ("domain", "int"): "c_dom_int", ("domain", "index"): "c_dom_index",
    ("domain", "double"): "c_dom_double", ("domain", "text"): "c_dom_text",
    ("domain", "mask"): "c_dom_mask",
    ("axis", "int"): "c_axis_int", ("axis", "index"): "c_axis_index",
    ("axis", "double"): "c_axis_double", ("axis", "text"): "c_axis_text",
}

# The model-settable uses (see the header comment of xios_attributes.def).
MODEL_USES = {"read_model", "read_mask", "model"}


def read_table(path):
    """{kind: [(name, type, use)]} of the model-settable lines, in table order."""
    pattern = re.compile(r"^XIOS_(ATTRIBUTE|REFUSED)\((\w+),\s*(\w+),\s*(\w+),\s*(\w+)[,)]")
    table = {kind: [] for kind in LEGACY_ORDER}
    with open(path) as f:
        for line in f:
            m = pattern.match(line.strip())
            if not m:
                continue
            macro, kind, name, type_, use = m.groups()
            if kind not in table or use not in MODEL_USES:
                continue
            if use == "model" and macro != "REFUSED":
                sys.exit(f"{path}: {kind}.{name}: use `model` is for XIOS_REFUSED lines only")
            table[kind].append((name, type_, use))
    return table


def ordered(kind, attrs):
    by_name = {name: (name, type_, use) for name, type_, use in attrs}
    for name in LEGACY_ORDER[kind]:
        if name not in by_name:
            sys.exit(f"generate_lite_attributes.py: {kind}.{name}, an argument of "
                     f"xios_lite_set_{kind}_attr, is no longer model-settable in the table")
    rest = [a for a in attrs if a[0] not in LEGACY_ORDER[kind]]
    return [by_name[n] for n in LEGACY_ORDER[kind]] + rest


def declaration(kind, name, type_, use):
    if type_ == "int":
        return f"integer, intent(in), optional :: {name}"
    if type_ == "int_1d":
        return f"integer, intent(in), optional :: {name}(:)"
    if type_ == "string":
        return f"character(len=*), intent(in), optional :: {name}"
    if type_ in ("bool_1d", "bool_2d") and use == "read_mask":
        return f"logical, intent(in), optional :: {name}({dims(int(type_[-2]))})"
    if type_ in ("double_1d", "double_2d", "double_3d"):
        return (f"real(c_double), intent(in), optional, contiguous, target :: "
                f"{name}({dims(int(type_[-2]))})")
    sys.exit(f"generate_lite_attributes.py: {kind}.{name}: no C setter takes type {type_} "
             f"(use {use}); extend xios_lite.h and this script")


def dims(rank):
    return ", ".join([":"] * rank)


def call(kind, name, type_, use):
    """The statement setting one present argument; rc holds the first error."""
    head = f"    if (present({name}) .and. rc == 0) rc = int("
    arg = f"'{name}' // c_null_char"
    if type_ == "int":
        body = f"{SETTER[kind, 'int']}(client%handle, id, {arg}, int({name}, c_int))"
    elif type_ == "int_1d":
        body = (f"{SETTER[kind, 'index']}(client%handle, id, {arg}, int({name}, c_int), "
                f"int(size({name}), c_int))")
    elif type_ == "string":
        body = f"{SETTER[kind, 'text']}(client%handle, id, {arg}, trim({name}) // c_null_char)"
    elif use == "read_mask":
        rank = int(type_[-2])
        flags = f"merge(1_c_int, 0_c_int, {name})"
        if rank > 1:
            flags = f"reshape({flags}, [size({name})])"
        body = (f"{SETTER[kind, 'mask']}(client%handle, id, {flags}, {rank}_c_int, "
                f"int(shape({name}), c_int64_t))")
    else:
        rank = int(type_[-2])
        body = (f"{SETTER[kind, 'double']}(client%handle, id, {arg}, c_loc({name}), "
                f"{rank}_c_int, int(shape({name}), c_int64_t))")
    return wrap(head + body + ")", "    ")


def wrap(text, indent):
    """Fortran free form: continue lines over 100 columns, breaking at spaces
    outside quoted names."""
    out, line = [], indent
    for word in text.strip().split(" "):
        if line.strip() and len(line) + len(word) + 1 > 95:
            out.append(line + " &")
            line = indent + "    " + word
        else:
            line = (line + " " + word) if line.strip() else line + word
    out.append(line)
    return "\n".join(out)


def routine(kind, attrs):
    names = [a[0] for a in attrs]
    lines = [
        f"  ! xios_lite_set_{kind}_attr, generated from xios_attributes.def",
        f"  ! by fortran/generate_lite_attributes.py: the documentation is in",
        f"  ! xios_lite_mod.f90, above the include line.",
        wrap(f"  subroutine xios_lite_set_{kind}_attr(client, {kind}_id, " + ", ".join(names)
             + ", ierr)", "  "),
        "    type(xios_lite_client), intent(in) :: client",
        f"    character(len=*), intent(in) :: {kind}_id",
    ]
    lines += ["    " + declaration(kind, *a) for a in attrs]
    lines += [
        "    integer, intent(out), optional :: ierr",
        "    character(len=:), allocatable :: id",
        "    integer :: rc",
        f"    id = trim({kind}_id) // c_null_char",
        "    rc = 0",
    ]
    lines += [call(kind, *a) for a in attrs]
    lines += ["    call check(rc, ierr)", f"  end subroutine xios_lite_set_{kind}_attr", ""]
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: generate_lite_attributes.py <xios_attributes.def> <output.inc>")
    table = read_table(sys.argv[1])
    text = "\n".join(routine(kind, ordered(kind, table[kind])) for kind in LEGACY_ORDER)
    with open(sys.argv[2], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
