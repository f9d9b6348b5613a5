#!/usr/bin/env python3
"""LogGP-style scaling model of the collectives/ kernels.

Fits latency, overhead and bandwidth terms to this machine's measurements
(ep_pingpong and alltoallv_bench JSON of the fair runs, bench-results/fair/), then predicts each
algorithm's time for 10^2 .. 10^6 ranks and prints the crossovers between
algorithms and the best recursive-k radix per rank count.

  python3 demos/scale/scaling_model.py [--results bench-results/fair] [--backend mpi]
      [--pingpong ep_pingpong.tcp.json]   (latency and bandwidth over TCP: a network)

Cost of one stage in which a rank has q messages of m bytes in flight:
    stage(q, m) = L + 2 q o + q m G + c q^2 / 2
  L + 2o  one message's latency incl. send and receive overheads (fitted:
          smallest ping-pong half round trip up to 64 B)
  o       software cost per message at each end (fitted: time per message of
          an 8-byte stream over shared memory, the same MPI stack)
  G       seconds per byte (fitted: the ping-pong bandwidth at its largest size)
  c       matching cost per posted-receive-queue entry (ASSUMED, not measured:
          0.005 us, a linked-list scan of a few ns per entry; it is what makes
          many simultaneous messages cost more than their sum at scale, the
          congestion seed 000 sees in its simulator)
Algorithms (n ranks, m bytes per block; s bytes per allreduce vector):
    burst     stage(n-1, m)
    library   as burst (Open MPI 4.1's alltoallv posts every request at once)
    pairwise  (n-1) stage(1, m)
    ring-k    ceil((n-1)/k) stage(k, m)
    bruck     ceil(log2 n) [2 stage(1, .) + (n/2) m (G + 2 beta)]  (sizes, then
              data; half the blocks move per stage; beta = copy cost per byte)
    reck-k    p stage(k-1, s) + p (k-1) s gamma + [n > k^p] (2 stage(e, s) + e s gamma)
              with e = ceil((n - k^p) / k^p) vectors folded per base rank,
              p = floor(log_k n), gamma = combine cost per byte (ASSUMED 0.25 ns)
    recdbl    reck-2
Transposition scenario (strong scaling, like seed 000's): a field of W bytes
(default 8 B x 4000 x 2000 x 100) on a sqrt(n) x sqrt(n) grid; one step is an
alltoallv on sub-communicators of c = sqrt(n) ranks with blocks of
m = W / (n c) bytes. Allreduce scenario: GCR's 3 doubles (s = 24 B).
Thread scaling (--threads-per-process, default 2 8 64; --nodes, default 16):
the same node of T cores run as T MPI processes (mpi), as one process of T
endpoint threads (ep) or as one process whose T threads share the loops
while the master calls MPI (funneled), for a halo exchange, an 8-byte
allreduce, one GCR iteration (a halo and two allreduces) and, on one node,
a transposition round trip. Measured inputs, from the fair runs of make
bench (fair/ep_pingpong.json, fair/ep_collectives.json, fair/limits.json):
the one-way latency of a message between two threads of a process
(ep_intra), between two processes (mpi_proc) and between endpoints of two
processes (ep_inter, whose excess over mpi_proc is EP's cost per message
between processes), memcpy bandwidth, the cost of a team round (ep
barrier) and of a funneled barrier at 2 threads, and the machine's floors
(limits: a line hand-off, a copy of data another core has just written,
the two-thread exchange in 128-byte runs) and the bound halo plan's time
at 1 x 2 (fair/halo_bench.json).
Endpoints within one process take the zero-copy paths: a bound halo plan
reads its neighbours' strips straight out of their arrays after one
arrive/depart round with them (narrow column strips staged by their owner,
one copy each), and a transposition whose ranks share the process gathers
its target in one pass out of every other thread's array. A team round
counts arrivals on one line up to 4 threads and on a tree of 4-wide
counters beyond (ep/src/team/local_team.hpp).
ASSUMED: the network between nodes (--net-latency-us, --net-gbps); that a
team round costs its 2-thread cost per 2 arrivals on a line (linear up to 4
threads, then per tree level as a 4-thread round); that an OpenMP barrier
grows linearly with T; that a bound halo plan costs what it costs at 1 x 2
(a thread meets its 4 neighbours only); that a byte gathered by T threads from each other
costs what it costs between two (the exchange's bytes per second); that a
departure wait reads the T threads' lines at a hand-off each, half of them
overlapped.
Nothing here is measured at scale: this is a plan, not a result.
"""
import argparse
import json
import math
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return None


