#!/usr/bin/python3
"""Renders one `make bench` run into docs/benchmarks.md and PNG plots.

    /usr/bin/python3 scripts/render_benchmarks.py [bench-results] [docs]

Reads what scripts/run-bench.sh left in the results folder:
  <name>.json     the records of one benchmark launch (demos/bench schema:
                  bench, test, mode, ranks, threads, bytes, t_avg_us, MBps...)
  <name>.log      that launch's terminal output; its target lines (those
                  ending in "met" or "NOT met") are the benchmark's own
                  verdicts, quoted as they were printed, never recomputed
  environment.json  machine, MPI and commit of the run
and writes <docs>/benchmarks.md with every target verdict and one table of
t_avg per (launch, test), plus plots under <docs>/img/bench/:
  pingpong_latency.png, pingpong_bandwidth.png   per mode (ep_pingpong)
  <bench>_<test>.png                             kernel algorithms per backend
                                                 (bars when the test has one size)
  backends.png                                   the key plot (README): each
                                                 kernel's best time per backend
  thread_scaling.png                             best kernel time, 1xT vs 2xT

Uses Debian's python3-matplotlib (the Agg backend: no display needed).
"""
import collections
import json
import pathlib
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# A verdict ends the line, or is followed by "; <the reason it was missed>".
TARGET_LINE = re.compile(r"\b(met|NOT met|NOT MET)\b[^a-zA-Z]*(;.*)?$")
KERNEL_BENCHES = ("alltoallv_bench", "transpose_bench", "allreduce_bench", "halo_bench",
                  "solver_bench")


def load_runs(results):
    """{launch name: [records]} for every JSON file of the run."""
    runs = {}
    for path in sorted(results.glob("*.json")):
        if path.name == "environment.json":
            continue
        try:
            runs[path.stem] = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            sys.exit(f"render_benchmarks: {path} is not valid JSON: {error}")
    return runs


def target_lines(results):
    """{launch name: [verdict lines]} from the benchmarks' own output."""
    verdicts = {}
    for path in sorted(results.glob("*.log")):
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()
                 if TARGET_LINE.search(line.strip())]
        if lines:
            verdicts[path.stem] = lines
    return verdicts


