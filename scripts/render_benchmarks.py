#!/usr/bin/python3
"""Renders one `make bench` run into docs/benchmarks.md and PNG plots.

    /usr/bin/python3 scripts/render_benchmarks.py [bench-results] [docs]

Reads what scripts/run-bench.sh left in the results folder:
  fair/limits.json      the machine's floors (demos/bench/limits), the median
                        over the rounds; the scoreboard opens with them and
                        divides every figure by its floor ("/ floor")
  fair/<bench>.json     the judged records: each point the median over the
                        alternated threaded and flat launches
                        (scripts/bench_merge.py; demos/bench schema)
  fair/<bench>.*.log    each fair launch's terminal output
  fair/output_bench.*   the output benchmark at 1 client + 1 server
  printed/<name>.json   runs printed but not judged (oversubscribed mixed
                        launches, the model with output, the trace overhead)
  printed/<name>.log    their terminal output; target lines (those ending in
                        "met" or "NOT met") are quoted as printed
  environment.json      machine, MPI, commit, threads and rounds of the run
and writes <docs>/benchmarks.md, which opens with the scoreboard (every
target of the fair runs, computed here from the merged records, met or not),
plus plots under <docs>/img/bench/ (stale plots there are removed):
  backends.png                       the README's key plot: each kernel's best
                                     time per backend, fair runs
  pingpong_latency.png, pingpong_bandwidth.png   ep_pingpong, fair runs
  <bench>_<test>.png                 each kernel test per mode, fair runs

Uses Debian's python3-matplotlib (the Agg backend: no display needed).
"""
import collections
import json
import pathlib
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# A verdict ends the line, or is followed by "; <the reason it was missed>".
TARGET_LINE = re.compile(r"\b(met|NOT met|NOT MET)\b[^a-zA-Z]*(;.*)?$")
KERNEL_BENCHES = ("alltoallv_bench", "transpose_bench", "allreduce_bench", "halo_bench",
                  "solver_bench", "neighbor_bench")
BACKEND_COLOURS = {"ep": "tab:blue", "mpi": "tab:orange", "ref": "tab:red",
                   "funneled": "tab:green"}
SMALL_COLLECTIVE_BYTES = 4096
# A team round of a small collective within a process fits one cache line.
TEAM_ROUND_BYTES = 64


# ---------------------------------------------------------------- loading ----

def load_json_dir(folder):
    """{stem: [records]} for the JSON files of `folder` (launch files of the
    fair runs, <bench>.<side>.r<k>.json, are left to their merged file)."""
    runs = {}
    for path in sorted(folder.glob("*.json")):
        if re.search(r"\.r\d+$", path.stem):
            continue
        try:
            runs[path.stem] = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            sys.exit(f"render_benchmarks: {path} is not valid JSON: {error}")
    return runs


def target_lines(folder):
    """{launch name: [verdict lines]} from the benchmarks' own output."""
    verdicts = {}
    for path in sorted(folder.glob("*.log")):
        if re.search(r"\.r\d+$", path.stem):
            continue
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


def fmt_us(us):
    if us >= 10000:
        return f"{us / 1000:.1f} ms"
    return f"{us:.2f} us" if us < 100 else f"{us:.0f} us"


# ------------------------------------------------------------- comparing ----

class Records:
    """The records of one benchmark, looked up by (test, mode, bytes)."""

    def __init__(self, records):
        self.records = records
        self.by_key = {(r["test"], r["mode"], r["bytes"], r.get("pairs", 0)): r
                       for r in records}

    def get(self, test, mode, size, pairs=0):
        return self.by_key.get((test, mode, size, pairs))

    def sizes(self, test):
        return sorted({r["bytes"] for r in self.records if r["test"] == test})

    def modes(self, test, backend=None):
        modes = dict.fromkeys(r["mode"] for r in self.records if r["test"] == test)
        return [m for m in modes if backend is None or m.split(".")[0] == backend]

    def best(self, test, size, backends):
        """(t_avg, mode) of the fastest mode of `backends` at `size`, or None."""
        found = [(r["t_avg_us"], r["mode"]) for r in self.records
                 if r["test"] == test and r["bytes"] == size
                 and r["mode"].split(".")[0] in backends]
        return min(found) if found else None


class Ratio:
    """a/b at every point of a figure: the worst, the median, the count met."""

    def __init__(self, limit=None, at_most=True):
        self.limit = limit  # None: a figure shown without a target
        self.at_most = at_most
        self.points = []  # (ratio, where, a text, b text)

    def add(self, a, b, where, a_text, b_text):
        self.points.append((a / b, where, a_text, b_text))

    def met_at(self, ratio):
        if self.limit is None:
            return True
        return ratio <= self.limit if self.at_most else ratio >= self.limit

    def worst(self):
        pick = max if self.at_most else min
        return pick(self.points, key=lambda p: p[0])

    def met(self):
        return bool(self.points) and all(self.met_at(p[0]) for p in self.points)

    def cell(self):
        if not self.points:
            return "not measured"
        ratio, where, a_text, b_text = self.worst()
        if len(self.points) == 1:
            return f"**{ratio:.2f}** ({a_text} / {b_text}{', ' + where if where else ''})"
        median = statistics.median(p[0] for p in self.points)
        text = f"worst **{ratio:.2f}** at {where} ({a_text} / {b_text}); median {median:.2f}"
        if self.limit is None:
            return text
        count = sum(self.met_at(p[0]) for p in self.points)
        return f"{text}; {count} of {len(self.points)} points"

    def target(self):
        return f"{'<=' if self.at_most else '>='} {self.limit:.2f}"


