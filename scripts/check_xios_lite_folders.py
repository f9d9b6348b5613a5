#!/usr/bin/env python3
"""Checks the folder layering of xios_lite/src: no folder includes one on a higher floor.

Each file of xios_lite/src belongs to its folder (a file directly in
xios_lite/src to "base"). An include "x/y.hpp" names the folder x, "y.hpp"
alone a file of the including file's own folder or, failing that, a base
file; "xios_lite/..." is the public API (xios_lite/include), "ep/..." and
"common/..." the libraries below, which every folder may use. Floors,
lowest first (folders on one floor do not include each other):

  base       the public headers' helpers at the top of src (text, report,
             the C codes)
  records    what a record is, shared by every floor above: its time
             (RecordTime), a range of rows (RowRange), how a model array
             holds a block (DataLayout)
  calendar   calendars, dates, frequencies   | temporal   the temporal
             operations (instant, average, ...) and the periods they fold
             over, on clients and servers alike
  transport  the wire: the codec, the events, the channel, the reader,
             the context link, the servers' row bands
  netcdf     the CF NetCDF-4 writer and reader
  config     the XML configuration and the model's definitions
  client     the client library                 | server   the server processes
  facade     XIOS's own interface (xios.h, the Fortran module's C side)
  c_api      xios_lite's C interface

A file may include headers of its own folder and of lower floors. Prints one
line per include that breaks the order, or names a folder or header this list
does not know, as file:line, and exits 1 when there is any.

Usage: check_xios_lite_folders.py [XIOS_LITE_SRC_DIR]   (default: xios_lite/src next to scripts/)
       check_xios_lite_folders.py --self-test   (the check finds what it must, on a made-up tree)
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_include_layers import order_problems, report  # noqa: E402  (one include grammar, walk and order)

FLOORS = [
    ["base"],
    ["records"],
    ["calendar", "temporal"],
    ["transport"],
    ["netcdf"],
    ["config"],
    ["client", "server"],
    ["facade"],
    ["c_api"],
]
FLOOR = {folder: index for index, floor in enumerate(FLOORS) for folder in floor}
ORDER = " < ".join(", ".join(floor) for floor in FLOORS)


def folder_of_file(path: Path, src: Path) -> str:
    parts = path.relative_to(src).parts
    return "base" if len(parts) == 1 else parts[0]


def folder_of_include(name: str, path: Path, src: Path):
    """The folder an include names; "outside" for ep, common and the public API, None when unknown."""
    parts = Path(name).parts
    root = src.parent.parent
    for library, include_dir in (
        ("xios_lite", src.parent / "include"),
        ("ep", root / "ep" / "include"),
        ("common", root / "common" / "include"),
    ):
        if parts[0] == library and (include_dir / name).is_file():
            return "outside"
    if (path.parent / name).is_file():
        return folder_of_file((path.parent / name).resolve(), src)
    if (src / name).is_file():
        return "base" if len(parts) == 1 else parts[0]
    return None


def check(src: Path) -> list:
    return order_problems(
        src, FLOOR, "floors", folder_of_file, lambda name, path: folder_of_include(name, path, src),
        "neither in xios_lite/src nor in the xios_lite, ep or common include folders",
        f"of {{target}}, a higher floor (order: {ORDER})",
        same="on the same floor (what both need goes a floor down)")


def self_test() -> int:
    """A made-up src with one include up, one sideways and two allowed: exactly two problems."""
    files = {
        "transport/event.hpp": '#include "netcdf/nc_file.hpp"\n',  # up: refused
        "server/folder.hpp": '#include "client/temporal.hpp"\n',  # sideways: refused
        "netcdf/nc_file.hpp": '#include "transport/event.hpp"\n#include "rows.hpp"\n',  # down, own
        "netcdf/rows.hpp": "",
        "client/temporal.hpp": "",
    }
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "xios_lite" / "src"
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text, encoding="utf-8")
        problems = check(src)
    found = [p for p in problems if "event.hpp:1" in p and "higher floor" in p]
    found += [p for p in problems if "folder.hpp:1" in p and "same floor" in p]
    if len(problems) != 2 or len(found) != 2:
        print("check_xios_lite_folders --self-test: expected the include up and the one sideways, got:")
        for problem in problems:
            print("  " + problem)
        return 1
    print("check_xios_lite_folders --self-test: both refused, the others allowed")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    default = Path(__file__).resolve().parent.parent / "xios_lite" / "src"
    src = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else default
    return report("check_xios_lite_folders", src, check, "include(s) break the floors of",
                  f"{src} keeps the floors", ORDER)

if __name__ == "__main__":
    sys.exit(main())
