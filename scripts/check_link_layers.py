#!/usr/bin/env python3
"""Checks the layering of ep/src at link time: no object file calls a
function that only a higher layer defines.

check_include_layers.py sees includes only; a layer can still reach up
through a symbol it declares and a higher layer defines (a class declared in
a low header whose member functions live in communicator/, say). This reads
the objects the build made: `nm --defined-only` gives the layer that defines
each symbol, `nm --undefined-only` what each object needs. An object of layer
L that needs a symbol defined only in objects of layers above L breaks the
order. Symbols the ep library does not define (MPI, the C++ library) are not
looked at. The layers and their order are check_include_layers.py's.

Usage: check_link_layers.py OBJECT_DIR [SOURCE_DIR]

OBJECT_DIR is the folder that holds the library's objects by source path
(CMake: <build>/ep/CMakeFiles/ep.dir/src); SOURCE_DIR (default ep/src next
to scripts/) is only used to name files in the messages. Prints one line per
object and symbol that breaks the order and exits 1 when there is any.
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_include_layers import LAYERS, RANK, report  # noqa: E402


def layer_of_object(path: Path, objects: Path) -> str:
    parts = path.relative_to(objects).parts
    return "base" if len(parts) == 1 else parts[0]


def symbols(paths: list, which: str) -> dict:
    """The symbols `nm` lists for each of `paths` (one nm for all): which is
    "--defined-only" or "--undefined-only". Weak and COMDAT definitions
    (inline functions and templates every user instantiates) are left out:
    they tie no layer to another."""
    out = subprocess.run(
        ["nm", "-A", which, "--format=posix"] + [str(p) for p in paths],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {p: set() for p in paths}
    for line in out.splitlines():
        file, _, rest = line.partition(": ")
        fields = rest.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if which == "--defined-only" and kind in ("W", "V", "w", "v", "u"):
            continue
        if which == "--undefined-only" and kind in ("w", "v"):
            continue
        names[Path(file)].add(name)
    return names


def demangle(names: list) -> dict:
    out = subprocess.run(
        ["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return dict(zip(names, out))


def check(objects: Path) -> list:
    files = sorted(objects.rglob("*.o"))
    if not files:
        return [f"{objects}: no object files (build the ep library first)"]
    defined_by = {}  # symbol -> set of layers that define it
    needs = []  # (object, layer, undefined symbols)
    defined = symbols(files, "--defined-only")
    undefined = symbols(files, "--undefined-only")
    for path in files:
        layer = layer_of_object(path, objects)
        if layer not in RANK:
            return [f"{path}: folder {layer} is not in the layer list of check_include_layers.py"]
        for name in defined[path]:
            defined_by.setdefault(name, set()).add(layer)
        needs.append((path, layer, undefined[path]))
    problems = []
    for path, layer, undefined in needs:
        for name in sorted(undefined):
            owners = defined_by.get(name)
            if not owners:
                continue  # MPI, the C++ library, the system
            lowest = min(owners, key=lambda owner: RANK[owner])
            if RANK[lowest] > RANK[layer]:
                problems.append((path, layer, name, lowest))
    readable = demangle([name for _, _, name, _ in problems])
    return [
        f"{path.relative_to(objects)}: {layer} calls {readable[name]}, defined in the higher "
        f"layer {owner} (order: {' < '.join(LAYERS)})"
        for path, layer, name, owner in problems
    ]


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    objects = Path(sys.argv[1]).resolve()
    return report("check_link_layers", objects, check, "call(s) break the layers of",
                  f"the objects of {objects} keep the order")


if __name__ == "__main__":
    sys.exit(main())