# ---------------------------------------------------------------- floors ----

# The barrier-plus-copy floors of the kernels (docs/benchmarks.md, "Floors"),
# per call on each of the T threads of the fair threaded launch: the bytes a
# thread must move at the memcpy speed of one core, plus the synchronisations
# no algorithm avoids, each at the raw barrier's cost.
#   (bytes moved per thread from the record's `bytes` b and T, barriers)
KERNEL_FLOORS = {
    # halo: b = the halo of one subdomain; copy it from the neighbour, after
    # one barrier that says the neighbour's interior is ready.
    "halo_bench": (lambda b, t: b, 1, "memcpy(b) + 1 barrier"),
    # transposition round trip: b = the field per worker; each direction
    # moves the whole field once (the local part changes layout too) after
    # one barrier.
    "transpose_bench": (lambda b, t: 2 * b, 2, "memcpy(2b) + 2 barriers"),
    # alltoallv: b = one block; a thread receives T blocks, its own included.
    "alltoallv_bench": (lambda b, t: t * b, 1, "memcpy(T b) + 1 barrier"),
    # allreduce: b = the vector; a thread reads its partner's vector once
    # (the additions ride on the copy), after one barrier.
    "allreduce_bench": (lambda b, t: b, 1, "memcpy(b) + 1 barrier"),
}
# ep_collectives within one process: one barrier, plus the copy of the data
# a thread receives (b = the message, the vector or one block).
COLLECTIVE_FLOORS = {
    "barrier": (lambda b, t: 0, "1 barrier"),
    "bcast": (lambda b, t: b, "memcpy(b) + 1 barrier"),
    "allreduce": (lambda b, t: b, "memcpy(b) + 1 barrier"),
    "alltoall": (lambda b, t: t * b, "memcpy(T b) + 1 barrier"),
    "alltoallv": (lambda b, t: t * b, "memcpy(T b) + 1 barrier"),
}


class Floors:
    """The machine's floors of the run (demos/bench/limits, merged medians):
    line hand-off, barrier, ring and memcpy time at any size."""

    def __init__(self, records):
        recs = Records(records)
        self.handoff = recs.get("line_handoff", "floor.line_handoff", 8)
        self.ring = recs.get("ring", "floor.ring", 8, 1)
        barriers = [r for r in records if r["test"] == "barrier"]
        self.barrier = barriers[0] if barriers else None
        self.copies = sorted((r["bytes"], r["t_avg_us"]) for r in records if r["test"] == "memcpy")
        # Not a floor of any figure: what reading another core's fresh data costs.
        self.cross_copies = sorted((r["bytes"], r["t_avg_us"]) for r in records
                                   if r["test"] == "cross_copy")
        self.exchanges = sorted((r["bytes"], r["t_avg_us"]) for r in records
                                if r["test"] == "exchange")

    def barrier_us(self):
        return self.barrier["t_avg_us"] if self.barrier else None

    def memcpy_us(self, size):
        """memcpy time of `size` bytes: measured at powers of two, linear in
        between, the largest size's bandwidth beyond it, the smallest's time
        below it."""
        if not self.copies or size <= 0:
            return 0.0 if size <= 0 else None
        if size <= self.copies[0][0]:
            return self.copies[0][1]
        for (b0, t0), (b1, t1) in zip(self.copies, self.copies[1:]):
            if b0 <= size <= b1:
                return t0 + (t1 - t0) * (size - b0) / (b1 - b0)
        top_bytes, top_us = self.copies[-1]
        return top_us * size / top_bytes

    def memcpy_mbps(self, size):
        us = self.memcpy_us(size)
        return size / us if us else None

    def copy_and_barriers(self, size, barriers):
        """(floor us, its text) of moving `size` bytes plus `barriers` barriers."""
        copy, barrier = self.memcpy_us(size), self.barrier_us()
        if copy is None or barrier is None:
            return None
        floor = copy + barriers * barrier
        parts = ([f"memcpy {fmt_bytes(size)}"] if size > 0 else []) + [
            f"{barriers} barrier{'s' if barriers > 1 else ''} x {fmt_us(barrier)}"]
        return floor, f"floor {fmt_us(floor)} = {' + '.join(parts)}"