def fmt_bytes(n):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def table(records):
    """Markdown table: one row per size, one t_avg column per mode."""
    modes = list(dict.fromkeys(r["mode"] for r in records))
    sizes = sorted({r["bytes"] for r in records})
    avg = {(r["mode"], r["bytes"]): r["t_avg_us"] for r in records}
    out = ["| bytes | " + " | ".join(modes) + " |", "|---" * (len(modes) + 1) + "|"]
    for size in sizes:
        cells = [f"{avg[(m, size)]:.2f}" if (m, size) in avg else "-" for m in modes]
        out.append(f"| {fmt_bytes(size)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


BACKEND_COLOURS = {"ep": "tab:blue", "mpi": "tab:orange", "funneled": "tab:green"}


def plot_bars(records, value, xlabel, title, path):
    """One horizontal bar per mode (a test measured at a single size)."""
    records = sorted(records, key=lambda r: r["mode"])
    fig, ax = plt.subplots(figsize=(7, max(2.5, 0.32 * len(records) + 1)))
    colours = [BACKEND_COLOURS.get(r["mode"].split(".")[0], "tab:gray") for r in records]
    ax.barh(range(len(records)), [r[value] for r in records], color=colours)
    ax.set_yticks(range(len(records)))
    ax.set_yticklabels([r["mode"] for r in records], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(f"{title} ({fmt_bytes(records[0]['bytes'])})")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_modes(records, value, ylabel, title, path):
    if len({r["bytes"] for r in records}) == 1:
        return plot_bars(records, value, ylabel, title, path)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    by_mode = collections.defaultdict(list)
    for r in records:
        by_mode[r["mode"]].append((r["bytes"], r[value]))
    for mode, points in by_mode.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=mode)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def backends(runs, path, layout="2x"):
    """Each kernel test's best t_avg per backend at its largest size, in the
    `layout` launches: the same kernel code on EP threads, MPI processes and
    funneled (the README's key plot)."""
    groups = []
    for bench in KERNEL_BENCHES:
        launch = next((k for k in runs if k.startswith(f"{bench}.{layout}")), None)
        if launch is None:
            continue
        recs = runs[launch]
        for test in dict.fromkeys(r["test"] for r in recs):
            sub = [r for r in recs if r["test"] == test]
            size = max(r["bytes"] for r in sub)
            best = {}
            for backend in BACKEND_COLOURS:
                times = [r["t_avg_us"] for r in sub
                         if r["bytes"] == size and r["mode"].startswith(backend + ".")]
                if times:
                    best[backend] = min(times)
            if len(best) == len(BACKEND_COLOURS):
                groups.append((f"{bench.removesuffix('_bench')}\n{test}\n{fmt_bytes(size)}", best,
                               recs[0].get("ranks"), recs[0].get("threads")))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(max(7, len(groups) * 0.9), 4.8))
    width = 0.27
    for n, (backend, colour) in enumerate(BACKEND_COLOURS.items()):
        ax.bar([x + (n - 1) * width for x in range(len(groups))],
               [g[1][backend] for g in groups], width=width, color=colour, label=backend)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("best t_avg (us), lower is better")
    ax.set_title(f"one kernel code, three backends ({layout[0]} processes x T threads; "
                 "mpi: as many processes)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def thread_scaling(runs, path):
    """Best t_avg per backend at the largest common size, 1xT vs 2xT launches."""
    rows = []
    for bench in KERNEL_BENCHES:
        for backend in ("ep", "mpi", "funneled"):
            best = {}
            for layout in ("1x", "2x"):
                launch = next((k for k in runs if k.startswith(f"{bench}.{layout}")), None)
                if launch is None:
                    continue
                recs = [r for r in runs[launch] if r["mode"].startswith(backend + ".")]
                if not recs:
                    continue
                size = max(r["bytes"] for r in recs)
                best[layout] = min(r["t_avg_us"] for r in recs if r["bytes"] == size)
            if len(best) == 2:
                rows.append((f"{bench.removesuffix('_bench')}\n{backend}", best["1x"], best["2x"]))
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(max(7, len(rows) * 0.6), 4.5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[1] for r in rows], width=0.4, label="1 x T")
    ax.bar([x + 0.2 for x in xs], [r[2] for r in rows], width=0.4, label="2 x T")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r[0] for r in rows], fontsize=6, rotation=60)
    ax.set_yscale("log")
    ax.set_ylabel("best t_avg (us), largest size")
    ax.set_title("thread scaling: one and two processes of T threads")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    results = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "bench-results")
    docs = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "docs")
    runs = load_runs(results)
    if not runs:
        sys.exit(f"render_benchmarks: no benchmark JSON in {results}/ (run make bench)")
    verdicts = target_lines(results)
    env_path = results / "environment.json"
    env = json.loads(env_path.read_text()) if env_path.exists() else {}
    img = docs / "img" / "bench"
    img.mkdir(parents=True, exist_ok=True)
    pictures = []

    md = ["# Benchmarks", "",
          "Generated by `make bench` (scripts/render_benchmarks.py) from one run; "
          "every number below was measured in that run. Times are microseconds "
          "per operation (t_avg over the repetitions); modes of one table were "
          "measured interleaved, point by point, in the same launch.", ""]
    if env:
        md += [f"Run: {env.get('date', '?')} on {env.get('host', '?')} "
               f"({env.get('cpus', '?')} CPUs), {env.get('mpi', '?')}, "
               f"commit {env.get('git', '?')}, {env.get('threads_per_process', '?')} "
               "threads per process.", ""]

    md += ["## Targets", "",
           "Each benchmark's own verdicts, as it printed them.", ""]
    met = missed = 0
    for launch, lines in verdicts.items():
        md.append(f"**{launch}**")
        md.append("")
        md.append("```")
        md.extend(lines)
        md.append("```")
        md.append("")
        for line in lines:
            if re.search(r"NOT (met|MET)", line):
                missed += 1
            else:
                met += 1
    md.insert(md.index("## Targets") + 2, f"{met} target lines met, {missed} not met.")
    md.insert(md.index("## Targets") + 3, "")

    if "ep_pingpong" in runs:
        recs = runs["ep_pingpong"]
        lat = [r for r in recs if r["test"] == "latency"]
        bw = [r for r in recs if r["test"] == "bandwidth"]
        if lat:
            pictures.append(plot_modes(lat, "t_avg_us", "t_avg (us)", "ep_pingpong latency",
                                       img / "pingpong_latency.png"))
        if bw:
            pictures.append(plot_modes(bw, "MBps", "MB/s", "ep_pingpong streaming bandwidth",
                                       img / "pingpong_bandwidth.png"))
    for launch, recs in runs.items():
        if launch.split(".")[0] in KERNEL_BENCHES:
            for test in dict.fromkeys(r["test"] for r in recs):
                sub = [r for r in recs if r["test"] == test]
                name = f"{launch.replace('.', '_')}_{test}.png"
                pictures.append(plot_modes(sub, "t_avg_us", "t_avg (us)", f"{launch}: {test}",
                                           img / name))
    key = backends(runs, img / "backends.png")
    if key:
        pictures.insert(0, key)
    scaling = thread_scaling(runs, img / "thread_scaling.png")
    if scaling:
        pictures.append(scaling)

    md += ["## Plots", ""]
    for picture in pictures:
        md.append(f"![{picture.stem}](img/bench/{picture.name})")
    md.append("")
    md += ["## Tables", ""]
    for launch, recs in runs.items():
        for test in dict.fromkeys(r["test"] for r in recs):
            sub = [r for r in recs if r["test"] == test]
            shape = f"{sub[0]['ranks']} ranks x {sub[0]['threads']} threads (first mode)"
            md += [f"### {launch}: {test}", "", shape, "", table(sub), ""]
    (docs / "benchmarks.md").write_text("\n".join(md))
    print(f"render_benchmarks: wrote {docs / 'benchmarks.md'}")
    for picture in pictures:
        print(f"render_benchmarks: wrote {picture}")


if __name__ == "__main__":
    main()
