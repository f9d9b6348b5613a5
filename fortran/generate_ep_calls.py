#!/usr/bin/env python3
"""Writes, from the call table fortran/ep_calls.txt, the two sides of ep_mod's
calls into the C glue:

- <out.inc>: the public statement of the ep_ calls and one interface body a
  call (bind(C) to ep_f_<name>), included into ep_mod.f90's specification part;
- <procedures.inc>: the module procedures of the calls with a logical `flag`
  argument (MPI's Fortran logicals are not C interoperable): each calls its
  interface, named c_<name> with the flag as an integer, and converts;
  included after ep_mod.f90's `contains`;
- <out.h>: the C prototypes of the same ep_f_* functions, included by
  fortran/ep_fortran_glue.cpp before it defines them, so that a glue function
  whose arguments differ from its Fortran interface is a compile error.

Run by CMake at build time (fortran/CMakeLists.txt):
  generate_ep_calls.py <ep_calls.txt> <out.inc> <procedures.inc> <out.h>
"""
import re
import sys

# kind: (Fortran declaration, shape after the name, module entity to import, C type)
KINDS = {
    "sbuf": ("type(*), dimension(..), intent(in)", "", None, "const CFI_cdesc_t*"),
    "rbuf": ("type(*), dimension(..)", "", None, "CFI_cdesc_t*"),
    "in": ("integer(c_int), intent(in)", "", None, "const MPI_Fint*"),
    "out": ("integer(c_int), intent(out)", "", None, "MPI_Fint*"),
    "in[]": ("integer(c_int), intent(in)", "(*)", None, "const MPI_Fint*"),
    "inout[]": ("integer(c_int), intent(inout)", "(*)", None, "MPI_Fint*"),
    "out[]": ("integer(c_int), intent(out)", "(*)", None, "MPI_Fint*"),
    "aint[]": ("integer(c_intptr_t), intent(in)", "(*)", "c_intptr_t", "const MPI_Aint*"),
    "statuses": ("integer(c_int), intent(inout)", "(1, *)", None, "MPI_Fint*"),
    "weights": ("integer(c_int), dimension(..), intent(in)", "", None, "const CFI_cdesc_t*"),
    "weights_inout": ("integer(c_int), dimension(..), intent(inout)", "", None, "CFI_cdesc_t*"),
    "comm": ("type(ep_comm), intent(in)", "", "ep_comm", "const ep_comm_t*"),
    "comm_out": ("type(ep_comm), intent(out)", "", "ep_comm", "ep_comm_t*"),
    "request": ("type(ep_request), intent(out)", "", "ep_request", "ep_request_t*"),
    "request_inout": ("type(ep_request), intent(inout)", "", "ep_request", "ep_request_t*"),
    "requests": ("type(ep_request), intent(inout)", "(*)", "ep_request", "ep_request_t*"),
    "message": ("type(ep_message), intent(out)", "", "ep_message", "ep_message_t*"),
    "message_inout": ("type(ep_message), intent(inout)", "", "ep_message", "ep_message_t*"),
    # The glue sees an int; the module procedure around it a logical.
    "flag": ("integer(c_int), intent(out)", "", None, "MPI_Fint*"),
}
BY_NAME = {"sendbuf": "sbuf", "recvbuf": "rbuf", "comm": "comm", "request": "request",
           "requests": "requests", "status": "inout[]", "statuses": "statuses"}
IMPORT_ORDER = ["c_int", "c_intptr_t", "ep_comm", "ep_request", "ep_message"]
ENTRY = re.compile(r"^((?:ep|c)_\w+)\((.*)\)$")


def read_table(path):
    """[(name, [(argument, kind)], [doc lines])] in table order."""
    calls, doc = [], []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            where = f"{path}:{number}"
            if line.startswith("!>"):
                doc.append(line)
                continue
            if not line or line.startswith("#"):
                if doc and not line:
                    sys.exit(f"{where}: a doc comment not followed by its call")
                continue
            m = ENTRY.match(line)
            if not m:
                sys.exit(f"{where}: not a call: {line}")
            args = []
            for spec in (a.strip() for a in m.group(2).split(",")):
                name, _, kind = spec.partition(":")
                kind = kind or BY_NAME.get(name, "in")
                if kind not in KINDS:
                    sys.exit(f"{where}: {m.group(1)}: argument {name}: unknown kind {kind!r}")
                args.append((name, kind))
            if any(name == n for n, _, _ in calls):
                sys.exit(f"{where}: {m.group(1)} twice")
            calls.append((m.group(1), args, doc))
            doc = []
    return calls