def kernel_floor(bench, recs, tests, floors, threads, limit=None):
    """ep / floor at every point of `tests` (None where the floor is unknown)."""
    ratio = Ratio(limit)
    if floors is None:
        return ratio
    for test, _ in tests:
        for size in recs.sizes(test):
            ep = recs.best(test, size, ("ep",))
            where = test if bench in ("halo_bench", "solver_bench") else fmt_bytes(size)
            if not ep:
                continue
            if bench == "solver_bench":
                # The iteration's own arithmetic with communication at no cost.
                compute = recs.get(f"{test}_compute", ep[1], size)
                if compute:
                    ratio.add(ep[0], compute["t_avg_us"], where, f"{ep[1]} {fmt_us(ep[0])}",
                              f"compute only {fmt_us(compute['t_avg_us'])}")
                continue
            moved, barriers, _ = KERNEL_FLOORS[bench]
            floor = floors.copy_and_barriers(moved(size, threads), barriers)
            if floor:
                ratio.add(ep[0], floor[0], where, f"{ep[1]} {fmt_us(ep[0])}", floor[1])
    return ratio


def verdict(*ratios):
    measured = [r for r in ratios if r is not None and r.points]
    if not measured:
        return "not measured"
    return "met" if all(r.met() for r in measured) else "**not met**"


def kernel_tests(bench, recs):
    if bench == "solver_bench":
        return [("gcr", "GCR per iteration"), ("cg", "CG per iteration")]
    tests = dict.fromkeys(r["test"] for r in recs.records)
    return [(t, t) for t in tests]


def kernel_ratios(bench, recs, tests):
    """ep / best of ref and mpi.* and ep / funneled (best algorithm of each
    side at each point) over `tests`."""
    vs_mpi, vs_funneled = Ratio(0.70), Ratio(0.80)
    for test, _ in tests:
        for size in recs.sizes(test):
            ep = recs.best(test, size, ("ep",))
            mpi = recs.best(test, size, ("mpi", "ref"))
            fun = recs.best(test, size, ("funneled",))
            where = test if bench in ("halo_bench", "solver_bench") else fmt_bytes(size)
            if ep and mpi:
                vs_mpi.add(ep[0], mpi[0], where, f"{ep[1]} {fmt_us(ep[0])}",
                           f"{mpi[1]} {fmt_us(mpi[0])}")
            if ep and fun:
                vs_funneled.add(ep[0], fun[0], where, f"{ep[1]} {fmt_us(ep[0])}",
                                f"{fun[1]} {fmt_us(fun[0])}")
    return vs_mpi, vs_funneled


def layer_cost(bench, recs):
    """Every mpi.<algorithm> against the ref mode of its point (<= 1.2)."""
    cost = Ratio(1.2)
    for test in dict.fromkeys(r["test"] for r in recs.records):
        refs = recs.modes(test, "ref")
        if not refs:
            continue
        for size in recs.sizes(test):
            ref = recs.get(test, refs[0], size)
            if ref is None:
                continue
            for mode in recs.modes(test, "mpi"):
                r = recs.get(test, mode, size)
                if r is not None:
                    where = test if bench == "halo_bench" else fmt_bytes(size)
                    cost.add(r["t_avg_us"], ref["t_avg_us"], where,
                             f"{mode} {fmt_us(r['t_avg_us'])}",
                             f"{refs[0]} {fmt_us(ref['t_avg_us'])}")
    return cost


