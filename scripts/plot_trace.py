#!/usr/bin/env python3
"""Draws the pictures of an endpoint communication trace (docs/ep.md, "Tracing").

Usage: plot_trace.py TRACE_DIR [--out DIR] [--title TEXT]

Reads every TRACE_DIR/trace.<process>.json (one per MPI process, written by
EP_TRACE=<dir> or ep::trace::write), merges them, numbers the endpoints by
(process, thread) in process-major order (the EP ranks of a create_endpoints
communicator over MPI_COMM_WORLD) and writes three PNG pictures in the style
of the HPCG communication study (seed 003):

  trace_matrix.png        communication matrix: bytes sent, sender x receiver
  trace_size_classes.png  message counts (and bytes) by size class
  trace_time_split.png    per EP rank: % of wall time in point-to-point,
                          collectives and outside communication (stacked)

Prints the path of each picture it wrote. Needs python3-matplotlib (Debian);
exits with status 2 and a clear message when it is missing.
"""
import argparse
import glob
import json
import os
import sys

CLASS_COLOURS = ["#4c72b0", "#55a868", "#c44e52", "#8172b2"]


def load(directory):
    paths = sorted(glob.glob(os.path.join(directory, "trace.*.json")))
    if not paths:
        sys.exit(f"plot_trace.py: no trace.*.json in {directory}")
    files = []
    for path in paths:
        with open(path, encoding="utf-8") as stream:
            try:
                data = json.load(stream)
            except json.JSONDecodeError as error:
                sys.exit(f"plot_trace.py: {path} is not valid JSON: {error}")
        if data.get("format") != "ep-trace/1":
            sys.exit(f"plot_trace.py: {path}: unknown format {data.get('format')!r}")
        files.append(data)
    return files


def merge(files):
    """Endpoints in process-major order, each with its EP rank."""
    endpoints = []
    for data in files:
        for endpoint in data["endpoints"]:
            endpoint["wall_seconds"] = data["wall_seconds"]
            endpoints.append(endpoint)
    endpoints.sort(key=lambda e: (e["process"], e["thread"]))
    rank_of = {(e["process"], e["thread"]): r for r, e in enumerate(endpoints)}
    return endpoints, rank_of, files[0]["size_classes"]


def matrix_of(endpoints, rank_of):
    n = len(endpoints)
    counts = [[0] * n for _ in range(n)]
    volume = [[0] * n for _ in range(n)]
    unknown = 0
    for sender, endpoint in enumerate(endpoints):
        for peer in endpoint["peers"]:
            receiver = rank_of.get((peer["process"], peer["thread"]))
            if receiver is None:  # an endpoint no trace file lists
                unknown += sum(peer["count"])
                continue
            counts[sender][receiver] += sum(peer["count"])
            volume[sender][receiver] += sum(peer["bytes"])
    if unknown:
        print(f"plot_trace.py: {unknown} messages to endpoints missing from the trace "
              "are left out of the matrix", file=sys.stderr)
    return counts, volume