def fit(results, backend, pingpong):
    """(L2o, o, G) in seconds from the JSON files, with what each came from."""
    notes = []
    pp = load(os.path.join(results, pingpong))
    mode = {"mpi": "mpi_proc", "ep": "ep_inter"}.get(backend, backend)
    if pp is None:
        sys.exit(f"scaling_model: {results}/{pingpong} missing (run make bench)")
    lat = sorted((r["bytes"], r["t_min_us"]) for r in pp
                 if r["test"] == "latency" and r["mode"] == mode)
    bw = sorted((r["bytes"], r["MBps"]) for r in pp
                if r["test"] == "bandwidth" and r["mode"] == mode)
    if not lat or not bw:
        sys.exit(f"scaling_model: no latency/bandwidth records of mode {mode}")
    small = [t for b, t in lat if b <= 64]
    l2o = min(small) * 1e-6
    notes.append(f"L+2o = {l2o*1e6:.3f} us  (min t_min of {mode} latency <= 64 B, {pingpong})")
    g = 1.0 / (bw[-1][1] * 1e6)
    notes.append(f"G    = {g*1e12:.1f} ps/B = 1/{bw[-1][1]:.0f} MB/s ({mode} bandwidth at "
                 f"{bw[-1][0]} B)")
    # o: the time per message of an 8-byte stream (a window of 64 isends)
    # over shared memory, the same MPI stack's software cost per message,
    # whatever carries the bytes.
    shm = load(os.path.join(results, "ep_pingpong.json")) or pp
    stream = [r["t_min_us"] for r in shm
              if r["test"] == "bandwidth" and r["mode"] == mode and r["bytes"] == 8]
    if not stream:
        sys.exit("scaling_model: no 8-byte streaming record in ep_pingpong.json")
    streamed = min(stream) * 1e-6
    # o cannot exceed half of L + 2o (L >= 0); 0.45 keeps a small L.
    o = min(streamed, 0.45 * l2o)
    source = f"{mode} 8-byte streaming, time per message, ep_pingpong.json"
    if o < streamed:
        source += f": {streamed*1e6:.3f} us, capped at 0.45 (L+2o)"
    notes.append(f"o    = {o*1e6:.3f} us  ({source})")
    return l2o, o, g, notes


class Model:
    def __init__(self, l2o, o, g, c=0.005e-6, beta=0.05e-9, gamma=0.25e-9):
        self.l2o, self.o, self.g, self.c, self.beta, self.gamma = l2o, o, g, c, beta, gamma

    def stage(self, q, m):
        latency = self.l2o - 2 * self.o
        return latency + 2 * q * self.o + q * m * self.g + self.c * q * q / 2

    # alltoallv on n ranks with m-byte blocks
    def burst(self, n, m):
        return self.stage(n - 1, m) if n > 1 else 0.0

    def pairwise(self, n, m):
        return (n - 1) * self.stage(1, m)

    def ring(self, n, m, k):
        return math.ceil((n - 1) / k) * self.stage(min(k, n - 1), m) if n > 1 else 0.0

    def bruck(self, n, m):
        stages = math.ceil(math.log2(n)) if n > 1 else 0
        return stages * (2 * self.stage(1, 0) + (n / 2) * m * (self.g + 2 * self.beta))

    # allreduce of s bytes
    def reck(self, n, s, k):
        p, m = 0, 1
        while m * k <= n:
            m, p = m * k, p + 1
        t = p * (self.stage(k - 1, s) + (k - 1) * s * self.gamma)
        if n > m:  # pre-stage folds up to `extras` vectors in, post-stage sends them back
            extras = math.ceil((n - m) / m)
            t += 2 * self.stage(extras, s) + extras * s * self.gamma
        return t