def scoreboard(fair, env, floors):
    """The scoreboard rows: (figure, ep / best MPI, ep / funneled, ep / floor,
    target, verdict). The floor cell is shown, not judged; the targets
    against the floors are limit_targets'."""
    threads = env.get("threads_per_process", 2)
    rows = []
    model = fair.get("model_bench")
    if model:
        recs = Records(model)
        vs_mpi, vs_fun = Ratio(0.80), Ratio(0.85)
        ep, mpi, fun = (recs.get("step", m, 0) for m in ("ep", "mpi", "funneled"))
        if ep and mpi:
            vs_mpi.add(ep["t_avg_us"], mpi["t_avg_us"], "", f"ep {fmt_us(ep['t_avg_us'])}",
                       f"mpi {fmt_us(mpi['t_avg_us'])}")
        if ep and fun:
            vs_fun.add(ep["t_avg_us"], fun["t_avg_us"], "", f"ep {fmt_us(ep['t_avg_us'])}",
                       f"funneled {fmt_us(fun['t_avg_us'])}")
        rows.append(("mini model, time per step (48 steps, no output)", vs_mpi.cell(),
                     vs_fun.cell(), model_floor(recs).cell(),
                     f"{vs_mpi.target()}; {vs_fun.target()}", verdict(vs_mpi, vs_fun)))
    names = {"halo_bench": "halo exchange (w = 1, 3, 20, and w = 3 with a step)",
             "transpose_bench": "spectral transposition (round trip)",
             "alltoallv_bench": "alltoallv (8 B - 128 KiB blocks)",
             "allreduce_bench": "allreduce (8 B - 1 MiB)"}
    for bench in ("halo_bench", "transpose_bench", "alltoallv_bench", "allreduce_bench",
                  "solver_bench"):
        if bench not in fair:
            continue
        recs = Records(fair[bench])
        groups = ([[t] for t in kernel_tests(bench, recs)] if bench == "solver_bench"
                  else [kernel_tests(bench, recs)])
        for tests in groups:
            vs_mpi, vs_fun = kernel_ratios(bench, recs, tests)
            name = tests[0][1] if bench == "solver_bench" else names[bench]
            floor = kernel_floor(bench, recs, tests, floors, threads)
            rows.append((name, vs_mpi.cell(), vs_fun.cell(), floor.cell(),
                         f"{vs_mpi.target()}; {vs_fun.target()}", verdict(vs_mpi, vs_fun)))
    if "ep_collectives" in fair:
        recs = Records(fair["ep_collectives"])
        for test in ("barrier", "bcast", "allreduce", "alltoall", "alltoallv"):
            ratio, floor = Ratio(0.50), Ratio()
            moved, _ = COLLECTIVE_FLOORS[test]
            for size in recs.sizes(test):
                if size > SMALL_COLLECTIVE_BYTES:
                    continue
                ep, mpi = recs.get(test, "ep", size), recs.get(test, "mpi", size)
                where = fmt_bytes(size) if test != "barrier" else ""
                if ep and mpi:
                    ratio.add(ep["t_avg_us"], mpi["t_avg_us"], where,
                              f"ep {fmt_us(ep['t_avg_us'])}", f"mpi {fmt_us(mpi['t_avg_us'])}")
                bound = floors.copy_and_barriers(moved(size, threads), 1) if floors else None
                if ep and bound:
                    floor.add(ep["t_avg_us"], bound[0], where, f"ep {fmt_us(ep['t_avg_us'])}",
                              bound[1])
            rows.append((f"ep::{test}, <= 4 KiB", ratio.cell(), "", floor.cell(),
                         f"ep/MPI {ratio.target()} at every size", verdict(ratio)))
    if "ep_pingpong" in fair:
        rows += pingpong_rows(Records(fair["ep_pingpong"]), floors)
    if "output_bench" in fair:
        recs = Records(fair["output_bench"])
        size = next(iter(recs.sizes("output")), None)
        ep = recs.get("output", "ep_server", size)
        for other, limit, label in (("sync", 0.10, "synchronous write"),
                                    ("memcpy", 2.0, "memcpy of its data")):
            ratio = Ratio(limit)
            ref = recs.get("output", other, size)
            if ep and ref:
                ratio.add(ep["t_avg_us"], ref["t_avg_us"], "",
                          f"ep_server {fmt_us(ep['t_avg_us'])}",
                          f"{other} {fmt_us(ref['t_avg_us'])}")
            rows.append((f"xios_lite client output time per step / {label} "
                         "(1 client + 1 server)", ratio.cell(), "",
                         "none stated (the memcpy row is its floor)", ratio.target(),
                         verdict(ratio)))
    return rows


def pingpong_rows(recs, floors):
    rows = []

    def single(label, ratio, a, b, value, show, floor=""):
        """A scoreboard row of one point: `value` of record a over record b."""
        if a and b and a.get(value) and b.get(value):
            ratio.add(a[value], b[value], "", f"{a['mode']} {show(a[value])}",
                      f"{b['mode']} {show(b[value])}")
        rows.append((label, ratio.cell(), "", floor, ratio.target(), verdict(ratio)))

    ep_latency = recs.get("latency", "ep_intra", 8)
    ep_rate = recs.get("msg_rate", "ep_intra", 8, 1)
    single("intra-process 8 B latency / Open MPI shared memory", Ratio(0.50), ep_latency,
           recs.get("latency", "mpi_proc", 8), "t_avg_us", fmt_us,
           latency_floor(ep_latency, floors).cell())
    single("intra-process 8 B message rate / Open MPI shared memory", Ratio(1.5, at_most=False),
           ep_rate, recs.get("msg_rate", "mpi_proc", 8, 1), "msg_rate",
           lambda v: f"{v / 1e6:.2f} M/s", rate_floor(ep_rate, floors).cell())
    stream, stream_floor = Ratio(1.0, at_most=False), Ratio(at_most=False)
    for size in recs.sizes("bandwidth"):
        if size > 2048:
            continue
        ep, mpi = recs.get("bandwidth", "ep_intra", size), recs.get("bandwidth", "mpi_proc", size)
        if ep and mpi:
            stream.add(ep["MBps"], mpi["MBps"], fmt_bytes(size), f"ep_intra {ep['MBps']:.0f} MB/s",
                       f"mpi_proc {mpi['MBps']:.0f} MB/s")
        copy = floors.memcpy_mbps(size) if floors else None
        if ep and copy:
            stream_floor.add(ep["MBps"], copy, fmt_bytes(size), f"ep_intra {ep['MBps']:.0f} MB/s",
                             f"floor.memcpy {copy:.0f} MB/s")
    rows.append(("intra-process streaming 8 B - 2 KiB / Open MPI shared memory", stream.cell(),
                 "", stream_floor.cell(), f"{stream.target()} at every size", verdict(stream)))
    big = recs.get("bandwidth", "ep_intra", 4 << 20)
    big_floor = Ratio(at_most=False)
    copy = floors.memcpy_mbps(4 << 20) if floors else None
    if big and copy:
        big_floor.add(big["MBps"], copy, "", f"ep_intra {big['MBps']:.0f} MB/s",
                      f"floor.memcpy {copy:.0f} MB/s")
    single("intra-process 4 MiB streaming / memcpy", Ratio(0.95, at_most=False), big,
           recs.get("bandwidth", "memcpy", 4 << 20), "MBps", lambda v: f"{v:.0f} MB/s",
           big_floor.cell())
    return rows