def c_name(name):
    return "ep_f_" + re.sub(r"^(ep|c)_", "", name)


def has_flag(args):
    return any(k == "flag" for _, k in args)


def bound_name(name, args):
    """The Fortran name of the interface body: c_<stem> for a call wrapped by
    its module procedure (a flag argument), else the call's own name."""
    return "c_" + name[len("ep_"):] if has_flag(args) else name


def wrap(head, items, tail, indent, cont=" &", width=96):
    """head + items joined by ', ' + tail, broken after a comma (ending the
    line with `cont`) so that no line passes `width`."""
    lines, line = [], head
    for i, item in enumerate(items):
        piece = item + (", " if i + 1 < len(items) else tail)
        if len(line) + len(piece.rstrip()) > width - 2 and line.strip() != head.strip():
            lines.append(line.rstrip() + cont)
            line = indent + piece
        else:
            line += piece
    lines.append(line.rstrip())
    return lines


def fortran(calls):
    out = ["! Written by fortran/generate_ep_calls.py from fortran/ep_calls.txt: edit those.", ""]
    public = [name for name, _, _ in calls if name.startswith("ep_")]
    out += wrap("  public :: ", public, "", "            ")
    out += ["", "  interface"]
    for name, args, doc in calls:
        if not has_flag(args):
            out += ["    " + d for d in doc]
        names = [a for a, _ in args] + ["ierr"]
        name = bound_name(name, args)
        out += wrap(f"    subroutine {name}(", names, ") &", "        ")
        out.append(f'        bind(C, name="{c_name(name)}")')
        used = {"c_int"} | {KINDS[k][2] for _, k in args if KINDS[k][2]}
        out.append("      import :: " + ", ".join(e for e in IMPORT_ORDER if e in used))
        for a, k in args:
            out.append(f"      {KINDS[k][0]} :: {a}{KINDS[k][1]}")
        out.append("      integer(c_int), intent(out), optional :: ierr")
        out.append(f"    end subroutine {name}")
    out.append("  end interface")
    return "\n".join(out) + "\n"


def procedures(calls):
    """The module procedures of the calls with flag arguments."""
    out = ["! Written by fortran/generate_ep_calls.py from fortran/ep_calls.txt: edit those.", ""]
    for name, args, doc in calls:
        if not has_flag(args):
            continue
        names = [a for a, _ in args] + ["ierr"]
        out += ["  " + d for d in doc]
        out += wrap(f"  subroutine {name}(", names, ")", "      ")
        flags = [a for a, k in args if k == "flag"]
        for a, k in args:
            if k == "flag":
                out.append(f"    logical, intent(out) :: {a}")
            else:
                out.append(f"    {KINDS[k][0]} :: {a}{KINDS[k][1]}")
        out.append("    integer(c_int), intent(out), optional :: ierr")
        out.append("    integer(c_int) :: " + ", ".join(f + "_c" for f in flags))
        out += [f"    {f}_c = 0" for f in flags]
        passed = [a + "_c" if k == "flag" else a for a, k in args] + ["ierr"]
        out += wrap(f"    call {bound_name(name, args)}(", passed, ")", "        ")
        out += [f"    {f} = {f}_c /= 0" for f in flags]
        out += [f"  end subroutine {name}", ""]
    return "\n".join(out)


def c_header(calls):
    out = ["// Written by fortran/generate_ep_calls.py from fortran/ep_calls.txt: edit those.",
           "// The ep_f_* functions ep_mod binds to, as its interfaces declare them.",
           "#pragma once", "#include <ISO_Fortran_binding.h>", "#include <mpi.h>", "",
           '#include "ep/ep.h"', "", 'extern "C" {', "// NOLINTBEGIN(readability-identifier-naming)"]
    for name, args, _ in calls:
        params = [f"{KINDS[k][3]} {a}" for a, k in args] + ["MPI_Fint* ierr"]
        out += wrap(f"void {c_name(name)}(", params, ");", "    ", cont="")
    out += ["// NOLINTEND(readability-identifier-naming)", "}"]
    return "\n".join(out) + "\n"


def write_if_changed(path, text):
    """Leaves an unchanged file alone, so that what includes it is not rebuilt."""
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    calls = read_table(sys.argv[1])
    write_if_changed(sys.argv[2], fortran(calls))
    write_if_changed(sys.argv[3], procedures(calls))
    write_if_changed(sys.argv[4], c_header(calls))


if __name__ == "__main__":
    main()