def crossovers(ns, series):
    """[(n, winner before, winner after)] where the fastest algorithm changes."""
    winners = [min(series, key=lambda name: series[name](n)) for n in ns]
    out, prev = [], winners[0]
    for i, best in enumerate(winners):
        # A change counts once the new winner holds for 3 consecutive points
        # (ceil() in the stage counts makes near-ties flip back and forth).
        if best != prev and all(w == best for w in winners[i:i + 3]):
            out.append((ns[i], prev, best))
            prev = best
    return out


def interpolate(points, x):
    """Log-log interpolation in sorted (x, y) points, clamped at both ends."""
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            f = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return math.exp(math.log(max(y0, 1e-12)) * (1 - f) + math.log(max(y1, 1e-12)) * f)
    # Past the largest size: grow with the bandwidth of the last two points.
    (x0, y0), (x1, y1) = points[-2], points[-1]
    return y1 + (x - x1) * (y1 - y0) / (x1 - x0)


class ThreadScaling:
    """Per-node costs of the three backends (seconds), from the fair runs."""

    FLAT_ARRIVALS = 4  # LocalTeam::kFlatArrivals
    FAN_IN = 4         # LocalTeam::kArrivalFanIn

    def __init__(self, results, net_latency_us, net_gbps):
        pp = load(os.path.join(results, "ep_pingpong.json"))
        coll = load(os.path.join(results, "ep_collectives.json"))
        if pp is None or coll is None:
            sys.exit(f"scaling_model: {results}/ep_pingpong.json or ep_collectives.json missing "
                     "(run make bench)")
        floors = load(os.path.join(results, "limits.json"))
        if floors is None:
            sys.exit(f"scaling_model: {results}/limits.json missing (run make bench)")

        def latency(mode):
            pts = sorted((r["bytes"], r["t_avg_us"] * 1e-6) for r in pp
                         if r["test"] == "latency" and r["mode"] == mode)
            if not pts:
                sys.exit(f"scaling_model: no latency records of {mode} in ep_pingpong.json")
            return pts

        def collective(test, mode):
            found = [r["t_avg_us"] * 1e-6 for r in coll if r["test"] == test and r["mode"] == mode]
            if not found:
                sys.exit(f"scaling_model: no {test} record of {mode} in ep_collectives.json")
            return found[0]

        def floor(test):
            pts = sorted((r["bytes"], r["t_avg_us"] * 1e-6) for r in floors if r["test"] == test)
            if not pts:
                sys.exit(f"scaling_model: no {test} record in limits.json (run make bench)")
            return pts

        self.intra = latency("ep_intra")
        self.shm = latency("mpi_proc")
        self.inter = latency("ep_inter")
        # memcpy at its largest size: the halo strips of many subdomains do
        # not stay in a core's cache.
        copy = sorted((r["bytes"], r["MBps"]) for r in pp
                      if r["test"] == "bandwidth" and r["mode"] == "memcpy")
        self.copy_bps = copy[-1][1] * 1e6 if copy else 10e9
        self.handoff = floor("line_handoff")[0][1]
        self.cross = floor("cross_copy")  # (bytes, s): data another core just wrote
        self.exchange = floor("exchange")  # (bytes, s): one direction, 2 threads
        # The bound halo plan at 1 x 2 (halo_bench, w = 3, 128 x 128 per
        # rank, the fastest ep algorithm): a thread meets only its
        # neighbours, so its cost does not grow with T.
        halo = load(os.path.join(results, "halo_bench.json")) or []
        bound = [r["t_avg_us"] * 1e-6 for r in halo
                 if r["test"] == "halo_w3" and r["mode"].startswith("ep.")]
        if not bound:
            sys.exit(f"scaling_model: no ep halo_w3 record in {results}/halo_bench.json")
        self.bound_halo2 = min(bound)
        self.team2 = collective("barrier", "ep")
        self.forkjoin2 = collective("barrier", "funneled")
        self.net_latency = net_latency_us * 1e-6
        self.net_bps = net_gbps * 1e9

    def ep_excess(self, m):
        """What an endpoint adds to a message between processes."""
        return max(0.0, interpolate(self.inter, m) - interpolate(self.shm, m))

    def net(self, m):
        return self.net_latency + m / self.net_bps

    def team(self, t):
        """A team round of t threads: arrivals on one line up to FLAT_ARRIVALS,
        then one such round per level of the arrival tree."""
        if t <= self.FLAT_ARRIVALS:
            return self.team2 * t / 2
        levels = math.ceil(math.log(t) / math.log(self.FAN_IN) - 1e-9)
        return self.team2 * self.FAN_IN / 2 * levels

    def forkjoin(self, t):
        return self.forkjoin2 * t / 2

    def cross_bps(self):
        """Bytes per second of copying data another core has just written
        (the largest measured copy)."""
        size, seconds = self.cross[-1]
        return size / seconds

    def halo(self, t, nodes, b, w):
        """9-point two-stage halo, b x b doubles per core, width w. A stage
        ends with its slowest exchange: a message across the network when
        there are several nodes, else within the node. Endpoints of one
        process take the bound plan: per stage an arrive/depart round with
        the neighbours (two hand-offs), the narrow column strip staged by its
        owner (one copy) and every strip read once from the other core, as
        measured at 1 x 2 (halo_bench) whatever T; on several nodes the
        threads on the node's edge still send messages."""
        mx, my = 8.0 * w * b, 8.0 * w * (b + 2 * w)
        pack = 2 * (mx + my) * 2 / self.copy_bps  # pack and unpack both strips of both stages
        bound = self.bound_halo2
        if nodes > 1:
            mpi = self.net(mx) + self.net(my)
            ep = max(mpi + self.ep_excess(mx) + self.ep_excess(my) + pack, bound)
        else:
            mpi = interpolate(self.shm, mx) + interpolate(self.shm, my)
            ep = bound if t > 1 else mpi + pack
        # funneled: one rank of sqrt(T) x sqrt(T) subdomains; its strips are
        # sqrt(T) times longer, packed and unpacked by the T threads (one
        # parallel loop each, so a fork and a join per loop).
        side = math.sqrt(t)
        fx, fy = mx * side, 8.0 * w * (b * side + 2 * w)
        f_msg = (self.net(fx) + self.net(fy)) if nodes > 1 else 2 * pack / t
        funneled = f_msg + 2 * (fx + fy) * 2 / (self.copy_bps * t) + 4 * self.forkjoin(t)
        return mpi + pack, ep, funneled

    def allreduce(self, t, nodes):
        """8 bytes over nodes x T workers."""
        across = math.ceil(math.log2(nodes)) if nodes > 1 else 0
        on_node = math.ceil(math.log2(t)) if t > 1 else 0
        mpi = on_node * interpolate(self.shm, 8) + across * self.net(8)
        ep = self.team(t) + across * (self.net(8) + self.ep_excess(8))
        funneled = self.forkjoin(t) + across * self.net(8)
        return mpi, ep, funneled

    def transpose(self, t, b):
        """A round trip of the three-step transposition of b bytes per core
        on one node, on the cx x cy grid transpose_bench takes (cy the
        largest divisor of T up to sqrt(T)). mpi: per step an alltoallv on
        the row or column, its n - 1 messages of b / n bytes one after the
        other at the shared-memory latency of their size, with a pack and an
        unpack. ep: the fused path, one gather of b bytes per direction at
        the exchange's bytes per second, the arrivals seen (a hand-off) and a
        departure wait over the T threads. funneled: the master's three
        steps on one rank (no message), each a pack and an unpack of b T
        bytes by the T threads."""
        cy = max(d for d in range(1, int(math.isqrt(t)) + 1) if t % d == 0)
        cx = t // cy

        def step(n):
            return (n - 1) * interpolate(self.shm, b / n) + 2 * b / self.copy_bps

        mpi = 2 * (2 * step(cx) + step(cy))
        per_byte = interpolate(self.exchange, b) / b
        ep = 2 * (b * per_byte + self.handoff * (1 + t / 2)) if t > 1 else 2 * b / self.copy_bps
        funneled = 2 * 3 * (2 * b * t / (self.copy_bps * t) + 2 * self.forkjoin(t))
        return mpi, ep, funneled