def latency_floor(ep, floors, limit=None):
    """ep's 8 B one-way latency / one line hand-off."""
    ratio = Ratio(limit)
    if ep and floors and floors.handoff:
        ratio.add(ep["t_avg_us"], floors.handoff["t_avg_us"], "",
                  f"ep_intra {fmt_us(ep['t_avg_us'])}",
                  f"line hand-off {fmt_us(floors.handoff['t_avg_us'])}")
    return ratio


def rate_floor(ep, floors, limit=None):
    """ep's 8 B message rate / the SPSC ring's (a fraction: at least is better)."""
    ratio = Ratio(limit, at_most=False)
    if ep and ep.get("msg_rate") and floors and floors.ring and floors.ring.get("msg_rate"):
        ratio.add(ep["msg_rate"], floors.ring["msg_rate"], "",
                  f"ep_intra {ep['msg_rate'] / 1e6:.2f} M/s",
                  f"ring {floors.ring['msg_rate'] / 1e6:.2f} M/s")
    return ratio


def limit_targets(fair, env, floors):
    """The targets against the machine's floors and the best on-node MPI:
    (figure, ep / floor, ep / best MPI, target, verdict)."""
    threads = env.get("threads_per_process", 2)
    rows = []
    if "ep_pingpong" in fair:
        recs = Records(fair["ep_pingpong"])
        lat = latency_floor(recs.get("latency", "ep_intra", 8), floors, 2.0)
        rows.append(("intra-process 8 B latency / line hand-off", lat.cell(), "", lat.target(),
                     verdict(lat)))
        rate = rate_floor(recs.get("msg_rate", "ep_intra", 8, 1), floors, 0.25)
        rows.append(("intra-process 8 B message rate / ring", rate.cell(), "", rate.target(),
                     verdict(rate)))
    if "ep_collectives" in fair:
        recs = Records(fair["ep_collectives"])
        team = Ratio(1.5)
        barrier = floors.barrier_us() if floors else None
        for test in ("barrier", "bcast", "allreduce"):
            for size in recs.sizes(test):
                ep = recs.get(test, "ep", size)
                if size <= TEAM_ROUND_BYTES and ep and barrier:
                    team.add(ep["t_avg_us"], barrier,
                             test if test == "barrier" else f"{test} {fmt_bytes(size)}",
                             f"ep {fmt_us(ep['t_avg_us'])}", f"barrier {fmt_us(barrier)}")
        rows.append((f"ep::barrier, bcast and allreduce <= {TEAM_ROUND_BYTES} B within a "
                     "process / raw barrier", team.cell(), "", team.target(), verdict(team)))
    if "halo_bench" in fair:
        recs = Records(fair["halo_bench"])
        tests = [(t, t) for t in ("halo_w1", "halo_w3", "halo_w20") if recs.sizes(t)]
        floor = kernel_floor("halo_bench", recs, tests, floors, threads, 2.0)
        best = kernel_ratios("halo_bench", recs, tests)[0]
        best.limit = 0.5
        rows.append((f"halo 1 x {threads} (w = 1, 3, 20)", floor.cell(), best.cell(),
                     f"floor {floor.target()}; best MPI {best.target()}", verdict(floor, best)))
    if "transpose_bench" in fair:
        recs = Records(fair["transpose_bench"])
        tests = kernel_tests("transpose_bench", recs)
        floor = kernel_floor("transpose_bench", recs, tests, floors, threads, 2.0)
        best = kernel_ratios("transpose_bench", recs, tests)[0]
        best.limit = 0.5
        rows.append((f"transposition round trip 1 x {threads}", floor.cell(), best.cell(),
                     f"floor {floor.target()}; best MPI {best.target()}", verdict(floor, best)))
    # GCR and CG (ep / best MPI <= 0.70) and the model (ep / best MPI <= 0.80)
    # are targets of the main table.
    floor = model_floor(Records(fair["model_bench"]) if "model_bench" in fair else None)
    rows.append(("mini model step / compute-only floor", floor.cell(), "", floor.target(),
                 verdict(floor)))
    return rows


