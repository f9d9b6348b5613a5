#!/usr/bin/env python3
"""Checks the layering of ep/src: no file includes a header of a higher layer.

Each file of ep/src belongs to the layer of its folder (a file directly in
ep/src to "base"). An include "x/y.hpp" names the layer of its first path
component, "y.hpp" alone a base file of ep/src, "ep/..." the public API
(ep/include) and "common/..." the library below ep (common/include), which
every layer may use. Layers, lowest first:

  base          error, datatypes, checks, environment, backoff, wait policy,
                spin lock, rank map, MPI groups, comm_state.hpp (the
                communicator's state, which names the parts of the
                subsystems without including them) and the endpoint and
                intercommunicator handles' accessors
  trace         the trace recorder and its file
  p2p           point-to-point: P2pState, the matching engine, both paths
  team          LocalTeam, the collective call, the failure slot
  collective    the collectives and the nonblocking registry
  communicator  creation, dup, split, intercommunicators; composes CommState
  topology      Cartesian and graph topologies (made by dup or split of the
                communicator), neighbourhood collectives
  c_api         the C interface

A file may include headers of its own layer and of lower ones. Prints one
line per include that breaks the order, or names a folder or header this list
does not know, as file:line, and exits 1 when there is any.

Usage: check_include_layers.py [EP_SRC_DIR]   (default: ep/src next to scripts/)
"""

import re
import sys
from pathlib import Path

LAYERS = ["base", "trace", "p2p", "team", "collective", "communicator", "topology", "c_api"]
RANK = {name: index for index, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".c", ".inc"}


def layer_of_file(path: Path, src: Path) -> str:
    parts = path.relative_to(src).parts
    return "base" if len(parts) == 1 else parts[0]


def layer_of_include(name: str, src: Path, public: Path):
    """The layer an include names; "outside" for ep/include and common/include
    (the layer below ep, open to every layer of it), None when unknown."""
    parts = Path(name).parts
    if parts[0] == "ep" and (public / name).is_file():
        return "outside"
    common = src.parent.parent / "common" / "include"
    if parts[0] == "common" and (common / name).is_file():
        return "outside"
    if not (src / name).is_file():
        return None
    return "base" if len(parts) == 1 else parts[0]


def unknown_folders(src: Path, known: dict, list_name: str) -> list:
    """One problem for each folder of src that `known` (a layer or floor table) lacks."""
    return [
        f"{folder}: folder not in the {list_name} of {Path(sys.argv[0]).name}"
        for folder in sorted(p for p in src.iterdir() if p.is_dir())
        if folder.name not in known
    ]


def includes_in(src: Path, known: dict, folder_of):
    """Yields (path, line number, own folder, included name) for every include
    of every source file under src whose folder, folder_of(path, src), is known.
    Shared by this check and check_xios_lite_folders.py."""
    for path in sorted(src.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        own = folder_of(path, src)
        if own not in known:
            continue  # reported once for its folder
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, start=1):
            match = INCLUDE.match(line)
            if match:
                yield path, number, own, match.group(1)


def order_problems(src: Path, rank: dict, list_name: str, folder_of_file, folder_of_include,
                   unknown: str, higher: str, same: str = "") -> list:
    """The problems of the includes of the source files under src against the
    order `rank` (folder -> its layer or floor, lowest 0), shared by this check
    and check_xios_lite_folders.py. folder_of_file(path, src) is a file's own
    folder, folder_of_include(name, path) the folder an include names
    ("outside" for the libraries every folder may use, None when unknown). A
    problem: a folder `rank` lacks; an include of an unknown header
    ("<name> is <unknown>"), of a folder `rank` lacks, or of a higher one
    ("<own> includes <name> <higher>", `{target}` in `higher` naming its
    folder); with `same`, an include of another folder of the same rank
    ("... of <target>, <same>")."""
    problems = unknown_folders(src, rank, list_name)
    for path, number, own, name in includes_in(src, rank, folder_of_file):
        target = folder_of_include(name, path)
        where = f"{path}:{number}"
        if target is None:
            problems.append(f'{where}: "{name}" is {unknown}')
        elif target in ("outside", own):
            continue
        elif target not in rank:
            problems.append(f'{where}: "{name}" is in a folder not in the {list_name}')
        elif rank[target] > rank[own]:
            problems.append(f'{where}: {own} includes "{name}" {higher.format(target=target)}')
        elif same and rank[target] == rank[own]:
            problems.append(f'{where}: {own} includes "{name}" of {target}, {same}')
    return problems


def check(src: Path) -> list:
    public = src.parent / "include"
    return order_problems(
        src, RANK, "layer list", layer_of_file,
        lambda name, _path: layer_of_include(name, src, public),
        "neither in ep/src, ep/include nor common/include",
        f"of the higher layer {{target}} (order: {' < '.join(LAYERS)})")


def report(tool: str, folder: Path, check_folder, broken: str, kept: str,
           order: str = " < ".join(LAYERS)) -> int:
    """The exit code of `tool` (this check, check_link_layers.py or
    check_xios_lite_folders.py) over `folder`: 2 when it is not a folder;
    else prints each problem check_folder(folder) finds, then a summary:
    "<n> <broken> <folder>" (1) or "<kept> <order>" (0)."""
    if not folder.is_dir():
        print(f"{tool}: no such folder: {folder}", file=sys.stderr)
        return 2
    problems = check_folder(folder)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{tool}: {len(problems)} {broken} {folder}")
        return 1
    print(f"{tool}: {kept} {order}")
    return 0


def main() -> int:
    default = Path(__file__).resolve().parent.parent / "ep" / "src"
    src = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else default
    return report("check_include_layers", src, check, "include(s) break the layers of",
                  f"{src} keeps the order")


if __name__ == "__main__":
    sys.exit(main())