def thread_scaling(args):
    model = ThreadScaling(args.results, args.net_latency_us, args.net_gbps)
    print(f"\n# thread scaling on paper: {args.nodes} nodes of T cores; per node T MPI "
          "processes (mpi), one process of T endpoint threads (ep) or of T threads funneled "
          "through the master (funneled); us per call")
    print(f"#   measured (fair runs): ep_intra 8 B {interpolate(model.intra, 8)*1e6:.2f} us, "
          f"mpi_proc 8 B {interpolate(model.shm, 8)*1e6:.2f} us, EP's excess between processes "
          f"8 B {model.ep_excess(8)*1e6:.2f} us, team round (T=2) {model.team2*1e6:.2f} us, "
          f"funneled barrier (T=2) {model.forkjoin2*1e6:.2f} us, memcpy "
          f"{model.copy_bps/1e9:.1f} GB/s, line hand-off {model.handoff*1e6:.2f} us, "
          f"cross-core copy {model.cross_bps()/1e9:.1f} GB/s, exchange 64 KiB "
          f"{interpolate(model.exchange, 65536)*1e6:.2f} us")
    print(f"#   ASSUMED: network {args.net_latency_us} us + {args.net_gbps} GB/s; team rounds "
          "linear to 4 threads, then per tree level; OpenMP barriers linear in T")
    header = (f"{'kernel':<30} {'T':>4} {'ep':>10} {'mpi':>10} {'funneled':>10} {'ep/mpi':>8} "
              f"{'ep/fun':>8}")

    def row(name, t, costs):
        mpi, ep, fun = costs
        print(f"{name:<30} {t:>4} {ep*1e6:>10.2f} {mpi*1e6:>10.2f} {fun*1e6:>10.2f} "
              f"{ep/mpi:>8.2f} {ep/fun:>8.2f}")

    print(header)
    for t in args.threads_per_process:
        h = model.halo(t, args.nodes, 128, 3)
        a = model.allreduce(t, args.nodes)
        row("halo w=3, 128x128/core", t, h)
        row("allreduce 8 B", t, a)
        row("GCR iteration (comm.)", t, tuple(h[i] + 2 * a[i] for i in range(3)))
    print(f"\n# the same on one node (no network): the zero-copy paths set the halo and the "
          "transposition")
    print(header)
    for t in args.threads_per_process:
        h = model.halo(t, 1, 128, 3)
        a = model.allreduce(t, 1)
        row("halo w=3, 128x128/core", t, h)
        row("allreduce 8 B", t, a)
        row("GCR iteration (comm.)", t, tuple(h[i] + 2 * a[i] for i in range(3)))
        row("transposition 64 KiB/core", t, model.transpose(t, 65536.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default="bench-results/fair")
    ap.add_argument("--backend", default="mpi", help="mpi (process pairs) or ep")
    ap.add_argument("--pingpong", default="ep_pingpong.json",
                    help="latency/bandwidth source in --results, e.g. ep_pingpong.tcp.json "
                    "(ep_pingpong run with --mca btl tcp,self: a stand-in for a network)")
    ap.add_argument("--match-us", type=float, default=0.005,
                    help="c: cost per posted-receive-queue entry per message (ASSUMED)")
    ap.add_argument("--field-bytes", type=float, default=8.0 * 4000 * 2000 * 100)
    ap.add_argument("--threads-per-process", type=int, nargs="+", default=[2, 8, 64])
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--net-latency-us", type=float, default=1.5,
                    help="network latency between nodes (ASSUMED)")
    ap.add_argument("--net-gbps", type=float, default=12.5,
                    help="network bandwidth between nodes, GB/s (ASSUMED)")
    args = ap.parse_args()
    l2o, o, g, notes = fit(args.results, args.backend, args.pingpong)
    model = Model(l2o, o, g, c=args.match_us * 1e-6)
    print("# fitted on this machine (" + args.backend + "):")
    for line in notes:
        print("#   " + line)
    print(f"#   c    = {model.c*1e6:.3f} us per queue entry (ASSUMED)")
    print(f"#   gamma = {model.gamma*1e9:.2f} ns/B combine, beta = {model.beta*1e9:.2f} ns/B copy "
          "(ASSUMED)")

    ranks = [10 ** e for e in (2, 3, 4, 5, 6)]
    dense = sorted({int(round(10 ** (x / 20))) for x in range(40, 121)})
    w = args.field_bytes

    def block(n):
        c = max(2, int(round(math.sqrt(n))))
        return c, w / (n * c)

    a2a = {
        "library": lambda n: model.burst(*block(n)),
        "burst": lambda n: model.burst(*block(n)),
        "pairwise": lambda n: model.pairwise(*block(n)),
        "bruck": lambda n: model.bruck(*block(n)),
        "ring1": lambda n: model.ring(*block(n), 1),
        "ring4": lambda n: model.ring(*block(n), 4),
        "ring16": lambda n: model.ring(*block(n), 16),
    }
    print(f"\n# transposition step: alltoallv over c = sqrt(n) ranks, field {w/1e9:.1f} GB; "
          "predicted ms per step")
    print(f"{'ranks':>9} {'c':>6} {'block B':>10} " + " ".join(f"{k:>9}" for k in a2a))
    for n in ranks:
        c, m = block(n)
        print(f"{n:>9} {c:>6} {m:>10.0f} " + " ".join(f"{a2a[k](n)*1e3:>9.3f}" for k in a2a))
    print("# crossovers (fastest alltoallv changes):")
    for n, a, b in crossovers(dense, {k: v for k, v in a2a.items() if k != "burst"}):
        print(f"#   at ~{n} ranks: {a} -> {b}")

    print("# sensitivity: where ring4 first beats library, by the assumed matching cost c")
    for c_us in (0.0, 0.005, 0.05, 0.5):
        m2 = Model(l2o, o, g, c=c_us * 1e-6)
        first = next((n for n in dense if m2.ring(*block(n), 4) < m2.burst(*block(n))), None)
        print(f"#   c = {c_us:5.3f} us: " + (f"from ~{first} ranks" if first else "never in 10^2..10^6"))

    s = 24.0
    radices = list(range(2, 65))
    print("\n# allreduce of 3 doubles (GCR): predicted us per call; best radix k in 2..64")
    print(f"{'ranks':>9} {'recdbl':>9} {'reck4':>9} {'reck8':>9} {'reck16':>9} {'reck32':>9} "
          f"{'best k':>7} {'t_best':>9}")
    best_ks = []
    for n in dense:
        best = min(radices, key=lambda k: model.reck(n, s, k))
        best_ks.append(best)
    for n in ranks:
        best = min(radices, key=lambda k: model.reck(n, s, k))
        cols = [model.reck(n, s, k) * 1e6 for k in (2, 4, 8, 16, 32)]
        print(f"{n:>9} " + " ".join(f"{t:>9.2f}" for t in cols) +
              f" {best:>7} {model.reck(n, s, best)*1e6:>9.2f}")
    best_ks.sort()
    print(f"# best radix over {len(dense)} rank counts 10^2..10^6: min {best_ks[0]}, "
          f"median {best_ks[len(best_ks)//2]}, max {best_ks[-1]} "
          "(seed 000, simulated: 5 .. 32, median ~21)")
    thread_scaling(args)


if __name__ == "__main__":
    main()