def model_floor(recs):
    """The model step of ep over its compute-only floor: the step of
    `mini_model --no-communication` (mode floor.compute_only), where every
    exchange is a local copy of the same size."""
    ratio = Ratio(1.10)
    if recs is None:
        return ratio
    ep, floor = recs.get("step", "ep", 0), recs.get("step", "floor.compute_only", 0)
    if ep and floor:
        ratio.add(ep["t_avg_us"], floor["t_avg_us"], "", f"ep {fmt_us(ep['t_avg_us'])}",
                  f"compute only {fmt_us(floor['t_avg_us'])}")
    return ratio


def floors_section(floors, env, threads):
    """The floors table that opens the scoreboard, with their definitions."""
    md = ["### Floors: what this machine allows", ""]
    if floors is None:
        return md + ["Not measured (no `limits` records in this run).", ""]
    md += ["Measured by `demos/bench/limits` once per round, without any communication "
           "library, on threads pinned to distinct cores that spin while they wait; medians "
           "of the rounds' t_avg, like every figure of the scoreboard.", ""]
    cpus = env.get("cpus")
    if isinstance(cpus, int) and cpus < max(2, threads):
        md += [f"**This machine has {cpus} CPU(s), fewer than the {max(2, threads)} threads "
               "the floors need: threads shared cores, and these are not the machine's "
               "floors.**", ""]
    table = []
    if floors.handoff:
        table.append(("line hand-off", "one 64-byte line between 2 threads, one way (half "
                      "the round trip)", fmt_us(floors.handoff["t_avg_us"])))
    if floors.barrier:
        table.append(("barrier", f"sense-reversing counter barrier of "
                      f"{floors.barrier['threads']} threads on one line, one round",
                      fmt_us(floors.barrier["t_avg_us"])))
    if floors.ring and floors.ring.get("msg_rate"):
        table.append(("ring", "SPSC ring of 64-byte slots, 8 B messages",
                      f"{floors.ring['msg_rate'] / 1e6:.1f} M msg/s "
                      f"({fmt_us(floors.ring['t_avg_us'])} each)"))
    for size, us in floors.copies:
        if size in (8, 64, 4096, 64 << 10, 1 << 20, 4 << 20):
            table.append((f"memcpy {fmt_bytes(size)}", "one thread, cache-warm buffers",
                          f"{fmt_us(us) if us >= 0.01 else f'{us * 1000:.1f} ns'}, "
                          f"{size / us:.0f} MB/s"))
    for size, us in floors.cross_copies:
        if size in (4096, 64 << 10, 1 << 20, 4 << 20):
            table.append((f"cross-core copy {fmt_bytes(size)}",
                          "memcpy of a buffer the other thread has just written (not a floor: "
                          "shown for the kernels that read a neighbour's array)",
                          f"{fmt_us(us)}, {size / us:.0f} MB/s"))
    for size, us in floors.exchanges:
        if size in (4096, 64 << 10, 256 << 10, 1 << 20):
            table.append((f"two-thread exchange {fmt_bytes(size)}",
                          "each thread gathers b bytes, half out of the other's array, in "
                          "128-byte runs, then a barrier; one direction (not a floor: the least "
                          "a zero-copy kernel's bytes cost once they change cores)",
                          f"{fmt_us(us)}, {size / us:.0f} MB/s"))
    md += md_table(["floor", "what", "median t_avg"], table)
    md += ["", "The floor of each figure: latency, one line hand-off; message rate, the "
           "ring; streaming and bandwidth, memcpy at the same size; a team round (ep::barrier, "
           f"bcast and allreduce up to {TEAM_ROUND_BYTES} B within a process), the raw barrier; "
           "a kernel, the bytes each thread must move at memcpy speed (measured sizes, linear "
           "in between) plus the barriers no algorithm avoids:", ""]
    md += md_table(["kernel (b = the record's bytes, T threads)", "floor per call"],
                   [(bench.removesuffix("_bench"), formula)
                    for bench, (_, _, formula) in KERNEL_FLOORS.items()]
                   + [(f"ep::{name}", formula) for name, (_, formula)
                      in COLLECTIVE_FLOORS.items()]
                   + [("GCR, CG per iteration", "its own compute part (`<solver>_compute`, "
                       "communication at no cost)"),
                      ("mini model step", "the step of `mini_model --no-communication` "
                       "(`floor.compute_only`): each rank's subdomain alone, every halo "
                       "exchange, transposition and global sum a local copy of the same size")])
    return md + [""]


# --------------------------------------------------------------- tables ----

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


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


# ---------------------------------------------------------------- plots ----

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