def save(plt, figure, out, name):
    """Writes `figure` as out/name (PNG), closes it and returns the path."""
    path = os.path.join(out, name)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def draw_matrix(plt, colors, endpoints, rank_of, out, title):
    counts, volume = matrix_of(endpoints, rank_of)
    n = len(endpoints)
    figure, axes = plt.subplots(figsize=(5.5 + 0.1 * n, 4.5 + 0.1 * n))
    largest = max((v for row in volume for v in row), default=0)
    masked = [[v if v > 0 else float("nan") for v in row] for row in volume]
    norm = colors.LogNorm(vmin=1, vmax=largest) if largest > 1 else None
    image = axes.imshow(masked, cmap="viridis", norm=norm, origin="upper",
                        interpolation="nearest")
    figure.colorbar(image, ax=axes, label="bytes sent")
    if n <= 16:
        for s in range(n):
            for r in range(n):
                if counts[s][r]:
                    axes.text(r, s, str(counts[s][r]), ha="center", va="center",
                              fontsize=7, color="white")
    axes.set_xlabel("receiver (EP rank)")
    axes.set_ylabel("sender (EP rank)")
    axes.set_title(f"{title}point-to-point matrix (numbers: messages)")
    ticks = range(n) if n <= 32 else range(0, n, max(1, n // 16))
    axes.set_xticks(list(ticks))
    axes.set_yticks(list(ticks))
    return save(plt, figure, out, "trace_matrix.png")


def draw_size_classes(plt, endpoints, classes, out, title):
    counts = [sum(e["sends"]["count"][c] for e in endpoints) for c in range(len(classes))]
    volume = [sum(e["sends"]["bytes"][c] for e in endpoints) for c in range(len(classes))]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 4))
    bars = left.bar(classes, counts, color=CLASS_COLOURS)
    left.bar_label(bars, labels=[str(c) for c in counts], fontsize=8)
    left.set_ylabel("messages")
    left.set_title("message count by size")
    bars = right.bar(classes, [v / 1e6 for v in volume], color=CLASS_COLOURS)
    right.set_ylabel("MB sent")
    right.set_title("volume by size")
    for axes in (left, right):
        axes.set_xlabel("message size")
        axes.tick_params(axis="x", labelsize=8)
    figure.suptitle(f"{title}point-to-point sends, {len(endpoints)} EP ranks")
    return save(plt, figure, out, "trace_size_classes.png")


def draw_time_split(plt, endpoints, out, title):
    ranks = list(range(len(endpoints)))
    parts = {"point-to-point": [], "collective": [], "outside communication": []}
    for e in endpoints:
        wall = e["wall_seconds"] if e["wall_seconds"] > 0 else 1.0
        p2p = 100.0 * e["p2p_seconds"] / wall
        coll = 100.0 * e["collective_seconds"] / wall
        parts["point-to-point"].append(p2p)
        parts["collective"].append(coll)
        parts["outside communication"].append(max(0.0, 100.0 - p2p - coll))
    figure, axes = plt.subplots(figsize=(max(5.0, 0.35 * len(ranks) + 2.5), 4))
    bottom = [0.0] * len(ranks)
    for (label, values), colour in zip(parts.items(), ["#c44e52", "#4c72b0", "#bbbbbb"]):
        axes.bar(ranks, values, bottom=bottom, label=label, color=colour)
        bottom = [b + v for b, v in zip(bottom, values)]
    axes.set_xlabel("EP rank")
    axes.set_ylabel("% of wall time")
    axes.set_ylim(0, 100)
    axes.set_xticks(ranks if len(ranks) <= 32 else ranks[:: max(1, len(ranks) // 16)])
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3, fontsize=8)
    axes.set_title(f"{title}time split per EP rank")
    return save(plt, figure, out, "trace_time_split.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace_dir", help="directory holding trace.<process>.json files")
    parser.add_argument("--out", help="where the PNG files go (default: trace_dir)")
    parser.add_argument("--title", default="", help="text put before each picture's title")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.colors as colors
        import matplotlib.pyplot as plt
    except ImportError:
        # Debian's python3-matplotlib lives in the system interpreter; another
        # python3 first on PATH (a virtualenv, pyenv) may not see it.
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.access(system, os.X_OK):
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        print("plot_trace.py: python3-matplotlib is not installed "
              "(scripts/install-deps.sh installs it)", file=sys.stderr)
        return 2
    endpoints, rank_of, classes = merge(load(args.trace_dir))
    out = args.out or args.trace_dir
    os.makedirs(out, exist_ok=True)
    title = f"{args.title}: " if args.title else ""
    for path in (draw_matrix(plt, colors, endpoints, rank_of, out, title),
                 draw_size_classes(plt, endpoints, classes, out, title),
                 draw_time_split(plt, endpoints, out, title)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
