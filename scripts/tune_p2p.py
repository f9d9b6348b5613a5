#!/usr/bin/env python3
"""The intra-process protocol threshold of this machine (docs/ep_pingpong.md,
"Protocol thresholds").

Times ep_pingpong's intra-process latency (1 process x 2 threads, pinned,
spinning: the fair shape of make bench) twice per launch pair: with every
message eager (EP_EAGER_THRESHOLD at the ring's inline capacity, so each
one is packed into the ring) and with every message a rendezvous
(EP_EAGER_THRESHOLD=0, one copy from the sender's buffer). The launches
alternate, and each size's figure is the median of its launches. The
threshold is the largest size below the first size from which rendezvous
stays at least as fast as eager at every larger size measured: where the
costs cross. Writes it as `eager_threshold=N` (with the table as comments)
to the output file, which the library reads at start-up when the
environment variable EP_P2P_TUNING names it.

    python3 scripts/tune_p2p.py [--build build/release] [--launches 3]
                                [--output bench-results/ep_p2p.tuning]
    EP_P2P_TUNING=bench-results/ep_p2p.tuning mpiexec ...
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

# The ring's inline capacity at up to 32 endpoints per process
# (p2p/local_ring.hpp: 48 + 127 x 64 bytes); the eager side stays within it.
INLINE_BYTES = 8176


def run_curve(build, threshold, scratch, launch):
    """One launch: {bytes: t_min_us} of ep_pingpong ep_intra latency (the fastest
    repetition: the one least disturbed by other load on the machine)."""
    csv_path = os.path.join(scratch, f"t{threshold}.r{launch}.csv")
    env = dict(os.environ, EP_EAGER_THRESHOLD=str(threshold), OMP_NUM_THREADS="2",
               OMP_WAIT_POLICY="active", OMP_PROC_BIND="close", OMP_PLACES="cores",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = ["mpiexec", "--allow-run-as-root", "--mca", "btl_vader_single_copy_mechanism",
               "none", "--bind-to", "none", "-x", "OMP_NUM_THREADS", "-x", "OMP_WAIT_POLICY",
               "-x", "OMP_PROC_BIND", "-x", "OMP_PLACES", "-x", "EP_EAGER_THRESHOLD", "-n", "1",
               os.path.join(build, "demos/bench/ep_pingpong"), "--modes", "ep_intra",
               "--tests", "latency", "--max-bytes", str(2 * INLINE_BYTES), "--max-pairs", "1",
               "--reps", "10", "--iters", "1000", "--json", csv_path + ".json",
               "--csv", csv_path]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    with open(csv_path, newline="") as f:
        return {int(r["bytes"]): float(r["t_min_us"]) for r in csv.DictReader(f)}


def crossover(eager, rendezvous):
    """The largest size where eager still wins before rendezvous wins for good."""
    sizes = sorted(set(eager) & set(rendezvous))
    threshold = 0
    for size in sizes:
        if size > INLINE_BYTES:
            break
        if eager[size] < rendezvous[size]:
            threshold = size
    # Rendezvous must win at every size past the threshold: a later win of
    # eager (noise) moves the threshold up to it, as the loop above does.
    return threshold


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.environ.get("BUILD_DIR", "build/release"))
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--output", default="bench-results/ep_p2p.tuning")
    args = parser.parse_args()
    if args.launches < 1:
        sys.exit("tune_p2p: --launches must be at least 1")
    runs = {"eager": [], "rendezvous": []}
    with tempfile.TemporaryDirectory() as scratch:
        for launch in range(args.launches):
            runs["eager"].append(run_curve(args.build, INLINE_BYTES, scratch, launch))
            runs["rendezvous"].append(run_curve(args.build, 0, scratch, launch))
    medians = {side: {size: statistics.median(run[size] for run in curves)
                      for size in curves[0]} for side, curves in runs.items()}
    threshold = crossover(medians["eager"], medians["rendezvous"])
    lines = ["# ep intra-process protocol threshold (scripts/tune_p2p.py)",
             f"# t_min us, median of {args.launches} launches, 1 process x 2 threads",
             "# bytes eager rendezvous"]
    for size in sorted(medians["eager"]):
        if size in medians["rendezvous"]:
            lines.append(f"# {size} {medians['eager'][size]:.3f} "
                         f"{medians['rendezvous'][size]:.3f}")
    lines.append(f"eager_threshold={threshold}")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"tune_p2p: wrote {args.output}")


if __name__ == "__main__":
    main()
