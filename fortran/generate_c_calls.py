#!/usr/bin/env python3
"""Writes, from a table of C functions, the bind(C) interface blocks of the
Fortran modules that call them: for every section [name] of the table, the
file <out dir>/<name>_c_calls.inc, one interface body a C function, included
into the specification part of <name>.f90 (beside the table), and
<out dir>/<name>_c_wrappers.inc, where a section has any, the module
procedures of the entries marked `-> <routine>` (a subroutine of the same arguments that calls the function and
stops on a failure through xios_check_), included after its `contains`. The tables:
fortran/xios/xios_c_calls.txt (xios_date, xios_handles, xios) and
fortran/xios_lite_c_calls.txt (xios_lite_mod); their heads say the format.

Run by CMake at build time (fortran/CMakeLists.txt, fortran/xios/CMakeLists.txt):
  generate_c_calls.py <table> <out dir>
"""
import os
import re
import sys

# type: (Fortran type, what it needs imported from the host)
TYPES = {
    "int": ("integer(c_int)", "c_int"),
    "long": ("integer(c_long_long)", "c_long_long"),
    "int64": ("integer(c_int64_t)", "c_int64_t"),
    "intptr": ("integer(c_intptr_t)", "c_intptr_t"),
    "double": ("real(c_double)", "c_double"),
    "char": ("character(kind=c_char)", "c_char"),
    "ptr": ("type(c_ptr)", "c_ptr"),
    "date": ("type(xios_date)", "xios_date"),
    "duration": ("type(xios_duration)", "xios_duration"),
}
RESULTS = {
    "int": ("integer(c_int)", "c_int"),
    "bool": ("logical(c_bool)", "c_bool"),
    "ptr": ("type(c_ptr)", "c_ptr"),
    "size": ("integer(c_size_t)", "c_size_t"),
}
PASSING = ("in", "out", "inout", "value")
IMPORT_ORDER = ["c_int", "c_long_long", "c_int64_t", "c_intptr_t", "c_size_t", "c_bool",
                "c_double", "c_char", "c_ptr", "xios_date", "xios_duration"]

SECTION = re.compile(r"^\[(\w+)\]$")
ENTRY = re.compile(r"^(\w+)\s+(\w+)(?:\s*=\s*(\w+))?\s*\((.*)\)(?:\s*->\s*(\w+))?$", re.S)
ARGUMENT = re.compile(r"^(\w+)\s*:\s*(\w+)(\[\])?(?:\s+(\w+))?$")


def entries(path):
    """(where, text) of every entry, an entry running on until its parentheses close."""
    pending, start = "", None
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if not pending:
                start = f"{path}:{number}"
            pending = f"{pending} {line}".strip()
            if pending.count("(") == pending.count(")"):
                yield start, pending
                pending = ""
    if pending:
        sys.exit(f"{start}: the entry's parentheses do not close: {pending}")


def parse_argument(where, call, spec):
    m = ARGUMENT.match(spec)
    if not m:
        sys.exit(f"{where}: {call}: not an argument (<name>: <type>[[]] [passing]): {spec!r}")
    name, type_, array, passing = m.group(1), m.group(2), bool(m.group(3)), m.group(4) or "in"
    if type_ not in TYPES:
        sys.exit(f"{where}: {call}: argument {name}: unknown type {type_!r}")
    if passing not in PASSING:
        sys.exit(f"{where}: {call}: argument {name}: unknown passing {passing!r}")
    if array and passing == "value":
        sys.exit(f"{where}: {call}: argument {name}: an array cannot go by value")
    return name, type_, array, passing


def read_table(path):
    """{section: [(result, Fortran name, C name, [(name, type, array, passing)], wrapper)]}."""
    sections, current, seen = {}, None, set()
    for where, text in entries(path):
        m = SECTION.match(text)
        if m:
            if m.group(1) in sections:
                sys.exit(f"{where}: section [{m.group(1)}] twice")
            current = sections[m.group(1)] = []
            continue
        m = ENTRY.match(text)
        if not m:
            sys.exit(f"{where}: not an entry (<result> <name>[ = <C name>](...)): {text}")
        if current is None:
            sys.exit(f"{where}: {m.group(2)} before the first [section]")
        result, name, c_name, arguments = m.group(1), m.group(2), m.group(3) or m.group(2), m.group(4)
        if result not in RESULTS:
            sys.exit(f"{where}: {name}: unknown result {result!r}")
        if name in seen:
            sys.exit(f"{where}: {name} twice")
        seen.add(name)
        specs = [a.strip() for a in arguments.split(",")] if arguments.strip() else []
        args = [parse_argument(where, name, spec) for spec in specs]
        if len({a[0] for a in args}) != len(args):
            sys.exit(f"{where}: {name}: an argument named twice")
        wrapper = m.group(5)
        if wrapper and (result != "int" or any(a[2] or a[1] == "ptr" for a in args)):
            sys.exit(f"{where}: {name}: -> {wrapper}: only an int function of scalar, "
                     "non-pointer arguments passes them straight through")
        current.append((result, name, c_name, args, wrapper))
    return sections


def declaration(type_, array, passing):
    parts = [TYPES[type_][0]]
    if array:
        parts.append("dimension(*)")
    parts.append("value" if passing == "value" else f"intent({passing})")
    return ", ".join(parts)


def interface_body(result, name, c_name, args, wrapper):
    names = ", ".join(a[0] for a in args)
    head = f"{RESULTS[result][0]} function {name}({names})"
    binding = f'bind(C, name="{c_name}")'
    lines = [f"  {head} {binding}" if len(head) + len(binding) < 96
             else f"  {head} &\n      {binding}"]
    needed = {RESULTS[result][1]} | {TYPES[a[1]][1] for a in args}
    lines.append("    import :: " + ", ".join(k for k in IMPORT_ORDER if k in needed))
    lines += [f"    {declaration(t, array, passing)} :: {n}" for n, t, array, passing in args]
    lines.append(f"  end function {name}")
    return "\n".join(lines)


def wrapper_procedure(result, name, c_name, args, wrapper):
    """The XIOS routine `wrapper` that passes its arguments straight to `name`."""
    names = ", ".join(a[0] for a in args)
    lines = [f"  subroutine {wrapper}({names})"]
    lines += [f"    {declaration(t, False, 'in' if passing == 'value' else passing)} :: {n}"
              for n, t, _, passing in args]
    lines.append(f"    call xios_check_({name}({names}))")
    lines.append(f"  end subroutine {wrapper}")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    table, out_dir = sys.argv[1:]
    for section, calls in read_table(table).items():
        text = [f"! Generated by fortran/generate_c_calls.py from {os.path.basename(table)}",
                f"! (section [{section}]); do not edit.",
                "interface"]
        text += [interface_body(*call) for call in calls]
        text.append("end interface")
        with open(os.path.join(out_dir, f"{section}_c_calls.inc"), "w") as f:
            f.write("\n".join(text) + "\n")
        wrappers = [wrapper_procedure(*call) for call in calls if call[4]]
        if not wrappers:
            continue
        text = text[:2] + ["\n" + w for w in wrappers]
        with open(os.path.join(out_dir, f"{section}_c_wrappers.inc"), "w") as f:
            f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