def backends(fair, path, threads):
    """Each kernel test's best t_avg per backend at its largest size, fair
    runs: the same kernel code on EP threads, MPI processes and funneled,
    and the hand-written reference (the README's key plot)."""
    groups = []
    for bench in KERNEL_BENCHES:
        if bench not in fair:
            continue
        recs = Records(fair[bench])
        for test, label in kernel_tests(bench, recs):
            size = max(recs.sizes(test))
            best = {b: recs.best(test, size, (b,)) for b in BACKEND_COLOURS}
            best = {b: v[0] for b, v in best.items() if v}
            if {"ep", "mpi", "funneled"} <= best.keys():
                groups.append((f"{bench.removesuffix('_bench')}\n{label.split(' ')[0]}\n"
                               f"{fmt_bytes(size)}", best))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(max(7, len(groups) * 1.0), 4.8))
    width = 0.2
    for n, (backend, colour) in enumerate(BACKEND_COLOURS.items()):
        xs = [x + (n - 1.5) * width for x, g in enumerate(groups) if backend in g[1]]
        ys = [g[1][backend] for g in groups if backend in g[1]]
        ax.bar(xs, ys, width=width, color=colour, label=backend)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("best t_avg (us), lower is better")
    ax.set_title(f"one kernel code, three backends and the hand-written MPI reference\n"
                 f"fair runs: ep, funneled 1 process x {threads} threads; mpi, ref "
                 f"{threads} processes; medians of alternated launches", fontsize=9)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ----------------------------------------------------------------- main ----

def main():
    results = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "bench-results")
    docs = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "docs")
    fair = load_json_dir(results / "fair")
    printed = load_json_dir(results / "printed")
    if not fair:
        sys.exit(f"render_benchmarks: no fair-run JSON in {results}/fair/ (run make bench)")
    env_path = results / "environment.json"
    env = json.loads(env_path.read_text()) if env_path.exists() else {}
    threads = env.get("threads_per_process", 2)
    img = docs / "img" / "bench"
    img.mkdir(parents=True, exist_ok=True)
    for stale in img.glob("*.png"):
        stale.unlink()
    pictures = []

    md = ["# Benchmarks", "",
          "Generated by `make bench` (scripts/run-bench.sh, scripts/render_benchmarks.py) "
          "from one run; every number below was measured in that run. Times are "
          "microseconds per operation unless marked.", ""]
    if env:
        md += [f"Run: {env.get('date', '?')} on {env.get('host', '?')} "
               f"({env.get('cpus', '?')} CPUs), {env.get('mpi', '?')}, "
               f"commit {env.get('git', '?')}, {threads} threads per process, "
               f"{env.get('rounds', '?')} rounds of alternated launches"
               + (f", {env['seconds'] // 60} min in all" if "seconds" in env else "") + ".", ""]
        if "load_start" in env:
            md += [f"Load average (1 min) of the machine: {env['load_start']:.2f} at the start, "
                   f"{env.get('load_end', float('nan')):.2f} at the end, on {env.get('cpus', '?')} "
                   "CPUs. Above about 0.5 other jobs were running beside the benchmarks, and "
                   "single figures move by tens of percent from run to run; the medians of "
                   "the alternated launches damp that, not remove it.", ""]

    floors = Floors(fair["limits"]) if "limits" in fair else None
    rows = scoreboard(fair, env, floors)
    limit_rows = limit_targets(fair, env, floors)
    met = sum(1 for r in rows if r[5] == "met") + sum(1 for r in limit_rows if r[4] == "met")
    md += ["## Scoreboard", "",
           f"Endpoints against what hybrid models use today and against the machine's own "
           f"limits, on fair terms: {met} of {len(rows) + len(limit_rows)} targets met. Where "
           "the time of both sides goes, for each missed target: [profiles.md](profiles.md).",
           ""]
    md += floors_section(floors, env, threads)
    md += ["### Against other software", "",
           f"How it is measured. The shapes fit the {env.get('cpus', '?')} cores: ep and "
           f"funneled run 1 process x {threads} threads, mpi and the hand-written "
           f"references (`ref`) {threads} processes x 1 thread, on the same problem. Each "
           "side runs as its users run it on dedicated cores: OpenMP threads spin while "
           "they wait (`OMP_WAIT_POLICY=active`) and are pinned to a core each "
           "(`OMP_PROC_BIND=close`, `OMP_PLACES=cores`); MPI processes are bound to a core "
           "and busy-poll (no `mpi_yield_when_idle`); funneled threads meet in spinning "
           "barriers; EP waits as its library does. The two sides cannot share a launch "
           "without an idle side taking a core from the measured one, so every benchmark "
           "runs as a threaded launch and a flat launch, alternated over the rounds, and "
           "each point is the median of its launches' t_avg "
           "(`demos/bench/launch_layout.hpp`, `scripts/bench_merge.py`).", "",
           "**ep / best MPI** compares the fastest ep algorithm at each point with the "
           "fastest of the `mpi.*` algorithms (the same kernel code on MPI processes) and "
           "the `ref` mode (hand-written plain MPI); **ep / funneled** the fastest ep "
           "algorithm with the fastest funneled one. A kernel's line gives its worst point "
           "(the target holds only if every point meets it), the median, and how many "
           "points meet it. **ep / floor** divides the same ep figure by its floor "
           "(\"Floors\" above: times over the floor's time, rates and bandwidths over the "
           "floor's); it is shown here, and judged in the next table.", ""]
    md += md_table(["figure", "ep / best MPI", "ep / funneled", "ep / floor", "target",
                    "verdict"], rows)
    md.append("")
    md += ["### Against the machine's limits", "",
           "The targets of endpoints against the floors of this machine and against the "
           "best MPI: the best of `mpi.*` and the `ref.*` modes, among them `ref.shm`, the "
           "on-node MPI-3 shared-memory window code (allreduce, halo, "
           "transposition). Verdicts are computed "
           "from this run's records. GCR and CG (ep / best MPI <= 0.70) and the model step "
           "(ep / best MPI <= 0.80) are judged in the table above.", ""]
    md += md_table(["figure", "ep / floor", "ep / best MPI", "target", "verdict"], limit_rows)
    md.append("")

    layer_rows = []
    for bench in ("halo_bench", "transpose_bench", "alltoallv_bench", "allreduce_bench"):
        if bench in fair:
            cost = layer_cost(bench, Records(fair[bench]))
            layer_rows.append((bench.removesuffix("_bench"), cost.cell(), cost.target(),
                               verdict(cost)))
    if layer_rows:
        md += ["### The library's layers: `mpi.*` against the hand-written reference", "",
               "Every `mpi.<algorithm>` of `collectives/` against the `ref` mode of the same "
               "point and launch: the two-stage halo with MPI_Isend/MPI_Irecv on packed "
               "buffers, MPI_Alltoallv, MPI_Allreduce, and the transposition with pack, "
               "MPI_Alltoallv and unpack (`demos/bench/reference/`). The solvers have no "
               "reference of their own; their halo and allreduce are those above.", ""]
        md += md_table(["kernel", "mpi.* / ref", "target", "verdict"], layer_rows)
        md.append("")

    # Per-kernel detail of the fair runs.
    md += ["## Fair runs in detail", "",
           "Medians over the rounds; each table is one test, a column per mode.", ""]
    for bench in ("limits", "model_bench", "ep_pingpong", "ep_collectives") + KERNEL_BENCHES + (
            "output_bench",):
        if bench not in fair:
            continue
        recs = fair[bench]
        for test in dict.fromkeys(r["test"] for r in recs):
            sub = [r for r in recs if r["test"] == test]
            md += [f"### {bench}: {test}", "", table(sub), ""]
            if bench in KERNEL_BENCHES and not test.endswith(("_halo", "_allreduce",
                                                              "_compute")):
                name = f"{bench}_{test}.png"
                pictures.append(plot_modes(sub, "t_avg_us", "t_avg (us)",
                                           f"{bench}: {test} (fair runs)", img / name))
    if "ep_pingpong" in fair:
        recs = fair["ep_pingpong"]
        lat = [r for r in recs if r["test"] == "latency"]
        bw = [r for r in recs if r["test"] == "bandwidth"]
        if lat:
            pictures.insert(0, plot_modes(lat, "t_avg_us", "t_avg (us)",
                                          "ep_pingpong latency (fair runs)",
                                          img / "pingpong_latency.png"))
        if bw:
            pictures.insert(1, plot_modes(bw, "MBps", "MB/s",
                                          "ep_pingpong streaming bandwidth (fair runs)",
                                          img / "pingpong_bandwidth.png"))
    key = backends(fair, img / "backends.png", threads)
    if key:
        pictures.insert(0, key)

    md += ["## Printed, not judged", "",
           "Runs outside the scoreboard: the oversubscribed mixed launches (2 processes x "
           f"{threads} threads against {2 * threads} processes in one job, as the tests run, "
           "with waits that yield), the mini model with output (its server process is one "
           "more than the cores), xios_lite with EP against funneled clients at 1 process "
           f"x {threads} threads + 1 server, and the cost of tracing. Their own target lines "
           "are quoted as the benchmarks printed them; none of them is a verdict on fair "
           "terms.", ""]
    for launch, lines in target_lines(results / "printed").items():
        md += [f"**{launch}**", "", "```"] + lines + ["```", ""]
    for launch, recs in printed.items():
        for test in dict.fromkeys(r["test"] for r in recs):
            sub = [r for r in recs if r["test"] == test]
            shape = f"{sub[0]['ranks']} process(es) x {sub[0]['threads']} thread(s) (first mode)"
            md += [f"### {launch}: {test}", "", shape, "", table(sub), ""]

    md += ["## Plots", ""]
    for picture in pictures:
        md.append(f"![{picture.stem}](img/bench/{picture.name})")
    md.append("")
    (docs / "benchmarks.md").write_text("\n".join(md))
    print(f"render_benchmarks: wrote {docs / 'benchmarks.md'}")
    for picture in pictures:
        print(f"render_benchmarks: wrote {picture}")


if __name__ == "__main__":
    main()
